import { readFileSync } from 'node:fs';
import { PackwrightError } from '../errors/packwright-error.js';
import { hashBytes } from '../hash/hash-object.js';
import { formatForHashLength } from '../hash/object-format.js';

const IDX_V2_MAGIC = 0xff744f63; // "\377tOc"
const FANOUT_BYTES = 256 * 4;

/**
 * A `.idx` file (v1 or v2) held in memory: fan-out + binary search by id, offsets (31-bit and the
 * 64-bit table), CRC32s. The whole file is read once; it is small next to its pack
 * (H + 8 bytes an object: 226k objects = 6.3 MB).
 */
/**
 * The entries of a pack in offset order: `offsets[k]` is the k-th entry's offset and
 * `positions[k]` the idx position of its id (an in-memory `.rev`). Offsets are 32-bit integers
 * for packs under 4 GiB, doubles beyond.
 */
export interface PackOrder {
  offsets: Uint32Array | Float64Array;
  positions: Uint32Array;
}

export class PackIndex {
  readonly path: string;
  readonly version: 1 | 2;
  readonly hashLength: number;
  readonly count: number;
  readonly data: Buffer;
  private readonly view: DataView;
  private readonly fanoutStart: number;
  private readonly idsStart: number;
  /** Distance between consecutive ids: H (v2) or H + 4 (v1). */
  private readonly idStride: number;
  private readonly crcStart: number;
  private readonly offsetStart: number;
  private readonly largeStart: number;
  private readonly largeCount: number;
  /** Built on first use; one object, since `positionOfOffset` asks for it per lookup. */
  private order: PackOrder | undefined;

  constructor(data: Buffer, hashLength: number, path = '<idx>') {
    this.path = path;
    this.data = data;
    this.hashLength = hashLength;
    this.view = new DataView(data.buffer, data.byteOffset, data.byteLength);
    const H = hashLength;
    const fail = (message: string, offset?: number): never => {
      const opts: { file: string; offset?: number } = { file: path };
      if (offset !== undefined) opts.offset = offset;
      throw new PackwrightError('IDX_CORRUPT', `${path}: ${message}`, opts);
    };
    let fanoutStart = 0;
    if (data.length >= 8 && this.view.getUint32(0) === IDX_V2_MAGIC) {
      const version = this.view.getUint32(4);
      if (version !== 2) throw new PackwrightError('IDX_VERSION', `${path}: index file version ${version} is unsupported`, { file: path, offset: 4 });
      this.version = 2;
      fanoutStart = 8;
    } else {
      this.version = 1;
    }
    if (data.length < fanoutStart + FANOUT_BYTES + 2 * H) fail(`index file is too small (${data.length} bytes)`);
    let previous = 0;
    for (let i = 0; i < 256; i++) {
      const n = this.view.getUint32(fanoutStart + 4 * i);
      if (n < previous) fail(`non-monotonic fan-out at entry ${i} (${n} after ${previous})`, fanoutStart + 4 * i);
      previous = n;
    }
    const n = previous;
    this.count = n;
    const afterFanout = fanoutStart + FANOUT_BYTES;
    if (this.version === 1) {
      const expected = afterFanout + n * (H + 4) + 2 * H;
      if (data.length !== expected) fail(`index file has ${data.length} bytes, a v1 index of ${n} objects has ${expected}`);
      this.idsStart = afterFanout + 4;
      this.idStride = H + 4;
      this.crcStart = -1;
      this.offsetStart = afterFanout;
      this.largeStart = -1;
      this.largeCount = 0;
    } else {
      const min = afterFanout + n * (H + 8) + 2 * H;
      const max = min + (n > 0 ? (n - 1) * 8 : 0);
      if (data.length < min || data.length > max || (data.length - min) % 8 !== 0) {
        fail(`index file has ${data.length} bytes, a v2 index of ${n} objects has between ${min} and ${max}`);
      }
      this.idsStart = afterFanout;
      this.idStride = H;
      this.crcStart = afterFanout + n * H;
      this.offsetStart = this.crcStart + n * 4;
      this.largeStart = this.offsetStart + n * 4;
      this.largeCount = (data.length - min) / 8;
    }
    this.fanoutStart = fanoutStart;
  }

  static open(path: string, hashLength: number): PackIndex {
    let data: Buffer;
    try {
      data = readFileSync(path);
    } catch (e) {
      throw new PackwrightError('OBJECT_NOT_FOUND', `Cannot open index ${path}: ${(e as Error).message}`, { file: path, cause: e });
    }
    return new PackIndex(data, hashLength, path);
  }

