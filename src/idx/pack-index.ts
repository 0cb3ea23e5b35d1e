import { closeSync, existsSync, fstatSync } from 'node:fs';
import { readRevIndex } from './rev-index.js';
import type { ObjectIndex } from './object-index.js';
import { PackwrightError } from '../errors/packwright-error.js';
import { hashBytes } from '../hash/hash-object.js';
import { formatForHashLength } from '../hash/object-format.js';
import { readExactly } from '../io/read-exactly.js';
import { openForReading } from '../io/open-for-reading.js';
import { compareBytes, fanoutEnd, fanoutStart, findId, findPrefixRange, lowerBound, startsWithPrefix, type IdPosition } from './sorted-ids.js';
import { IDX_LARGE_INDEX_MASK, IDX_LARGE_OFFSET, IDX_V2_MAGIC } from './idx-format.js';
import { packOrderOf32, packOrderOfLarge, type PackOrder } from './pack-order.js';

export type { PackOrder } from './pack-order.js';

const FANOUT_BYTES = 256 * 4;

/** How `PackIndex.open` reads the file: whole, or by section above a size. */
export interface PackIndexOpenOptions {
  /**
   * v2 indexes of at least this many bytes are read by section, on demand (default 1 MiB; 0 for
   * all, Infinity for none). See the class comment.
   */
  lazyMin?: number | undefined;
  /** What one small read is taken to cost, in bytes of a section read whole (default SMALL_READ_BYTES). */
  smallReadBytes?: number | undefined;
  /**
   * The pack's `.rev` (gitformat-pack, "pack-*.rev"), when git wrote one: the pack order is then
   * read from it instead of sorted from the offsets.
   */
  revPath?: string | undefined;
}

/** Sections of a v2 index read on demand. */
const IDS = 1;
const CRCS = 2;
const OFFSETS = 4;
const ALL = IDS | CRCS | OFFSETS;
/** v2 indexes from this size on are read by section (see PackIndexOpenOptions.lazyMin). */
const LAZY_MIN = 1 << 20;
/**
 * A small read (up to 1 KiB) costs about what reading this many bytes of a section into fresh
 * memory does (a ~5 µs system call against the first-touch cost of fresh memory,
 * memory/index.ts): a section is read whole once its small reads add up to its size at this rate,
 * a larger read counting in proportion (a 129k-object index's ids: ~500 block reads, as many
 * lookups; see findBySmallReads and loadIdBlock).
 */
const SMALL_READ_BYTES = 1024;
/** Ids a small read of the ids section brings in at once (8 KiB of SHA-256 ids; see findBySmallReads). */
const ID_BLOCK = 256;

/**
 * A `.idx` file (v1 or v2): fan-out + binary search by id, offsets (31-bit and the 64-bit table),
 * CRC32s.
 *
 * Small indexes are read whole. A large v2 index opened from a file is read by section: the
 * header, fan-out and trailer at once; ids, CRCs and offsets when first needed, and its first
 * lookups by small reads at the positions a binary search visits (see SMALL_READ_BYTES). Why: a 226k-object
 * index is 6.3 MB, and reading it costs ~25 ms, mostly first-touch page faults (see
 * memory/index.ts), where a lookup by small reads costs ~50 µs; and
 * `cat-file --batch-all-objects --batch-check` never needs the CRCs and reads the ids once, in
 * order, through a small buffer (`idsBlock`). The file stays open until every section is loaded
 * or `close`. It is never reopened by path: after `git gc` the path may name another index, or
 * none, while this one's file stays readable through the descriptor it holds.
 */
export class PackIndex implements ObjectIndex {
  readonly path: string;
  readonly version: 1 | 2;
  readonly hashLength: number;
  readonly count: number;
  /** The file's bytes; sections not yet read are garbage until `need` reads them. */
  private readonly bytes: Buffer;
  private readonly view: DataView;
  /** Sections read so far (IDS | CRCS | OFFSETS); ALL for an index read whole. */
  private loaded = ALL;
  /** The open file while sections remain to be read. */
  private fd: number | undefined;
  private closed = false;
  /** Small reads made in the ids (counted in reads of up to 1 KiB), the CRCs and the offsets (see SMALL_READ_BYTES). */
  private idReads = 0;
  private offsetReads = 0;
  private crcReads = 0;
  private smallReadBytes = SMALL_READ_BYTES;
  /** Room for one small read: an id or a 64-bit offset. */
  private readonly scratch = Buffer.allocUnsafe(64);
  /** `IdPosition` for `findId` over the ids in memory. */
  private readonly idInMemory: IdPosition;
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
  /** The inverse of the pack order's positions (see packRanks), built on first use. */
  private ranks: Uint32Array | undefined;
  /** The pack's `.rev`, if any (see PackIndexOpenOptions.revPath). */
  private revPath: string | undefined;

