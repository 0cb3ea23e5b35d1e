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
/** Filter bits per hash bucket (see DeltaIndex.filter): 8 lets about one miss in nine through. */
const FILTER_BITS = 8;
/** Index entries kept per bucket: a base of one repeated byte must not make every lookup long. */
const MAX_BUCKET = 64;
/** The longest literal one insert instruction carries. */
const MAX_INSERT = 0x7f;

/** MUL^4, to join four 4-byte Horner sums into the 16-byte one. */
const MUL4 = Math.imul(Math.imul(MUL, MUL), Math.imul(MUL, MUL));

/**
 * The hash of `data[at..at+16)`: sum of byte_i * MUL^(15-i), mod 2^32, the value the rolling hash
 * has at that position. Computed as four independent 4-byte Horner sums joined by MUL^4 (the same
 * polynomial), which halves the chain of dependent multiplies an index build waits on.
 */
function blockHash(data: Uint8Array, at: number): number {
  const h0 = quad(data, at);
  const h1 = quad(data, at + 4);
  const h2 = quad(data, at + 8);
  const h3 = quad(data, at + 12);
  return (Math.imul((Math.imul((Math.imul(h0, MUL4) + h1) | 0, MUL4) + h2) | 0, MUL4) + h3) | 0;
}

function quad(data: Uint8Array, at: number): number {
  const a = data[at] as number;
  const b = data[at + 1] as number;
  const c = data[at + 2] as number;
  const d = data[at + 3] as number;
  return (Math.imul((Math.imul((Math.imul(a, MUL) + b) | 0, MUL) + c) | 0, MUL) + d) | 0;
}

/** A base, indexed for delta computation against many targets. */
export class DeltaIndex {
  /** Bucket b's entries are `starts[b+2] .. starts[b+3]`, in ascending base offset. */
  private readonly starts: Int32Array;
  /** Entry → base offset of its block. */
  private readonly positions: Int32Array;
  /** Entry → the block's full hash (the bucket is only some of its bits): a cheap first check. */
  private readonly hashes: Int32Array;
  private readonly mask: number;
  /**
   * A bit for each of FILTER_BITS * buckets values of the block hashes' upper bits, set for every
   * block: most positions of a target unlike the base (most pairs a window tries) miss it, and
   * move on without looking into a bucket.
   */
  private readonly filter: Int32Array;
  private readonly filterShift: number;
  /** Bytes the index keeps besides the base: what a window of bases costs. */
  readonly memory: number;

  /** The base as a Buffer view (for Buffer.compare), and as a DataView (for word compares). */
  readonly base: Buffer;
  private readonly baseView: DataView;

  constructor(base: Uint8Array) {
    this.base = Buffer.isBuffer(base) ? base : Buffer.from(base.buffer, base.byteOffset, base.length);
    this.baseView = new DataView(base.buffer, base.byteOffset, base.length);
    const blocks = Math.max(0, Math.floor((base.length - 1) / BLOCK));
    // One bucket a block. More buckets make unrelated targets cheaper to scan (fewer mispredicted
    // branches on random data) but cost more to build than they save on real files (measured on
    // pairs from a repack of isomorphic-git: 4 buckets a block, +40 % index time, no faster deltas).
    let size = 16;
    while (size < blocks) size *= 2;
    const mask = size - 1;
    this.mask = mask;
    // A counting sort of the blocks by bucket, placed from the last block back so that each bucket
    // lists its blocks in ascending offset. Afterwards bucket b is starts[b+2] .. starts[b+3].
    const starts = new Int32Array(size + 3);
    const hashes = new Int32Array(blocks);
    const filterBits = size * FILTER_BITS;
    const filter = new Int32Array(filterBits >>> 5);
    const filterShift = 32 - Math.log2(filterBits);
    for (let k = 0; k < blocks; k++) {
      const h = blockHash(base, k * BLOCK);
      hashes[k] = h;
      const f = h >>> filterShift;
      filter[f >>> 5] = (filter[f >>> 5] as number) | (1 << (f & 31));
      const c = (h & mask) + 2;
      starts[c] = (starts[c] as number) + 1;
    }
    for (let i = 2; i <= size + 1; i++) starts[i] = (starts[i] as number) + (starts[i - 1] as number);
    starts[size + 2] = blocks;
    const positions = new Int32Array(blocks);
    const sorted = new Int32Array(blocks);
    for (let k = blocks - 1; k >= 0; k--) {
      const h = hashes[k] as number;
      const c = (h & mask) + 2;
      const at = (starts[c] as number) - 1;
      starts[c] = at;
      positions[at] = k * BLOCK;
      sorted[at] = h;
    }
    this.starts = starts;
    this.positions = positions;
    this.hashes = sorted;
    this.filter = filter;
    this.filterShift = filterShift;
    this.memory = starts.byteLength + positions.byteLength + sorted.byteLength + filter.byteLength;
  }

