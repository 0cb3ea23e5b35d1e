/**
 * One byte budget for the large windows of every pack of a store (a whole pack read into memory
 * is one such window), least recently used out across packs: what git's core.packedGitLimit is
 * for its mmapped windows. A PackFile keeps its own short list of windows for lookups; the pool
 * only counts them, orders them by last use, and asks a pack to drop one when another needs room.
 *
 * git's windows are mmaps, clean pages the kernel may reclaim; these are buffers the process
 * owns, so the budget is what makes a long-lived store with many packs bounded. Without a ceiling
 * the budget is Infinity and the pool only counts.
 */
export interface PooledWindow {
  start: number;
  bytes: Buffer;
  /** The pool's clock at the window's last use. */
  used: number;
  /** Who to tell when the pool takes the window away. */
  owner: WindowOwner;
  /**
   * The buffer may be handed to another window once this one is gone: only windows whose bytes
   * never leave their PackFile (not a whole pack, which `wholeBytes` lends out).
   */
  recyclable: boolean;
  /** The buffer `bytes` is the start of, when the window was read into part of it (what is recycled). */
  own?: Buffer;
}

/** A pack file whose windows a WindowPool holds, told when one is evicted. */
export interface WindowOwner {
  /** The pool evicted `window`: forget it (its buffer may be reused at once). */
  dropWindow(window: PooledWindow): void;
}

/**
 * Windows of pack files read into memory, shared by all packs of a store under one byte budget, least
 * recently used evicted first (git's core.packedGitLimit).
 */
export class WindowPool {
  private readonly windows: PooledWindow[] = [];
  private held = 0;
  private clock = 0;
  /**
   * The buffer of the last window evicted or released, for the next window of exactly its size:
   * a stream of windows through one pack then reuses one buffer instead of touching fresh memory
   * for each (first-touch cost, memory/index.ts) and leaving the old ones to the collector.
   */
  private spare: Buffer | undefined;

  /** Bytes of windows the pool may hold; a store lowers it as its tables grow (Store.charge). */
  budget: number;

  constructor(budget = Infinity) {
    this.budget = budget;
  }

  /** Bytes of the windows held now. */
  get heldBytes(): number {
    return this.held;
  }

  /** Whether `bytes` more fit in the budget once `owner`'s own windows are given back. */
  fits(bytes: number, owner: WindowOwner): boolean {
    let own = 0;
    for (const w of this.windows) if (w.owner === owner) own += w.bytes.length;
    return this.held - own + bytes <= this.budget;
  }

  /**
   * A buffer for a new window of `bytes`, after evicting least recently used windows of any pack
   * until it fits (a window larger than the whole budget evicts everything and is held anyway:
   * the read needs it).
   */
  allocate(bytes: number): Buffer {
    while (this.windows.length > 0 && this.held + bytes > this.budget) {
      let oldest = 0;
      for (let i = 1; i < this.windows.length; i++) if ((this.windows[i] as PooledWindow).used < (this.windows[oldest] as PooledWindow).used) oldest = i;
      const w = this.windows[oldest] as PooledWindow;
      this.remove(oldest);
      w.owner.dropWindow(w);
    }
    const spare = this.spare;
    // Taken, or let go: a spare of another size would otherwise stay alive beside the new buffer,
    // outside the budget (a pack read whole after two 15 MB windows kept one of them all along).
    this.spare = undefined;
    if (spare !== undefined && spare.length === bytes) return spare;
    return Buffer.allocUnsafeSlow(bytes);
  }

  /** Counts a window made from `allocate`'s buffer (or one the owner had otherwise). */
  add(window: PooledWindow): void {
    window.used = ++this.clock;
    this.windows.push(window);
    this.held += (window.own ?? window.bytes).length;
  }

  /** Marks a window as just used. */
  touch(window: PooledWindow): void {
    window.used = ++this.clock;
  }

  /** The owner drops a window itself (its own list is full, or it closes). */
  release(window: PooledWindow): void {
    const i = this.windows.indexOf(window);
    if (i >= 0) this.remove(i);
  }

  private remove(i: number): void {
    const w = this.windows[i] as PooledWindow;
    this.windows[i] = this.windows[this.windows.length - 1] as PooledWindow;
    this.windows.pop();
    this.held -= (w.own ?? w.bytes).length;
    if (w.recyclable) this.spare = w.own ?? w.bytes;
  }
}
