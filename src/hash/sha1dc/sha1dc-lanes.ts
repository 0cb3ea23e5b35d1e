import { FOUND, FOUND4, IHV, IHV4, INITIAL_IHV, LANE_BYTES, threadEngine, type Engine } from './engine.js';
import { sha1dcInto } from './sha1dc.js';

/**
 * Many messages hashed with sha1dc four at a time: each message gets one 32-bit lane of the
 * WebAssembly vectors (assembly/sha1dc.ts `blocks4`), which does four blocks in little more than the
 * time of one. For a caller that hashes many objects and reads their ids later (index-pack's scan
 * and resolvers, when no REF delta needs a base's id at once): `submit` copies the message into a
 * free lane (so the caller may reuse its buffer at once) and the digest lands in `out` when the
 * lane finishes, at the latest at `flush`. While four lanes are busy, the next submit runs them
 * until the shortest ends. A message too long for a lane (over 1 MiB) is hashed at once, alone.
 *
 * One per thread (`threadLanes`), shared by its callers; each submission names its owner, so that a
 * caller that gives up (an error) can drop what it left (`discard`).
 */

/** What a lane holds; four of each, kept in place (a submit allocates nothing). */
const LANES = 4;

export class Sha1dcLanes {
  private readonly e: Engine = threadEngine();
  private readonly digest = new Uint8Array(20);
  private busy = 0;
  private readonly outs: Array<Uint8Array | undefined> = new Array(LANES).fill(undefined);
  private readonly ats = new Float64Array(LANES);
  private readonly owners: Array<object | undefined> = new Array(LANES).fill(undefined);
  /** Called with the digest if the message holds half of a collision attack. */
  private readonly reports: Array<((digest: Uint8Array) => void) | undefined> = new Array(LANES).fill(undefined);
  /** Blocks left in each lane, and where its next block is in the engine's memory. */
  private readonly blocks = new Float64Array(LANES);
  private readonly next = new Float64Array(LANES);

  submit(data: Uint8Array, out: Uint8Array, at: number, owner: object, onCollision: (digest: Uint8Array) => void): void {
    const n = data.length;
    const padded = (n + 9 + 63) & ~63;
    if (padded > LANE_BYTES) {
      if (sha1dcInto(data, out, at)) onCollision(out.subarray(at, at + 20));
      return;
    }
    while (this.busy === LANES) this.advance();
    let lane = 0;
    while (this.outs[lane] !== undefined) lane++;
    const { bytes, words } = this.e;
    const base = this.e.lanes + lane * LANE_BYTES;
    bytes.set(data, base);
    bytes[base + n] = 0x80;
    bytes.fill(0, base + n + 1, base + padded - 8);
    const bits = n * 8;
    const high = Math.floor(bits / 0x100000000), low = bits >>> 0;
    const end = base + padded;
    bytes[end - 8] = high >>> 24; bytes[end - 7] = high >>> 16; bytes[end - 6] = high >>> 8; bytes[end - 5] = high;
    bytes[end - 4] = low >>> 24; bytes[end - 3] = low >>> 16; bytes[end - 2] = low >>> 8; bytes[end - 1] = low;
    for (let i = 0; i < 5; i++) words[IHV4 / 4 + 4 * i + lane] = INITIAL_IHV[i]!;
    words[FOUND4 / 4 + lane] = 0;
    this.outs[lane] = out;
    this.ats[lane] = at;
    this.owners[lane] = owner;
    this.reports[lane] = onCollision;
    this.blocks[lane] = padded >>> 6;
    this.next[lane] = base;
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

  /** Runs the busy lanes until the shortest ends (idle lanes repeat a busy one's blocks, unused). */
  private advance(): void {
    const { blocks, next } = this;
    let count = Infinity, any = 0;
    for (let i = 0; i < LANES; i++) {
      if (this.outs[i] !== undefined && blocks[i]! < count) [count, any] = [blocks[i]!, i];
    }
    if (count === Infinity) return;
    const at = (i: number): number => (this.outs[i] !== undefined ? next[i]! : next[any]!);
    this.e.x.blocks4(at(0), at(1), at(2), at(3), count);
    const words = this.e.words;
    for (let i = 0; i < LANES; i++) {
      if (this.outs[i] === undefined) continue;
      blocks[i] = blocks[i]! - count;
      next[i] = next[i]! + count * 64;
      if (blocks[i] === 0) {
        for (let k = 0; k < 5; k++) words[IHV / 4 + k] = words[IHV4 / 4 + 4 * k + i]!;
        this.finish(i, words[FOUND4 / 4 + i] !== 0);
      }
    }
  }

  /** The last busy lane, through the one-message function: the four-lane one would do 4× the work for it. */
  private finishAlone(): void {
    let lane = 0;
    while (this.outs[lane] === undefined) lane++;
    const { words, x } = this.e;
    for (let k = 0; k < 5; k++) words[IHV / 4 + k] = words[IHV4 / 4 + 4 * k + lane]!;
    words[FOUND / 4] = words[FOUND4 / 4 + lane]!;
    x.blocks(this.next[lane]!, this.blocks[lane]!);
    this.finish(lane, words[FOUND / 4] !== 0);
  }

  /** Writes lane `lane`'s digest (left at IHV) where it was asked for. */
  private finish(lane: number, collision: boolean): void {
    const out = this.outs[lane] as Uint8Array, at = this.ats[lane]!, report = this.reports[lane]!;
    this.free(lane);
    const words = this.e.words;
    for (let k = 0; k < 5; k++) {
      const v = words[IHV / 4 + k]!;
      out[at + 4 * k] = v >>> 24; out[at + 4 * k + 1] = v >>> 16; out[at + 4 * k + 2] = v >>> 8; out[at + 4 * k + 3] = v;
    }
    if (collision) {
      this.digest.set(out.subarray(at, at + 20));
      report(this.digest);
    }
  }

  private free(lane: number): void {
    this.outs[lane] = this.owners[lane] = this.reports[lane] = undefined;
    this.busy--;
  }
}

let lanes: Sha1dcLanes | undefined;

/** This thread's lanes. */
export function threadLanes(): Sha1dcLanes {
  return (lanes ??= new Sha1dcLanes());
}
