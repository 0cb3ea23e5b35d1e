import { BuddyAllocator } from './buddy-allocator.js';

/**
 * Buffers for objects being resolved, recycled through arenas (see BuddyAllocator). Fresh memory
 * is expensive here: the first write to a new page costs a fault (the first-touch cost, memory/index.ts), so decoding
 * 1.85 GB into new buffers costs seconds that reuse avoids. Blocks come back to their arena the
 * moment they are released, where per-object buffers would wait for the garbage collector and
 * inflate peak RSS. When the arenas are full, another is added: what the pool holds is the most
 * that was ever live at once (rounded to blocks), which the resolver keeps small. Requests above
 * the largest block (8 MiB, or the chunk if smaller) get buffers of their own, rounded up to an
 * eighth of their power of two; released, up to LARGE_KEEP bytes of them wait for the next
 * request that fits (a pack of 16 MiB objects, resolved one delta after another, then holds a
 * few buffers instead of a new one per object left to the collector: on a ~5 GiB pack of 16 MiB
 * blobs, index-pack at --threads=2 went from 25.1 s and 389 MiB to 21.2 s and 220 MiB).
 */
export class BufferPool {
  private arenas: BuddyAllocator[] = [];
  /** Released buffers of their own, for reuse, and the ones this pool made. */
  private large: Buffer[] = [];
  private largeBytes = 0;
  private readonly own = new WeakSet<ArrayBufferLike>();
  private readonly maxBlock: number;

  /** `chunk`: bytes of each arena. */
  constructor(readonly chunk = 16 * 1024 * 1024) {
    this.maxBlock = BuddyAllocator.largestBlockFor(chunk);
  }

  /** A buffer of at least `size` bytes. */
  acquire(size: number): Buffer {
    if (size > this.maxBlock) return this.acquireLarge(size);
    for (const arena of this.arenas) {
      const block = arena.alloc(size);
      if (block !== undefined) return block;
    }
    const arena = new BuddyAllocator(this.chunk);
    this.arenas.push(arena);
    return arena.alloc(size) as Buffer;
  }

  /** Gives a buffer from `acquire` back. */
  release(buf: Buffer): void {
    if (buf.length > this.maxBlock) {
      if (!this.own.has(buf.buffer)) return;
      this.large.push(buf);
      this.largeBytes += buf.length;
      // Keep the most recent ones within the bound; the others go to the collector.
      while (this.largeBytes > LARGE_KEEP && this.large.length > 0) this.largeBytes -= (this.large.shift() as Buffer).length;
      return;
    }
    for (const arena of this.arenas) {
      if (arena.owns(buf)) {
        arena.free(buf);
        return;
      }
    }
  }

  /** Bytes of the arenas. */
  get size(): number {
    return this.arenas.length * this.chunk;
  }

  clear(): void {
    this.arenas = [];
    this.large = [];
    this.largeBytes = 0;
  }

  private acquireLarge(size: number): Buffer {
    let best = -1;
    for (let i = 0; i < this.large.length; i++) {
      const b = this.large[i] as Buffer;
      if (b.length >= size && (best < 0 || b.length < (this.large[best] as Buffer).length)) best = i;
    }
    if (best >= 0) {
      const [b] = this.large.splice(best, 1) as [Buffer];
      this.largeBytes -= b.length;
      return b;
    }
    const step = 2 ** Math.floor(Math.log2(size)) / 8;
    const buf = Buffer.allocUnsafeSlow(Math.ceil(size / step) * step);
    this.own.add(buf.buffer);
    return buf;
  }
}

/** Released buffers of their own kept for reuse, at most this many bytes (a few large objects). */
const LARGE_KEEP = 48 * 1024 * 1024;
