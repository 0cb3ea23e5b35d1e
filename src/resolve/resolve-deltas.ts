import { typeNumber, type ObjectType } from '../objects/object-type.js';
import { abortedError, isPackwrightError, PackwrightError, throwIfAborted } from '../errors/packwright-error.js';
import { OBJ_OFS_DELTA, OBJ_REF_DELTA } from '../pack/entry-header.js';
import { hashLength } from '../hash/object-format.js';
import { toHex } from '../hash/hex.js';
import type { WorkerPool } from '../workers/worker-pool.js';
import type { ResolveTasks } from './resolve-tasks.js';
import { buildDeltaTree, findRefGroup } from './delta-tree.js';
import { createBoard } from './offer-board.js';
import { allocArray, refBaseAt, type PackScan } from './pack-scan.js';
import { SLICE_MS, yieldToEventLoop } from './slices.js';
import { createPackVisitor, type PackVisitorSpec } from './pack-visitor.js';
import { Resolver, type ResolverStats } from './resolver.js';
import { CONTROL_ABORT, CONTROL_LENGTH, CONTROL_RESOLVED, CONTROL_STARTED, CONTROL_WORKERS, type ResolveState } from './resolve-state.js';

/** What pass 2 (`resolveDeltas`) did: objects resolved, delta depths, threads, memory peak. */
export interface ResolveStats {
  deltas: number;
  /** histogram[d] = number of objects at delta depth d (0 = not a delta). */
  chainHistogram: number[];
  /** Most bytes of resolved bases one thread held at once. */
  peakLiveBytes: number;
  /** Deltas whose base came from outside the pack (thin packs). */
  externalBases: number;
  /** With `depths`: every entry's delta depth (0 for non-deltas), in pack order. */
  depths: Uint32Array | undefined;
  /** Objects each thread resolved (one entry when run in-process). */
  perThread: number[];
  /** Children resolved by a thread other than the one that resolved their base's branch. */
  stolen: number;
  /** What each thread's visitor found (`ResolveOptions.visitor`), this thread's last. */
  visits: unknown[];
}

/**
 * A base found outside the pack, for thin packs (`--fix-thin`): what a store's `read` gives
 * (`(id) => (store.has(id) ? store.read(id) : undefined)`), or undefined when there is none.
 */
export type ExternalBaseLookup = (id: Uint8Array) => { type: ObjectType; data: Buffer } | undefined;

/** Options of pass 2 (`resolveDeltas`): threads, thin-pack bases, visitors, progress and cancellation. */
export interface ResolveOptions {
  signal?: AbortSignal | undefined;
  /** Work between turns of the event loop, in ms (default SLICE_MS). */
  sliceMs?: number | undefined;
  /** Progress of pass 2: deltas resolved of total. */
  onProgress?: ((done: number, total: number) => void) | undefined;
  name?: string | undefined;
  externalBase?: ExternalBaseLookup | undefined;
  /** Ids of external bases used, in the order they were first needed. */
  usedExternal?: Buffer[] | undefined;
  /**
   * Worker threads that resolve alongside the calling thread (the scan must then be in shared
   * memory); without it, resolution runs in the calling thread alone.
   */
  pool?: WorkerPool<ResolveTasks> | undefined;
  /** Ids by SHA-1 with collision detection (sha1dc): a flagged object fails with COLLISION_ATTACK. */
  detectCollisions?: boolean | undefined;
  /** Record each entry's delta depth (`ResolveStats.depths`: 4 bytes an entry). */
  depths?: boolean | undefined;
  /** Threads to resolve on, this one included (default: every worker of `pool`, and this one). */
  threads?: number | undefined;
  /**
   * Show every object of the types it names to a visitor in the thread that resolves it (the
   * workers' script must register it: see pack-visitor.ts).
   */
  visitor?: PackVisitorSpec | undefined;
}

/**
 * Pass 2 of index-pack: builds the delta tree, resolves every delta from its base (in worker
 * threads when given a pool, taking roots from a shared counter), then bases from outside the pack
 * for thin packs. Fails with PACK_UNRESOLVED_DELTAS naming the first deltas left.
 */
