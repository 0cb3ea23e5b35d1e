import { IDX_LARGE_OFFSET, IDX_MAX_SMALL_OFFSET, IDX_V2_MAGIC } from './idx-format.js';
import type { ObjectFormat } from '../hash/object-format.js';
import type { Hash } from 'node:crypto';
import { nodeCrypto } from '../hash/node-crypto.js';

/** What an index is written from: ids, offsets and CRC32s of a pack's objects, and the pack's checksum. */
export interface IndexEntries {
  /** Ids of all objects, H bytes each, back to back: sorted, or in any order with `order`. */
  ids: Uint8Array;
  /** Pack offsets in the same order as `ids`. */
  /** Entry offsets by entry number (32-bit or doubles, see PackScan.offsets). */
  offsets: Float64Array | Uint32Array;
  /** CRC32 of each raw entry, same order (v2 only). */
  crc32: Uint32Array;
  /**
   * `order[i]`: the entry whose id sorts i-th, when the arrays are not sorted themselves
   * (index-pack's, in pack order): the index is gathered from them, with no sorted copies. The
   * fan-out and the count of 64-bit offsets are taken in the arrays' own order (the counts are
   * the same); only the tables are written in sorted order, a cache miss an entry per table.
   */
  order?: Uint32Array;
}

/** Options of `writeIndex`: version (1 or 2) and the 64-bit offset threshold. */
export interface WriteIndexOptions {
  /** 1 or 2 (default 2). A v1 request becomes v2 when an offset needs the 64-bit table. */
  version?: 1 | 2 | undefined;
  /**
   * Offsets above this go to the 64-bit table (git's `--index-version=2,<limit>`); default
   * 0x7fffffff. Lower it to test large offsets on small packs.
   */
  largeOffsetLimit?: number | undefined;
}

/** Receives an index a chunk at a time, in order; a chunk is reused once the call returns. */
export type IndexSink = (chunk: Uint8Array) => void;

/**
 * Builds `.idx` bytes exactly as git's `write_idx_file` (pack-write.c) does, trailer included:
 * identical input gives byte-identical output.
 */
export function writeIndex(format: ObjectFormat, entries: IndexEntries, packHash: Uint8Array, options: WriteIndexOptions = {}): Buffer {
  const parts: Buffer[] = [];
  streamIndex(format, entries, packHash, options, (chunk) => parts.push(Buffer.from(chunk)));
  return Buffer.concat(parts);
}

/** Bytes of the chunks `streamIndex` hands its sink. */
const CHUNK = 1 << 20;

/**
 * `writeIndex` a chunk at a time, so that no copy of the whole index is held: index-pack writes
 * the chunks to the file (or compares them with the one there). At 10M objects that is 280 MB not
 * allocated. The index's own checksum is computed as the chunks go.
 */
