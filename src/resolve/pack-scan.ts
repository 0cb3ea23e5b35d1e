import { createDigester, type Digester } from '../hash/digester.js';
import { PackwrightError, throwIfAborted } from '../errors/packwright-error.js';
import { OBJ_OFS_DELTA, OBJ_REF_DELTA } from '../pack/entry-header.js';
import type { ObjectFormat } from '../hash/object-format.js';
import { totalmem } from 'node:os';
import { hashLength } from '../hash/object-format.js';
import { MAX_ENTRY_HEADER } from '../pack/entry-header.js';
import { EntryScanner, NEED_MORE } from './entry-scanner.js';
import { allocKeptData, commitKeptDelta, growKeptDeltas, keptDeltasOver, setKeptBudget, type KeptData, type KeptDeltas } from './kept-deltas.js';
import type { PackSource } from './pack-source.js';
import { PACK_HEADER_LENGTH, parsePackHeader } from '../pack/pack-header.js';
import { ScanWindow, type WholePack } from './scan-window.js';
import { SLICE_MS, yieldToEventLoop } from './slices.js';

export type { WholePack } from './scan-window.js';

/**
 * The REF deltas of a pack, in pack order: their entry numbers and their base ids (H bytes each),
 * so that a pack with few or none pays for none (4 + H bytes a REF delta).
 */
export interface RefDeltas {
  count: number;
  /** Room for more than `count`. */
  entries: Int32Array;
  ids: Uint8Array;
  /** Grown in shared memory (worker threads read them in pass 2). */
  shared: boolean;
  /**
   * The pack's entry count, when the tables were sized from it (a file): the first REF delta
   * then takes room for every entry from it to the end, and the lists never move. Pages are
   * touched only as they are written, so room costs nothing until used, where a list grown by
   * doubling leaves each smaller copy to the garbage collector, whose timing no plan can count
   * on (at 10M objects with 2M REF deltas, 48 MiB still held at the peak of pass 2).
   * Otherwise (a stream) the lists grow by doubling.
   */
  bound?: number;
}

/** Records entry `k` as a REF delta whose base id is `src[at..at+H)` (entries come in pack order). */
export function addRefDelta(refs: RefDeltas, k: number, src: Uint8Array, at: number, H: number): void {
  if (refs.count === refs.entries.length) {
    const room = refs.bound !== undefined && refs.bound > k ? refs.count + refs.bound - k : Math.max(64, refs.count * 2);
    const entries = allocArray(Int32Array, room, refs.shared);
    entries.set(refs.entries);
    const ids = allocArray(Uint8Array, room * H, refs.shared);
    ids.set(refs.ids);
    refs.entries = entries;
    refs.ids = ids;
  }
  refs.entries[refs.count] = k;
  for (let j = 0; j < H; j++) refs.ids[refs.count * H + j] = src[at + j] as number;
  refs.count++;
}

/** Where entry `k`'s base id starts in `refs.ids`, or -1 if it is no REF delta. */
export function refBaseAt(refs: RefDeltas, k: number, H: number): number {
  let lo = 0;
  let hi = refs.count;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const v = refs.entries[mid] as number;
    if (v === k) return mid * H;
    if (v < k) lo = mid + 1;
    else hi = mid;
  }
  return -1;
}

/**
 * What pass 1 learns about every entry, in flat typed arrays indexed by entry number (pack order).
 * Cost per entry: 8 offset + 4 size + 4 crc + 4 base + 1 type + 1 resolved type + 1 header + H id
 * = 23 + H bytes (43 for SHA-1), and 4 + H more for each REF delta (`refs`).
 */
