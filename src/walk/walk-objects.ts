import type { RevTip } from './rev-args.js';
import type { Pathspec } from '../objects/pathspec.js';
import type { StoreHandle } from '../odb/store-handle.js';
import type { StorePack } from '../odb/store-pack.js';
import type { Bitset } from '../bitmap/bitset.js';
import { listedObjects } from '../odb/store-pack.js';
import { markPromisorPacks } from './promisor-objects.js';
import type { RefStore } from '../refs/ref-store.js';
import type { ObjectFilter } from './object-filter.js';
import { filterObjects, keepsNoTrees, readSparsePatterns } from './filter-objects.js';
import { PackwrightError, throwIfAborted } from '../errors/packwright-error.js';
import { toHex } from '../hash/hex.js';
import { OBJ_BLOB, OBJ_TREE } from '../objects/object-type.js';
import { checkMissing, listObjects, listSteps, type ListVisitor } from './list-objects.js';
import { locateObjectsSteps, type ObjectLocations } from './locate-objects.js';
import { drain, drainSliced, type Steps } from './sliced-steps.js';
import { Flag, type ObjectTable } from './object-table.js';
import { RevWalk, type MissingAction } from './rev-walk.js';
import { listObjectsParallel } from './list-objects-parallel.js';
import type { WalkTasks } from './walk-tasks.js';
import type { WorkerPool } from '../workers/worker-pool.js';

/** What `walkObjects` walks: the tips, exclusions, filters, threads, and what it reports. */
export interface WalkObjectsOptions {
  /** What to do with missing trees and blobs (default 'error'; commits must be there). */
  missing?: MissingAction | undefined;
  /** Commits whose parents are not followed (a shallow boundary: `--shallow` lines, the shallow file). */
  shallow?: readonly Uint8Array[] | undefined;
  /** List only the first this many included commits (git's --max-count; negative: all). */
  maxCount?: number | undefined;
  /** Leave out the first this many (git's --skip), and list only commits with this many parents (see RevWalk's options). */
  skip?: number | undefined;
  minParents?: number | undefined;
  maxParents?: number | undefined;
  /** git's --since and --until, in seconds (see RevWalk's options). */
  maxAge?: number | undefined;
  minAge?: number | undefined;
  /** Follow only included commits' first parents (git's --first-parent). */
  firstParent?: boolean | undefined;
  /** Keep only the bisection point of the included commits (git's --bisect). */
  bisect?: boolean | undefined;
  /** Give the visitor each object's path. */
  paths?: boolean | undefined;
  /**
   * How a missing blob is an error (with `missing` 'error'): rev-list's "missing blob object
   * '<id>'" (default), or pack-objects' "unable to read <id>", which git's dies of when it writes.
   */
  blobError?: 'rev-list' | 'pack-objects' | undefined;
  /** git's --exclude-promisor-objects (see RevWalk's option and markPromisorPacks). */
  excludePromisor?: boolean | undefined;
  /** Mark the excluded side's trees with git's sparse algorithm (see RevWalk's option). */
  sparse?: boolean | undefined;
  /** Every excluded tip's tree is an edge (see RevWalk's option). */
  aggressiveEdges?: boolean | undefined;
  /**
   * Leave missing blobs in `order`, unreported, for the caller to settle with `leaveOutMissing`
   * once a filter has had its say: git never looks for a blob its filter leaves out, so a partial
   * clone can serve a `blob:none` fetch.
   */
  deferMissingBlobs?: boolean | undefined;
  /**
   * 'tips': list no tree but those named as tips, and not what they hold either; their blobs
   * still are. For a filter that keeps no other tree (tree:0, object:type=commit): git skips every
   * tree it meets (LOFR_SKIP_TREE), so a treeless clone reads no trees at all. A tip that is also a
   * walked commit's root tree is left out too, as git's filter leaves it out (see filterObjects).
   */
  trees?: 'all' | 'tips' | undefined;
  /** Limit history and trees to these paths (git's `-- <paths>`; see RevWalk and TreeLister). */
  pathspec?: Pathspec | undefined;
  /**
   * git's `--filter`: what the listing keeps (`order`), the objects named as tips aside unless
   * `filterProvided`; what it leaves out is `omitted`. A missing blob the filter leaves out is no
   * error, as git never looks for it. Sequential walks only (createPack filters its own count).
   */
  filter?: ObjectFilter | undefined;
  /**
   * Also list what the filter leaves out, for `omitted` (git's --filter-print-omitted): a filter
   * that keeps no trees then has them read all the same.
   */
  collectOmitted?: boolean | undefined;
  /** The filter judges the objects named as tips too (git's --filter-provided-objects). */
  filterProvided?: boolean | undefined;
  /** Resolves a `sparse:oid=` filter's name as a revision (`main:patterns`); without them only a full id is taken. */
  refs?: RefStore | undefined;
  /**
   * Called for each object listed, in git's order (missing objects included; see `missing`),
   * before a filter has its say.
   */
  visit?: ListVisitor | undefined;
  /** Called now and then with the number of objects listed so far. */
  onProgress?: ((listed: number) => void) | undefined;
  signal?: AbortSignal | undefined;
}

