/**
 * A tree a walk has listed, kept so that its next version can be listed against it: its bytes,
 * and where each of its `count` entries starts (`offsets[count]` is its length).
 */
export interface TreeShape {
  data: Buffer;
  offsets: Int32Array;
  count: number;
}

/**
 * The trees listed last, by object number, within a byte budget (the least recently used go
 * first). A walk lists a tree's versions one after another (a directory changes in a few entries
 * from one commit to the next), so the version before is usually here.
 */
export class TreeShapes {
  private readonly shapes = new Map<number, TreeShape>();
  private bytes = 0;
  // Kept trees' bytes and offsets are carved from slabs: a buffer of its own for each (an
  // ArrayBuffer made per tree) cost more than the lookups it saved on small trees. A slab lives
  // while a tree in it is kept.
  private slab = Buffer.alloc(0);
  private slabUsed = 0;
  private offsetSlab = new Int32Array(0);
  private offsetsUsed = 0;

  constructor(private readonly budget: number) {}

  /** Room for a tree of `size` bytes to be kept (set) once listed. */
  allocate(size: number): Buffer {
    if (size > SLAB_BYTES / 4) return Buffer.allocUnsafeSlow(size);
    if (this.slabUsed + size > this.slab.length) {
      this.slab = Buffer.allocUnsafeSlow(SLAB_BYTES);
      this.slabUsed = 0;
    }
    const room = this.slab.subarray(this.slabUsed, this.slabUsed + size);
    this.slabUsed += size;
    return room;
  }

  /** A kept copy of `offsets[0..length)`. */
  copyOffsets(offsets: Int32Array, length: number): Int32Array {
    if (length > SLAB_OFFSETS / 4) return offsets.slice(0, length);
    if (this.offsetsUsed + length > this.offsetSlab.length) {
      this.offsetSlab = new Int32Array(SLAB_OFFSETS);
      this.offsetsUsed = 0;
    }
    const copy = this.offsetSlab.subarray(this.offsetsUsed, this.offsetsUsed + length);
    copy.set(offsets.subarray(0, length));
    this.offsetsUsed += length;
    return copy;
  }

  get(n: number): TreeShape | undefined {
    const shape = this.shapes.get(n);
    if (shape !== undefined) {
      // Used again: the most recent now.
      this.shapes.delete(n);
      this.shapes.set(n, shape);
    }
    return shape;
  }

  set(n: number, shape: TreeShape): void {
    const size = shape.data.length + shape.offsets.byteLength;
    if (size > this.budget) return;
    const old = this.shapes.get(n);
    if (old !== undefined) {
      this.shapes.delete(n);
      this.bytes -= old.data.length + old.offsets.byteLength;
    }
    this.shapes.set(n, shape);
    this.bytes += size;
    for (const [k, s] of this.shapes) {
      if (this.bytes <= this.budget) break;
      this.shapes.delete(k);
      this.bytes -= s.data.length + s.offsets.byteLength;
    }
  }
}

/** Bytes of a slab that kept trees are carved from, and offsets of an offsets slab. */
const SLAB_BYTES = 1 << 20;
const SLAB_OFFSETS = 1 << 16;

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
