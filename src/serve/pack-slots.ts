import { abortedError } from '../errors/packwright-error.js';

/**
 * How many packs one server makes at once; the requests past that wait their turn, in order.
 * Counting, planning and writing a pack run on the server's event loop in slices, and one turn of
 * the loop runs a slice of each pack under way: 16 clones of gitoxide at once from one
 * `packwright serve` on 2 cores kept the loop's p99 delay near 100 ms with every pack going at
 * once. The work is bound by the cores either way (the clients' index-pack shares them), so the
 * same clones take as long in all with fewer packs made at a time. git leaves this to the system
 * (a process a pack) or to a daemon's --max-connections.
 */
export class PackSlots {
  private used = 0;
  private readonly waiting: (() => void)[] = [];

  /** `limit`: packs made at once (at least 1). */
  constructor(readonly limit: number) {
    if (!(limit >= 1)) throw new RangeError(`pack slots: ${limit} is not a count`);
  }

  /** Packs being made now, and requests waiting for a slot. */
  get counts(): { used: number; waiting: number } {
    return { used: this.used, waiting: this.waiting.length };
  }

  /**
   * Resolves once a slot is this caller's, to the function that gives it back (call it once,
   * whatever happens). A `signal` that fires while waiting rejects with ABORTED and takes no slot.
   */
  acquire(signal?: AbortSignal): Promise<() => void> {
    if (signal?.aborted === true) return Promise.reject(abortedError(signal, 'waiting to make the pack'));
    let released = false;
    const release = (): void => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      if (next !== undefined) next();
      else this.used--;
    };
    if (this.used < this.limit) {
      this.used++;
      return Promise.resolve(release);
    }
    return new Promise((resolve, reject) => {
      // The slot passes straight from the one who releases it to the next in line.
      const take = (): void => {
        signal?.removeEventListener('abort', onAbort);
        resolve(release);
      };
      const onAbort = (): void => {
        const i = this.waiting.indexOf(take);
        if (i >= 0) this.waiting.splice(i, 1);
        reject(abortedError(signal as AbortSignal, 'waiting to make the pack'));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(take);
    });
  }
}
