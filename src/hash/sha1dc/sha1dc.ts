import { CHUNK, FOUND, IHV, INITIAL_IHV, pad, threadEngine, writeDigest } from './engine.js';

/**
 * SHA-1 with collision detection, the method of git's sha1dc (Stevens, "Counter-cryptanalysis",
 * CRYPTO 2013): for each 64-byte block, and for each disturbance vector whose unavoidable conditions
 * (derive-conditions.ts) the block meets, rebuild the computation of the block's would-be partner (the
 * block XOR the vector's message difference) from the state the two share at the vector's
 * recompression step, backwards to its chaining value and forwards to its output. If that output
 * equals this block's, the block is one half of a collision along that vector: an attack, not chance.
 * The digest is plain SHA-1 either way, as git computes it (git runs sha1dc without its "safe hash");
 * `collision` says whether a block was flagged.
 *
 * The block function is WebAssembly (assembly/sha1dc.ts, built into sha1dc-wasm.ts), one instance per
 * thread (engine.ts), shared by every hasher of that thread: a hasher keeps its chaining value here
 * and lends it to the instance for each update. Many messages at once go faster through
 * Sha1dcLanes (sha1dc-lanes.ts). Cost: one compression a block, a few dozen of the message-bit
 * conditions (most blocks fail every vector within them), and a recompression for about one block in
 * 21: 500 MB/s here (git's sha1dc: 410-450), about 3.6× the time of Node's SHA-1 (1.8 GB/s),
 * which does no detection (many messages, four at once, in Sha1dcLanes: 820 MB/s).
 */

export class Sha1dc {
  private readonly ihv = Int32Array.from(INITIAL_IHV);
  private readonly pending = new Uint8Array(128);
  private pendingLength = 0;
  private total = 0;
  private found = false;

  /** Whether a block seen so far is half of a collision attack. */
  get collision(): boolean {
    return this.found;
  }

  /** Starts over, as a new hasher. */
  reset(): this {
    this.ihv.set(INITIAL_IHV);
    this.pendingLength = 0;
    this.total = 0;
    this.found = false;
    return this;
  }

  /** Adds bytes to the digest; returns this hasher. */
  update(data: Uint8Array): this {
    this.total += data.length;
    let at = 0;
    if (this.pendingLength > 0) {
      at = Math.min(64 - this.pendingLength, data.length);
      this.pending.set(data.subarray(0, at), this.pendingLength);
      this.pendingLength += at;
      if (this.pendingLength < 64) return this;
      this.run(this.pending, 0, 64);
      this.pendingLength = 0;
    }
    const whole = at + ((data.length - at) & ~63);
    if (whole > at) this.run(data, at, whole);
    if (whole < data.length) {
      this.pending.set(data.subarray(whole), 0);
      this.pendingLength = data.length - whole;
    }
    return this;
  }

  /** The 20-byte digest; the hasher is spent afterwards. */
  digest(): Buffer {
    const out = Buffer.allocUnsafe(20);
    this.digestInto(out, 0);
    return out;
  }

  /** Writes the 20-byte digest to `out` at `at`; `collision` then says whether the input held half of a collision attack. */
  digestInto(out: Uint8Array, at: number): void {
    const end = this.pendingLength + 1 > 56 ? 128 : 64;
    pad(this.pending, 0, this.pendingLength, end, this.total);
    this.run(this.pending, 0, end);
    this.pendingLength = 0;
    writeDigest(this.ihv, 0, out, at);
  }

  /** Hashes data[from, to), a whole number of blocks, through the thread's instance. */
  private run(data: Uint8Array, from: number, to: number): void {
    const e = threadEngine();
    e.words.set(this.ihv, IHV / 4);
    e.words[FOUND / 4] = 0;
    for (let at = from; at < to; at += CHUNK) {
      const n = Math.min(CHUNK, to - at);
      e.bytes.set(data.subarray(at, at + n), e.input);
      e.x.blocks(e.input, n >>> 6);
    }
    this.ihv.set(e.words.subarray(IHV / 4, IHV / 4 + 5));
    if (e.words[FOUND / 4] !== 0) this.found = true;
  }
}

/** The SHA-1 digest of `data` and whether it holds half of a collision attack. */
export function sha1dc(data: Uint8Array): { digest: Buffer; collision: boolean } {
  const h = new Sha1dc().update(data);
  return { digest: h.digest(), collision: h.collision };
}

const reused = new Sha1dc();

/** Writes the digest of `data` into `out` at `at`; returns whether `data` holds half of a collision attack. */
export function sha1dcInto(data: Uint8Array, out: Uint8Array, at: number): boolean {
  reused.reset().update(data).digestInto(out, at);
  return reused.collision;
}