export interface PackScan {
  format: ObjectFormat;
  count: number;
  /**
   * Entry start offsets; `offsets[count]` is where the trailer begins. 32-bit when the pack's size
   * is known to be under 4 GiB (a file: 4 bytes an object fewer, 40 MB at 10M objects), else
   * doubles (a stream, or a larger file).
   */
  offsets: EntryOffsets;
  /** Stored type (1-4, 6 OFS, 7 REF); after resolving, `resolvedTypes` holds the object type. */
  types: Uint8Array;
  resolvedTypes: Uint8Array;
  /** Inflated size of the entry's data (delta data for deltas); pass 1 refuses sizes of 4 GiB and more. */
  sizes: Uint32Array;
  headerLengths: Uint8Array;
  crc32: Uint32Array;
  /**
   * OFS_DELTA: entry number of the base (-1 otherwise, -2 when the offset hits no entry start).
   * Emptied by pass 2 once its delta tree holds them, unless it records depths (resolveDeltas).
   */
  ofsBase: Int32Array;
  /** The REF deltas and their base ids. */
  refs: RefDeltas;
  /**
   * A table of 4 bytes an entry that is no longer needed: `ofsBase`'s, once the delta tree holds
   * its links (buildDeltaTree). The index's sorted order is written into it (build-index.ts):
   * a new table there would leave this one to the garbage collector, whose timing no memory
   * plan can count on (at 10M objects, 38 MiB twice over at the peak of the write).
   */
  spare?: Uint32Array;
  /** Object ids, H bytes per entry; filled for non-deltas by pass 1, for deltas by pass 2. */
  ids: Uint8Array;
  /**
   * Pass 1 hashed nothing and inflated nothing (`scanPackWithIndex`): pass 2 hashes the non-deltas
   * as well and checks that every stream ends where the next entry starts.
   */
  unhashed?: boolean;
  /** With `unhashed`, from a v2 index: the CRC32 pass 2 must find for each entry (shared). */
  expectedCrc32?: Uint32Array;
  packHash: Buffer;
  /** Offset just past the trailer. */
  end: number;
  /** Deltas' data as pass 1 inflated them, for pass 2 (`ScanOptions.keepDeltas`). */
  kept?: KeptDeltas;
  /** Input that followed the trailer (not part of the pack). */
  trailing: Buffer;
  /** The pack's bytes, when scanned with `whole`. */
  data?: Uint8Array;
  /** Entries the arrays have room for (at least `count` once the scan is done). */
  capacity: number;
  inflatedBytes: number;
}

/**
 * Options of pass 1 (`scanPack`): format, size, memory, threads' shared tables, progress and cancellation.
 */
export interface ScanOptions {
  format: ObjectFormat;
  signal?: AbortSignal | undefined;
  /** Work between turns of the event loop, in ms (default SLICE_MS). */
  sliceMs?: number | undefined;
  /**
   * A stream read ahead of the scan (stream-spool.ts) takes its chunks only in the event loop's
   * turns: while `pending()` says it is taking input, the scan gives it one every `everyBytes` of
   * the pack it scans, even while it has bytes to scan, so that the input runs ahead far enough
   * for helper threads to scan regions of it.
   */
  inputTurns?: InputTurns | undefined;
  /** Progress of pass 1: entries done of total, and bytes read. */
  onProgress?: ((done: number, total: number, bytes: number) => void) | undefined;
  /** Name used in error messages. */
  name?: string | undefined;
  /** Allocate the arrays in shared memory, for worker threads to read and fill. */
  shared?: boolean | undefined;
  /** Total input size when known (a file): bounds the declared object count. */
  size?: number | undefined;
  /** Refuse packs larger than this. */
  maxInputSize?: number | undefined;
  /**
   * Bytes of deltas' data to keep for pass 2 (kept-deltas.ts), for a pack of this many objects:
   * asked once the header is read (0, or absent: none).
   */
  keepDeltas?: ((objects: number) => number) | undefined;
  /**
   * The store kept deltas go to, made before the header was read because pass 1's helpers fill it
   * too (they start first); `keepDeltas` then sets its budget. Without it, one is made here.
   */
  keptData?: KeptData | undefined;
  /** Receives the pack's bytes, in order, as they are consumed (to write a pack read from a stream). */
  sink?: ((bytes: Uint8Array) => void) | undefined;
  /** Read the whole pack into this buffer and keep it (`PackScan.data`). */
  whole?: WholePack | undefined;
  /**
   * SHA-1 with collision detection (sha1dc) for object ids: an attack fails the scan. The pack's
   * own checksum is a plain hash either way (see PackScanner).
   */
  detectCollisions?: boolean | undefined;
}

/** How pass 1 gives a stream read ahead of it its turns (ScanOptions.inputTurns). */
export interface InputTurns {
  /** A turn each time the scan has moved this many bytes on. */
  everyBytes: number;
  /** Whether the stream is still taking input (no turn is needed once it is not). */
  pending: () => boolean;
}

export type TypedArrayConstructor<T> = { new (buffer: ArrayBufferLike, byteOffset?: number, length?: number): T; BYTES_PER_ELEMENT: number };

