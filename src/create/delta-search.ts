import { isPackwrightError, throwIfAborted } from '../errors/packwright-error.js';
import type { StoreHandle } from '../odb/store-handle.js';
import type { StorePack } from '../odb/store-pack.js';
import { WorkerPool } from '../workers/worker-pool.js';
import type { CreateTasks } from './create-tasks.js';
import { SHARE_AT, SHARE_END, searchSteps, type DeltaResults, type DeltaSegment } from './delta-window.js';
import { NOWHERE, type ObjectLocations } from '../walk/locate-objects.js';
import { Flag, type ObjectTable } from '../walk/object-table.js';
import { SliceClock } from '../walk/sliced-steps.js';
import { OBJ_BLOB, OBJ_TREE, typeNumber } from '../objects/object-type.js';
import { breakLongChains, Entry, type PackPlan } from './pack-plan.js';
import { readObject, type NewDeltas } from './write-pack.js';

export interface DeltaSearchOptions {
  handle: StoreHandle;
  table: ObjectTable;
  locations: ObjectLocations;
  plan: PackPlan;
  listed: Int32Array;
  window: number;
  /** git's --window-memory (0: no limit): see DeltaSegment.windowMemory. */
  windowMemory?: number | undefined;
  depth: number;
  /** Stored deltas are reused (not --no-reuse-delta): then git skips pairs its packs already tried. */
  reuseDelta: boolean;
  threads: number;
  compression: number;
  bigFileThreshold: number;
  deltas: NewDeltas;
  /** By object number, 1 for objects sent from a bitmapped pack as they are (git's pack reuse): not searched. */
  sentAsIs?: Uint8Array | undefined;
  /**
   * Bytes of compressed new deltas kept until the pack is written (git's pack.deltaCacheSize,
   * 256 MiB): beyond it, a delta is recomputed when written, so memory stays bounded.
   */
  deltaCacheSize?: number | undefined;
  /**
   * The worker threads to search on, asked for only when the search goes parallel (the caller
   * starts and prepares them then, and closes them); without it, a pool is made for the search.
   */
  pool?: (() => Promise<WorkerPool<CreateTasks>>) | undefined;
  signal?: AbortSignal | undefined;
  onProgress?: ((done: number, total: number) => void) | undefined;
}

/** git does not try objects smaller than this (pack-objects.c, prepare_pack). */
const MIN_SIZE = 50;
/** git's pack.deltaCacheSize default: compressed new deltas kept for writing. */
const DELTA_CACHE_SIZE = 256 * 1024 * 1024;
/** Below this many candidates, threads cost more to start than they save. */
const PARALLEL_MIN = 2000;

/** The worker script (create-worker.ts; in the CLI bundle, its own bundle beside it). */
export const CREATE_WORKER = new URL('./create-worker.js', import.meta.url);

/**
 * New deltas for the objects the plan stores whole, as git's prepare_pack and find_deltas do: the
 * candidates (at least 50 bytes, at most core.bigFileThreshold) sorted by type, path-name hash
 * and size (largest first), then searched with a window (see searchSegment). With threads, the
 * sorted list is cut into one segment a thread at changes of path-name hash (where a window loses
 * little), and a thread that finishes takes the tail of the longest search left (git's work
 * stealing); each reads objects through its own store.
 */
