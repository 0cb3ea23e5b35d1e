import { createHash, type Hash } from 'node:crypto';
import { crc32 } from 'node:zlib';
import { PackwrightError, throwIfAborted } from '../errors/packwright-error.js';
import { hashBytes, writeHeaderBefore, OBJ_OFS_DELTA, OBJ_REF_DELTA } from '../hash/hash-object.js';
import type { ObjectFormat } from '../hash/object-format.js';
import { hashLength } from '../hash/object-format.js';
import { EntryHeader, HEADER_INCOMPLETE, MAX_ENTRY_HEADER, parseEntryHeader } from '../pack/entry-header.js';
import type { PackSource } from './pack-source.js';
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
  /** Offset just past the trailer. */
  end: number;
  /** Input that followed the trailer (not part of the pack). */
  trailing: Buffer;
  /** The pack's bytes, when scanned with `whole`. */
  data?: Uint8Array;
  /** Entries the arrays have room for (at least `count` once the scan is done). */
  capacity: number;
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
  /** Total input size when known (a file): bounds the declared object count. */
  size?: number;
  /** Refuse packs larger than this. */
  maxInputSize?: number;
  /** Receives the pack's bytes, in order, as they are consumed (to write a pack read from a stream). */
  sink?: (bytes: Uint8Array) => void;
  /** Read the whole pack into this buffer and keep it (`PackScan.data`). */
  whole?: WholePack;
}

type TypedArrayConstructor<T> = { new (buffer: ArrayBufferLike): T; BYTES_PER_ELEMENT: number };

/** A typed array of `n` elements, in a SharedArrayBuffer when `shared`. */
export function allocArray<T>(Ctor: TypedArrayConstructor<T>, n: number, shared: boolean): T {
  const bytes = Math.max(1, n) * Ctor.BYTES_PER_ELEMENT;
  return new Ctor(shared ? new SharedArrayBuffer(bytes) : new ArrayBuffer(bytes));
}

/**
 * A buffer that will hold the whole pack (a file of known size), so pass 2 reads entries from
 * memory. `claim(from, to)` is called before bytes are read into `[from, to)`: a helper thread may
 * be touching those pages ahead of the reader (first-touch page faults are the cost of reading a
 * pack into fresh memory here), and must be done with them first.
 */
export interface WholePack {
  buffer: Buffer;
  claim?: (from: number, to: number) => void;
}

/** Window of the pack that pass 1 holds: 8 MiB, grown only for an entry that does not fit. */
const WINDOW = 8 << 20;

/**
 * The bytes of a pack being read front to back through a window. Bytes before the entry being
 * parsed are done: they go to the pack hash and to the sink (the file --stdin writes) before the
 * window slides over them.
 */
class ScanWindow {
  buf: Buffer;
  /** Pack offset of `buf[0]`. */
  start = 0;
  /** Valid bytes in `buf`. */
  end = 0;
  eof = false;
  private flushedUpTo = 0;

  constructor(
    private readonly source: PackSource,
    private readonly hash: Hash,
    private readonly sink: ((bytes: Uint8Array) => void) | undefined,
    private readonly max: number | undefined,
    private readonly name: string,
    /** Keep the whole pack: read into this buffer (sized to the input) and never slide. */
    readonly whole: WholePack | undefined,
  ) {
    this.buf = whole?.buffer ?? Buffer.allocUnsafeSlow(WINDOW);
  }

  /** Bytes available from pack offset `pos`. */
  available(pos: number): number {
    return this.start + this.end - pos;
  }

  /** Hashes (and sinks) everything before `pos`. */
  flush(pos: number, hash = true): void {
    if (pos <= this.flushedUpTo) return;
    const bytes = this.buf.subarray(this.flushedUpTo - this.start, pos - this.start);
    if (hash) this.hash.update(bytes);
    this.sink?.(bytes);
    this.flushedUpTo = pos;
  }