/**
 * A typed array of exactly `n` elements, in a SharedArrayBuffer when `shared` (the buffer has
 * room for one at least; an empty list must still be empty: a root list of one phantom entry 0
 * once made a visitor miss entry 0).
 */
export function allocArray<T>(Ctor: TypedArrayConstructor<T>, n: number, shared: boolean): T {
  const bytes = Math.max(1, n) * Ctor.BYTES_PER_ELEMENT;
  return new Ctor(shared ? new SharedArrayBuffer(bytes) : new ArrayBuffer(bytes), 0, n);
}

/** What a helper thread learned scanning one region of an in-memory pack (see scan-region.ts). */
export interface RegionScan {
  ok: boolean;
  /** First entry found in the region, and the offset just past its last entry. */
  start: number;
  end: number;
  count: number;
  offsets: Float64Array;
  types: Uint8Array;
  sizes: Uint32Array;
  headerLengths: Uint8Array;
  crc32: Uint32Array;
  ids: Uint8Array;
  /** OFS_DELTA base offsets (-1 otherwise): base entries may lie in earlier regions. */
  baseOffsets: Float64Array;
  refIds: Uint8Array;
  /** Where each delta's data went in the kept store (`RegionRequest.kept`), plus one (0: not kept). */
  keptAt: Uint32Array;
  /** The helper read the file into the shared buffer up to here. */
  readUpTo: number;
}

/**
 * Pass 1 of index-pack, streaming: each entry goes through `EntryScanner` (header, inflate for
 * the exact compressed length, CRC32, id of non-deltas), the whole pack is hashed and the trailer
 * checked. Only a window of the pack is held, unless `whole` keeps all of it. Deltas are inflated
 * into the kept store while the plan gives it room (kept-deltas.ts), else dropped and inflated
 * again by pass 2.
 *
 * It is resumable so that helper threads can scan later regions of an in-memory pack in
 * parallel: `scanUntil(p)` stops at the first entry at or after `p`, `adopt` appends a helper's
 * region when it starts exactly there, and `finish` checks the trailer.
 */
export class PackScanner {
  private readonly name: string;
  private readonly H: number;
  private readonly packHash: Digester;
  private readonly w: ScanWindow;
  private readonly entries: EntryScanner;
  private readonly shared: boolean;
  private scan: PackScan | undefined;
  private k = 0;
  private pos = PACK_HEADER_LENGTH;
  /** When the scan next gives the event loop a turn (see slices.ts). */
  private yieldAt = performance.now() + SLICE_MS;
  /** Pack offset where the scan next gives a stream read ahead of it a turn (ScanOptions.inputTurns). */
  private turnAt = 0;

  constructor(source: PackSource, private readonly options: ScanOptions) {
    this.name = options.name ?? '<pack>';
    this.H = hashLength(options.format);
    // The trailer is a checksum for integrity, not an object's name: a collision in it names
    // nothing, and a sender who wants a bad pack writes its trailer too. So it is hashed by Node's
    // native SHA-1 even when ids are hashed by sha1dc, as git's csum-file does since 2.47
    // (1b9e9be8: "these callers only use the_hash_algo to produce a checksum"). A clone's pack (74 MB
    // of gitoxide) is then checksummed at OpenSSL's speed instead of sha1dc's, on the scanning thread.
    this.packHash = createDigester(options.format);
    this.w = new ScanWindow(source, this.packHash, options.sink, options.maxInputSize, this.name, options.whole);
    this.entries = new EntryScanner(options.format, this.name, options.size ?? options.maxInputSize ?? Infinity, options.detectCollisions === true);
    this.shared = options.shared === true;
  }

  /** Offset of the next entry to scan. */
  get position(): number {
    return this.pos;
  }

  /** Entries declared by the header. */
  get declared(): number {
    return this.scan?.count ?? 0;
  }

  /** Every declared entry is scanned (only the trailer is left). */
  get complete(): boolean {
    return this.scan !== undefined && this.k >= this.scan.count;
  }