/** What `walkObjects` found: the walk, the object table, the objects in order and where each is stored, the missing ones, and a bitmap's answer when one was used. */
export interface WalkedObjects {
  walk: RevWalk;
  table: ObjectTable;
  /** The objects to send, in git's order, without missing ones. */
  order: Int32Array;
  locations: ObjectLocations;
  /** Missing objects met (allowed by `missing`), in the order met. */
  missing: number[];
  /**
   * What `filter` left out as git's --filter-print-omitted reports it (not what only object:type
   * left out), in the order listed, missing objects among them; with `collectOmitted`, every such object.
   */
  omitted?: Int32Array;
  /**
   * When a reachability bitmap gave the objects: the objects wanted as bit positions (git's
   * bitmap result; what pack reuse starts from), the pack whose objects are the first bits in its
   * pack order (the bitmapped pack, or a multi-pack bitmap's preferred pack), and whether the
   * excluded tips reach an object (what a thin pack may delta against).
   */
  bitmapResult?: {
    /** The pack whose objects are the first bits, in its pack order. */
    pack: StorePack;
    /** The objects wanted, as bit positions. */
    positions: Bitset;
    /** Whether the excluded tips reach `id`, when there were any. */
    inHaves?: (id: Uint8Array) => boolean;
  };
}

/**
 * The objects reachable from the included tips and not from the excluded ones, as
 * `git rev-list --objects` lists them: the commit walk, the tree walk, then one pass over the
 * pack indexes to find where each object is (which is also what tells a missing blob).
 */
export function walkObjects(handle: StoreHandle, tips: readonly RevTip[], options: WalkObjectsOptions = {}): WalkedObjects {
  const filter = options.filter;
  // A sparse filter's patterns are read first: git sets its filter up before it walks.
  const sparsePatterns = filter !== undefined ? readSparsePatterns(handle, filter, options.refs) : undefined;
  const walk = walkCommitsForListing(handle, tips, options);
  const listed: number[] = [];
  const visit = options.visit;
  listObjects(
    walk,
    (n, type, path) => {
      listed.push(n);
      if ((listed.length & 4095) === 0) options.onProgress?.(listed.length);
      visit?.(n, type, path);
    },
    {
      paths: options.paths === true,
      missing: options.missing ?? 'error',
      ...(options.pathspec !== undefined ? { pathspec: options.pathspec } : {}),
      ...(options.trees === 'tips' || (filter !== undefined && options.collectOmitted !== true && keepsNoTrees(filter)) ? { includeTree: tipTreesOnly(walk) } : {}),
    },
  );
  if (filter === undefined) return locateListed(handle, walk, listed, options);
  const walked = locateListed(handle, walk, listed, { ...options, deferMissingBlobs: true });
  const context = { given: options.filterProvided === true ? new Set<number>() : givenObjects(walk), rootTrees: () => walk.commits.map((c) => walk.treeOf(c)), tipTrees: () => walk.pending, sparsePatterns };
  const omitted: number[] = [];
  const kept = filterObjects(handle, walk.table, walked.order, walked.locations, filter, context, omitted);
  // The missing blobs the filter kept are settled now, as `missing` says.
  const order = leaveOutMissing(walk, kept, options, walked.missing, new Set(walked.missing));
  return { ...walked, order, omitted: Int32Array.from(omitted) };
}

/**
 * `walkObjects` for callers on an event loop (createPack on one thread): the same objects in the
 * same order, the tree walk and the pass over the indexes broken into slices (between commits'
 * trees, between blocks of index ids), with a turn of the event loop and an abort check after
 * each. (The commit walk before them runs in one go.)
 */
