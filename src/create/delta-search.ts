import { PackwrightError } from '../errors/packwright-error.js';
import { DeltaIndex } from '../delta/create-delta.js';
import type { StoreHandle } from '../odb/store-handle.js';
import type { StorePack } from '../odb/store-pack.js';
import { Deflater } from '../zlib/deflater.js';
import { LOOSE, type ObjectLocations } from './locate-objects.js';
import type { ObjectTable } from './object-table.js';
import { Entry, type PackPlan } from './pack-plan.js';
import type { NewDeltas } from './write-pack.js';

export interface DeltaSearchOptions {
  handle: StoreHandle;
  table: ObjectTable;
  locations: ObjectLocations;
  plan: PackPlan;
  listed: Int32Array;
  window: number;
  depth: number;
  threads: number;
  compression: number;
  bigFileThreshold: number;
  deltas: NewDeltas;
  signal?: AbortSignal;
  onProgress?: (done: number, total: number) => void;
}

/** git does not try objects smaller than this (pack-objects.c, prepare_pack). */
const MIN_SIZE = 50;

/** One object in the window: its data and index, loaded when a pair first needs them. */
interface Slot {
  o: number;
  data: Buffer | undefined;
  index: DeltaIndex | undefined;
}

/**
 * git's find_deltas for the objects the plan stores whole: sorted by type, path-name hash and size
 * (largest first), each is tried as a delta against the `window` objects before it, and the
 * smallest delta below half its size (less for deep bases) wins. Pairs a previous pack already
 * tried are skipped: both stored whole in the same pack means that pack's writer found no good
 * delta between them (git's rule), which is what keeps a repack of a packed repository cheap.
 */
export async function searchDeltas(options: DeltaSearchOptions): Promise<void> {
  const { table, locations, plan, listed, deltas } = options;
  const reuseDelta = true;
  const candidates: number[] = [];
  for (const o of listed) {
    const kind = plan.kind[o] as number;
    if (kind !== Entry.COPY && kind !== Entry.RECOMPRESS) continue;
    candidates.push(o);
  }
  if (candidates.length < 2) return;
  const sizes = objectSizes(options, candidates);
  const listPosition = new Int32Array(table.count);
  listed.forEach((o, i) => (listPosition[o] = i));
  const pool = candidates.filter((o) => {
    const size = sizes.get(o) as number;
    return size >= MIN_SIZE && size <= options.bigFileThreshold;
  });
  // type_size_sort: type, name hash, size, all descending; then later-listed first.
  pool.sort((a, b) =>
    (table.types[b] as number) - (table.types[a] as number) ||
    (table.nameHashes[b] as number) - (table.nameHashes[a] as number) ||
    (sizes.get(b) as number) - (sizes.get(a) as number) ||
    (listPosition[b] as number) - (listPosition[a] as number));
  const heights = deltaHeights(plan, listed);
  const window: Slot[] = [];
  const deflater = new Deflater(options.compression);
  const depth = plan.depth;
  const total = pool.length;
  let done = 0;
  for (const o of pool) {
    if ((++done & 255) === 0) {
      if (options.signal?.aborted) throw new PackwrightError('ABORTED', 'delta compression was aborted');
      options.onProgress?.(done, total);
      // Let the event loop turn: a server runs this among other requests.
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    const target: Slot = { o, data: undefined, index: undefined };
    const trgSize = sizes.get(o) as number;
    const trgType = table.types[o] as number;
    const trgStoredWhole = plan.kind[o] === Entry.COPY;
    let best: Buffer | undefined;
    let bestBase = -1;
    for (let w = window.length - 1; w >= 0; w--) {
      const src = window[w] as Slot;
      const s = src.o;
      if (table.types[s] !== trgType) break;
      if (reuseDelta && trgStoredWhole && plan.kind[s] === Entry.COPY && locations.pack[s] === locations.pack[o]) continue;
      // The target's own copied deltas sit on top of it: the whole chain must stay within --depth.
      const srcDepth = depth[s] as number;
      if (srcDepth + 1 + (heights[o] as number) > options.depth) continue;
      const srcSize = sizes.get(s) as number;
      // try_delta's limits: a delta must save at least half, less the deeper the base already is.
      let maxSize = best === undefined ? Math.floor(trgSize / 2) - table.hashLength : best.length;
      maxSize = Math.floor((maxSize * (options.depth - srcDepth)) / (options.depth + 1));
      if (maxSize <= 0) continue;
      const sizeDiff = srcSize < trgSize ? trgSize - srcSize : 0;
      if (sizeDiff >= maxSize) continue;
      if (trgSize < srcSize / 32) continue;
      target.data ??= readData(options, o);
      src.data ??= readData(options, s);
      src.index ??= new DeltaIndex(src.data);
      const delta = src.index.createDelta(target.data, maxSize);
      if (delta !== undefined && (best === undefined || delta.length < best.length)) {
        best = delta;
        bestBase = s;
      }
    }
    if (best !== undefined) {
      plan.kind[o] = Entry.NEW_DELTA;
      plan.base[o] = bestBase;
      depth[o] = (depth[bestBase] as number) + 1;
      deltas.set(o, { data: Buffer.from(deflater.deflate(best)), size: best.length });
    }
    window.push(target);
    if (window.length > options.window) {
      const dropped = window.shift() as Slot;
      dropped.data = undefined;
      dropped.index = undefined;
    }
  }
  deflater.close();
  options.onProgress?.(total, total);
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

function readData(options: DeltaSearchOptions, o: number): Buffer {
  const { locations, handle, table } = options;
  const k = locations.pack[o] as number;
  if (k >= 0) return (locations.packs[k] as StorePack).read(locations.position[o] as number).data;
  if (k === LOOSE) return handle.read(table.id(o)).data;
  return handle.read(table.id(o)).data;
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
    const info = k >= 0 ? (locations.packs[k] as StorePack).info(locations.position[o] as number) : handle.info(table.id(o));
    if (table.types[o] === 0) table.types[o] = info.type;
    sizes.set(o, info.size);
  }
  return sizes;
}