  async begin(): Promise<void> {
    const name = this.name;
    await this.w.fill(0, PACK_HEADER_LENGTH);
    const { objectCount: count } = parsePackHeader(this.w.buf.subarray(0, Math.min(this.w.end, PACK_HEADER_LENGTH)), name);
    const size = this.options.size;
    if (size !== undefined && count > (size - PACK_HEADER_LENGTH) / 2) {
      throw new PackwrightError('PACK_TRUNCATED', `${name}: early EOF: the header declares ${count} objects, more than ${size} bytes can hold`, { file: name, offset: 8 });
    }
    this.scan = allocScanFor(this.options.format, count, size, this.shared);
    this.scan.count = count;
    const keep = this.options.keepDeltas?.(count) ?? 0;
    if (keep > 0) {
      const data = this.options.keptData ?? allocKeptData(keep, this.shared);
      setKeptBudget(data, keep);
      this.scan.kept = this.entries.kept = keptDeltasOver(data, this.scan.capacity, this.shared);
    }
  }

  private room(k: number): PackScan {
    const scan = this.scan as PackScan;
    if (k >= scan.capacity) {
      this.entries.flush(); // ids still being hashed go to the table before it moves
      growScan(scan, Math.min(scan.count, Math.max(k + 1, scan.capacity * 2)), this.shared);
    }
    return scan;
  }

  /** Scans entries until the next one starts at or after `stopAt`, or all declared are done. */
  async scanUntil(stopAt: number): Promise<void> {
    const w = this.w;
    const H = this.H;
    const es = this.entries;
    const h = es.header;
    const count = this.declared;
    const options = this.options;
    while (this.k < count && this.pos < stopAt) {
      const k = this.k;
      const pos = this.pos;
      const turns = options.inputTurns;
      if (turns !== undefined && pos >= this.turnAt && turns.pending()) {
        await yieldToEventLoop();
        this.turnAt = pos + turns.everyBytes;
      }
      if ((k & 1023) === 0) {
        options.onProgress?.(k, count, pos);
        // A file's scan never waits for input: give the event loop a turn now and then, so a
        // timer's abort (or anything else the caller runs) is not held up by the whole pass.
        if (performance.now() >= this.yieldAt) {
          await yieldToEventLoop();
          this.yieldAt = performance.now() + (options.sliceMs ?? SLICE_MS);
        }
        throwIfAborted(options.signal);
      }
      const scan = this.room(k);
      // What is there is tried first: the last entry and the trailer may be fewer bytes than
      // MAX_ENTRY_HEADER, and a sender that keeps its end open sends no more (the loop below asks
      // for more only when the entry needs it).
      if (w.available(pos) === 0 && !w.eof) await w.fill(pos, MAX_ENTRY_HEADER, 1);
      let n: number;
      for (;;) {
        n = es.scan(w.buf, pos - w.start, w.end, pos, scan.ids, k * H);
        if (n !== NEED_MORE || w.eof) break;
        // Most streams are shorter than their data: ask for that much, then double.
        const likely = MAX_ENTRY_HEADER + h.size + (h.size >>> 3) + 64;
        await w.fill(pos, Math.max(likely, w.available(pos) * 2), w.available(pos) + 1);
      }
      if (n === NEED_MORE) throw earlyEof(this.name, pos);
      scan.offsets[k] = pos;
      scan.types[k] = h.type;
      scan.sizes[k] = h.size;
      scan.headerLengths[k] = h.headerLength;
      scan.crc32[k] = es.crc;
      if (es.keptAt !== 0) commitKeptDelta(scan.kept as KeptDeltas, k, es.keptAt);
      // Bases precede their deltas, so a binary search over the offsets seen so far finds it.
      scan.ofsBase[k] = h.type === OBJ_OFS_DELTA ? findOffset(scan.offsets, k, h.baseOffset) : -1;
      if (h.type === OBJ_REF_DELTA) addRefDelta(scan.refs, k, w.buf, h.baseIdPosition, H);
      else if (h.type !== OBJ_OFS_DELTA) scan.resolvedTypes[k] = h.type;
      scan.inflatedBytes += h.size;
      this.pos = pos + n;
      this.k = k + 1;
    }
  }

