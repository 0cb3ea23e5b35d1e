import { baseNameCompare, S_IFDIR, S_IFMT } from '../objects/tree.js';

/**
 * A tree a walk has listed, kept so that its next version can be listed against it: its bytes,
 * and where each of its `count` entries starts (`offsets[count]` is its length).
 */
export interface TreeShape {
  data: Buffer;
  offsets: Int32Array;
  count: number;
  /** The slabs `data` and `offsets` were carved from (TreeShapes.allocate), if any. */
  slab: Slab | undefined;
  offsetSlab: Slab | undefined;
}

/** A block kept trees' bytes are carved from, reused once none of its trees is kept. */
export interface Slab {
  buffer: Buffer;
  /** Trees carved from it and not yet dropped. */
  live: number;
}

/**
 * The trees listed last, by object number, within a byte budget, the oldest dropped first. A walk
 * lists a tree's versions one after another (a directory changes in a few entries from one commit
 * to the next), so the version before is usually here. Oldest first, not least recently used: the
 * trees are carved from slabs in the order they are listed, so dropping them in that order frees
 * whole slabs (a slab is held while any of its trees is).
 */
export class TreeShapes {
  private readonly shapes = new Map<number, TreeShape>();
  private bytes = 0;
  // Kept trees' bytes and offsets are carved from slabs: a buffer of its own for each (an
  // ArrayBuffer made per tree) cost more than the lookups it saved on small trees. A slab lives
  // while a tree in it is kept.
  private slab: Slab = { buffer: Buffer.allocUnsafeSlow(0), live: 0 };
  private slabUsed = 0;
  private readonly freeSlabs: Slab[] = [];

  constructor(private readonly budget: number) {}

  /** Room for a tree of `size` bytes to be kept (set, with the slab) once listed. */
  allocate(size: number): { data: Buffer; slab: Slab | undefined } {
    if (size > SLAB_BYTES / 4) return { data: Buffer.allocUnsafeSlow(size), slab: undefined };
    if (this.slabUsed + size > this.slab.buffer.length) {
      const done = this.slab;
      this.slab = this.freeSlabs.pop() ?? { buffer: Buffer.allocUnsafeSlow(SLAB_BYTES), live: 0 };
      this.slabUsed = 0;
      if (done.live === 0 && done.buffer.length > 0) this.freeSlabs.push(done);
    }
    const slab = this.slab;
    slab.live++;
    const data = slab.buffer.subarray(this.slabUsed, this.slabUsed + size);
    this.slabUsed += size;
    return { data, slab };
  }

  /**
   * The tree kept for `n`, pinned (its bytes stay as they are, dropped or not) until `unpin`: a
   * tree being listed reads its previous version while more trees are kept.
   */
  pin(n: number): TreeShape | undefined {
    const shape = this.shapes.get(n);
    if (shape?.slab !== undefined) shape.slab.live++;
    if (shape?.offsetSlab !== undefined) shape.offsetSlab.live++;
    return shape;
  }

  unpin(shape: TreeShape): void {
    this.release(shape.slab);
    this.release(shape.offsetSlab);
  }

  private drop(shape: TreeShape): void {
    this.bytes -= shape.data.length + shape.offsets.byteLength;
    this.release(shape.slab);
    this.release(shape.offsetSlab);
  }

  private release(slab: Slab | undefined): void {
    if (slab !== undefined && --slab.live === 0 && slab !== this.slab) this.freeSlabs.push(slab);
  }

  /** A kept copy of `offsets[0..length)`, carved from a slab as trees are (and let go with the tree). */
  copyOffsets(offsets: Int32Array, length: number): { offsets: Int32Array; slab: Slab | undefined } {
    // Int32Array views start on 4-byte boundaries.
    this.slabUsed = (this.slabUsed + 3) & ~3;
    const room = this.allocate(length * 4);
    // A slab's room, or a buffer of its own (byte offset 0): aligned either way.
    const copy = new Int32Array(room.data.buffer, room.data.byteOffset, length);
    copy.set(offsets.subarray(0, length));
    return { offsets: copy, slab: room.slab };
  }