  /**
   * `data` is the whole file. (PackIndex.open may pass a buffer of the file's size with only the
   * header, fan-out and trailer read, and the open file in `lazyFd`.)
   */
  constructor(data: Buffer, hashLength: number, path = '<idx>', lazyFd?: number) {
    this.path = path;
    this.bytes = data;
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
    const idsStart = this.idsStart;
    const stride = this.idStride;
    this.idInMemory = (i) => idsStart + i * stride;
    if (lazyFd !== undefined) {
      this.fd = lazyFd;
      if (this.version === 2) {
        this.loaded = 0;
      } else {
        // v1 interleaves offsets and ids: no sections to read apart.
        this.readRange(afterFanout, data.length - 2 * H);
        this.close();
      }
    }
  }

  /**
   * Opens a pack index (v1 or v2) and checks its structure; large v2 indexes are read by section, on
   * demand.
   */
  static open(path: string, hashLength: number, options: PackIndexOpenOptions = {}): PackIndex {
    const fd = openForReading(path, 'IDX_MISSING');
    let keep = false;
    try {
      const size = fstatSync(fd).size;
      const data = Buffer.allocUnsafeSlow(size);
      const head = Math.min(size, 8 + FANOUT_BYTES);
      if (size >= (options.lazyMin ?? LAZY_MIN) && size > head + 2 * hashLength) {
        // Header, fan-out and trailer now; the constructor validates the layout against the size.
        readExactly(fd, data, 0, head, 0, path, 'IDX_CORRUPT');
        readExactly(fd, data, size - 2 * hashLength, 2 * hashLength, size - 2 * hashLength, path, 'IDX_CORRUPT');
        const index = new PackIndex(data, hashLength, path, fd);
        // The index owns the file now, and closes it when it has read everything.
        keep = true;
        if (options.smallReadBytes !== undefined) index.smallReadBytes = options.smallReadBytes;
        index.revPath = options.revPath;
        return index;
      }
      readExactly(fd, data, 0, size, 0, path, 'IDX_CORRUPT');
      const index = new PackIndex(data, hashLength, path);
      index.revPath = options.revPath;
      return index;
    } finally {
      if (!keep) closeSync(fd);
    }
  }

  /** The whole file (every section is read first). */
  get data(): Buffer {
    this.need(ALL);
    return this.bytes;
  }

  /**
   * The index's bytes with its ids read, at `idPosition`s (the other sections may not be): for a
   * walk over every id that needs no CRCs (4 bytes an object not read).
   */
  idData(): Buffer {
    this.need(IDS);
    return this.bytes;
  }

  /** The index file's size: what it holds in memory once every section is read. */
  get fileSize(): number {
    return this.bytes.length;
  }

  /** Whether the index still holds its file open (sections remain to be read). */
  get holdsFile(): boolean {
    return this.fd !== undefined;
  }