export async function walkObjectsSliced(handle: StoreHandle, tips: readonly RevTip[], options: Omit<WalkObjectsOptions, 'visit' | 'paths' | 'pathspec'> = {}): Promise<WalkedObjects> {
  const walk = walkCommitsForListing(handle, tips, options);
  const listed: number[] = [];
  const visit = (n: number): void => {
    listed.push(n);
    if ((listed.length & 4095) === 0) options.onProgress?.(listed.length);
  };
  const includeTree = options.trees === 'tips' ? tipTreesOnly(walk) : undefined;
  const steps = function* (): Steps<WalkedObjects> {
    yield* listSteps(walk, visit, { missing: options.missing ?? 'error', ...(includeTree !== undefined ? { includeTree } : {}) });
    return yield* locateListedSteps(handle, walk, listed, options);
  };
  return drainSliced(steps(), options.signal, 'the walk');
}

/**
 * What the caller named, which no filter leaves out (git's USER_GIVEN): the tips' tags, trees and
 * blobs and the commits they name. A tree tip that a walked commit also has for its root is not
 * one: git flags the root trees as not given (do_traverse) before it lists the tips.
 */
export function givenObjects(walk: RevWalk): Set<number> {
  const roots = new Set(walk.commits.map((c) => walk.treeOf(c)));
  const given = new Set<number>(walk.givenCommits);
  for (const p of walk.pending) if (!(walk.table.types[p.n] === OBJ_TREE && roots.has(p.n))) given.add(p.n);
  return given;
}

/** The `includeTree` of `trees: 'tips'`: only a tree that is given (see givenObjects). */
function tipTreesOnly(walk: RevWalk): (n: number) => boolean {
  const given = givenObjects(walk);
  return (n) => given.has(n);
}

/**
 * `walkObjects` with the trees read on worker threads (see listObjectsParallel): the same objects,
 * in the same order. No visitor: what needs paths walks sequentially.
 */
export async function walkObjectsParallel(
  handle: StoreHandle, tips: readonly RevTip[], pool: WorkerPool<WalkTasks>, threads: number, options: Omit<WalkObjectsOptions, 'visit' | 'paths' | 'pathspec'> = {},
): Promise<WalkedObjects> {
  // The workers that will list (this thread lists too) open their stores and read the packs
  // while this thread walks the commits.
  const prepared = Promise.all(Array.from({ length: threads - 1 }, (_, w) => pool.run(w, 'prepare', { store: handle.store.key, shared: [] })));
  const walk = walkCommitsForListing(handle, tips, options);
  await prepared;
  const listed = await listObjectsParallel(walk, pool, threads, handle.store.key, options.missing ?? 'error');
  return locateListed(handle, walk, listed, options);
}

/**
 * Tips beyond which a walk is taken to cover much of the store (`--all` on a repository with
 * thousands of refs): reading whole packs at once then costs less than reading them piecemeal.
 */
const DENSE_TIPS = 256;
/** Commits beyond which the tree walk is taken to cover much of the store. */
const DENSE_COMMITS = 2048;

/**
 * The commit half of `walkObjects` (`git rev-list` without `--objects`): the included commits in
 * git's order are the walk's `commits`. No tree is listed, so none needs to be there; commits
 * come from the commit-graph where it has them.
 */
export function walkCommits(handle: StoreHandle, tips: readonly RevTip[], options: Omit<WalkObjectsOptions, 'visit' | 'paths' | 'trees' | 'deferMissingBlobs' | 'blobError'>): RevWalk {
  const paths = options.pathspec?.limits === true ? options.pathspec : undefined;
  const walk = new RevWalk(handle, {
    tagObjects: true, shallow: options.shallow ?? [], maxCount: options.maxCount, firstParent: options.firstParent, bisect: options.bisect, paths, excludePromisor: options.excludePromisor,
    maxAge: options.maxAge, minAge: options.minAge, skip: options.skip, minParents: options.minParents, maxParents: options.maxParents,
    // A tree the partial clone left out is allowed when a promisor commit names it: that needs
    // to know where each commit came from, which the graph does not say.
    commitGraph: options.missing !== 'allow-promisor',
    sparse: options.sparse,
    aggressiveEdges: options.aggressiveEdges,
  });
  if (options.excludePromisor === true) markPromisorPacks(handle, walk.table);
  throwIfAborted(options.signal, 'the walk');
  // A path-limited walk reads every commit's trees down the paths, and its parents' too: most of
  // the packs' trees, scattered (rev-list HEAD -- src gix/src on gitoxide: 1.60 -> 1.05 s).
  if (tips.length > DENSE_TIPS || paths !== undefined) coverStore(handle, walk);
  walk.addTips(tips);
  walk.walk();
  throwIfAborted(options.signal, 'the walk');
  return walk;
}

