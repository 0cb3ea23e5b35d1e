/**
 * Recycles the buffers of evicted delta bases. Fresh memory is expensive here: the first write to a
 * new page costs ~2.9 ns a byte (DESIGN.md), so decoding 1.85 GB into new buffers costs seconds
 * that reuse avoids, and garbage-collected external memory also inflates peak RSS.
 * Sizes are rounded up to classes a quarter of a power of two apart (at most 25 % slack).
 */
export class BufferPool {
  private readonly free = new Map<number, Buffer[]>();
  private bytes = 0;

  constructor(readonly limit = 32 * 1024 * 1024) {}

  static capacityFor(size: number): number {
    if (size <= 256) return 256;
    const top = 2 ** Math.floor(Math.log2(size));
    const step = top / 4;
    return Math.ceil(size / step) * step;
  }

  /**
   * A buffer of at least `size` bytes (its length is a class capacity). A free buffer up to four
   * classes larger (at most ~2×) is taken before fresh memory: objects come in many sizes, and an
   * exact-class pool would miss often.
   */
  acquire(size: number): Buffer {
    const capacity = BufferPool.capacityFor(size);
    let c = capacity;
    for (let step = 0; step < 5; step++) {
      const reused = this.free.get(c)?.pop();
      if (reused !== undefined) {
        this.bytes -= c;
        return reused;
      }
      c = BufferPool.capacityFor(c + 1);
    }
    return Buffer.allocUnsafeSlow(capacity);
  }

  release(buf: Buffer): void {
    const capacity = buf.length;
    if (capacity !== BufferPool.capacityFor(capacity) || this.bytes + capacity > this.limit) return;
    let list = this.free.get(capacity);
    if (list === undefined) this.free.set(capacity, (list = []));
    list.push(buf);
    this.bytes += capacity;
  }

  clear(): void {
    this.free.clear();
    this.bytes = 0;
  }
}