  /** Closes the file if sections remain unread; reading them later is an error. */
  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
    this.closed = true;
  }

  /**
   * Reads the whole index into memory now, for a caller about to look up much of it (lookups
   * start with small reads, which cost a system call each until enough of them switch it over).
   */
  loadAll(): void {
    this.need(ALL);
  }

  /** Reads the sections in `sections` that are not in memory yet. */
  private need(sections: number): void {
    const missing = sections & ~this.loaded;
    if (missing === 0) return;
    const n = this.count;
    if (missing & IDS) this.readRange(this.idsStart, this.idsStart + n * this.hashLength);
    if (missing & CRCS) this.readRange(this.crcStart, this.crcStart + 4 * n);
    if (missing & OFFSETS) this.readRange(this.offsetStart, this.bytes.length - 2 * this.hashLength);
    this.loaded |= missing;
    if (this.loaded === ALL) this.close();
  }

  private readRange(from: number, to: number): void {
    readExactly(this.file(), this.bytes, from, to - from, from, this.path, 'IDX_CORRUPT');
  }

  /** The open file, for sections not read yet. */
  private file(): number {
    if (this.fd === undefined) {
      const why = this.closed ? 'it was closed' : 'its file is not open';
      throw new PackwrightError('INVALID_ARGUMENT', `${this.path}: cannot read the rest of the index: ${why}`, { file: this.path });
    }
    return this.fd;
  }

  /** `length` bytes at `at` of the file into the scratch buffer, by one small read (for lookups before a section is read). */
  private readSmall(at: number, length: number): Buffer {
    readExactly(this.file(), this.scratch, 0, length, at, this.path, 'IDX_CORRUPT');
    return this.scratch;
  }

  /** The ids `idBlockFirst ..` that the last small read of ids brought in (`idBlockCount` of them, H bytes each). */
  private readonly idBlock = Buffer.allocUnsafeSlow(ID_BLOCK * 32);
  private idBlockFirst = 0;
  private idBlockCount = 0;

  /** Reads the `count` ids from sorted position `first` into `idBlock` (count ≤ ID_BLOCK). */
  private loadIdBlock(first: number, count: number): void {
    // A block of ids costs its copy on top of the call: a 5 KiB block read took ~20 µs here, about
    // what reading 5 KiB of the section into fresh memory costs, so it counts as five small reads
    // (a 129k-object index's ids: read whole after ~500 lookups rather than ~2,500).
    this.idReads += Math.max(1, (count * this.hashLength) / 1024);
    // Emptied first: should the read fail, no stale ids are taken for these positions.
    this.idBlockCount = 0;
    readExactly(this.file(), this.idBlock, 0, count * this.hashLength, this.idsStart + first * this.hashLength, this.path, 'IDX_CORRUPT');
    this.idBlockFirst = first;
    this.idBlockCount = count;
  }

  /** Where the id at sorted position `i` is in `idBlock`, after reading the ids around it if the block does not hold it. */
  private idInBlock(i: number): number {
    if (i < this.idBlockFirst || i >= this.idBlockFirst + this.idBlockCount) {
      const first = Math.max(0, Math.min(i - (ID_BLOCK >>> 1), this.count - ID_BLOCK));
      this.loadIdBlock(first, Math.min(ID_BLOCK, this.count - first));
    }
    return (i - this.idBlockFirst) * this.hashLength;
  }

  /**
   * `find` before the ids are in memory: each read brings in a block of ID_BLOCK ids, the first
   * around an interpolated guess (ids are hashes, spread evenly over their fan-out bucket), which
   * then holds the id or shows which side of it the id is on. A guess that leaves more than half
   * of the range is followed by a bisection, so ids chosen to defeat the guesses cost at most
   * twice bisection's reads. A 129k-object index (gitoxide's): one read a lookup where reading
   * an id a probe took ~10 (300 lookups: 10.5 -> 2.0 ms).
   */
  private findBySmallReads(key: Uint8Array, keyOffset: number): number {
    const i = this.lowerBoundBySmallReads(key, keyOffset);
    // Past the bucket, or past the ids read (those from there on are above the key): not there.
    if (i >= fanoutEnd(this.view, this.fanoutStart, key[keyOffset] as number) || i < this.idBlockFirst || i >= this.idBlockFirst + this.idBlockCount) return -1;
    return compareBytes(this.idBlock, (i - this.idBlockFirst) * this.hashLength + 1, key, keyOffset + 1, this.hashLength - 1) === 0 ? i : -1;
  }

  /**
   * The first sorted position whose id is not below `key` (the end of the key's fan-out bucket
   * if none in it is), found by reading blocks of ids as `findBySmallReads` says; when inside
   * the bucket, that id is in `idBlock`.
   */
  private lowerBoundBySmallReads(key: Uint8Array, keyOffset: number): number {
    const H = this.hashLength;
    const block = this.idBlock;
    const firstByte = key[keyOffset] as number;
    let lo = fanoutStart(this.view, this.fanoutStart, firstByte);
    let hi = fanoutEnd(this.view, this.fanoutStart, firstByte);
    const end = hi;
    // Where the key lies in its bucket, from its bytes 1..3, as a fraction.
    const fraction = (((key[keyOffset + 1] as number) << 16) | ((key[keyOffset + 2] as number) << 8) | (key[keyOffset + 3] as number)) / 0x1000000;
    // The ids at positions below `lo` are below the key, those from `hi` on above it.
    let bisect = false;
    while (hi - lo > ID_BLOCK) {
      const span = hi - lo;
      const guess = bisect ? lo + (span >>> 1) : lo + Math.floor(fraction * span);
      const first = Math.max(lo, Math.min(guess - (ID_BLOCK >>> 1), hi - ID_BLOCK));
      if (first !== this.idBlockFirst || this.idBlockCount !== ID_BLOCK) this.loadIdBlock(first, ID_BLOCK);
      if (compareBytes(block, 0, key, keyOffset, H) > 0) hi = first;
      else if (compareBytes(block, (ID_BLOCK - 1) * H, key, keyOffset, H) < 0) lo = first + ID_BLOCK;
      else {
        lo = first;
        hi = first + ID_BLOCK;
        break;
      }
      bisect = !bisect && hi - lo > span >>> 1;
    }
    if (lo === hi) return lo;
    if (lo < this.idBlockFirst || hi > this.idBlockFirst + this.idBlockCount) this.loadIdBlock(lo, hi - lo);
    const base = this.idBlockFirst;
    const i = lowerBound(block, (p) => (p - base) * H, lo, hi, key, keyOffset, 1, H);
    return Math.min(i, end);
  }

  /** True when a lookup in `section` (IDS, CRCS or OFFSETS) should read small, false when the section is (now) in memory. */
  private readsSmall(section: number): boolean {
    if (this.loaded & section) return false;
    const reads = section === IDS ? this.idReads : section === CRCS ? this.crcReads : this.offsetReads;
    const bytes = section === IDS ? this.count * this.hashLength : section === CRCS ? 4 * this.count : this.bytes.length - 2 * this.hashLength - this.offsetStart;
    if (reads * this.smallReadBytes < bytes) return true;
    this.need(section);
    return false;
  }

  /** The pack's hash, as recorded in the index trailer. */
  get packHash(): Buffer {
    const end = this.bytes.length - this.hashLength;
    return this.bytes.subarray(end - this.hashLength, end);
  }

  get checksum(): Buffer {
    return this.bytes.subarray(this.bytes.length - this.hashLength);
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

  /** The id at sorted position `i` (a view of the index, or a copy while its ids are unread). */
  id(i: number): Buffer {
    const p = this.idPosition(i);
    if (this.readsSmall(IDS)) {
      const at = this.idInBlock(i);
      return Buffer.from(this.idBlock.subarray(at, at + this.hashLength));
    }
    return this.bytes.subarray(p, p + this.hashLength);
  }

  /**
   * The ids at sorted positions `first .. first+count`, back to back (H bytes each): a view of the
   * index when its ids are in memory, else read into `scratch` (count × H bytes at least).
   */
  idsBlock(first: number, count: number, scratch: Buffer): Uint8Array {
    const H = this.hashLength;
    if (this.loaded & IDS && this.idStride === H) return this.bytes.subarray(this.idPosition(first), this.idPosition(first + count));
    if (this.loaded & IDS) {
      for (let k = 0; k < count; k++) this.bytes.copy(scratch, k * H, this.idPosition(first + k), this.idPosition(first + k) + H);
    } else {
      readExactly(this.file(), scratch, 0, count * H, this.idPosition(first), this.path, 'IDX_CORRUPT');
    }
    return scratch.subarray(0, count * H);
  }

  /**
   * Every id in sorted order, `block` at a time: `ids` holds `count` ids from sorted position
   * `first` (an `idsBlock`, read into `scratch` while the ids are not in memory).
   */
  *idBlocks(block: number, scratch: Buffer = Buffer.allocUnsafe(block * this.hashLength)): Generator<{ first: number; count: number; ids: Uint8Array }> {
    for (let first = 0; first < this.count; first += block) {
      const count = Math.min(block, this.count - first);
      yield { first, count, ids: this.idsBlock(first, count, scratch) };
    }
  }

  /** A pack's own index covers one pack. */
  packOf(): number {
    return 0;
  }

  /** The CRC32 of the entry at idx position `position` (v2 indexes only). */
  crc32(i: number): number {
    if (this.crcStart < 0) throw new PackwrightError('INVALID_ARGUMENT', `${this.path}: a v1 index stores no CRC32`);
    // A few CRCs (the entries a small fetch copies) by small reads, as offsets and ids are read.
    if (this.readsSmall(CRCS)) {
      this.crcReads++;
      return this.readSmall(this.crcStart + 4 * i, 4).readUInt32BE(0);
    }
    return this.view.getUint32(this.crcStart + 4 * i);
  }

  offset(i: number): number {
    if (this.version === 1) return this.view.getUint32(this.offsetStart + i * this.idStride);
    const small = this.offsetWord(this.offsetStart + 4 * i);
    if (!(small & IDX_LARGE_OFFSET)) return small;
    // gitformat-pack: the high bit marks an index into the table of 64-bit offsets.
    const k = small & IDX_LARGE_INDEX_MASK;
    if (k >= this.largeCount) {
      throw new PackwrightError('IDX_CORRUPT', `${this.path}: object ${i} points at 64-bit offset entry ${k}, the table has ${this.largeCount}`, {
        file: this.path, offset: this.offsetStart + 4 * i,
      });
    }
    const p = this.largeStart + 8 * k;
    return this.offsetWord(p) * 2 ** 32 + this.offsetWord(p + 4);
  }

  /** The 32-bit word at `p` of the offset sections, from memory or (before they are read) by a small read. */
  private offsetWord(p: number): number {
    if (this.loaded !== ALL && this.readsSmall(OFFSETS)) {
      this.offsetReads++;
      return this.readSmall(p, 4).readUInt32BE(0);
    }
    return this.view.getUint32(p);
  }

  /** Sorted position of `id`, or -1. */
  find(id: Uint8Array, idOffset = 0): number {
    if (this.readsSmall(IDS)) return this.findBySmallReads(id, idOffset);
    return findId(this.bytes, this.idInMemory, this.view, this.fanoutStart, id, idOffset, this.hashLength);
  }

  /**
   * The first sorted position whose id starts with the hex `prefix` (odd lengths allowed), and how
   * many ids match, capped at `limit`.
   */
  findPrefix(prefix: string, limit = 2): { first: number; count: number } {
    // A prefix with a whole first byte, before the ids are read: by blocks of ids, as `find`
    // (abbreviating an id in a push's report read git.git's 6 MB of ids for it).
    if (prefix.length >= 2 && this.readsSmall(IDS)) {
      const key = Buffer.alloc(this.hashLength);
      key.write(prefix.length % 2 === 1 ? `${prefix}0` : prefix, 'hex');
      const first = this.lowerBoundBySmallReads(key, 0);
      let matched = 0;
      for (let i = first; i < this.count && matched < limit; i++) {
        if (!startsWithPrefix(this.idBlock, this.idInBlock(i), key, prefix.length)) break;
        matched++;
      }
      return { first, count: matched };
    }
    this.need(IDS);
    return findPrefixRange(this.bytes, this.idInMemory, this.view, this.fanoutStart, this.count, prefix, limit);
  }

  /**
   * Installs a pack order computed elsewhere for this same index (another thread's, passed in
   * shared memory), so it is not sorted twice.
   */
  usePackOrder(order: PackOrder): void {
    if (order.positions.length !== this.count || order.offsets.length !== this.count) {
      throw new RangeError(`pack order of ${order.positions.length} entries for an index of ${this.count}`);
    }
    this.order = order;
    this.ranks = undefined;
  }

  /**
   * For each sorted position, its entry's rank in pack order (bit positions in a `.bitmap`, the
   * order a pack is read front to back): the inverse of `packOrder().positions`.
   */
  packRanks(): Uint32Array {
    if (this.ranks === undefined) {
      const { positions } = this.packOrder();
      const ranks = new Uint32Array(positions.length);
      for (let r = 0; r < positions.length; r++) ranks[positions[r] as number] = r;
      this.ranks = ranks;
    }
    return this.ranks;
  }

  /** Entry offsets in pack order, and for each the sorted position of its id (an in-memory `.rev`): the `.rev` when there is one, else sorted here (pack-order.ts). */
  packOrder(): PackOrder {
    if (this.order === undefined) {
      this.need(OFFSETS);
      const n = this.count;
      const fromRev = this.packOrderFromRev();
      if (fromRev !== undefined) return (this.order = fromRev);
      let maxOffset = 0;
      if (this.largeCount > 0) for (let i = 0; i < n; i++) maxOffset = Math.max(maxOffset, this.offset(i));
      const offsetOf = (i: number): number => this.offset(i);
      this.order = maxOffset < 2 ** 32 ? packOrderOf32(n, offsetOf) : packOrderOfLarge(n, maxOffset, offsetOf);
    }
    return this.order;
  }

  /**
   * The pack order as git's `.rev` states it, checked as it is used: offsets must come out strictly
   * increasing (a `.rev` that does not fit the index is REV_CORRUPT). Undefined when there is no
   * `.rev` (or it has gone since the index was opened).
   */
  private packOrderFromRev(): PackOrder | undefined {
    if (this.revPath === undefined || !existsSync(this.revPath)) return undefined;
    const positions = readRevIndex(this.revPath, formatForHashLength(this.hashLength), this.count, this.packHash);
    const n = this.count;
    const offsets = this.largeCount > 0 ? new Float64Array(n) : new Uint32Array(n);
    let previous = -1;
    for (let k = 0; k < n; k++) {
      const offset = this.offset(positions[k] as number);
      if (offset <= previous) {
        throw new PackwrightError('REV_CORRUPT', `${this.revPath}: entry ${k} is not in pack order (offset ${offset} after ${previous})`, { file: this.revPath, offset: 12 + 4 * k });
      }
      offsets[k] = offset;
      previous = offset;
    }
    return { offsets, positions };
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

  /**
   * For each of `offsets`: the sorted position of the entry that starts there (-1: none does) and
   * the offset where the next entry starts (-1: none does, the entry is the last and ends at the
   * pack's data end). What a few entries of a large pack need (a small fetch's or push's pack
   * copies 40 of git.git's 310k): one pass over the idx's offsets, where the pack order sorts them
   * all and fills four arrays of the pack's size first (70-80 ms cold on git.git, most of it the
   * first touch of that memory). With the pack order already made, by bisection in it.
   */
  entriesAt(offsets: Iterable<number>): Map<number, { position: number; next: number }> {
    const sorted = Float64Array.from(new Set(offsets)).sort();
    const k = sorted.length;
    const positions = new Int32Array(k).fill(-1);
    const next = new Float64Array(k).fill(-1);
    let exact = false;
    if (this.order === undefined) {
      this.need(OFFSETS);
      const n = this.count;
      const view = this.view;
      const small = this.version === 2 && this.largeCount === 0;
      for (let i = 0; i < n; i++) {
        const v = small ? view.getUint32(this.offsetStart + 4 * i) : this.offset(i);
        // The first query at or past v: v is that query's entry, and the next entry of the query
        // before it, unless a nearer one turns up. Every query being an entry's offset, no query
        // lies between an entry and the one after it, so the nearest offset above each query is
        // found this way; a query that is no entry's spoils that, so then the pack order decides.
        let lo = 0;
        let hi = k;
        while (lo < hi) {
          const mid = (lo + hi) >>> 1;
          if ((sorted[mid] as number) < v) lo = mid + 1;
          else hi = mid;
        }
        if (lo < k && sorted[lo] === v) positions[lo] = i;
        if (lo > 0 && ((next[lo - 1] as number) < 0 || v < (next[lo - 1] as number))) next[lo - 1] = v;
      }
      exact = !positions.includes(-1);
    }
    if (!exact) {
      const { offsets: ordered, positions: order } = this.packOrder();
      for (let q = 0; q < k; q++) {
        const offset = sorted[q] as number;
        const r = this.rankAfter(offset);
        positions[q] = r > 0 && ordered[r - 1] === offset ? (order[r - 1] as number) : -1;
        next[q] = r < ordered.length ? (ordered[r] as number) : -1;
      }
    }
    const found = new Map<number, { position: number; next: number }>();
    for (let q = 0; q < k; q++) found.set(sorted[q] as number, { position: positions[q] as number, next: next[q] as number });
    return found;
  }

  /** The pack-order rank of the first entry that starts after `offset` (the count of entries when none does). */
  private rankAfter(offset: number): number {
    const { offsets } = this.packOrder();
    let lo = 0;
    let hi = offsets.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((offsets[mid] as number) <= offset) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /**
   * Sorted position of the entry starting exactly at `offset`, or -1. `before`, when given, is a
   * pack-order index whose entry starts after `offset` (a delta's, for its OFS base): the search
   * then steps back from it in doubling steps before bisecting, since bases are usually near
   * their deltas and a bisection of the whole order touches ~18 cache lines.
   */
  positionOfOffset(offset: number, before?: number): number {
    const { offsets, positions } = this.packOrder();
    let lo = 0;
    let hi = offsets.length;
    if (before !== undefined) {
      hi = before;
      lo = before - 1;
      for (let step = 1; lo > 0 && (offsets[lo] as number) > offset; step *= 2) {
        hi = lo;
        lo -= step;
      }
      if (lo < 0) lo = 0;
    }
    // offsets[lo] <= offset < offsets[hi] when the entry exists: bisect in [lo, hi).
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
    const r = this.rankAfter(offset);
    return r < offsets.length ? (offsets[r] as number) : dataEnd;
  }
}
