import { BuddyAllocator } from './buddy-allocator.js';

/**
 * Buffers for objects being resolved, recycled through arenas (see BuddyAllocator). Fresh memory
 * is expensive here: the first write to a new page costs a fault (the first-touch cost, memory/index.ts), so decoding
 * 1.85 GB into new buffers costs seconds that reuse avoids. Blocks come back to their arena the
 * moment they are released, where per-object buffers would wait for the garbage collector and
 * inflate peak RSS. When the arenas are full, another is added: what the pool holds is the most
 * that was ever live at once (rounded to blocks), which the resolver keeps small. Requests above
 * the largest block (8 MiB, or the chunk if smaller) get buffers of their own.
 */
export class BufferPool {
  private arenas: BuddyAllocator[] = [];

  /** `chunk`: bytes of each arena. */
  constructor(readonly chunk = 16 * 1024 * 1024) {}

  /** A buffer of at least `size` bytes. */
  acquire(size: number): Buffer {
    for (const arena of this.arenas) {
      const block = arena.alloc(size);
      if (block !== undefined) return block;
    }
    const arena = new BuddyAllocator(this.chunk);
    if (arena.blockSize(size) < 0) return Buffer.allocUnsafeSlow(size);
    this.arenas.push(arena);
    return arena.alloc(size) as Buffer;
  }

  /** Gives a buffer from `acquire` back. */
  release(buf: Buffer): void {
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
  }
}