/**
 * walkCommits for a walk whose trees are listed next: a history this long has the tree walk
 * cover much of the store (see coverStore). A walk of commits alone does not need it (a graph's
 * commits read no pack, and loading every index whole cost rev-list --all its time and memory).
 */
function walkCommitsForListing(handle: StoreHandle, tips: readonly RevTip[], options: WalkObjectsOptions): RevWalk {
  const walk = walkCommits(handle, tips, options);
  if (walk.commits.length > DENSE_COMMITS) coverStore(handle, walk);
  return walk;
}

/**
 * What a walk over most of the store holds per object of it, beyond the store's own plan: the
 * table (an id, type, flags and name hash, ~26 bytes, at up to twice the count as it doubles, and
 * 8-16 bytes of slots), the listed order, the locations (8 bytes), the commits' maps. Measured on
 * gitoxide (226k objects): rev-list --objects --all peaked 23 MiB over the store's 256 MiB ceiling
 * uncharged; at a ceiling 16 MiB lower it kept within it.
 */
const WALK_BYTES_PER_OBJECT = 80;

/** Charges that a walk made against its store, given back when the walk is collected. */
const walkCharges = new FinalizationRegistry<{ handle: StoreHandle; bytes: number }>(({ handle, bytes }) => handle.store.charge(-bytes));
const charged = new WeakSet<RevWalk>();

/**
 * The walk is taken to cover much of the store: its tables are charged against the store's
 * ceiling, and the packs are read through recycled windows from the next read on, never whole:
 * the walk touches scattered parts of each pack (its trees and commits), about once each (see
 * PackFile.preferDense; rev-list --objects --all on gitoxide: 2.16-2.45 s either way, 226 -> 183
 * MB; pack-objects --revs --all on isomorphic-git: 1.25-1.55 -> 1.10-1.29 s, 172 -> 131 MB).
 */
function coverStore(handle: StoreHandle, walk: RevWalk): void {
  if (!charged.has(walk)) {
    charged.add(walk);
    const bytes = listedObjects(handle.packs()) * WALK_BYTES_PER_OBJECT;
    handle.store.charge(bytes);
    walkCharges.register(walk, { handle, bytes });
  }
  handle.preferDenseReads({ whole: false });
}

/** The pass over the indexes, then the listed objects less the missing ones (or the error for one). */
export function locateListed(handle: StoreHandle, walk: RevWalk, listed: readonly number[], options: WalkObjectsOptions): WalkedObjects {
  return drain(locateListedSteps(handle, walk, listed, options));
}

/** `locateListed` as steps, for `walkObjectsSliced`. */
function* locateListedSteps(handle: StoreHandle, walk: RevWalk, listed: readonly number[], options: WalkObjectsOptions): Steps<WalkedObjects> {
  throwIfAborted(options.signal, 'the walk');
  const table = walk.table;
  const locations = yield* locateObjectsSteps(handle, table);
  const missing: number[] = [...walk.missing];
  const order = leaveOutMissing(walk, listed, options, missing, new Set(walk.missing));
  return { walk, table, order, locations, missing };
}

/**
 * `listed` without its missing objects, each an error or (as `missing` allows) added to
 * `missing`; `reported` are missing ones already settled, and those the promisor remote has are
 * passed over unreported (--exclude-promisor-objects). With `deferMissingBlobs`, missing blobs stay.
 */
export function leaveOutMissing(walk: RevWalk, listed: ArrayLike<number>, options: WalkObjectsOptions, missing: number[], reported: ReadonlySet<number> = new Set()): Int32Array {
  const missingAction = options.missing ?? 'error';
  const table = walk.table;
  let kept = 0;
  const order = new Int32Array(listed.length);
  for (let i = 0; i < listed.length; i++) {
    const n = listed[i] as number;
    if (table.is(n, Flag.MISSING)) {
      if (reported.has(n) || walk.isPromisorObject(n)) continue;
      if (options.deferMissingBlobs === true && table.types[n] === OBJ_BLOB) {
        order[kept++] = n;
        continue;
      }
      if (options.blobError === 'pack-objects' && missingAction === 'error' && table.types[n] === OBJ_BLOB) {
        throw new PackwrightError('OBJECT_NOT_FOUND', `unable to read ${toHex(table.id(n))}`);
      }
      checkMissing(table, n, missingAction, table.is(n, Flag.PROMISOR));
      missing.push(n);
      continue;
    }
    order[kept++] = n;
  }
  return order.subarray(0, kept);
}

