/**
 * A buddy allocator over one preallocated buffer: blocks of 2^k bytes, split in halves on demand
 * and merged with their free "buddy" when freed.
 *
 * Why: the delta-base cache holds objects of every size and replaces them at a high rate (10 GB of
 * bases through a 96 MiB cache for `cat-file --batch` over gitoxide). With one Buffer per object,
 * every eviction left garbage that V8 frees only at its next collection, ~90 MB at any time, and
 * pooling by size class still missed 13k times. Blocks carved from one buffer are reused at once,
 * so the memory behind the cache is exactly the buffer, touched as it fills.
 */
export class BuddyAllocator {
  /** The memory blocks are carved from; allocated lazily on first use. */
  private memory: Buffer | undefined;
  readonly size: number;
  private readonly minShift: number;
  /** Bytes of the smallest block. Block arithmetic uses shifts: `2 ** k` calls Math.pow (~30× slower). */
  private readonly unit: number;
  /** Bytes of the largest block. */
  private readonly maxBlock: number;
  /** Head of each order's free list (a block index in units of the smallest block), or -1. */
  private readonly heads: Int32Array;
  private readonly next: Int32Array;
  private readonly prev: Int32Array;
  /** The order of the free block starting at each index, or -1 when none starts there. */
  private readonly freeOrder: Int8Array;
  /** The order of the allocated block starting at each index, or -1. */
  private readonly usedOrder: Int8Array;
  /** Blocks allocated and not yet freed. */
  private live = 0;

  /**
   * `size` is rounded down to a multiple of the largest block, `2^maxShift` bytes (requests above
   * it fail; by default 8 MiB, or the largest power of two in `size` if smaller); the smallest
   * block is `2^minShift` bytes.
   */
  constructor(size: number, minShift = 8, maxShift = Math.min(23, Math.max(minShift, Math.floor(Math.log2(Math.max(1, size)))))) {
    if (maxShift > 30 || minShift > maxShift) throw new RangeError(`buddy allocator: block sizes 2^${minShift}..2^${maxShift} are not supported`);
    const top = 2 ** maxShift;
    this.size = Math.floor(size / top) * top;
    this.minShift = minShift;
    this.unit = 1 << minShift;
    this.maxBlock = top;
    const units = this.size / this.unit;
    this.heads = new Int32Array(maxShift - minShift + 1).fill(-1);
    this.next = new Int32Array(units);
    this.prev = new Int32Array(units);
    this.freeOrder = new Int8Array(units).fill(-1);
    this.usedOrder = new Int8Array(units).fill(-1);
    this.freeAll();
  }

  /**
   * Makes every block free again, keeping the memory: for an owner that is done with all of its
   * blocks (a closed cache) and hands the allocator to the next.
   */
  reset(): void {
    this.live = 0;
    this.heads.fill(-1);
    this.freeOrder.fill(-1);
    this.usedOrder.fill(-1);
    this.freeAll();
  }

  private freeAll(): void {
    const perTop = this.maxBlock / this.unit;
    const topOrder = this.heads.length - 1;
    for (let i = this.units - perTop; i >= 0; i -= perTop) this.push(i, topOrder);
  }

  /** The largest block an allocator of `size` bytes has with the default shifts. */
  static largestBlockFor(size: number, minShift = 8): number {
    return 2 ** Math.min(23, Math.max(minShift, Math.floor(Math.log2(Math.max(1, size)))));
  }

  /** Blocks allocated and not yet freed: 0 when the allocator is as `reset` leaves it. */
  get allocated(): number {
    return this.live;
  }

  /** Number of smallest blocks: the range of block indices. */
  get units(): number {
    return this.freeOrder.length;
  }

  /** Bytes of the block that would hold `size` bytes, or -1 when no block is large enough. */
  blockSize(size: number): number {
    const order = this.orderFor(size);
    return order < 0 ? -1 : 1 << (order + this.minShift);
  }

  /**
   * A view of a free block of at least `size` bytes (its length is the block's), or undefined when
   * none is free. The view's byteOffset identifies the block for `free`.
   */
  alloc(size: number): Buffer | undefined {
    const order = this.orderFor(size);
    if (order < 0) return undefined;
    let o = order;
    while (o < this.heads.length && (this.heads[o] as number) < 0) o++;
    if (o >= this.heads.length) return undefined;
    const index = this.heads[o] as number;
    this.unlink(index, o);
    // Split down to the order wanted, freeing the upper halves.
    while (o > order) {
      o--;
      this.push(index + (1 << o), o);
    }
    this.usedOrder[index] = order;
    this.live++;
    this.memory ??= Buffer.allocUnsafeSlow(this.size);
    const offset = index * this.unit;
    return Buffer.from(this.memory.buffer, this.memory.byteOffset + offset, 1 << (order + this.minShift));
  }

  /** True when `buf` is a block from this allocator. */
  owns(buf: Uint8Array): boolean {
    return this.memory !== undefined && buf.buffer === this.memory.buffer;
  }

  /** The index of a block `alloc` gave. */
  indexOf(block: Uint8Array): number {
    return (block.byteOffset - (this.memory as Buffer).byteOffset) / this.unit;
  }

  /**
   * The allocated blocks that must be freed for a block of `size` bytes to form where the block
   * `block` is: those in the aligned region of that size (or of `block`'s own size, if larger)
   * around it. Freeing them all merges the region into one free block.
   */
  blocksAround(block: Uint8Array, size: number): number[] {
    const order = Math.max(this.orderFor(size), this.orderFor(block.length));
    const span = 1 << order;
    const start = this.indexOf(block) & ~(span - 1);
    const used: number[] = [];
    for (let i = start; i < start + span;) {
      const f = this.freeOrder[i] as number;
      if (f >= 0) {
        i += 1 << f;
        continue;
      }
      const u = this.usedOrder[i] as number;
      used.push(i);
      i += 1 << u;
    }
    return used;
  }

  /** Returns a block that `alloc` gave. */
  free(block: Uint8Array): void {
    this.freeAt(this.indexOf(block));
  }

  /** Returns the block that `alloc` gave at `index` (`indexOf`); a free index is left alone. */
  freeAt(at: number): void {
    let index = at;
    let order = this.usedOrder[index] as number;
    if (order < 0) return;
    this.usedOrder[index] = -1;
    this.live--;
    while (order < this.heads.length - 1) {
      const buddy = index ^ (1 << order);
      if (this.freeOrder[buddy] !== order) break;
      this.unlink(buddy, order);
      index = Math.min(index, buddy);
      order++;
    }
    this.push(index, order);
  }

  private orderFor(size: number): number {
    if (size > this.maxBlock) return -1;
    // ceil(log2(size)) for 1 < size <= 2^30.
    const shift = size <= 1 ? 0 : 32 - Math.clz32(size - 1);
    return shift > this.minShift ? shift - this.minShift : 0;
  }

  private push(index: number, order: number): void {
    const head = this.heads[order] as number;
    this.next[index] = head;
    this.prev[index] = -1;
    if (head >= 0) this.prev[head] = index;
    this.heads[order] = index;
    this.freeOrder[index] = order;
  }

  private unlink(index: number, order: number): void {
    const n = this.next[index] as number;
    const p = this.prev[index] as number;
    if (p >= 0) this.next[p] = n;
    else this.heads[order] = n;
    if (n >= 0) this.prev[n] = p;
    this.freeOrder[index] = -1;
  }
}