  /**
   * The delta that makes `target` from this index's base, or undefined when it would be larger
   * than `maxSize` bytes (0: no limit) or the target is empty: the caller then stores the target
   * some other way.
   */
  createDelta(targetBytes: Uint8Array, maxSize = 0): Buffer | undefined {
    const base = this.base;
    const target = Buffer.isBuffer(targetBytes) ? targetBytes : Buffer.from(targetBytes.buffer, targetBytes.byteOffset, targetBytes.length);
    const baseView = this.baseView;
    const targetView = new DataView(target.buffer, target.byteOffset, target.length);
    const baseLength = base.length;
    const n = target.length;
    // git reads a delta shorter than 4 bytes as corrupt (patch-delta.c): an empty target has none.
    if (n === 0) return undefined;
    const limit = maxSize > 0 ? maxSize : Number.MAX_SAFE_INTEGER;
    let out = Buffer.allocUnsafe((Math.min(limit, n + n / 64 + 64) + 32) | 0);
    let o = 0;
    o = writeVarint(out, o, baseLength);
    o = writeVarint(out, o, n);
    const starts = this.starts;
    const positions = this.positions;
    const hashes = this.hashes;
    const mask = this.mask;
    const filter = this.filter;
    const filterShift = this.filterShift;
    // Literals not yet written: target[literalStart..j).
    let literalStart = 0;
    let j = 0;
    let h = n >= BLOCK ? blockHash(target, 0) : 0;
    while (j + BLOCK <= n) {
      let bestLength = 0;
      let bestOffset = 0;
      // The filter first: where it says no block hashes here, the bucket is not even loaded.
      const f = h >>> filterShift;
      let e = 0;
      let all = 0;
      if (((filter[f >>> 5] as number) & (1 << (f & 31))) !== 0) {
        const b = (h & mask) + 2;
        e = starts[b] as number;
        all = starts[b + 1] as number;
      }
      if (e === all) {
        // The common case, kept short: no block of the base hashes here.
        if (j + BLOCK < n) h = (Math.imul(h - Math.imul(target[j] as number, MUL_OUT), MUL) + (target[j + BLOCK] as number)) | 0;
        j++;
        if (o + j - literalStart > limit) return undefined;
        continue;
      }
      // A bucket's first MAX_BUCKET blocks are searched: in a run of repeated blocks, a copy
      // that starts early can run longest (git thins crowded buckets evenly; both bound the work).
      const end = Math.min(all, e + MAX_BUCKET);
      for (; e < end; e++) {
        if (hashes[e] !== h) continue;
        const p = positions[e] as number;
        const max = Math.min(baseLength - p, n - j);
        // Entries go up the base: later ones can only match less (git's create_delta).
        if (max <= bestLength) break;
        // One that differs where the best so far ends cannot run longer than it (zlib's scan_end
        // test): in repetitive data a bucket holds many blocks that each match a while.
        if (bestLength > 0 && base[p + bestLength] !== target[j + bestLength]) continue;
        const len = matchLength(base, baseView, p, target, targetView, j, max);
        if (len > bestLength) {
          bestLength = len;
          bestOffset = p;
          // Good enough: searching on costs more than a slightly longer copy saves.
          if (len >= 4096) break;
        }
      }
      if (bestLength < BLOCK) {
        // No copy here: the byte becomes a literal; roll the hash one byte on.
        if (j + BLOCK < n) h = (Math.imul(h - Math.imul(target[j] as number, MUL_OUT), MUL) + (target[j + BLOCK] as number)) | 0;
        j++;
        // Over the limit already: most targets tried against a window are not like the base, and
        // this is where they stop (git checks the same on every literal).
        if (o + j - literalStart > limit) return undefined;
        continue;
      }
      // Extend backwards over literals that match the bytes before the copy's source.
      let back = 0;
      while (back < j - literalStart && bestOffset - back > 0 && base[bestOffset - back - 1] === target[j - back - 1]) back++;
      // Literals, at most 127 a instruction, then the copy, at most 64 KiB an instruction.
      const literalEnd = j - back;
      const need = literalEnd - literalStart + Math.ceil((literalEnd - literalStart) / MAX_INSERT) + 8 * Math.ceil((bestLength + back) / MAX_COPY);
      if (o + need > limit) return undefined;
      if (o + need > out.length) {
        const grown = Buffer.allocUnsafe(Math.max(out.length * 2, o + need + 64));
        out.copy(grown, 0, 0, o);
        out = grown;
      }
      o = writeLiterals(out, o, target, literalStart, literalEnd);
      let copyOffset = bestOffset - back;
      let left = bestLength + back;
      while (left > 0) {
        const len = Math.min(left, MAX_COPY);
        o = writeCopy(out, o, copyOffset, len);
        copyOffset += len;
        left -= len;
      }
      j += bestLength;
      literalStart = j;
      if (j + BLOCK <= n) h = blockHash(target, j);
    }
    const need = n - literalStart + Math.ceil((n - literalStart) / MAX_INSERT);
    if (o + need > limit) return undefined;
    if (o + need > out.length) {
      const grown = Buffer.allocUnsafe(o + need);
      out.copy(grown, 0, 0, o);
      out = grown;
    }
    o = writeLiterals(out, o, target, literalStart, n);
    return Buffer.from(out.subarray(0, o));
  }
}