  /** The pack's hash, as recorded in the index trailer. */
  get packHash(): Buffer {
    const end = this.data.length - this.hashLength;
    return this.data.subarray(end - this.hashLength, end);
  }

  get checksum(): Buffer {
    return this.data.subarray(this.data.length - this.hashLength);
  }

  /** Checks the trailing hash over the whole file. */
  verifyChecksum(): void {
    const computed = hashBytes(formatForHashLength(this.hashLength), this.data.subarray(0, this.data.length - this.hashLength));
    if (!computed.equals(this.checksum)) {
      throw new PackwrightError('IDX_CHECKSUM', `${this.path}: index checksum mismatch`, { file: this.path, offset: this.data.length - this.hashLength });
    }
  }

  /** Byte position of the id at sorted position `i` inside `data`. */
  idPosition(i: number): number {
    return this.idsStart + i * this.idStride;
  }

  id(i: number): Buffer {
    const p = this.idPosition(i);
    return this.data.subarray(p, p + this.hashLength);
  }

  crc32(i: number): number {
    if (this.crcStart < 0) throw new PackwrightError('INVALID_ARGUMENT', `${this.path}: a v1 index stores no CRC32`);
    return this.view.getUint32(this.crcStart + 4 * i);
  }

  offset(i: number): number {
    if (this.version === 1) return this.view.getUint32(this.offsetStart + i * this.idStride);
    const small = this.view.getUint32(this.offsetStart + 4 * i);
    if (!(small & 0x80000000)) return small;
    const k = small & 0x7fffffff;
    if (k >= this.largeCount) {
      throw new PackwrightError('IDX_CORRUPT', `${this.path}: object ${i} points at 64-bit offset entry ${k}, the table has ${this.largeCount}`, {
        file: this.path, offset: this.offsetStart + 4 * i,
      });
    }
    const p = this.largeStart + 8 * k;
    return this.view.getUint32(p) * 2 ** 32 + this.view.getUint32(p + 4);
  }

