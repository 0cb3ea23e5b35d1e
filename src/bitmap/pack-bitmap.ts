/**
 * A pack's reachability bitmaps (`pack-<hash>.bitmap`, gitformat-bitmap v1): for a selection of
 * commits, the set of objects each reaches, as bit positions in pack order (bit k is the k-th
 * entry by offset), plus one set per object type and, optionally, each object's path-name hash.
 * A multi-pack-index's (`multi-pack-index-<hash>.bitmap`) has the same layout, its bits in the
 * multi-pack-index's pseudo-pack order and its index positions those of the multi-pack-index.
 *
 * Layout: "BITM", version 1, options (16 bits: FULL_DAG required, HASH_CACHE, LOOKUP_TABLE), the
 * entry count, the pack's hash; the commit, tree, blob and tag sets; then per entry the commit's
 * position in the pack index, an XOR offset (the set is stored XORed with the one that many
 * entries before it), flags and the set; then the lookup table, the hash cache (one 32-bit hash
 * per object in index order) and the file's own hash.
 *
 * Everything is checked when the file is opened (sizes, offsets, the two hashes); an entry's set
 * is decoded when first asked for, and what it decodes to is checked then.
 */
import { readFileSync } from 'node:fs';
import { PackwrightError } from '../errors/packwright-error.js';
import { hashBytes } from '../hash/hash-object.js';
import { formatForHashLength } from '../hash/object-format.js';
import { Bitset } from './bitset.js';
import { decodeEwah, ewahExtent, EwahFormatError } from './ewah.js';

const SIGNATURE = 0x4249544d; // "BITM"
const OPT_FULL_DAG = 0x1;
const OPT_HASH_CACHE = 0x4;
const OPT_LOOKUP_TABLE = 0x10;
/** git refuses XOR offsets beyond this (its writer looks that far back). */
const MAX_XOR_OFFSET = 160;
/** A lookup-table row: commit position (4), offset (8), XOR row (4). */
const LOOKUP_ROW = 16;
/**
 * Decoded entry sets kept for XOR chains and repeated asks, in bytes: beyond it the cache starts
 * over (a set costs objects/8 bytes: 1.25 MB at 10M objects).
 */
const DECODED_BUDGET = 32 * 1024 * 1024;

/**
 * How a `.bitmap` file is checked on opening: the pack's object count, the id length and, when known, the
 * pack's checksum.
 */
export interface PackBitmapOptions {
  /** Objects in the pack (its index's count): the bits every set covers. */
  objectCount: number;
  hashLength: number;
  /** The pack's hash: the bitmap must name it. */
  packHash?: Uint8Array | undefined;
}

/**
 * A pack's reachability bitmap file (`.bitmap`): type bitmaps, the bitmaps of selected commits (XOR-decoded
 * on demand) and the hash cache.
 */
export class PackBitmap {
  readonly commits: Bitset;
  readonly trees: Bitset;
  readonly blobs: Bitset;
  readonly tags: Bitset;
  /** Path-name hashes in index order (git's pack_name_hash), when the file has them. */
  readonly hashes: Uint32Array | undefined;
  readonly entryCount: number;
  /** Per entry: the commit's position in the pack index, its XOR offset, where its set starts. */
  private readonly entryPosition: Uint32Array;
  private readonly entryXor: Uint8Array;
  private readonly entryAt: Float64Array;
  private readonly byPosition = new Map<number, number>();
  private readonly decoded = new Map<number, Bitset>();
  private decodedBytes = 0;

