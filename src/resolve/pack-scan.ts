import { crc32 } from 'node:zlib';
import { PackwrightError, throwIfAborted } from '../errors/packwright-error.js';
import { hashBytes, writeHeaderBefore, OBJ_OFS_DELTA, OBJ_REF_DELTA } from '../hash/hash-object.js';
import type { ObjectFormat } from '../hash/object-format.js';
import { hashLength } from '../hash/object-format.js';
import { EntryHeader, HEADER_INCOMPLETE, parseEntryHeader } from '../pack/entry-header.js';
import { PACK_HEADER_LENGTH, parsePackHeader } from '../pack/pack-header.js';
import { Inflater, INFLATE_INPUT_ENDED, inflateCodeName } from '../zlib/inflater.js';

/**
 * What pass 1 learns about every entry, in flat typed arrays indexed by entry number (pack order).
 * Cost per entry: 8 offset + 8 size + 4 crc + 4 base + 1 type + 1 header + H id = 46-58 bytes:
 * 10M entries fit in about 600 MB.
 */
export interface PackScan {
  format: ObjectFormat;
  count: number;
  /** Entry start offsets; `offsets[count]` is where the trailer begins. */
  offsets: Float64Array;
  /** Stored type (1-4, 6 OFS, 7 REF); after resolving, `resolvedTypes` holds the object type. */
  types: Uint8Array;
  resolvedTypes: Uint8Array;
  /** Inflated size of the entry's data (delta data for deltas). */
  sizes: Float64Array;
  headerLengths: Uint8Array;
  crc32: Uint32Array;
  /** OFS_DELTA: entry number of the base (-1 otherwise, -2 when the offset hits no entry start). */
  ofsBase: Int32Array;
  /** REF_DELTA base ids, H bytes per entry (zero for others). */
  refIds: Uint8Array;
  /** Object ids, H bytes per entry; filled for non-deltas by pass 1, for deltas by pass 2. */
  ids: Uint8Array;
  packHash: Buffer;
  /** Offset just past the trailer: bytes after it are not part of the pack. */
  end: number;
  inflatedBytes: number;
}

export interface ScanOptions {
  format: ObjectFormat;
  signal?: AbortSignal;
  onProgress?: (done: number, total: number) => void;
  /** Name used in error messages. */
  name?: string;
  /** Allocate the arrays in shared memory, for worker threads to read and fill. */
  shared?: boolean;
}

type TypedArrayConstructor<T> = { new (buffer: ArrayBufferLike): T; BYTES_PER_ELEMENT: number };

/** A typed array of `n` elements, in a SharedArrayBuffer when `shared`. */
export function allocArray<T>(Ctor: TypedArrayConstructor<T>, n: number, shared: boolean): T {
  const bytes = Math.max(1, n) * Ctor.BYTES_PER_ELEMENT;
  return new Ctor(shared ? new SharedArrayBuffer(bytes) : new ArrayBuffer(bytes));
}

/**
 * Pass 1 of index-pack over a pack held in memory: parse each entry header, inflate its data to
 * learn the exact compressed length, CRC32 the raw entry, hash non-delta objects, then check the
 * trailer against a hash of everything before it. Deltas are inflated and dropped here: pass 2
 * inflates them again when it applies them, which costs less than keeping them.
 */
