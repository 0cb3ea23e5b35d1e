// Repository.log: history as `git log` lists it, on the walk layer, as parsed commits.
import { toHex } from '../hash/hex.js';
import { parseCommitObject, type CommitObject } from '../objects/commit-object.js';
import { Pathspec } from '../objects/pathspec.js';
import type { StoreHandle } from '../odb/store-handle.js';
import type { RevTip } from '../walk/rev-args.js';
import type { RevWalk } from '../walk/rev-walk.js';
import { walkCommits } from '../walk/walk-objects.js';

/** What `Repository.log` walks, and how: as `git log` takes the same options. */
export interface LogOptions {
  /** Where history starts (a revision; default HEAD). */
  ref?: string | undefined;
  /** Revisions whose history is left out (`git log main ^v1.0`). */
  exclude?: readonly string[] | undefined;
  /** At most this many commits (git's -n). */
  maxCount?: number | undefined;
  /** Follow only first parents (git's --first-parent). */
  firstParent?: boolean | undefined;
  /** Only commits that change these paths, with git's history simplification (`git log -- <paths>`). */
  paths?: readonly string[] | undefined;
  /** Only commits from this time on (git's --since; a Date, or seconds since the epoch). */
  since?: Date | number | undefined;
  /** Only commits up to this time (git's --until). */
  until?: Date | number | undefined;
  /** git log's default order ('date'), or --topo-order ('topo'): no parent before all its children. */
  order?: 'date' | 'topo' | undefined;
  signal?: AbortSignal | undefined;
}

/** What log needs of a repository. */
export interface LogSource {
  readonly objects: StoreHandle;
  readonly prefix: string;
  readonly workTree: string | undefined;
  resolve(revision: string): Buffer;
  shallowCommits(): Buffer[];
}

/** From this many commits listed, their reads are told to be dense (see preferDenseReads). */
const DENSE_FROM = 256;

const seconds = (t: Date | number): number => (t instanceof Date ? Math.floor(t.getTime() / 1000) : t);

/**
 * git's sort_in_topological_order in graph order (--topo-order): children before parents, the
 * tips in walk order, each branch followed down as far as it goes before the next.
 */
function topoOrder(walk: RevWalk, commits: readonly number[]): number[] {
  const indegree = new Map<number, number>();
  for (const n of commits) indegree.set(n, 1);
  for (const n of commits) {
    for (const p of walk.parentsOf(n)) {
      const d = indegree.get(p);
      if (d !== undefined) indegree.set(p, d + 1);
    }
  }
  // A stack (git's prio_queue without a compare function), the tips put in so the first comes out first.
  const stack = commits.filter((n) => indegree.get(n) === 1).reverse();
  const out: number[] = [];
  while (stack.length > 0) {
    const n = stack.pop() as number;
    out.push(n);
    for (const p of walk.parentsOf(n)) {
      const d = indegree.get(p);
      if (d === undefined || d === 0) continue;
      indegree.set(p, d - 1);
      if (d - 1 === 1) stack.push(p);
    }
    indegree.set(n, 0);
  }
  return out;
}

export async function* logFrom(repo: LogSource, options: LogOptions = {}): AsyncGenerator<CommitObject> {
  const ref = options.ref ?? 'HEAD';
  const tips: RevTip[] = [{ id: repo.resolve(ref), uninteresting: false, name: ref }];
  for (const e of options.exclude ?? []) tips.push({ id: repo.resolve(e), uninteresting: true, name: e });
  const topo = options.order === 'topo';
  const walk = walkCommits(repo.objects, tips, {
    shallow: repo.shallowCommits(),
    // Topological order is sorted from the whole list, then cut (git's get_revision).
    ...(options.maxCount !== undefined && !topo ? { maxCount: options.maxCount } : {}),
    ...(options.firstParent === true ? { firstParent: true } : {}),
    ...(options.paths !== undefined && options.paths.length > 0 ? { pathspec: Pathspec.parse(options.paths, repo.prefix, repo.workTree) } : {}),
    ...(options.since !== undefined ? { maxAge: seconds(options.since) } : {}),
    ...(options.until !== undefined ? { minAge: seconds(options.until) } : {}),
    ...(options.signal !== undefined ? { signal: options.signal } : {}),
  });
  let commits = topo ? topoOrder(walk, walk.commits) : walk.commits;
  if (topo && options.maxCount !== undefined) commits = commits.slice(0, Math.max(0, options.maxCount));
  // Many commits read one after another: each index loaded whole and the packs read through big
  // windows beat a search by small reads each (1000 commits of gitoxide: 25 ms against 60).
  if (commits.length >= DENSE_FROM) repo.objects.preferDenseReads({ whole: false });
  for (const n of commits) {
    options.signal?.throwIfAborted();
    const id = walk.table.id(n);
    yield parseCommitObject(toHex(id), repo.objects.read(id).data);
  }
}