/** Bytes compared a word at a time before a run is taken to be long. */
const SHORT_RUN = 128;
/** A long run is compared natively, in chunks that start at this size… */
const RUN_CHUNK = 256;
/** …and double while the run goes on, up to this. */
const MAX_RUN_CHUNK = 64 << 10;

/**
 * How far `base[p..]` and `target[j..]` agree, up to `max` bytes. Most candidate matches end
 * within a few bytes; a real copy runs on for kilobytes. Short runs are compared four bytes at a
 * time (DataView reads, which V8 inlines); a long one goes to `Buffer.compare` in chunks that
 * double as it goes on (each call costs ~100 ns however short: a repack's copies spent 0.5 s in
 * 256-byte calls), then the chunk that holds the end is halved down to RUN_CHUNK and the words
 * find the byte.
 */
function matchLength(base: Buffer, baseView: DataView, p: number, target: Buffer, targetView: DataView, j: number, max: number): number {
  let len = agreeFrom(base, baseView, p, target, targetView, j, 0, Math.min(max, SHORT_RUN));
  if (len < SHORT_RUN || len === max) return len;
  let chunk = RUN_CHUNK;
  while (max - len >= chunk && base.compare(target, j + len, j + len + chunk, p + len, p + len + chunk) === 0) {
    len += chunk;
    if (chunk < MAX_RUN_CHUNK) chunk *= 2;
  }
  // The run ends within the next `chunk` bytes (or the bytes left, fewer): halve down to it.
  while (chunk > RUN_CHUNK) {
    chunk >>>= 1;
    if (max - len >= chunk && base.compare(target, j + len, j + len + chunk, p + len, p + len + chunk) === 0) len += chunk;
  }
  return agreeFrom(base, baseView, p, target, targetView, j, len, Math.min(max, len + chunk));
}

/** Where `base[p..]` and `target[j..]` first differ at or after `len`, before `limit`: four bytes a step, then one. */
function agreeFrom(base: Buffer, baseView: DataView, p: number, target: Buffer, targetView: DataView, j: number, len: number, limit: number): number {
  while (len + 4 <= limit && baseView.getUint32(p + len) === targetView.getUint32(j + len)) len += 4;
  while (len < limit && base[p + len] === target[j + len]) len++;
  return len;
}

/** `target[start..end)` as insert instructions of at most MAX_INSERT bytes. */
function writeLiterals(out: Uint8Array, o: number, target: Uint8Array, start: number, end: number): number {
  for (let s = start; s < end; ) {
    const len = Math.min(MAX_INSERT, end - s);
    out[o++] = len;
    for (let i = 0; i < len; i++) out[o + i] = target[s + i] as number;
    o += len;
    s += len;
  }
  return o;
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