export function scanPack(pack: Uint8Array, options: ScanOptions): PackScan {
  const name = options.name ?? '<pack>';
  const format = options.format;
  const H = hashLength(format);
  const { objectCount: count } = parsePackHeader(pack.subarray(0, Math.min(pack.length, PACK_HEADER_LENGTH)), name);
  // Every entry takes at least 2 bytes: a declared count beyond that cannot be true, and must not
  // size our allocations.
  if (count > (pack.length - PACK_HEADER_LENGTH) / 2) {
    throw new PackwrightError('PACK_TRUNCATED', `${name}: early EOF: the header declares ${count} objects, more than ${pack.length} bytes can hold`, { file: name, offset: 8 });
  }
  const shared = options.shared === true;
  const scan: PackScan = {
    format, count,
    offsets: allocArray(Float64Array, count + 1, shared),
    types: allocArray(Uint8Array, count, shared),
    resolvedTypes: allocArray(Uint8Array, count, shared),
    sizes: allocArray(Float64Array, count, shared),
    headerLengths: allocArray(Uint8Array, count, shared),
    crc32: new Uint32Array(count),
    ofsBase: new Int32Array(count).fill(-1),
    refIds: new Uint8Array(0),
    ids: allocArray(Uint8Array, count * H, shared),
    packHash: Buffer.alloc(H),
    end: 0,
    inflatedBytes: 0,
  };
  const h = new EntryHeader();
  const inflater = new Inflater();
  let scratch = Buffer.allocUnsafeSlow(1 << 16);
  let refIds: Uint8Array | undefined;
  let pos = PACK_HEADER_LENGTH;
  const limit = pack.length;
  for (let k = 0; k < count; k++) {
    if ((k & 1023) === 0) {
      throwIfAborted(options.signal);
      options.onProgress?.(k, count);
    }
    scan.offsets[k] = pos;
    const n = parseEntryHeader(pack, pos, limit, pos, H, h, name);
    if (n === HEADER_INCOMPLETE) throw earlyEof(name, pos);
    const type = h.type;
    const size = h.size;
    scan.types[k] = type;
    scan.sizes[k] = size;
    scan.headerLengths[k] = n;
    if (type === OBJ_OFS_DELTA) {
      // Bases precede their deltas, so a binary search over the offsets seen so far finds it.
      scan.ofsBase[k] = findOffset(scan.offsets, k, h.baseOffset);
    } else if (type === OBJ_REF_DELTA) {
      refIds ??= new Uint8Array(count * H);
      refIds.set(pack.subarray(h.baseIdPosition, h.baseIdPosition + H), k * H);
    } else {
      scan.resolvedTypes[k] = type;
    }
    const dataStart = pos + n;
    if (size + 64 > scratch.length) {
      if (size > 0xffffffff) throw new PackwrightError('PACK_TOO_LARGE', `${name}: object at offset ${pos} declares ${size} bytes`, { file: name, offset: pos });
      scratch = Buffer.allocUnsafeSlow(Math.max(size + 64, scratch.length * 2));
    }
    // Leave room before the data for "<type> <size>\0" so the object hashes as one range.
    const used = inflater.inflateExact(pack, dataStart, limit, scratch, 32, size);
    if (used < 0) {
      if (used === INFLATE_INPUT_ENDED) throw earlyEof(name, pos);
      throw new PackwrightError('PACK_CORRUPT', `${name}: inflate failed for the object at offset ${pos}: ${inflateCodeName(used)} (${inflater.lastError})`, { file: name, offset: pos });
    }
    const next = dataStart + used;
    scan.crc32[k] = crc32(pack.subarray(pos, next));
    if (type < OBJ_OFS_DELTA) {
      const start = writeHeaderBefore(scratch, 32, type, size);
      scan.ids.set(hashBytes(format, scratch.subarray(start, 32 + size)), k * H);
    }
    scan.inflatedBytes += size;
    pos = next;
  }
  inflater.close();
  scan.offsets[count] = pos;
  if (pos + H > pack.length) throw earlyEof(name, pos);
  const computed = hashBytes(format, pack.subarray(0, pos));
  const trailer = pack.subarray(pos, pos + H);
  if (!computed.equals(trailer)) {
    throw new PackwrightError('PACK_CHECKSUM', `${name}: pack is corrupted (${format === 'sha1' ? 'SHA1' : 'SHA256'} mismatch) at offset ${pos}`, { file: name, offset: pos });
  }
  scan.packHash = Buffer.from(trailer);
  scan.end = pos + H;
  if (refIds !== undefined) scan.refIds = refIds;
  options.onProgress?.(count, count);
  return scan;
}

function earlyEof(name: string, offset: number): PackwrightError {
  return new PackwrightError('PACK_TRUNCATED', `${name}: early EOF in the entry at offset ${offset}`, { file: name, offset });
}

/** Entry number whose start is exactly `offset` among the first `n`, or -2. */
function findOffset(offsets: Float64Array, n: number, offset: number): number {
  let lo = 0;
  let hi = n;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const v = offsets[mid] as number;
    if (v === offset) return mid;
    if (v < offset) lo = mid + 1;
    else hi = mid;
  }
  return -2;
}
