/**
 * Computes git deltas (gitformat-pack, "Deltified representation"): a target expressed as copies
 * from a base and inserted literal bytes.
 *
 * The method is the one git's diff-delta.c uses, written anew: the base is indexed once by a hash
 * of each 16-byte block at 16-byte steps (`DeltaIndex`); the target is scanned with a rolling hash
 * of the 16 bytes at each position, and a hit in the index is checked, extended forward as far as
 * the bytes agree (and backward over literals not yet written), and becomes a copy. One index
 * serves every target tried against the same base, which is what a delta window does.
 */

/** Bytes per indexed block and per rolling-hash window. */
const BLOCK = 16;
/** Multiplier of the rolling hash (odd, with well-mixed bits). */
const MUL = 0x01000193;
/** MUL^(BLOCK-1) mod 2^32, to take the leaving byte out of the rolling hash. */
const MUL_OUT = (() => {
  let p = 1;
  for (let i = 0; i < BLOCK - 1; i++) p = Math.imul(p, MUL);
  return p;
})();
/** Longest copy one instruction can say without the 0 = 0x10000 special case biting (git's limit). */
const MAX_COPY = 0x10000;
/** Index entries kept per bucket: a base of one repeated byte must not make every lookup long. */
const MAX_BUCKET = 64;
/** The longest literal one insert instruction carries. */
const MAX_INSERT = 0x7f;

function blockHash(data: Uint8Array, at: number): number {
  let h = 0;
  for (let i = 0; i < BLOCK; i++) h = (Math.imul(h, MUL) + (data[at + i] as number)) | 0;
  return h;
}

/** A base, indexed for delta computation against many targets. */
export class DeltaIndex {
  /** Bucket → first entry + 1 (0: none). */
  private readonly heads: Int32Array;
  /** Entry → next entry in its bucket + 1. */
  private readonly next: Int32Array;
  /** Entry → base offset of its block. */
  private readonly positions: Int32Array;
  private readonly mask: number;
  /** Bytes the index keeps besides the base: what a window of bases costs. */
  readonly memory: number;

  constructor(readonly base: Uint8Array) {
    const blocks = Math.max(0, Math.floor((base.length - 1) / BLOCK));
    let size = 16;
    while (size < blocks) size *= 2;
    this.mask = size - 1;
    this.heads = new Int32Array(size);
    this.next = new Int32Array(blocks);
    this.positions = new Int32Array(blocks);
    const counts = new Uint8Array(size);
    // A bucket keeps its first MAX_BUCKET blocks: in a run of repeated blocks, a copy that starts
    // early can run longest (git thins crowded buckets evenly instead; both bound the search).
    let e = 0;
    for (let p = 0; p < blocks * BLOCK; p += BLOCK) {
      const b = blockHash(base, p) & this.mask;
      if ((counts[b] as number) >= MAX_BUCKET) continue;
      counts[b] = (counts[b] as number) + 1;
      this.positions[e] = p;
      this.next[e] = this.heads[b] as number;
      this.heads[b] = ++e;
    }
    this.memory = this.heads.byteLength + this.next.byteLength + this.positions.byteLength;
  }

