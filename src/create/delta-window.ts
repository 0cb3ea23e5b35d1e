import { DeltaIndex } from '../delta/create-delta.js';
import { Deflater } from '../zlib/deflater.js';

/**
 * A run of the sorted delta candidates, searched with one window: what one thread works on.
 * Everything is by index in the segment; the main thread maps results back to objects.
 */
export interface DeltaSegment {
  types: Uint8Array;
  sizes: Float64Array;
  /**
   * 1 when the object is stored whole in pack `packs[i]` and stored deltas are reused: git then
   * does not try it against another object of that pack (see searchSteps).
   */
  storedWhole: Uint8Array;
  /** The pack the object comes from (a number the caller chose), or -1. */
  packs: Int32Array;
  /** Copied deltas stacked on the object (see deltaHeights): its own delta must leave room for them. */
  heights: Uint16Array;
  window: number;
  /**
   * Bytes the window may hold (git's --window-memory; 0: no limit): objects' data and their delta
   * indexes, the oldest let go first before each target, down to one object.
   */
  windowMemory: number;
  /** The first `warm` objects only fill the window (the end of the segment before): no target among them. */
  warm: number;
  /** 1 for objects that are bases only (the receiver has them: a thin pack's preferred bases). */
  baseOnly: Uint8Array;
  maxDepth: number;
  hashLength: number;
  compression: number;
  /**
   * Shared with the thread that hands out work: [0] the first object not to search (another
   * thread may take the tail of this segment by lowering it while the search runs, git's work
   * stealing), [1] the object being searched now. Without it the whole segment is searched.
   */
  share?: Int32Array | undefined;
}

/** DeltaSegment.share: where the search is to stop… */
export const SHARE_END = 0;
/** …and where it is. */
export const SHARE_AT = 1;

/** The deltas a segment's search found, compressed, back to back. */
export interface DeltaResults {
  /** Segment index of each target that got a delta… */
  targets: Int32Array;
  /** …its base (a segment index)… */
  bases: Int32Array;
  /** …the delta's size before compression… */
  sizes: Float64Array;
  /** …and where its compressed bytes end in `data` (the previous end is the start). */
  ends: Float64Array;
  data: Uint8Array;
  /** The first object the search did not reach (the segment's length when it searched them all). */
  stoppedAt: number;
}

/** One object in the window: its data and index, loaded when a pair first needs them. */
interface Slot {
  i: number;
  data: Buffer | undefined;
  index: DeltaIndex | undefined;
}

/**
 * git's find_deltas over one segment: each object is tried as a delta against the `window`
 * objects before it (same type only), within git's limits (try_delta): a delta must be below half
 * the target (less for deep bases) and smaller than the best so far; sizes too far apart are not
 * tried; neither are pairs stored whole in the same pack, which that pack's writer already
 * tried. Object data is read by `read(i)` only when a pair needs it.
 */
export function searchSegment(seg: DeltaSegment, read: (i: number) => Buffer, shouldStop: () => boolean): DeltaResults {
  const steps = searchSteps(seg, read, shouldStop);
  for (let r = steps.next(); ; r = steps.next()) if (r.done === true) return r.value;
}

/** Targets between the points where `searchSteps` yields. */
const STEP = 64;

/**
 * `searchSegment` as a generator that yields every STEP targets: a caller on the main thread
 * drives it and lets the event loop turn between steps (a server keeps answering while one thread
 * compresses), where a worker runs it straight through.
 */
export function* searchSteps(seg: DeltaSegment, read: (i: number) => Buffer, shouldStop: () => boolean): Generator<number, DeltaResults> {
  const n = seg.types.length;
  const depth = new Uint16Array(n);
  const window: Slot[] = [];
  const deflater = new Deflater(seg.compression);
  const targets: number[] = [];
  const bases: number[] = [];
  const sizes: number[] = [];
  const chunks: Buffer[] = [];
  const ends: number[] = [];
  let used = 0;
  // Bytes the window's objects hold (data and delta index), for windowMemory.
  let held = 0;
  const free = (slot: Slot): void => {
    held -= (slot.data?.length ?? 0) + (slot.index?.memory ?? 0);
    slot.data = undefined;
    slot.index = undefined;
  };
  const share = seg.share;
  let t = 0;
  for (; t < n; t++) {
    if (share !== undefined) {
      if (t >= Atomics.load(share, SHARE_END)) break;
      Atomics.store(share, SHARE_AT, t);
    }
    if (t % STEP === STEP - 1) {
      if (shouldStop()) break;
      yield t;
    }
    const target: Slot = { i: t, data: undefined, index: undefined };
    while (seg.windowMemory > 0 && held > seg.windowMemory && window.length > 1) free(window.shift() as Slot);
    if (t < seg.warm || seg.baseOnly[t] === 1) {
      window.push(target);
      if (window.length > seg.window) free(window.shift() as Slot);
      continue;
    }
    const trgSize = seg.sizes[t] as number;
    const trgType = seg.types[t] as number;
    const trgWhole = seg.storedWhole[t] === 1;
    const trgPack = seg.packs[t] as number;
    const room = seg.maxDepth - (seg.heights[t] as number);
    let best: Buffer | undefined;
    let bestBase = -1;
    for (let w = window.length - 1; w >= 0; w--) {
      const src = window[w] as Slot;
      const s = src.i;
      if (seg.types[s] !== trgType) break;
      // git's try_delta: a target its pack stores whole was tried against that pack's objects by
      // whoever wrote it; a base the receiver has (baseOnly) is worth trying all the same.
      if (trgWhole && seg.packs[s] === trgPack && trgPack >= 0 && seg.baseOnly[s] === 0) continue;
      const srcDepth = depth[s] as number;
      if (srcDepth + 1 > room) continue;
      const srcSize = seg.sizes[s] as number;
      let maxSize = best === undefined ? Math.floor(trgSize / 2) - seg.hashLength : best.length;
      maxSize = Math.floor((maxSize * (seg.maxDepth - srcDepth)) / (seg.maxDepth + 1));
      if (maxSize <= 0) continue;
      const sizeDiff = srcSize < trgSize ? trgSize - srcSize : 0;
      if (sizeDiff >= maxSize) continue;
      if (trgSize < srcSize / 32) continue;
      if (target.data === undefined) {
        target.data = read(t);
        held += target.data.length;
      }
      if (src.data === undefined) {
        src.data = read(s);
        held += src.data.length;
      }
      if (src.index === undefined) {
        src.index = new DeltaIndex(src.data);
        held += src.index.memory;
      }
      const delta = src.index.createDelta(target.data, maxSize);
      if (delta !== undefined && (best === undefined || delta.length < best.length)) {
        best = delta;
        bestBase = s;
      }
    }
    if (best !== undefined) {
      depth[t] = (depth[bestBase] as number) + 1;
      const z = Buffer.from(deflater.deflate(best));
      targets.push(t);
      bases.push(bestBase);
      sizes.push(best.length);
      chunks.push(z);
      used += z.length;
      ends.push(used);
    }
    window.push(target);
    if (window.length > seg.window) free(window.shift() as Slot);
  }
  deflater.close();
  const data = new Uint8Array(used);
  let p = 0;
  for (const c of chunks) {
    data.set(c, p);
    p += c.length;
  }
  return { targets: Int32Array.from(targets), bases: Int32Array.from(bases), sizes: Float64Array.from(sizes), ends: Float64Array.from(ends), data, stoppedAt: t };
}