export async function searchDeltas(options: DeltaSearchOptions): Promise<void> {
  const { table, locations, plan, listed, deltas } = options;
  const candidates: number[] = [];
  const sentAsIs = options.sentAsIs;
  for (const o of listed) {
    const kind = plan.kind[o] as number;
    if ((kind === Entry.COPY || kind === Entry.RECOMPRESS) && sentAsIs?.[o] !== 1) candidates.push(o);
  }
  if (candidates.length === 0) return;
  // All stored whole in one pack: git's rule leaves no pair among them to try (a repack of a
  // packed repository). Pairs with a thin pack's bases are tried all the same (git's try_delta:
  // a delta against what the receiver has saves sending the object, however good it is).
  const firstPack = locations.pack[candidates[0] as number] as number;
  const nothingAmongThem = options.reuseDelta && firstPack >= 0 && candidates.every((o) => plan.kind[o] === Entry.COPY && locations.pack[o] === firstPack);
  const targetCount = candidates.length;
  // Preferred bases (thin packs) join the window as bases only, if a candidate shares their path.
  const names = new Set<number>();
  for (const o of candidates) names.add(table.nameHashes[o] as number);
  for (let o = 0; o < table.count; o++) {
    if (!table.is(o, Flag.PREFERRED) || table.is(o, Flag.LISTED | Flag.MISSING) || locations.pack[o] === NOWHERE) continue;
    if (names.has(table.nameHashes[o] as number) && (table.types[o] === OBJ_BLOB || table.types[o] === OBJ_TREE)) candidates.push(o);
  }
  if (candidates.length < 2 || (nothingAmongThem && candidates.length === targetCount)) {
    // git shows "Compressing objects" for what it would try (50 bytes and more), when that is two or more.
    const tried = nothingAmongThem ? candidates.filter((o) => (plan.size[o] as number) >= MIN_SIZE && (plan.size[o] as number) <= options.bigFileThreshold).length : 0;
    if (tried > 1) options.onProgress?.(tried, tried);
    return;
  }
  const sizes = objectSizes(options, candidates);
  const listPosition = new Int32Array(table.count).fill(-1);
  listed.forEach((o, i) => (listPosition[o] = i));
  const pool = candidates.filter((o) => {
    const size = sizes.get(o) as number;
    return size >= MIN_SIZE && size <= options.bigFileThreshold;
  });
  // No pair to try: git shows no "Compressing objects" then either.
  if (pool.length < 2) return;
  // type_size_sort: type, name hash, preferred bases, size, all descending; then later-listed first.
  pool.sort((a, b) =>
    (table.types[b] as number) - (table.types[a] as number) ||
    (table.nameHashes[b] as number) - (table.nameHashes[a] as number) ||
    // Preferred bases first among their path's objects, so they are in the window when needed.
    Number(table.is(a, Flag.LISTED)) - Number(table.is(b, Flag.LISTED)) ||
    (sizes.get(b) as number) - (sizes.get(a) as number) ||
    (listPosition[b] as number) - (listPosition[a] as number));
  const heights = deltaHeights(plan, listed);
  /** Where segment `start..to` begins once led by the `window` objects before it (bases only: no pair is lost at a cut). */
  const warmStart = (start: number): number => Math.max(0, start - options.window);
  const segmentOf = (start: number, to: number): DeltaSegment => {
    const from = warmStart(start);
    const n = to - from;
    const seg: DeltaSegment = {
      types: new Uint8Array(n), sizes: new Float64Array(n), storedWhole: new Uint8Array(n), packs: new Int32Array(n), heights: new Uint16Array(n),
      window: options.window, windowMemory: options.windowMemory ?? 0, warm: start - from, baseOnly: new Uint8Array(n), maxDepth: options.depth, hashLength: table.hashLength, compression: options.compression,
    };
    for (let i = 0; i < n; i++) {
      const o = pool[from + i] as number;
      seg.types[i] = table.types[o] as number;
      seg.sizes[i] = sizes.get(o) as number;
      seg.storedWhole[i] = options.reuseDelta && plan.kind[o] === Entry.COPY ? 1 : 0;
      seg.packs[i] = locations.pack[o] as number;
      seg.heights[i] = heights[o] as number;
      if (!table.is(o, Flag.LISTED)) {
        seg.baseOnly[i] = 1;
        seg.storedWhole[i] = 0;
      }
    }
    return seg;
  };
  // 0 means no limit, as in git.
  const cacheLimit = options.deltaCacheSize === 0 ? Infinity : options.deltaCacheSize ?? DELTA_CACHE_SIZE;
  let cached = 0;
  const apply = (segmentStart: number, r: DeltaResults, covered?: Uint8Array): void => {
    const from = warmStart(segmentStart);
    let start = 0;
    for (let k = 0; k < r.targets.length; k++) {
      const at = from + (r.targets[k] as number);
      const end = r.ends[k] as number;
      // Searched twice (a tail taken from a search already past the cut): the first results stand.
      if (covered !== undefined && covered[at] === 1) {
        start = end;
        continue;
      }
      const o = pool[at] as number;
      const b = pool[from + (r.bases[k] as number)] as number;
      plan.kind[o] = table.is(b, Flag.LISTED) ? Entry.NEW_DELTA : Entry.NEW_THIN;
      plan.base[o] = b;
      // A copy of the bytes (not a view): the segment's buffer can go once its deltas are taken.
      const keep = cached + (end - start) <= cacheLimit;
      if (keep) cached += end - start;
      deltas.set(o, { data: keep ? Buffer.from(r.data.subarray(start, end)) : undefined, size: r.sizes[k] as number });
      start = end;
    }
  };
  const total = pool.length;
  // Progress counts what may become a delta, as git's nr_deltas: the preferred bases in the window are not counted.
  const targetsBefore = new Int32Array(total + 1);
  for (let i = 0; i < total; i++) targetsBefore[i + 1] = (targetsBefore[i] as number) + (table.is(pool[i] as number, Flag.LISTED) ? 1 : 0);
  const targets = targetsBefore[total] as number;
  const threads = Math.max(1, options.threads);
  if (threads === 1 || total < PARALLEL_MIN) {
    const read = (i: number): Buffer => readObject(options.handle, table, locations, pool[i] as number).data;
    // On this thread: a step at a time, letting the event loop turn once this search has had its
    // share of the slice (SliceClock: a server searches for many requests on one loop).
    const steps = searchSteps(segmentOf(0, total), read, () => options.signal?.aborted === true);
    const clock = new SliceClock();
    let r: DeltaResults;
    try {
      for (;;) {
        const step = steps.next();
        if (step.done === true) {
          r = step.value;
          break;
        }
        if (clock.due) {
          options.onProgress?.(targetsBefore[step.value] as number, targets);
          await clock.turn();
        }
      }
    } finally {
      clock.close();
    }
    throwIfAborted(options.signal, 'delta compression');
    apply(0, r);
    options.onProgress?.(targets, targets);
    return;
  }
  // git's ll_find_deltas: one segment a thread, and a thread that runs out of work takes the
  // second half of what is left of the longest one (cut where the path-name hash changes, if
  // near), so the threads finish together with few cuts (each loses the pairs across it).
  // A segment's cost is taken to be the total size of its objects: cost[i] sums the first i.
  const cost = new Float64Array(total + 1);
  for (let i = 0; i < total; i++) cost[i + 1] = (cost[i] as number) + (sizes.get(pool[i] as number) as number);
  const bounds = segmentBounds(pool, table, cost, threads);
  const queue: [number, number][] = [];
  for (let k = 0; k + 1 < bounds.length; k++) queue.push([bounds[k] as number, bounds[k + 1] as number]);
  /** Each thread's search: its first target, where its segment begins (the warm objects), and what it shares. */
  type Search = { from: number; base: number; share: Int32Array };
  const running: (Search | undefined)[] = [];
  const covered = new Uint8Array(total);
  const minSteal = Math.max(2, 2 * options.window);
  const steal = (): [number, number] | undefined => {
    let victim: Search | undefined;
    let at = 0;
    let end = 0;
    let most = 0;
    for (const r of running) {
      if (r === undefined) continue;
      // The object in hand stays with its search.
      const a = Math.max(r.from, r.base + Atomics.load(r.share, SHARE_AT) + 1);
      const e = r.base + Atomics.load(r.share, SHARE_END);
      const left = (cost[e] as number) - (cost[Math.min(a, e)] as number);
      if (e - a >= minSteal && left > most) [victim, at, end, most] = [r, a, e, left];
    }
    if (victim === undefined) return undefined;
    const half = ((cost[at] as number) + (cost[end] as number)) / 2;
    let mid = at;
    while (mid < end && (cost[mid + 1] as number) <= half) mid++;
    mid = pathCut(pool, table, mid, end);
    if (mid - at < 1 || end - mid < 1) return undefined;
    Atomics.store(victim.share, SHARE_END, mid - victim.base);
    return [mid, end];
  };
  const workers = options.pool !== undefined ? await options.pool() : new WorkerPool<CreateTasks>(CREATE_WORKER, threads);
  const stop = new Int32Array(new SharedArrayBuffer(4));
  const onAbort = (): void => void Atomics.store(stop, 0, 1);
  options.signal?.addEventListener('abort', onAbort);
  let done = 0;
  try {
    const runThread = async (w: number): Promise<void> => {
      for (;;) {
        const range = queue.shift() ?? steal();
        if (range === undefined) return;
        const [from, to] = range;
        const base = warmStart(from);
        const share = new Int32Array(new SharedArrayBuffer(8));
        share[SHARE_END] = to - base;
        running[w] = { from, base, share };
        const segment = segmentOf(from, to);
        segment.share = share;
        const ids = table.idsOf(pool.slice(base, to));
        const r = await workers.run(w, 'deltas', { store: options.handle.store.key, segment, ids, stop });
        running[w] = undefined;
        if (Atomics.load(stop, 0) !== 0) return;
        apply(from, r, covered);
        const reached = base + r.stoppedAt;
        for (let i = from; i < reached; i++) {
          if (covered[i] === 1) continue;
          covered[i] = 1;
          if (table.is(pool[i] as number, Flag.LISTED)) done++;
        }
        options.onProgress?.(done, targets);
      }
    };
    await Promise.all(Array.from({ length: threads }, (_, w) => runThread(w).catch((e: unknown) => {
      Atomics.store(stop, 0, 1);
      throw e;
    })));
    throwIfAborted(options.signal, 'delta compression');
    // A chain may run across a cut (its base was a delta in the segment before): hold --depth.
    for (const o of breakLongChains(plan, listed, options.depth)) deltas.delete(o);
  } finally {
    options.signal?.removeEventListener('abort', onAbort);
    if (options.pool === undefined) await workers.close();
  }
}