  /**
   * The delta that makes `target` from this index's base, or undefined when it would be larger
   * than `maxSize` bytes (0: no limit) or the target is empty: the caller then stores the target
   * some other way.
   */
  createDelta(target: Uint8Array, maxSize = 0): Buffer | undefined {
    const base = this.base;
    const baseLength = base.length;
    const n = target.length;
    const limit = maxSize > 0 ? maxSize : Number.MAX_SAFE_INTEGER;
    let out = Buffer.allocUnsafe(Math.min(limit, n + n / 64 + 64) + 32 | 0);
    let o = 0;
    const ensure = (extra: number): boolean => {
      if (o + extra <= out.length) return true;
      if (o + extra > limit + 32) return false;
      const grown = Buffer.allocUnsafe(Math.max(out.length * 2, o + extra));
      out.copy(grown, 0, 0, o);
      out = grown;
      return true;
    };
    // git reads a delta shorter than 4 bytes as corrupt (patch-delta.c): an empty target has none.
    if (n === 0) return undefined;
    o = writeVarint(out, o, baseLength);
    o = writeVarint(out, o, n);
    // Literals not yet written: target[literalStart..j).
    let literalStart = 0;
    const flushLiterals = (end: number): boolean => {
      let s = literalStart;
      while (s < end) {
        const len = Math.min(MAX_INSERT, end - s);
        if (!ensure(len + 1)) return false;
        out[o++] = len;
        for (let i = 0; i < len; i++) out[o + i] = target[s + i] as number;
        o += len;
        s += len;
      }
      literalStart = end;
      return o <= limit;
    };
    const heads = this.heads;
    const next = this.next;
    const positions = this.positions;
    const mask = this.mask;
    let j = 0;
    let h = n >= BLOCK ? blockHash(target, 0) : 0;
    while (j + BLOCK <= n) {
      let bestLength = 0;
      let bestOffset = 0;
      for (let e = heads[h & mask] as number; e !== 0; e = next[e - 1] as number) {
        const p = positions[e - 1] as number;
        // Cheap reject before the forward scan: the block's ends must agree.
        if (base[p] !== target[j] || base[p + BLOCK - 1] !== target[j + BLOCK - 1]) continue;
        let len = 0;
        const max = Math.min(baseLength - p, n - j, MAX_COPY);
        while (len < max && base[p + len] === target[j + len]) len++;
        if (len > bestLength) {
          bestLength = len;
          bestOffset = p;
          if (len === max) break;
        }
      }
      if (bestLength < BLOCK) {
        // No copy here: the byte becomes a literal; roll the hash one byte on.
        if (j + BLOCK < n) h = (Math.imul(h - Math.imul(target[j] as number, MUL_OUT), MUL) + (target[j + BLOCK] as number)) | 0;
        j++;
        continue;
      }
      // Extend backwards over literals that match the bytes before the copy's source.
      let back = 0;
      while (back < j - literalStart && bestOffset - back > 0 && base[bestOffset - back - 1] === target[j - back - 1] && bestLength + back < MAX_COPY) back++;
      if (!flushLiterals(j - back)) return undefined;
      let copyOffset = bestOffset - back;
      let copyLength = bestLength + back;
      if (!ensure(8)) return undefined;
      o = writeCopy(out, o, copyOffset, copyLength);
      if (o > limit) return undefined;
      j += bestLength;
      literalStart = j;
      // A copy that ends at MAX_COPY may go on: keep copying while the bytes still agree.
      copyOffset += copyLength;
      while (copyLength === MAX_COPY && j < n && copyOffset < baseLength && base[copyOffset] === target[j]) {
        let len = 0;
        const max = Math.min(baseLength - copyOffset, n - j, MAX_COPY);
        while (len < max && base[copyOffset + len] === target[j + len]) len++;
        if (len < BLOCK) break;
        if (!ensure(8)) return undefined;
        o = writeCopy(out, o, copyOffset, len);
        j += len;
        copyOffset += len;
        copyLength = len;
        literalStart = j;
      }
      if (j + BLOCK <= n) h = blockHash(target, j);
    }
    if (!flushLiterals(n)) return undefined;
    if (o > limit) return undefined;
    return Buffer.from(out.subarray(0, o));
  }
}

/** The delta from `base` to `target` (an index made for one use). */
export function createDelta(base: Uint8Array, target: Uint8Array, maxSize = 0): Buffer | undefined {
  return new DeltaIndex(base).createDelta(target, maxSize);
}

function writeVarint(out: Uint8Array, o: number, value: number): number {
  let v = value;
  while (v >= 0x80) {
    out[o++] = (v & 0x7f) | 0x80;
    v = Math.floor(v / 128);
  }
  out[o++] = v;
  return o;
}

/** A copy instruction: 0x80 | which offset and size bytes follow, then those bytes, low first. */
function writeCopy(out: Uint8Array, o: number, offset: number, length: number): number {
  const at = o++;
  let op = 0x80;
  if (offset & 0xff) { out[o++] = offset & 0xff; op |= 0x01; }
  if (offset & 0xff00) { out[o++] = (offset >>> 8) & 0xff; op |= 0x02; }
  if (offset & 0xff0000) { out[o++] = (offset >>> 16) & 0xff; op |= 0x04; }
  if (offset >= 0x1000000) { out[o++] = Math.floor(offset / 0x1000000) & 0xff; op |= 0x08; }
  // A size of 0x10000 is written as no size bytes (the format reads 0 as 0x10000).
  if (length !== 0x10000) {
    if (length & 0xff) { out[o++] = length & 0xff; op |= 0x10; }
    if (length & 0xff00) { out[o++] = (length >>> 8) & 0xff; op |= 0x20; }
    if (length & 0xff0000) { out[o++] = (length >>> 16) & 0xff; op |= 0x40; }
  }
  out[at] = op;
  return o;
}