  set(n: number, shape: TreeShape): void {
    const old = this.shapes.get(n);
    if (old !== undefined) {
      this.shapes.delete(n);
      this.drop(old);
    }
    this.shapes.set(n, shape);
    this.bytes += shape.data.length + shape.offsets.byteLength;
    for (const [k, s] of this.shapes) {
      if (this.bytes <= this.budget) break;
      this.shapes.delete(k);
      this.drop(s);
    }
  }
}

/** Bytes of a slab that kept trees (and their offsets) are carved from. */
const SLAB_BYTES = 1 << 20;

/** The first probe of `commonLength`, in bytes; each next one is twice as long. */
const FIRST_PROBE = 64;

/**
 * How many leading bytes `a[aStart..aEnd)` and `b[bStart..bEnd)` share: native comparisons of
 * growing spans until one differs, then of halves of that span, then bytes. About twice the
 * shared length is compared, in a few dozen calls, where a loop in JavaScript would take a step
 * a byte.
 */
export function commonLength(a: Buffer, aStart: number, aEnd: number, b: Buffer, bStart: number, bEnd: number): number {
  const max = Math.min(aEnd - aStart, bEnd - bStart);
  let known = 0;
  let step = FIRST_PROBE;
  while (known < max) {
    const length = Math.min(step, max - known);
    if (a.compare(b, bStart + known, bStart + known + length, aStart + known, aStart + known + length) !== 0) {
      let lo = known;
      let hi = known + length;
      while (hi - lo > 32) {
        const mid = (lo + hi) >>> 1;
        if (a.compare(b, bStart + lo, bStart + mid, aStart + lo, aStart + mid) === 0) lo = mid;
        else hi = mid;
      }
      while (lo < hi && a[aStart + lo] === b[bStart + lo]) lo++;
      return lo;
    }
    known += length;
    step *= 2;
  }
  return max;
}

/** A listed version of a tree as the walks against it read it: its bytes and its entries' offsets. */
export type TreeEntries = Pick<TreeShape, 'data' | 'offsets' | 'count'>;

/**
 * How far `data[cStart..]` holds `prev`'s entries from `i` on byte for byte: the first entry of
 * `prev` (`i` when none) that is not wholly inside the shared stretch. The shared ones are at
 * `cStart + (offsets[k] - offsets[i])` in `data`.
 */
export function sharedEntries(data: Buffer, cStart: number, prev: TreeEntries, i: number): number {
  const off = prev.offsets;
  const pStart = off[i] as number;
  const shared = commonLength(data, cStart, data.length, prev.data, pStart, off[prev.count] as number);
  let lo = i;
  let hi = prev.count;
  while (lo < hi) {
    const mid = (lo + hi + 1) >>> 1;
    if ((off[mid] as number) - pStart <= shared) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** Whether entry `i` of `prev` is a tree (its mode, read up to the space). */
export function isTreeEntry(prev: TreeEntries, i: number): boolean {
  const pd = prev.data;
  let mode = 0;
  for (let sp = prev.offsets[i] as number, d = pd[sp] as number; d !== 0x20; d = pd[++sp] as number) mode = mode * 8 + (d - 0x30);
  return (mode & S_IFMT) === S_IFDIR;
}

/**
 * Entry `i` of `prev` against the entry named `data[nameStart..nameEnd)` in git's tree order
 * (base_name_compare): below 0 when it comes first, 0 for the same name, above 0 after.
 */
export function compareEntry(prev: TreeEntries, i: number, hashLength: number, data: Buffer, nameStart: number, nameEnd: number, isTree: boolean): number {
  const pd = prev.data;
  let sp = prev.offsets[i] as number;
  let mode = 0;
  for (let d = pd[sp] as number; d !== 0x20; d = pd[++sp] as number) mode = mode * 8 + (d - 0x30);
  return baseNameCompare(pd, sp + 1, (prev.offsets[i + 1] as number) - hashLength - 1, (mode & S_IFMT) === S_IFDIR, data, nameStart, nameEnd, isTree);
}