/** How far past a cut point a cut may move to land on a change of path-name hash. */
const CUT_LOOKAHEAD = 64;

/**
 * Cuts `pool` into about `count` segments of similar cost (`cost[i]`: the total size of the first
 * `i` objects, each being compared with a window of objects of about its size): one path
 * with many large versions (a generated bundle, say) is split over the threads, which a cut by
 * count leaves to one of them (measured on isomorphic-git: 21 s of 23 in one segment). A cut moves
 * forward to where the path-name hash changes if that is near (pathCut). Size is only an
 * estimate of cost: the threads even out by taking each other's tails (searchDeltas).
 */
function segmentBounds(pool: readonly number[], table: ObjectTable, cost: Float64Array, count: number): number[] {
  const share = (cost[pool.length] as number) / count;
  const bounds = [0];
  let start = 0;
  for (let i = 0; i < pool.length; i++) {
    if ((cost[i + 1] as number) - (cost[start] as number) < share || i + 1 >= pool.length) continue;
    const cut = pathCut(pool, table, i + 1, pool.length);
    if (cut >= pool.length) break;
    bounds.push(cut);
    start = cut;
    i = cut - 1;
  }
  bounds.push(pool.length);
  return bounds;
}

/**
 * A cut at `cut`, moved forward to where the path-name hash (or type) changes if that is within
 * CUT_LOOKAHEAD and before `end`: a window loses only the pairs across a cut.
 */