  /**
   * Appends a helper's region if it starts exactly where this scan stands (otherwise it may have
   * started at a false entry boundary, and is ignored). The helper's bytes are already in the
   * shared buffer, or are read again here to be hashed.
   */
  async adopt(region: RegionScan): Promise<boolean> {
    if (!region.ok || region.start !== this.pos || this.k + region.count > this.declared) return false;
    // The helper read these bytes from the file, so only a file that shrank ends before them.
    if (this.options.whole === undefined && !(await this.w.skipTo(region.end))) throw earlyEof(this.name, this.w.start + this.w.end);
    const H = this.H;
    const k0 = this.k;
    const scan = this.room(k0 + region.count - 1);
    scan.offsets.set(region.offsets.subarray(0, region.count), k0);
    scan.types.set(region.types.subarray(0, region.count), k0);
    scan.sizes.set(region.sizes.subarray(0, region.count), k0);
    scan.headerLengths.set(region.headerLengths.subarray(0, region.count), k0);
    scan.crc32.set(region.crc32.subarray(0, region.count), k0);
    scan.ids.set(region.ids.subarray(0, region.count * H), k0 * H);
    const kept = scan.kept;
    for (let i = 0; i < region.count; i++) {
      const k = k0 + i;
      const t = region.types[i] as number;
      const keptAt = region.keptAt[i] as number;
      if (keptAt !== 0 && kept !== undefined) commitKeptDelta(kept, k, keptAt);
      scan.ofsBase[k] = t === OBJ_OFS_DELTA ? findOffset(scan.offsets, k, region.baseOffsets[i] as number) : -1;
      if (t === OBJ_REF_DELTA) addRefDelta(scan.refs, k, region.refIds, i * H, H);
      else if (t !== OBJ_OFS_DELTA) scan.resolvedTypes[k] = t;
      scan.inflatedBytes += region.sizes[i] as number;
    }
    this.k = k0 + region.count;
    this.pos = region.end;
    if (this.options.whole !== undefined) this.w.adoptRead(region.readUpTo);
    return true;
  }

  /** Checks the trailer against the hash of everything before it. */
  async finish(): Promise<PackScan> {
    await this.scanUntil(Infinity);
    const w = this.w;
    const H = this.H;
    const scan = this.scan as PackScan;
    const pos = this.pos;
    const name = this.name;
    this.entries.flush();
    this.entries.close();
    scan.offsets[scan.count] = pos;
    if (w.available(pos) < H && !w.eof) await w.fill(pos, H);
    if (w.available(pos) < H) throw earlyEof(name, pos);
    w.flush(pos);
    const computed = this.packHash.digest();
    const trailer = w.buf.subarray(pos - w.start, pos - w.start + H);
    if (!computed.equals(trailer)) {
      throw new PackwrightError('PACK_CHECKSUM', `${name}: pack is corrupted (${this.options.format === 'sha1' ? 'SHA1' : 'SHA256'} mismatch) at offset ${pos}`, { file: name, offset: pos });
    }
    scan.packHash = Buffer.from(trailer);
    w.flush(pos + H, false);
    w.seal();
    scan.end = pos + H;
    // What was read past the trailer is not part of the pack (git echoes it from --stdin). Nothing
    // more is read: the pack ends at its trailer, and a sender that keeps its end open (receive-pack
    // waiting for index-pack's answer on a socket) would otherwise wait for us forever.
    scan.trailing = Buffer.from(w.buf.subarray(scan.end - w.start, w.end));
    if (this.options.whole !== undefined) scan.data = w.buf.subarray(0, scan.end);
    this.options.onProgress?.(scan.count, scan.count, scan.end);
    return scan;
  }
}

/** Scans a whole pack (see `PackScanner`). */
export async function scanPack(source: PackSource, options: ScanOptions): Promise<PackScan> {
  const scanner = new PackScanner(source, options);
  await scanner.begin();
  return scanner.finish();
}

/** `PackScan.offsets`: 32-bit for packs known to be under 4 GiB. */
export type EntryOffsets = Float64Array | Uint32Array;

/** Whether a pack of `size` bytes (undefined: not known, a stream) needs offsets beyond 32 bits. */
export function needsWideOffsets(size: number | undefined): boolean {
  return size === undefined || size > 0xffffffff;
}

/** Bytes an entry takes in the tables allocScan makes, for ids of H bytes. */
const tableBytes = (H: number, wideOffsets: boolean): number => (wideOffsets ? 8 : 4) + 1 + 1 + 4 + 1 + 4 + 4 + H;

/**
 * Whether pass 1's tables are sized from the count a pack's header declares, for a pack of `size`
 * bytes (undefined: a stream). A file's size bounds the count (every entry takes at least 2
 * bytes). A stream's is taken at its word while the tables would take at most a quarter of this
 * machine's memory: their pages are touched only as entries arrive, so a stream that ends early
 * costs what it delivered, where tables grown by doubling leave each smaller copy to the garbage
 * collector, which frees them when it likes (10M objects: 410 MB of tables, and as much again
 * of copies). Beyond that, no real pack (a header no machine here could index), the tables start
 * small and grow.
 */