export async function resolveDeltas(packPath: string, scan: PackScan, options: ResolveOptions = {}): Promise<ResolveStats> {
  const name = options.name ?? '<pack>';
  const H = hashLength(scan.format);
  const n = scan.count;
  const pool = options.pool;
  const shared = pool !== undefined;
  // The pool's first `workers` threads resolve (index-pack's memory plan may use fewer than it has).
  const workers = Math.min(pool?.size ?? 0, (options.threads ?? Infinity) - 1);
  const threads = workers + 1;
  // Once the tree holds the OFS links, their table goes (4 bytes an entry, 40 MB at 10M objects)
  // unless depths are asked for, whose listing (verify-pack -v) names each delta's base.
  const tree = buildDeltaTree(scan, shared, options.depths !== true);
  const state: ResolveState = {
    format: scan.format, name, packPath, packEnd: scan.end, pack: scan.data,
    offsets: scan.offsets, types: scan.types, sizes: scan.sizes, headerLengths: scan.headerLengths,
    ids: scan.ids, resolvedTypes: scan.resolvedTypes, unhashed: scan.unhashed === true,
    ...(options.detectCollisions === true ? { detectCollisions: true } : {}),
    ...(scan.expectedCrc32 !== undefined ? { expectedCrc32: scan.expectedCrc32 } : {}),
    ...(scan.kept !== undefined ? { kept: scan.kept } : {}),
    ...(options.depths === true ? { depths: allocArray(Uint32Array, n, shared) } : {}),
    ...tree,
    control: new Int32Array(new SharedArrayBuffer(CONTROL_LENGTH * 4)),
    // Up to four offered branches per thread, bases up to 4 MiB each: the budget for shared bases.
    board: createBoard(4 * threads, 4 << 20),
  };
  if (options.visitor !== undefined) {
    state.visitor = options.visitor;
    state.leaves = visitorLeaves(scan, tree.roots, options.visitor.types, shared);
  }
  Atomics.store(state.control, CONTROL_WORKERS, threads);
  throwIfAborted(options.signal);
  const threadStats: ResolverStats[] = [];
  // The calling thread is one of the resolvers (git's --threads counts every thread), and reports
  // progress as it goes: its event loop is busy meanwhile, so this is also where it sees an abort
  // (a signal fired from a progress callback, or before) and tells the other threads to stop.
  const progress = options.onProgress;
  const signal = options.signal;
  const onBatch = progress === undefined && signal === undefined ? undefined : (): void => {
    progress?.(Atomics.load(state.control, CONTROL_RESOLVED), tree.deltaCount);
    if (signal?.aborted) Atomics.store(state.control, CONTROL_ABORT, 1);
  };
  const visitor = options.visitor !== undefined ? createPackVisitor(options.visitor, state) : undefined;
  const local = new Resolver(state, onBatch, visitor);
  try {
    if (pool !== undefined) {
      const running = pool.runAll('resolve', state, workers);
      // A thread that fails or dies (its request rejects; heard between this thread's slices)
      // stops the others at once; its own error is the one reported below.
      running.catch(() => Atomics.store(state.control, CONTROL_ABORT, 1));
      // Start together: a worker still booting would find the roots gone (~50 ms at most; they
      // were started before pass 1). The wait lets the event loop turn, so an abort from a timer
      // is heard meanwhile (a loaded machine can take far longer to boot a thread).
      const deadline = Date.now() + 500;
      for (let started = Atomics.load(state.control, CONTROL_STARTED); started < workers && Date.now() < deadline; started = Atomics.load(state.control, CONTROL_STARTED)) {
        // A timer, not Atomics.waitAsync: Node does not count that wait as pending work, and would
        // end the event loop under it.
        await new Promise((resolve) => setTimeout(resolve, 1));
        if (signal?.aborted) {
          Atomics.store(state.control, CONTROL_ABORT, 1);
          break;
        }
      }
      let localError: unknown;
      try {
        await runInSlices(local, state.control, signal, options.sliceMs ?? SLICE_MS);
      } catch (e) {
        Atomics.store(state.control, CONTROL_ABORT, 1);
        localError = e;
      }
      // The caller's abort is the news: do not wait for the other threads to hear it too (a
      // thread's reply takes a scheduler turn, tens of milliseconds on a loaded machine). They
      // stop at their next check of the flag and the caller's pool terminates them; `running`
      // already has its handler.
      if (signal?.aborted && isPackwrightError(localError, 'ABORTED')) throw abortedError(signal, 'resolving deltas');
      let workerError: unknown;
      try {
        threadStats.push(...(await running));
      } catch (e) {
        workerError = e;
      }
      // One thread's real error makes the others stop with ABORTED: report the real one.
      if (localError !== undefined && !isPackwrightError(localError, 'ABORTED')) throw localError;
      if (workerError !== undefined) throw workerError;
      if (localError !== undefined) throw localError;
    } else {
      await runInSlices(local, state.control, signal, options.sliceMs ?? SLICE_MS);
    }

    // Thin packs: REF deltas still unresolved wait for a base from outside the pack. Like git's
    // fix_unresolved_deltas, take them in pack order and skip any that an earlier external base
    // already resolved: a base that is also a delta inside the pack must not be appended too.
    let externalBases = 0;
    const refCount = tree.refOrder.length;
    if (options.externalBase !== undefined && refCount > 0) {
      const refs = scan.refs;
      for (let r = 0; r < refs.count; r++) {
        if (scan.resolvedTypes[refs.entries[r] as number] !== 0) continue;
        const g = findRefGroup(tree.refBaseIds, tree.refOrder, H, refs.ids, r * H);
        if (g < 0 || Atomics.load(tree.refClaims, g) !== 0) continue;
        const at = (tree.refOrder[g] as number) * H;
        const id = Buffer.from(tree.refBaseIds.subarray(at, at + H));
        const ext = options.externalBase(id);
        if (ext === undefined) continue;
        if (local.resolveExternal(g, typeNumber(ext.type), ext.data)) {
          options.usedExternal?.push(id);
          externalBases++;
        }
      }
    }
    if (visitor !== undefined) local.stats.visited = visitor.finish();
    threadStats.push(local.stats);

    const histogram: number[] = [0];
    let resolved = 0;
    let peak = 0;
    for (const t of threadStats) {
      resolved += t.resolved;
      peak = Math.max(peak, t.peakLiveBytes);
      t.histogram.forEach((v, d) => { histogram[d] = (histogram[d] ?? 0) + (v ?? 0); });
    }
    histogram[0] = n - tree.deltaCount;
    if (resolved !== tree.deltaCount) throw unresolved(scan, name, H, tree.deltaCount - resolved);
    if (tree.deltaCount > 0) options.onProgress?.(resolved, tree.deltaCount);
    const perThread = threadStats.map((t) => t.resolved);
    const stolen = threadStats.reduce((a, t) => a + t.stolen, 0);
    const visits = visitor !== undefined ? threadStats.map((t) => t.visited) : [];
    return { deltas: tree.deltaCount, chainHistogram: histogram, peakLiveBytes: peak, externalBases, depths: state.depths, perThread, stolen, visits };
  } finally {
    local.close();
    visitor?.close?.();
  }
}

