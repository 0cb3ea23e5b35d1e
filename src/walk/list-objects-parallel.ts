import type { StoreKey } from '../odb/store-tasks.js';
import type { WorkerPool } from '../workers/worker-pool.js';
import type { ListReply, WalkTasks } from './walk-tasks.js';
import { listCommitsAndPending, missingHandler, TreeLister } from './list-objects.js';
import { Flag } from './object-table.js';
import { OBJ_TREE } from '../objects/object-type.js';
import type { MissingAction, RevWalk } from './rev-walk.js';

/** Runs of commits per thread: a thread that finishes early takes the next run. */
const RUNS_PER_THREAD = 2;
/** Below this many commits, one thread lists them faster than workers start. */
const PARALLEL_MIN_COMMITS = 64;

/**
 * `listObjects` with the trees listed on worker threads. The commits (in walk order) are cut into
 * runs; each worker lists the trees of a run depth first with a seen-set of its own, reading
 * through its own store (consecutive commits keep its delta-base cache warm). The runs are merged
 * in order, each object kept where it first appears: since a worker that lists a tree lists all it
 * reaches, an object a later run lists again is one an earlier run has, and the merged list is
 * the sequential walk's, in its order, with the same path-name hashes.
 */
export async function listObjectsParallel(walk: RevWalk, pool: WorkerPool<WalkTasks>, threads: number, store: StoreKey, missing: MissingAction): Promise<number[]> {
  const t = walk.table;
  const H = walk.hashLength;
  const listed: number[] = [];
  const onMissing = missingHandler(walk, missing);
  const lister = new TreeLister(walk, (n) => listed.push(n), false, onMissing);
  listCommitsAndPending(walk, (n) => listed.push(n), false, lister);
  const commits = walk.commits;
  if (commits.length < PARALLEL_MIN_COMMITS || threads < 2) {
    const empty = new Uint8Array(0);
    for (const n of commits) lister.listTree(walk.treeOf(n), empty);
    return listed;
  }
  const excludedList: number[] = [];
  for (let n = 0; n < t.count; n++) if (t.is(n, Flag.UNINTERESTING) && t.types[n] !== 1) excludedList.push(n);
  const excluded = t.idsOf(excludedList);
  const mergeRun = (reply: ListReply): void => {
    for (let k = 0; k < reply.types.length; k++) {
      const n = t.intern(reply.ids, k * H);
      if (t.is(n, Flag.SEEN | Flag.UNINTERESTING)) continue;
      t.mark(n, Flag.SEEN | Flag.LISTED | (reply.flags[k] as number));
      t.types[n] = reply.types[k] as number;
      t.nameHashes[n] = reply.nameHashes[k] as number;
      listed.push(n);
    }
    for (let k = 0; k < reply.missingPromisor.length; k++) {
      const n = t.intern(reply.missing, k * H);
      if (t.is(n, Flag.SEEN | Flag.UNINTERESTING)) continue;
      t.mark(n, Flag.SEEN);
      t.types[n] = OBJ_TREE;
      onMissing(n, reply.missingPromisor[k] === 1);
      walk.missing.push(n);
    }
  };
  const runs = Math.min(commits.length, threads * RUNS_PER_THREAD);
  const bounds = Array.from({ length: runs + 1 }, (_, r) => Math.round((r * commits.length) / runs));
  const replies: (ListReply | undefined)[] = new Array(runs);
  const empty = new Uint8Array(0);
  // Run 0 is this thread's: the workers start on run 1 (they must not take the run due first).
  let next = 1;
  let failed: unknown;
  let wake: (() => void) | undefined;
  // This thread lists too (threads - 1 workers): the run due next in the merge, when no worker has
  // taken it, is listed straight into the walk's table, which is the same as merging it.
  const workers = threads - 1;
  const runWorker = async (w: number): Promise<void> => {
    while (next < runs && failed === undefined) {
      const r = next++;
      const from = bounds[r] as number;
      const to = bounds[r + 1] as number;
      const roots = t.idsOf(commits.slice(from, to).map((c) => walk.treeOf(c)));
      try {
        await pool.run(w, 'list', { store, roots, excluded }, (item) => (replies[r] = item));
      } catch (e) {
        failed = e;
      }
      wake?.();
    }
  };
  const running = Promise.all(Array.from({ length: workers }, (_, w) => runWorker(w)));
  for (let i = bounds[0] as number; i < (bounds[1] as number); i++) lister.listTree(walk.treeOf(commits[i] as number), empty);
  for (let merged = 1; merged < runs; merged++) {
    if (next === merged) {
      next++;
      for (let i = bounds[merged] as number; i < (bounds[merged + 1] as number); i++) lister.listTree(walk.treeOf(commits[i] as number), empty);
      continue;
    }
    while (replies[merged] === undefined && failed === undefined) await new Promise<void>((resolve) => (wake = resolve));
    if (failed !== undefined) break;
    mergeRun(replies[merged] as ListReply);
    replies[merged] = undefined;
  }
  await running;
  if (failed !== undefined) throw failed;
  return listed;
}
