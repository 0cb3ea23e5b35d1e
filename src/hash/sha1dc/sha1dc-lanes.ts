import { FOUND, FOUND4, IHV, IHV4, INITIAL_IHV, LANE_BYTES, pad, threadEngine, writeDigest, type Engine } from './engine.js';
import { sha1dcInto } from './sha1dc.js';

/**
 * Many messages hashed with sha1dc four at a time: each message gets one 32-bit lane of the
 * WebAssembly vectors (assembly/sha1dc.ts `blocks4`), which does four blocks in little more than the
 * time of one. For a caller that hashes many objects and reads their ids later (index-pack's scan
 * and resolvers, when no REF delta needs a base's id at once): `submit` copies the message, so the
 * caller may reuse its buffer at once, and the digest lands in `out` when its lane finishes, at the
 * latest at `flush`. While four lanes are busy, the next submit runs them until one ends.
 *
 * A message that fits a lane's 1 MiB of WebAssembly memory is copied there; a longer one is copied
 * to a buffer of its own (padding included) and fed to its lane a megabyte at a time. Those copies
 * take at most STREAMED_BUDGET bytes together (a submit waits for lanes to finish to stay under it);
 * a message longer than the budget is hashed at once, alone (500 MB/s, against 820 in the lanes).
 *
 * One per thread (`threadLanes`), shared by its callers; each submission names its owner, so that a
 * caller that gives up (an error) can drop what it left (`discard`).
 */

const LANES = 4;
/** Bytes of a lane's window into its message: whole blocks. */
const WINDOW = LANE_BYTES & ~63;
/**
 * What the copies of long messages may hold at once, per thread (index-pack's memory plan charges
 * it to every resolving thread). A pack of many large objects wants it: at 4 MiB, long messages
 * waited for each other while lanes idled, and index-pack --collision-detection --threads=1 of
 * isomorphic-git.pack took 4.6-6.1 s against 3.8-4.1 s at 16 MiB.
 */
export const STREAMED_BUDGET = 16 << 20;
/** A lane keeps its copy buffer for the next long message up to this size (no garbage for most). */
const KEPT_COPY = 4 << 20;

/**
 * SHA-1 with collision detection over many small inputs at once (several lanes in one WebAssembly call),
 * for hashing the objects of a pack.
 */
export class Sha1dcLanes {
  private readonly e: Engine = threadEngine();
  private readonly digest = new Uint8Array(20);
  private busy = 0;
  private streamed = 0;
  // Four of each, one a lane, kept in place.
  private readonly outs: Array<Uint8Array | undefined> = new Array(LANES).fill(undefined);
  private readonly ats = new Float64Array(LANES);
  private readonly owners: Array<object | undefined> = new Array(LANES).fill(undefined);
  /** Called with the digest if the message holds half of a collision attack. */
  private readonly reports: Array<((digest: Uint8Array) => void) | undefined> = new Array(LANES).fill(undefined);
  /** Blocks left of each message; of them, blocks in its window; where the next one is in the engine's memory. */
  private readonly blocks = new Float64Array(LANES);
  private readonly windowBlocks = new Float64Array(LANES);
  private readonly next = new Float64Array(LANES);
  /** A long message's padded copy, and how far its windows have been taken. */
  private readonly sources: Array<Uint8Array | undefined> = new Array(LANES).fill(undefined);
  private readonly taken = new Float64Array(LANES);
  /** Each lane's buffer for copies, kept between long messages. */
  private readonly copies: Array<Buffer | undefined> = new Array(LANES).fill(undefined);

  /**
   * Hashes `data` in a free lane: its id is written to `out` at `at` when the lane finishes (at the latest
   * on `flush`), and `onCollision` is called instead if it holds half of a collision attack. `owner` is who
   * may drop the submission unfinished (`discard`).
   */
  submit(data: Uint8Array, out: Uint8Array, at: number, owner: object, onCollision: (digest: Uint8Array) => void): void {
    const n = data.length;
    const padded = (n + 9 + 63) & ~63;
    const long = padded > WINDOW;
    if (long && padded > STREAMED_BUDGET) {
      if (sha1dcInto(data, out, at)) onCollision(out.subarray(at, at + 20));
      return;
    }
    while (this.busy === LANES || (long && this.streamed + padded > STREAMED_BUDGET)) this.advance();
    let lane = 0;
    while (this.outs[lane] !== undefined) lane++;
    const base = this.e.lanes + lane * LANE_BYTES;
    if (long) {
      let buffer = this.copies[lane];
      if (buffer === undefined || buffer.length < padded) {
        buffer = Buffer.allocUnsafeSlow(Math.max(padded, Math.min(KEPT_COPY, 2 * (buffer?.length ?? 0))));
        if (buffer.length <= KEPT_COPY) this.copies[lane] = buffer;
      }
      const copy = buffer.subarray(0, padded);
      copy.set(data, 0);
      pad(copy, 0, n, padded, n);
      this.sources[lane] = copy;
      this.streamed += padded;
      this.taken[lane] = 0;
      this.refill(lane);
    } else {
      this.e.bytes.set(data, base);
      pad(this.e.bytes, base, n, base + padded, n);
      this.windowBlocks[lane] = padded >>> 6;
      this.next[lane] = base;
    }
    const words = this.e.words;
    for (let i = 0; i < 5; i++) words[IHV4 / 4 + 4 * i + lane] = INITIAL_IHV[i]!;
    words[FOUND4 / 4 + lane] = 0;
    this.outs[lane] = out;
    this.ats[lane] = at;
    this.owners[lane] = owner;
    this.reports[lane] = onCollision;
    this.blocks[lane] = padded >>> 6;
    this.busy++;
  }