  constructor(
    private readonly data: Uint8Array,
    readonly path: string,
    private readonly options: PackBitmapOptions,
  ) {
    const H = options.hashLength;
    const N = options.objectCount;
    const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
    // Messages in git's words where git has them (load_bitmap_header, load_bitmap_entries_v1):
    // its tests look for "corrupted bitmap index" and "corrupt ewah bitmap".
    const header = 12 + H;
    if (data.length < header + H) this.fail('corrupted bitmap index (too small)', 0);
    if (view.getUint32(0) !== SIGNATURE) this.fail('corrupted bitmap index file (wrong header)', 0);
    const version = view.getUint16(4);
    if (version !== 1) this.fail(`unsupported version '${version}' for bitmap index file`, 4);
    const flags = view.getUint16(6);
    if ((flags & OPT_FULL_DAG) === 0) this.fail('unsupported options for bitmap index file (git requires BITMAP_OPT_FULL_DAG)', 6);
    this.entryCount = view.getUint32(8);
    const trailer = data.length - H;
    let end = trailer;
    if ((flags & OPT_HASH_CACHE) !== 0) {
      if (4 * N > end - header) this.fail('corrupted bitmap index file (too short to fit hash cache)', end);
      end -= 4 * N;
      this.hashes = new Uint32Array(N);
      for (let i = 0; i < N; i++) this.hashes[i] = view.getUint32(end + 4 * i);
    }
    if ((flags & OPT_LOOKUP_TABLE) !== 0) {
      if (LOOKUP_ROW * this.entryCount > end - header) this.fail('corrupted bitmap index file (too short to fit lookup table)', end);
      end -= LOOKUP_ROW * this.entryCount;
    }
    let at = header;
    const types: Bitset[] = [];
    for (let t = 0; t < 4; t++) {
      const decoded = this.decodeAt(at, end, -1);
      types.push(decoded.bits);
      at = decoded.end;
    }
    [this.commits, this.trees, this.blobs, this.tags] = types as [Bitset, Bitset, Bitset, Bitset];
    // The entries: their sets are skipped over here (sizes checked), decoded when asked for.
    // An entry takes at least 18 bytes, so the count is checked before the tables are made.
    if (this.entryCount > (end - at) / 18) this.fail(`corrupt ewah bitmap: truncated header for entry ${Math.floor((end - at) / 18)}`, 8);
    this.entryPosition = new Uint32Array(this.entryCount);
    this.entryXor = new Uint8Array(this.entryCount);
    this.entryAt = new Float64Array(this.entryCount);
    for (let i = 0; i < this.entryCount; i++) {
      if (end - at < 6) this.fail(`corrupt ewah bitmap: truncated header for entry ${i}`, at);
      const position = view.getUint32(at);
      const xor = view.getUint8(at + 4);
      if (position >= N) this.fail(`corrupt ewah bitmap: commit index ${position} out of range`, at);
      const set = this.ewah(i, () => ewahExtent(data, at + 6, end).end);
      if (xor > MAX_XOR_OFFSET || xor > i) this.fail(`corrupted bitmap pack index (entry ${i} has XOR offset ${xor})`, at + 4);
      if (this.byPosition.has(position)) this.fail(`duplicate entry in bitmap index: index position ${position}`, at);
      this.byPosition.set(position, i);
      this.entryPosition[i] = position;
      this.entryXor[i] = xor;
      this.entryAt[i] = at + 6;
      at = set;
    }
    // Last, as git's reader never does: a flipped bit in a set would still decode, and send the
    // wrong objects.
    const own = hashBytes(formatForHashLength(H), data.subarray(0, trailer));
    if (!own.equals(data.subarray(trailer))) this.fail('corrupted bitmap index file (checksum mismatch)', trailer);
    if (options.packHash !== undefined && !Buffer.from(data.buffer, data.byteOffset + 12, H).equals(options.packHash)) {
      this.fail('corrupted bitmap index file (it names another pack)', 12);
    }
  }

  /** Reads and checks `path`, the bitmap of a pack of `options.objectCount` objects. */
  static open(path: string, options: PackBitmapOptions): PackBitmap {
    return new PackBitmap(readFileSync(path), path, options);
  }

  get hashLength(): number {
    return this.options.hashLength;
  }

  /** The hash of the pack (or multi-pack-index) the file says it belongs to. */
  ownerHash(): Buffer {
    return Buffer.from(this.data.buffer, this.data.byteOffset + 12, this.options.hashLength);
  }

  /** The entry for the commit at this pack-index position, or -1. */
  entryOf(indexPosition: number): number {
    return this.byPosition.get(indexPosition) ?? -1;
  }

  /** The commit's pack-index position of entry `i`. */
  entryPositionOf(i: number): number {
    return this.entryPosition[i] as number;
  }

  /**
   * The objects entry `i`'s commit reaches, in pack order (its XOR chain undone). The set is the
   * bitmap's own, kept for later asks: callers copy before changing it.
   */
  reachable(i: number): Bitset {
    const cached = this.decoded.get(i);
    if (cached !== undefined) return cached;
    // Down the chain to a set already known or one stored whole, then back up XORing.
    const chain: number[] = [];
    let base: Bitset | undefined;
    for (let e = i; ; e -= this.entryXor[e] as number) {
      base = this.decoded.get(e);
      if (base !== undefined) break;
      chain.push(e);
      if (this.entryXor[e] === 0) break;
    }
    for (let k = chain.length - 1; k >= 0; k--) {
      const e = chain[k] as number;
      const own = this.decodeAt(this.entryAt[e] as number, this.data.length, e).bits;
      if (base !== undefined) own.xor(base);
      this.keep(e, own);
      base = own;
    }
    return base as Bitset;
  }

  private keep(e: number, set: Bitset): void {
    if (this.decodedBytes + set.words.byteLength > DECODED_BUDGET) {
      this.decoded.clear();
      this.decodedBytes = 0;
    }
    this.decoded.set(e, set);
    this.decodedBytes += set.words.byteLength;
  }

  private decodeAt(at: number, end: number, entry: number): { bits: Bitset; end: number } {
    return this.ewah(entry, () => decodeEwah(this.data, at, end, this.options.objectCount));
  }

  /** `read` of an EWAH set, its format errors BITMAP_CORRUPT naming the entry (-1: a type set). */
  private ewah<T>(entry: number, read: () => T): T {
    try {
      return read();
    } catch (e) {
      if (!(e instanceof EwahFormatError)) throw e;
      return this.fail(`${entry >= 0 ? `bitmap entry ${entry}` : 'type bitmap'}: ${e.message}`, e.position);
    }
  }

  private fail(message: string, offset: number): never {
    throw new PackwrightError('BITMAP_CORRUPT', `${this.path}: ${message}`, { file: this.path, offset });
  }
}
