import { BuddyAllocator } from './buddy-allocator.js';

/**
 * Buffers for objects being resolved, recycled through one arena of `limit` bytes (see
 * BuddyAllocator). Fresh memory is expensive here: the first write to a new page costs ~2.9 ns a
 * byte (DESIGN.md), so decoding 1.85 GB into new buffers costs seconds that reuse avoids. Blocks
 * come back to the arena the moment they are released, where per-object buffers would wait for
 * the garbage collector and inflate peak RSS. A request the arena cannot serve (larger than its
 * largest block, or the arena full) gets a buffer of its own.
 */
export class BufferPool {
  private arena: BuddyAllocator;

  constructor(readonly limit = 32 * 1024 * 1024) {
    this.arena = new BuddyAllocator(limit);
  }

  /** A buffer of at least `size` bytes. */
  acquire(size: number): Buffer {
    return this.arena.alloc(size) ?? Buffer.allocUnsafeSlow(size);
  }

  /** Gives a buffer from `acquire` back. */
  release(buf: Buffer): void {
    if (this.arena.owns(buf)) this.arena.free(buf);
  }

  clear(): void {
    this.arena = new BuddyAllocator(this.limit);
  }
}