/** Non-delta entries of the visited types that are not roots (no delta is based on them). */
function visitorLeaves(scan: PackScan, roots: Int32Array, types: number, shared: boolean): Int32Array {
  const isRoot = new Uint8Array(scan.count);
  for (let i = 0; i < roots.length; i++) isRoot[roots[i] as number] = 1;
  const list: number[] = [];
  for (let k = 0; k < scan.count; k++) {
    const t = scan.types[k] as number;
    if (t < OBJ_OFS_DELTA && types & (1 << t) && isRoot[k] === 0) list.push(k);
  }
  const leaves = allocArray(Int32Array, list.length, shared);
  leaves.set(list);
  return leaves;
}

/**
 * Runs this thread's resolver a slice at a time, giving the event loop a turn between slices so
 * an abort from a timer (or the caller's other work) is seen within a slice; an abort then stops
 * every thread through the shared flag.
 */
async function runInSlices(local: Resolver, control: Int32Array, signal: AbortSignal | undefined, sliceMs: number): Promise<void> {
  while (!local.run(sliceMs)) {
    await yieldToEventLoop();
    if (signal?.aborted) Atomics.store(control, CONTROL_ABORT, 1);
  }
}

function unresolved(scan: PackScan, name: string, H: number, count: number): PackwrightError {
  const missing: string[] = [];
  let firstOffset = 0;
  for (let k = 0; k < scan.count && missing.length < 3; k++) {
    if ((scan.types[k] as number) < OBJ_OFS_DELTA || scan.resolvedTypes[k] !== 0) continue;
    if (missing.length === 0) firstOffset = scan.offsets[k] as number;
    const at = scan.types[k] === OBJ_REF_DELTA ? refBaseAt(scan.refs, k, H) : -1;
    missing.push(at >= 0 ? `offset ${scan.offsets[k]} (base ${toHex(scan.refs.ids.subarray(at, at + H))})` : `offset ${scan.offsets[k]}`);
  }
  return new PackwrightError('PACK_UNRESOLVED_DELTAS', `${name}: pack has ${count} unresolved deltas (first at ${missing.join(', ')})`, { file: name, offset: firstOffset });
}