  /** Finishes every message submitted. */
  flush(): void {
    while (this.busy > 1) this.advance();
    if (this.busy === 1) this.finishAlone();
  }

  /** Drops what `owner` submitted and has not been finished: no digest is written, no collision reported. */
  discard(owner: object): void {
    for (let i = 0; i < LANES; i++) {
      if (this.outs[i] !== undefined && this.owners[i] === owner) this.free(i);
    }
  }

  /** Copies lane `lane`'s next window of its long message into the lane's memory. */
  private refill(lane: number): void {
    const source = this.sources[lane] as Uint8Array;
    const from = this.taken[lane]!;
    const length = Math.min(WINDOW, source.length - from);
    const base = this.e.lanes + lane * LANE_BYTES;
    this.e.bytes.set(source.subarray(from, from + length), base);
    this.taken[lane] = from + length;
    this.windowBlocks[lane] = length >>> 6;
    this.next[lane] = base;
  }

  /** Runs the busy lanes until one ends or needs its next window (idle lanes repeat a busy one's blocks, unused). */
  private advance(): void {
    const { blocks, windowBlocks, next } = this;
    let count = Infinity, any = 0;
    for (let i = 0; i < LANES; i++) {
      if (this.outs[i] !== undefined && windowBlocks[i]! < count) [count, any] = [windowBlocks[i]!, i];
    }
    if (count === Infinity) return;
    const at = (i: number): number => (this.outs[i] !== undefined ? next[i]! : next[any]!);
    this.e.x.blocks4(at(0), at(1), at(2), at(3), count);
    // Every lane's count first: a collision reported below throws, and the others must stay right.
    for (let i = 0; i < LANES; i++) {
      if (this.outs[i] === undefined) continue;
      blocks[i] = blocks[i]! - count;
      windowBlocks[i] = windowBlocks[i]! - count;
      next[i] = next[i]! + count * 64;
    }
    const words = this.e.words;
    for (let i = 0; i < LANES; i++) {
      if (this.outs[i] === undefined) continue;
      if (blocks[i] === 0) {
        this.laneToScalar(i);
        this.finish(i, words[FOUND4 / 4 + i] !== 0);
      } else if (windowBlocks[i] === 0) this.refill(i);
    }
  }

  /** The last busy lane, through the one-message function: the four-lane one would do 4× the work for it. */
  private finishAlone(): void {
    let lane = 0;
    while (this.outs[lane] === undefined) lane++;
    const { words, x } = this.e;
    this.laneToScalar(lane);
    words[FOUND / 4] = words[FOUND4 / 4 + lane]!;
    for (;;) {
      x.blocks(this.next[lane]!, this.windowBlocks[lane]!);
      this.blocks[lane] = this.blocks[lane]! - this.windowBlocks[lane]!;
      if (this.blocks[lane] === 0) break;
      this.refill(lane);
    }
    this.finish(lane, words[FOUND / 4] !== 0);
  }

  /** Moves lane `lane`'s chaining value to the one-message function's (IHV). */
  private laneToScalar(lane: number): void {
    const words = this.e.words;
    for (let k = 0; k < 5; k++) words[IHV / 4 + k] = words[IHV4 / 4 + 4 * k + lane]!;
  }

  /** Writes lane `lane`'s digest (left at IHV) where it was asked for. */
  private finish(lane: number, collision: boolean): void {
    const out = this.outs[lane] as Uint8Array, at = this.ats[lane]!, report = this.reports[lane]!;
    this.free(lane);
    writeDigest(this.e.words, IHV / 4, out, at);
    if (collision) {
      this.digest.set(out.subarray(at, at + 20));
      report(this.digest);
    }
  }

  private free(lane: number): void {
    const source = this.sources[lane];
    if (source !== undefined) this.streamed -= source.length;
    this.outs[lane] = this.owners[lane] = this.reports[lane] = this.sources[lane] = undefined;
    this.busy--;
  }
}

let lanes: Sha1dcLanes | undefined;

/** This thread's lanes. */
export function threadLanes(): Sha1dcLanes {
  return (lanes ??= new Sha1dcLanes());
}