  /** Slides the window to start at `pos` and reads until `need` bytes are there or input ends. */
  async fill(pos: number, need: number): Promise<void> {
    this.flush(pos);
    if (this.whole !== undefined) {
      // Read ahead in steps; the buffer already has room for the whole input.
      const want = Math.min(this.buf.length, Math.max(pos + need, this.end + WINDOW));
      while (this.end < want && !this.eof) {
        const to = Math.min(want, this.end + WINDOW);
        this.whole.claim?.(this.end, to);
        const got = await this.source.read(this.buf, this.end, to - this.end);
        if (got === 0) this.eof = true;
        this.end += got;
      }
      if (this.end === this.buf.length) this.eof = true;
      return;
    }
    const keep = this.start + this.end - pos;
    if (need > this.buf.length) {
      const bigger = Buffer.allocUnsafeSlow(Math.max(need, this.buf.length * 2));
      this.buf.copy(bigger, 0, pos - this.start, this.end);
      this.buf = bigger;
    } else if (pos > this.start) {
      this.buf.copy(this.buf, 0, pos - this.start, this.end);
    }
    this.start = pos;
    this.end = keep;
    while (this.end < need && !this.eof) {
      const got = await this.source.read(this.buf, this.end, this.buf.length - this.end);
      if (got === 0) this.eof = true;
      this.end += got;
      if (this.max !== undefined && this.start + this.end > this.max) {
        throw new PackwrightError('PACK_TOO_LARGE', `${this.name}: pack exceeds maximum allowed size (${this.max} bytes)`, { file: this.name, offset: this.max });
      }
    }
  }
}

/**
 * Pass 1 of index-pack, streaming: parse each entry header, inflate its data to learn the exact
 * compressed length, CRC32 the raw entry, hash non-delta objects, hash the whole pack and check
 * the trailer. Only a window of the pack is held. Deltas are inflated and dropped: pass 2
 * inflates them again from the file when it applies them, which costs less than keeping them.
 */
export async function scanPack(source: PackSource, options: ScanOptions): Promise<PackScan> {
  const name = options.name ?? '<pack>';
  const format = options.format;
  const H = hashLength(format);
  const packHash = createHash(format);
  const w = new ScanWindow(source, packHash, options.sink, options.maxInputSize, name, options.whole);
  await w.fill(0, PACK_HEADER_LENGTH);
  const { objectCount: count } = parsePackHeader(w.buf.subarray(0, Math.min(w.end, PACK_HEADER_LENGTH)), name);
  // A declared count must not size allocations by itself: every entry takes at least 2 bytes,
  // and without a known size the arrays start small and grow.
  if (options.size !== undefined && count > (options.size - PACK_HEADER_LENGTH) / 2) {
    throw new PackwrightError('PACK_TRUNCATED', `${name}: early EOF: the header declares ${count} objects, more than ${options.size} bytes can hold`, { file: name, offset: 8 });
  }
  const shared = options.shared === true;
  const scan = allocScan(format, Math.min(count, options.size !== undefined ? count : 1 << 16), shared);
  scan.count = count;
  const h = new EntryHeader();
  const inflater = new Inflater();
  let scratch = Buffer.allocUnsafeSlow(1 << 16);
  let refIds: Uint8Array | undefined;
  let pos = PACK_HEADER_LENGTH;
  for (let k = 0; k < count; k++) {
    if ((k & 1023) === 0) {
      throwIfAborted(options.signal);
      options.onProgress?.(k, count);
    }
    if (k >= scan.capacity) growScan(scan, Math.min(count, scan.capacity * 2), shared);
    if (w.available(pos) < MAX_ENTRY_HEADER && !w.eof) await w.fill(pos, MAX_ENTRY_HEADER);
    scan.offsets[k] = pos;
    let n = parseEntryHeader(w.buf, pos - w.start, w.end, pos, H, h, name);
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
      refIds ??= new Uint8Array(scan.capacity * H);
      if (refIds.length < scan.capacity * H) {
        const bigger = new Uint8Array(scan.capacity * H);
        bigger.set(refIds);
        refIds = bigger;
      }
      refIds.set(w.buf.subarray(h.baseIdPosition, h.baseIdPosition + H), k * H);
    } else {
      scan.resolvedTypes[k] = type;
    }
    if (size + 64 > scratch.length) {
      if (size > 0xffffffff) throw new PackwrightError('PACK_TOO_LARGE', `${name}: object at offset ${pos} declares ${size} bytes`, { file: name, offset: pos });
      scratch = Buffer.allocUnsafeSlow(Math.max(size + 64, scratch.length * 2));
    }
    // Most streams are shorter than their data; ask for that much up front to avoid retries.
    const likely = n + size + (size >>> 3) + 64;
    if (w.available(pos) < likely && !w.eof) {
      await w.fill(pos, likely);
    }
    let used: number;
    for (;;) {
      // Leave room before the data for "<type> <size>\0" so the object hashes as one range.
      used = inflater.inflateExact(w.buf, pos - w.start + n, w.end, scratch, 32, size);
      if (used !== INFLATE_INPUT_ENDED || w.eof) break;
      await w.fill(pos, w.available(pos) * 2);
    }
    if (used < 0) {
      if (used === INFLATE_INPUT_ENDED) throw earlyEof(name, pos);
      throw new PackwrightError('PACK_CORRUPT', `${name}: inflate failed for the object at offset ${pos}: ${inflateCodeName(used)} (${inflater.lastError})`, { file: name, offset: pos });
    }
    n += used;
    scan.crc32[k] = crc32(w.buf.subarray(pos - w.start, pos - w.start + n));
    if (type < OBJ_OFS_DELTA) {
      const start = writeHeaderBefore(scratch, 32, type, size);
      scan.ids.set(hashBytes(format, scratch.subarray(start, 32 + size)), k * H);
    }
    scan.inflatedBytes += size;
    pos += n;
  }
  inflater.close();
  scan.offsets[count] = pos;
  if (w.available(pos) < H && !w.eof) await w.fill(pos, H);
  if (w.available(pos) < H) throw earlyEof(name, pos);
  w.flush(pos);
  const computed = packHash.digest();
  const trailer = w.buf.subarray(pos - w.start, pos - w.start + H);
  if (!computed.equals(trailer)) {
    throw new PackwrightError('PACK_CHECKSUM', `${name}: pack is corrupted (${format === 'sha1' ? 'SHA1' : 'SHA256'} mismatch) at offset ${pos}`, { file: name, offset: pos });
  }
  scan.packHash = Buffer.from(trailer);
  w.flush(pos + H, false);
  scan.end = pos + H;
  // Whatever follows the trailer is not part of the pack (git echoes it from --stdin).
  const rest: Buffer[] = [Buffer.from(w.buf.subarray(scan.end - w.start, w.end))];
  while (!w.eof && options.whole === undefined) {
    await w.fill(w.start + w.end, w.buf.length);
    rest.push(Buffer.from(w.buf.subarray(0, w.end)));
  }
  scan.trailing = Buffer.concat(rest);
  if (options.whole !== undefined) scan.data = w.buf.subarray(0, scan.end);
  if (refIds !== undefined) scan.refIds = refIds;
  options.onProgress?.(count, count);
  return scan;
}