  /** Sorted position of `id`, or -1. */
  find(id: Uint8Array, idOffset = 0): number {
    const d = this.data;
    const H = this.hashLength;
    const first = id[idOffset] as number;
    let lo = first === 0 ? 0 : this.view.getUint32(this.fanoutStart + 4 * (first - 1));
    let hi = this.view.getUint32(this.fanoutStart + 4 * first);
    const stride = this.idStride;
    const base = this.idsStart;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const p = base + mid * stride;
      let cmp = 0;
      for (let k = 1; k < H; k++) {
        cmp = (d[p + k] as number) - (id[idOffset + k] as number);
        if (cmp !== 0) break;
      }
      if (cmp === 0) return mid;
      if (cmp < 0) lo = mid + 1;
      else hi = mid;
    }
    return -1;
  }

  /**
   * The first sorted position whose id starts with the hex `prefix` (odd lengths allowed), and how
   * many ids match, capped at `limit`.
   */
  findPrefix(prefix: string, limit = 2): { first: number; count: number } {
    const bytes = Buffer.from(prefix.length % 2 ? prefix + '0' : prefix, 'hex');
    const full = prefix.length >> 1;
    const odd = prefix.length % 2 === 1;
    let lo = 0;
    let hi = this.count;
    const d = this.data;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const p = this.idPosition(mid);
      let cmp = 0;
      for (let k = 0; k < bytes.length && cmp === 0; k++) cmp = (d[p + k] as number) - (bytes[k] as number);
      if (cmp < 0) lo = mid + 1;
      else hi = mid;
    }
    let count = 0;
    for (let i = lo; i < this.count && count < limit; i++) {
      const p = this.idPosition(i);
      let match = true;
      for (let k = 0; k < full && match; k++) match = d[p + k] === bytes[k];
      if (match && odd) match = ((d[p + full] as number) >> 4) === (bytes[full] as number) >> 4;
      if (!match) break;
      count++;
    }
    return { first: lo, count };
  }

  /** Entry offsets in pack order, and for each the sorted position of its id (an in-memory `.rev`). */
  packOrder(): PackOrder {
    if (this.order === undefined) {
      const n = this.count;
      let maxOffset = 0;
      if (this.largeCount > 0) for (let i = 0; i < n; i++) maxOffset = Math.max(maxOffset, this.offset(i));
      if (maxOffset < 2 ** 32) this.order = this.packOrderRadix();
      else this.order = this.packOrderLarge(maxOffset);
    }
    return this.order;
  }

  /**
   * Offsets below 4 GiB: a least-significant-digit radix sort over two 16-bit digits (~10× faster
   * than a numeric sort), reading offsets straight from the idx. Fresh memory is what costs here
   * (a first write to a page is a fault, ~4 ns a byte on this project's machines), so nothing is
   * copied out first, and offsets are 32-bit integers: half the size of doubles, and read back as
   * small integers, which even unoptimized code handles without allocating.
   */
  private packOrderRadix(): PackOrder {
    const n = this.count;
    const byLow = new Uint32Array(n);
    const positions = new Uint32Array(n);
    const counts = new Uint32Array(65536);
    for (let i = 0; i < n; i++) {
      const d = this.offset(i) & 0xffff;
      counts[d] = (counts[d] as number) + 1;
    }
    prefixSums(counts);
    for (let i = 0; i < n; i++) {
      const d = this.offset(i) & 0xffff;
      const at = counts[d] as number;
      counts[d] = at + 1;
      byLow[at] = i;
    }
    counts.fill(0);
    for (let i = 0; i < n; i++) {
      const d = this.offset(i) >>> 16;
      counts[d] = (counts[d] as number) + 1;
    }
    prefixSums(counts);
    for (let j = 0; j < n; j++) {
      const i = byLow[j] as number;
      const d = this.offset(i) >>> 16;
      const at = counts[d] as number;
      counts[d] = at + 1;
      positions[at] = i;
    }
    // The idx order is no longer needed: its memory becomes the offsets.
    const offsets = byLow;
    for (let k = 0; k < n; k++) offsets[k] = this.offset(positions[k] as number);
    return { offsets, positions };
  }

  /** Offsets past 4 GiB (packs with a 64-bit offset table): doubles, sorted natively. */
  private packOrderLarge(maxOffset: number): PackOrder {
    const n = this.count;
    const sorted = new Float64Array(n);
    const positions = new Uint32Array(n);
    const bits = Math.max(1, Math.ceil(Math.log2(n + 1)));
    if (maxOffset * 2 ** bits < 2 ** 53) {
      // Pack (offset, position) into one exactly representable number and let the native
      // numeric sort do the work: ~10× faster than a comparator over 226k entries.
      const scale = 2 ** bits;
      for (let i = 0; i < n; i++) sorted[i] = this.offset(i) * scale + i;
      sorted.sort();
      for (let i = 0; i < n; i++) {
        const key = sorted[i] as number;
        const pos = key % scale;
        positions[i] = pos;
        sorted[i] = (key - pos) / scale;
      }
    } else {
      const offsets = new Float64Array(n);
      for (let i = 0; i < n; i++) {
        offsets[i] = this.offset(i);
        positions[i] = i;
      }
      positions.sort((a, b) => (offsets[a] as number) - (offsets[b] as number));
      for (let i = 0; i < n; i++) sorted[i] = offsets[positions[i] as number] as number;
    }
    return { offsets: sorted, positions };
  }

  /**
   * Bytes each entry takes in the pack, by idx position (`dataEnd`: where the last entry ends, the
   * pack's size less its trailer). Made once per question, from the pack order.
   */
  entrySizes(dataEnd: number): Uint32Array | Float64Array {
    const { offsets, positions } = this.packOrder();
    const n = this.count;
    const sizes = dataEnd < 2 ** 32 ? new Uint32Array(n) : new Float64Array(n);
    for (let k = 0; k < n; k++) {
      const next = k + 1 < n ? (offsets[k + 1] as number) : dataEnd;
      sizes[positions[k] as number] = next - (offsets[k] as number);
    }
    return sizes;
  }

  /** Sorted position of the entry starting exactly at `offset`, or -1. */
  positionOfOffset(offset: number): number {
    const { offsets, positions } = this.packOrder();
    let lo = 0;
    let hi = offsets.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const v = offsets[mid] as number;
      if (v === offset) return positions[mid] as number;
      if (v < offset) lo = mid + 1;
      else hi = mid;
    }
    return -1;
  }

  /** Where the entry at `offset` ends: the next entry's start, or `dataEnd` for the last one. */
  entryEnd(offset: number, dataEnd: number): number {
    const { offsets } = this.packOrder();
    let lo = 0;
    let hi = offsets.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((offsets[mid] as number) <= offset) lo = mid + 1;
      else hi = mid;
    }
    return lo < offsets.length ? (offsets[lo] as number) : dataEnd;
  }
}

/** Turns counts into the start index of each digit's run. */
function prefixSums(counts: Uint32Array): void {
  let sum = 0;
  for (let d = 0; d < counts.length; d++) {
    const c = counts[d] as number;
    counts[d] = sum;
    sum += c;
  }
}