export function streamIndex(format: ObjectFormat, entries: IndexEntries, packHash: Uint8Array, options: WriteIndexOptions, sink: IndexSink): void {
  const H = packHash.length;
  const n = entries.order?.length ?? entries.offsets.length;
  // The i-th sorted entry's position in the arrays given.
  const order = entries.order ?? identity(n);
  const { offsets, crc32 } = entries;
  const limit = options.largeOffsetLimit ?? IDX_MAX_SMALL_OFFSET;
  const needsLarge = (offset: number): boolean => offset >= 2 ** 31 || offset > limit;
  let maxOffset = 0;
  let largeCount = 0;
  // Any order will do to count: the arrays as they are.
  for (let i = 0; i < n; i++) {
    const o = offsets[i] as number;
    if (o > maxOffset) maxOffset = o;
    if (needsLarge(o)) largeCount++;
  }
  // pack-write.c: "if last object's offset is >= 2^31 we should use index V2".
  const version = needsLarge(maxOffset) ? 2 : (options.version ?? 2);
  // The whole index but its checksum (which the hash gives, not the chunk).
  const out = new ChunkWriter(format, sink, (version === 2 ? 8 : 0) + 256 * 4 + n * (H + 4 + (version === 2 ? 4 : 0)) + 8 * largeCount + H);
  if (version === 2) {
    out.u32(IDX_V2_MAGIC);
    out.u32(2);
  }
  const ids = entries.ids;
  const W = H >>> 2;
  const idWords = ids.byteOffset % 4 === 0 ? new Uint32Array(ids.buffer, ids.byteOffset, (n * H) >>> 2) : new Uint32Array(ids.slice(0, n * H).buffer);
  // The fan-out from a count of first bytes, read in the arrays' own order (sequentially).
  const firstBytes = new Uint32Array(256);
  for (let i = 0; i < n; i++) {
    const b = ids[i * H] as number;
    firstBytes[b] = (firstBytes[b] as number) + 1;
  }
  for (let b = 0, k = 0; b < 256; b++) {
    k += firstBytes[b] as number;
    out.u32(k);
  }
  if (version === 1) {
    for (let i = 0; i < n; i++) {
      const e = order[i] as number;
      out.u32(offsets[e] as number);
      out.words(idWords, e * W, W);
    }
  } else {
    for (let i = 0; i < n; i++) out.words(idWords, (order[i] as number) * W, W);
    for (let i = 0; i < n; i++) out.u32(crc32[order[i] as number] as number);
    let large = 0;
    for (let i = 0; i < n; i++) {
      const o = offsets[order[i] as number] as number;
      out.u32(needsLarge(o) ? (IDX_LARGE_OFFSET | large++) >>> 0 : o);
    }
    for (let i = 0; i < n; i++) {
      const o = offsets[order[i] as number] as number;
      if (!needsLarge(o)) continue;
      out.u32(Math.floor(o / 2 ** 32));
      out.u32(o >>> 0);
    }
  }
  out.bytes(packHash);
  out.finish();
}

/**
 * Big-endian words into a reused chunk, hashed and handed on when full (every field of an index
 * is a multiple of 4 bytes, so words stay aligned): ids go a word at a time, the rest through a
 * DataView. At 10M entries a byte loop and writeUInt32BE into one buffer took 4.6 s; this 2 s.
 */
class ChunkWriter {
  private readonly buf: Uint8Array;
  private readonly view: DataView;
  private readonly asWords: Uint32Array;
  private readonly hash: Hash;
  private readonly size: number;
  private pos = 0;

  /**
   * `bytes`: what will be written. The chunk is no larger (CHUNK at most): a 1 MiB chunk comes
   * zeroed, and in a long-lived process calloc clears it page by page (~4 ms) for a push's 2 KB index.
   */
  constructor(format: ObjectFormat, private readonly sink: IndexSink, bytes: number) {
    // Words stay aligned, with room for the largest single write (an id or the pack hash).
    this.size = Math.max(64, Math.ceil(Math.min(CHUNK, bytes) / 4) * 4);
    this.buf = new Uint8Array(this.size);
    this.view = new DataView(this.buf.buffer);
    this.asWords = new Uint32Array(this.buf.buffer);
    this.hash = nodeCrypto().createHash(format);
  }

  u32(v: number): void {
    if (this.pos === this.size) this.flush();
    this.view.setUint32(this.pos, v);
    this.pos += 4;
  }

  /** `count` words of `from` from `at`, as they are (their bytes keep their order). */
  words(from: Uint32Array, at: number, count: number): void {
    if (this.pos + 4 * count > this.size) this.flush();
    const w = this.pos >>> 2;
    for (let j = 0; j < count; j++) this.asWords[w + j] = from[at + j] as number;
    this.pos += 4 * count;
  }

  bytes(b: Uint8Array): void {
    if (this.pos + b.length > this.size) this.flush();
    this.buf.set(b, this.pos);
    this.pos += b.length;
  }

  /** The rest, then the checksum of everything. */
  finish(): void {
    this.flush();
    this.sink(this.hash.digest());
  }

  private flush(): void {
    if (this.pos === 0) return;
    const chunk = this.buf.subarray(0, this.pos);
    this.hash.update(chunk);
    this.sink(chunk);
    this.pos = 0;
  }
}

function identity(n: number): Uint32Array {
  const order = new Uint32Array(n);
  for (let i = 0; i < n; i++) order[i] = i;
  return order;
}