export function sizedFromHeader(format: ObjectFormat, count: number, size: number | undefined): boolean {
  return size !== undefined || count * tableBytes(hashLength(format), true) <= totalmem() / 4;
}

/** Pass 1's tables for a pack whose header declares `count` entries (see sizedFromHeader). */
function allocScanFor(format: ObjectFormat, count: number, size: number | undefined, shared: boolean): PackScan {
  const wide = needsWideOffsets(size);
  if (sizedFromHeader(format, count, size)) {
    try {
      return allocScan(format, count, shared, wide, true);
    } catch (e) {
      // Room the system would not give (an address-space limit): grow as the entries come.
      if (!(e instanceof RangeError) || size !== undefined) throw e;
    }
  }
  return allocScan(format, Math.min(count, 1 << 16), shared, wide);
}

/**
 * Tables for `capacity` entries; `sized` when that is the pack's own count, not room that may
 * grow: the REF list is then sized once too (RefDeltas.bound). Nothing is written to them here:
 * pages are touched as entries are recorded (every field of an entry is written then, `ofsBase`
 * -1 for an entry that is no OFS delta).
 */
export function allocScan(format: ObjectFormat, capacity: number, shared: boolean, wideOffsets = true, sized = false): PackScan {
  const H = hashLength(format);
  const refs: RefDeltas = { count: 0, entries: allocArray(Int32Array, 0, shared), ids: allocArray(Uint8Array, 0, shared), shared };
  if (sized) refs.bound = capacity;
  return {
    format, count: 0, capacity,
    offsets: wideOffsets ? allocArray(Float64Array, capacity + 1, shared) : allocArray(Uint32Array, capacity + 1, shared),
    types: allocArray(Uint8Array, capacity, shared),
    resolvedTypes: allocArray(Uint8Array, capacity, shared),
    sizes: allocArray(Uint32Array, capacity, shared),
    headerLengths: allocArray(Uint8Array, capacity, shared),
    crc32: new Uint32Array(capacity),
    ofsBase: new Int32Array(capacity),
    refs,
    ids: allocArray(Uint8Array, capacity * H, shared),
    packHash: Buffer.alloc(H),
    end: 0,
    trailing: Buffer.alloc(0),
    inflatedBytes: 0,
  };
}

/**
 * A copy of `scan` with room for `capacity` entries (non-shared), for appending entries. Its
 * offsets are doubles: what is appended (the bases of a thin pack) may take the pack past 4 GiB.
 */
export function growScanTo(scan: PackScan, capacity: number): PackScan {
  const grown = { ...scan };
  growScan(grown, capacity, false, true);
  return grown;
}

/** Grows every per-entry array to `capacity` (a stream's declared count is not trusted up front). */
function growScan(scan: PackScan, capacity: number, shared: boolean, wideOffsets = scan.offsets instanceof Float64Array): void {
  const next = allocScan(scan.format, capacity, shared, wideOffsets);
  const copy = <T extends { length: number; set(a: T): void; subarray(a: number, b: number): T }>(to: T, from: T): void => {
    to.set(from.subarray(0, Math.min(from.length, to.length)));
  };
  next.offsets.set(scan.offsets.subarray(0, Math.min(scan.offsets.length, next.offsets.length)));
  copy(next.types, scan.types);
  copy(next.resolvedTypes, scan.resolvedTypes);
  copy(next.sizes, scan.sizes);
  copy(next.headerLengths, scan.headerLengths);
  copy(next.crc32, scan.crc32);
  copy(next.ofsBase, scan.ofsBase);
  copy(next.ids, scan.ids);
  if (scan.kept !== undefined) growKeptDeltas(scan.kept, capacity, shared);
  Object.assign(scan, { ...next, count: scan.count, inflatedBytes: scan.inflatedBytes, refs: scan.refs });
}

function earlyEof(name: string, offset: number): PackwrightError {
  return new PackwrightError('PACK_TRUNCATED', `${name}: early EOF in the entry at offset ${offset}`, { file: name, offset });
}

/** Entry number whose start is exactly `offset` among the first `n`, or -2. */
export function findOffset(offsets: EntryOffsets, n: number, offset: number): number {
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