function pathCut(pool: readonly number[], table: ObjectTable, cut: number, end: number): number {
  const same = (k: number): boolean => table.nameHashes[pool[k] as number] === table.nameHashes[pool[k - 1] as number] && table.types[pool[k] as number] === table.types[pool[k - 1] as number];
  let k = cut;
  while (k < end && k - cut < CUT_LOOKAHEAD && same(k)) k++;
  return k < end && !same(k) ? k : cut;
}

/**
 * How many copied deltas are stacked on each object at most (git's check_delta_limit): an object
 * that becomes a delta pushes all of them one deeper.
 */
function deltaHeights(plan: PackPlan, listed: Int32Array): Uint16Array {
  const heights = new Uint16Array(plan.kind.length);
  const byDepth: number[][] = [];
  for (const o of listed) {
    if (plan.kind[o] !== Entry.COPY_DELTA) continue;
    const d = plan.depth[o] as number;
    (byDepth[d] ??= []).push(o);
  }
  for (let d = byDepth.length - 1; d > 0; d--) {
    for (const o of byDepth[d] ?? []) {
      const b = plan.base[o] as number;
      const h = (heights[o] as number) + 1;
      if (h > (heights[b] as number)) heights[b] = h;
    }
  }
  return heights;
}

/** Object sizes (resolved, not the delta's) of the candidates, from entry headers or the store. */
function objectSizes(options: DeltaSearchOptions, candidates: readonly number[]): Map<number, number> {
  const { plan, locations, handle, table } = options;
  const sizes = new Map<number, number>();
  for (const o of candidates) {
    if (plan.kind[o] === Entry.COPY) {
      sizes.set(o, plan.size[o] as number);
      continue;
    }
    const k = locations.pack[o] as number;
    let type: number;
    let size: number;
    try {
      const info = k >= 0 ? (locations.packs[k] as StorePack).info(locations.position[o] as number) : handle.info(table.id(o));
      type = typeNumber(info.type);
      size = info.size;
    } catch (e) {
      // A copy whose header or chain is corrupt: the object may still be readable elsewhere.
      if (!isPackwrightError(e)) throw e;
      const obj = readObject(handle, table, locations, o);
      type = typeNumber(obj.type);
      size = obj.data.length;
    }
    if (table.types[o] === 0) table.types[o] = type;
    sizes.set(o, size);
  }
  return sizes;
}
