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

interface Job {
  out: Uint8Array;
  at: number;
  owner: object;
  /** Called with the digest if the message holds half of a collision attack. */
  onCollision: (digest: Uint8Array) => void;
  /** Blocks left, and where the next one is in the engine's memory. */
  blocks: number;
  next: number;
}

export class Sha1dcLanes {
  private readonly jobs: Array<Job | undefined> = [undefined, undefined, undefined, undefined];
  private readonly e: Engine = threadEngine();
  private readonly digest = new Uint8Array(20);

  submit(data: Uint8Array, out: Uint8Array, at: number, owner: object, onCollision: (digest: Uint8Array) => void): void {
    const n = data.length;
    const padded = (n + 9 + 63) & ~63;
    if (padded > LANE_BYTES) {
      if (sha1dcInto(data, out, at)) onCollision(out.subarray(at, at + 20));
      return;
    }
    let lane = this.jobs.indexOf(undefined);
    while (lane < 0) {
      this.advance();
      lane = this.jobs.indexOf(undefined);
    }
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
    this.jobs[lane] = { out, at, owner, onCollision, blocks: padded >>> 6, next: base };
  }

  /** Finishes every message submitted. */
  flush(): void {
    for (;;) {
      const busy = this.jobs.filter((j) => j !== undefined).length;
      if (busy === 0) return;
      if (busy === 1) {
        this.finishAlone(this.jobs.findIndex((j) => j !== undefined));
        return;
      }
      this.advance();
    }
  }

  /** Drops what `owner` submitted and has not been finished: no digest is written, no collision reported. */
  discard(owner: object): void {
    for (let i = 0; i < 4; i++) if (this.jobs[i]?.owner === owner) this.jobs[i] = undefined;
  }

  /** Runs the busy lanes until the shortest ends (idle lanes repeat a busy one's blocks, unused). */
  private advance(): void {
    const jobs = this.jobs;
    let count = Infinity, any: Job | undefined;
    for (const j of jobs) {
      if (j !== undefined && j.blocks < count) [count, any] = [j.blocks, j];
    }
    if (any === undefined) return;
    const at = (i: number): number => (jobs[i] ?? (any as Job)).next;
    this.e.x.blocks4(at(0), at(1), at(2), at(3), count);
    for (let i = 0; i < 4; i++) {
      const j = jobs[i];
      if (j === undefined) continue;
      j.blocks -= count;
      j.next += count * 64;
      if (j.blocks === 0) this.finish(i, j, (k) => this.e.words[IHV4 / 4 + 4 * k + i]!, this.e.words[FOUND4 / 4 + i] !== 0);
    }
  }

  /** The last busy lane, through the one-message function: the four-lane one would do 4× the work for it. */
  private finishAlone(lane: number): void {
    const j = this.jobs[lane] as Job;
    const { words, x } = this.e;
    for (let i = 0; i < 5; i++) words[IHV / 4 + i] = words[IHV4 / 4 + 4 * i + lane]!;
    words[FOUND / 4] = words[FOUND4 / 4 + lane]!;
    x.blocks(j.next, j.blocks);
    this.finish(lane, j, (k) => words[IHV / 4 + k]!, words[FOUND / 4] !== 0);
  }

  private finish(lane: number, j: Job, word: (k: number) => number, collision: boolean): void {
    this.jobs[lane] = undefined;
    const { out, at } = j;
    for (let k = 0; k < 5; k++) {
      const v = word(k);
      out[at + 4 * k] = v >>> 24; out[at + 4 * k + 1] = v >>> 16; out[at + 4 * k + 2] = v >>> 8; out[at + 4 * k + 3] = v;
    }
    if (collision) {
      this.digest.set(out.subarray(at, at + 20));
      j.onCollision(this.digest);
    }
  }
}

let lanes: Sha1dcLanes | undefined;

/** This thread's lanes. */
export function threadLanes(): Sha1dcLanes {
  return (lanes ??= new Sha1dcLanes());
}