function allocScan(format: ObjectFormat, capacity: number, shared: boolean): PackScan {
  const H = hashLength(format);
  return {
    format, count: 0, capacity,
    offsets: allocArray(Float64Array, capacity + 1, shared),
    types: allocArray(Uint8Array, capacity, shared),
    resolvedTypes: allocArray(Uint8Array, capacity, shared),
    sizes: allocArray(Float64Array, capacity, shared),
    headerLengths: allocArray(Uint8Array, capacity, shared),
    crc32: new Uint32Array(capacity),
    ofsBase: new Int32Array(capacity).fill(-1),
    refIds: new Uint8Array(0),
    ids: allocArray(Uint8Array, capacity * H, shared),
    packHash: Buffer.alloc(H),
    end: 0,
    trailing: Buffer.alloc(0),
    inflatedBytes: 0,
  };
}

/** A copy of `scan` with room for `capacity` entries (non-shared), for appending entries. */
export function growScanTo(scan: PackScan, capacity: number): PackScan {
  const grown = { ...scan };
  growScan(grown, capacity, false);
  if (grown.refIds.length > 0) {
    const refIds = new Uint8Array(capacity * hashLength(scan.format));
    refIds.set(scan.refIds.subarray(0, Math.min(scan.refIds.length, refIds.length)));
    grown.refIds = refIds;
  }
  return grown;
}

/** Grows every per-entry array to `capacity` (a stream's declared count is not trusted up front). */
function growScan(scan: PackScan, capacity: number, shared: boolean): void {
  const next = allocScan(scan.format, capacity, shared);
  const copy = <T extends { length: number; set(a: T): void; subarray(a: number, b: number): T }>(to: T, from: T): void => {
    to.set(from.subarray(0, Math.min(from.length, to.length)));
  };
  copy(next.offsets, scan.offsets);
  copy(next.types, scan.types);
  copy(next.resolvedTypes, scan.resolvedTypes);
  copy(next.sizes, scan.sizes);
  copy(next.headerLengths, scan.headerLengths);
  copy(next.crc32, scan.crc32);
  copy(next.ofsBase, scan.ofsBase);
  copy(next.ids, scan.ids);
  Object.assign(scan, { ...next, count: scan.count, inflatedBytes: scan.inflatedBytes, refIds: scan.refIds });
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
