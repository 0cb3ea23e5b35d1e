import { SliceClock } from '../walk/sliced-steps.js';
import type { Hash } from 'node:crypto';
import { nodeZlib } from '../zlib/node-zlib.js';
import { crc32 as entryCrc32 } from '../zlib/crc32.js';
import { isPackwrightError, PackwrightError, throwIfAborted } from '../errors/packwright-error.js';
import { toHex } from '../hash/hex.js';
import { nodeCrypto } from '../hash/node-crypto.js';
import { encodeEntryHeader, encodeOfsDistance, OBJ_OFS_DELTA, OBJ_REF_DELTA } from '../pack/entry-header.js';
import type { PackFile } from '../pack/pack-file.js';
import type { StoreHandle } from '../odb/store-handle.js';
import type { StorePack, StoredObject } from '../odb/store-pack.js';
import { Deflater } from '../zlib/deflater.js';
import { DeltaIndex } from '../delta/create-delta.js';
import type { ObjectTable } from '../walk/object-table.js';
import { LOOSE, NOWHERE, type ObjectLocations } from '../walk/locate-objects.js';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Entry, type PackPlan } from './pack-plan.js';
import { typeNumber } from '../objects/object-type.js';

/** Where the pack's bytes go: each chunk once, in order; a returned promise is waited for. */
export type PackSink = (chunk: Buffer) => void | Promise<void>;

/** Output is handed to the sink in chunks of this size: few calls, little memory. */
const CHUNK = 1 << 20;
/** Stored entries are read through forward windows of this size (pack order is mostly forward). */
const READ_WINDOW = 4 << 20;

/** How the entries of a pack were made (CreatePackStats reports them). */
export interface EntryCounts {
  /** Whole stored entries copied as they are. */
  copied: number;
  /** Stored deltas copied (base reference rewritten). */
  copiedDeltas: number;
  /** Stored deltas against bases outside the pack (thin), kept. */
  thinDeltas: number;
  /** Objects read and deflated again. */
  recompressed: number;
  /** Deltas computed now against objects in the pack. */
  newDeltas: number;
  /** Deltas computed now against objects outside the pack that the receiver has (thin). */
  newThinDeltas: number;
  /** Stored entries whose CRC did not match their index (recompressed from the object). */
  badCrc: number;
  /** Stored entries sent in the run at the start of the pack, as they are (see PackPlan.verbatim). */
  verbatim: number;
}

/** What writing found and did, for statistics and the index. */
export interface WrittenPack extends EntryCounts {
  /** The pack's hash (the last one's, when `split` made several). */
  hash: Buffer;
  /** By object number: offset in the pack it was written to (for the index). */
  offsets: Float64Array;
  /** By object number: CRC32 of the written entry. */
  crcs: Uint32Array;
  /** With `split`: each pack's hash, and by object number the pack it went to. */
  parts: Buffer[];
  partOf: Int32Array;
}

/**
 * Writing several packs of at most `maxSize` bytes each (git's pack.packSizeLimit): an entry that
 * would take a pack to the limit (its trailer included) starts the next pack, unless it is the
 * pack's first. A delta is written as a delta only when its base is in the same pack.
 */
export interface PackSplit {
  maxSize: number;
  /** Pack number `part` begins: where its bytes go. */
  begin(part: number): PackSink;
  /**
   * Pack `part` is complete but for its trailer: `count` objects written, `declared` in its header
   * (more when it was cut short), `hash` over what was written. Writes the trailer (after setting
   * the header's count and hashing the file again when they differ, as git's
   * fixup_pack_header_footer) and returns the pack's hash.
   */
  end(part: number, count: number, declared: number, hash: Buffer): Buffer | Promise<Buffer>;
}

/**
 * New deltas by object number, filled by the delta search: the compressed bytes and the delta's
 * size, or no bytes when the delta cache was full (the writer computes the delta again).
 */
export type NewDeltas = Map<number, { data: Buffer | undefined; size: number }>;

export interface WritePackOptions {
  handle: StoreHandle;
  table: ObjectTable;
  locations: ObjectLocations;
  plan: PackPlan;
  deltas: NewDeltas;
  /** OFS_DELTA for bases in the pack (else REF_DELTA, for old clients). */
  deltaBaseOffset: boolean;
  compression: number;
  sink: PackSink;
  /** The sink is done with a chunk when it returns or its promise settles (see CreatePackOptions.reuseChunks). */
  reuseChunks?: boolean | undefined;
  /** Several packs instead of one (then `sink` is not used). */
  split?: PackSplit | undefined;
  signal?: AbortSignal | undefined;
  onProgress?: ((written: number, total: number, bytes: number) => void) | undefined;
}

/**
 * Writes a version 2 pack of the planned objects: the header, each entry with every base before
 * the deltas on it, and the trailer (the hash of everything before it). Copied entries are
 * checked against the CRC32 their index stores (v2) and recompressed from the object when it does
 * not match, so a bit flip on disk is not passed on.
 */
export async function writePack(options: WritePackOptions): Promise<WrittenPack> {
  // Written in slices: a server writes the packs of many requests on one event loop.
  const clock = new SliceClock();
  try {
    return await writePackSliced(options, clock);
  } finally {
    clock.close();
  }
}

async function writePackSliced(options: WritePackOptions, clock: SliceClock): Promise<WrittenPack> {
  const { handle, table, locations, plan, deltas, split } = options;
  const H = table.hashLength;
  const total = plan.order.length;
  const newHasher = (): Hash => nodeCrypto().createHash(H === 20 ? 'sha1' : 'sha256');
  let hasher = newHasher();
  let sink = split !== undefined ? split.begin(0) : options.sink;
  const offsets = new Float64Array(table.count).fill(-1);
  const crcs = new Uint32Array(table.count);
  const partOf = new Int32Array(table.count).fill(-1);
  let count = 0;
  /** The pack being written (with `split`), the objects its header declares and those in it so far. */
  let part = 0;
  let declared = total;
  let inPart = 0;
  const result: WrittenPack = { hash: Buffer.alloc(0), offsets, crcs, parts: [], partOf, copied: 0, copiedDeltas: 0, thinDeltas: 0, recompressed: 0, newDeltas: 0, newThinDeltas: 0, badCrc: 0, verbatim: 0 };
  let out = Buffer.allocUnsafeSlow(CHUNK);
  let used = 0;
  let position = 0;
  // Writing is synchronous into the chunk; a full chunk goes to the sink, and a sink that returns
  // a promise is waited for before the next entry. One await a chunk, not several an entry: at
  // 226k entries, per-entry awaits cost ~100 ms of microtasks.
  let waiting: Promise<void> | undefined;
  /** Chunks a sink that does not keep them is done with (see reuseChunks). */
  const spare: (typeof out)[] = [];
  const flush = (): void => {
    if (used === 0) return;
    const chunk = out.subarray(0, used);
    hasher.update(chunk);
    const pending = sink(chunk);
    // A sink that may keep the chunk (a stream) has it for good: the next is a fresh buffer.
    if (options.reuseChunks === true) {
      const given = out;
      if (pending === undefined) spare.push(given);
      else pending.then(() => spare.push(given), () => {});
    }
    out = spare.pop() ?? Buffer.allocUnsafeSlow(CHUNK);
    used = 0;
    if (pending !== undefined) waiting = waiting === undefined ? pending : waiting.then(() => pending);
  };
  const put = (bytes: Uint8Array): void => {
    position += bytes.length;
    let p = 0;
    while (p < bytes.length) {
      const n = Math.min(bytes.length - p, out.length - used);
      out.set(bytes.subarray(p, p + n), used);
      used += n;
      p += n;
      if (used === out.length) flush();
    }
  };

  const putHeader = (objects: number): void => {
    const header = Buffer.alloc(12);
    header.write('PACK', 0, 'latin1');
    header.writeUInt32BE(2, 4);
    header.writeUInt32BE(objects, 8);
    put(header);
  };
  putHeader(total);

  const readers = locations.packs.map((p) => new ForwardReader(p));
  const deflater = new Deflater(options.compression);
  const zlibCrc32 = nodeZlib().crc32;
  const ofs = options.deltaBaseOffset;

  /** An entry ready to be written: its bytes and CRC32, and what kind of entry it became. */
  interface Prepared {
    head: Uint8Array | undefined;
    body: Uint8Array;
    crc: number;
    counter: 'copied' | 'copiedDeltas' | 'thinDeltas' | 'recompressed' | 'newDeltas' | 'newThinDeltas';
    badCrc: boolean;
  }
  const entry = (head: Uint8Array | undefined, body: Uint8Array, counter: Prepared['counter'], crc?: number, badCrc = false): Prepared => ({
    head, body, counter, badCrc, crc: crc ?? (head === undefined ? zlibCrc32(body) : zlibCrc32(body, zlibCrc32(head))),
  });

  /**
   * Entry `o` as it would be written at `start`. A delta whose base went to another pack (with
   * `split`) is written whole, as git's write_object does.
   */
  const prepare = (o: number, start: number): Prepared => {
    const kind = plan.kind[o] as number;
    // Left of a verbatim run cut short by a damaged entry: whole, from the object.
    if (kind === Entry.VERBATIM) return recompress(o);
    const local = kind === Entry.COPY_DELTA || kind === Entry.NEW_DELTA;
    if (local && split !== undefined && partOf[plan.base[o] as number] !== part) return recompress(o);
    if (kind === Entry.COPY || kind === Entry.COPY_DELTA || kind === Entry.COPY_THIN) {
      const k = locations.pack[o] as number;
      const reader = readers[k] as ForwardReader;
      const from = plan.sourceOffset[o] as number;
      const end = plan.sourceEnd[o] as number;
      const raw = reader.bytes(from, end - from);
      const rawCrc = entryCrc32(raw);
      if (!reader.crcMatches(rawCrc, locations.position[o] as number)) return { ...recompress(o), badCrc: true };
      if (kind === Entry.COPY) return entry(undefined, raw, 'copied', rawCrc);
      const data = raw.subarray((plan.sourceData[o] as number) - from);
      return entry(deltaHeader(o, plan.size[o] as number, start, kind === Entry.COPY_THIN || !ofs), data, kind === Entry.COPY_THIN ? 'thinDeltas' : 'copiedDeltas');
    }
    if (kind === Entry.NEW_DELTA || kind === Entry.NEW_THIN) {
      let delta = deltas.get(o) as { data: Buffer | undefined; size: number };
      if (delta.data === undefined) {
        // Not kept (the delta cache was full): the same pair again, base and target read anew.
        const base = readObject(handle, table, locations, plan.base[o] as number).data;
        const target = readObject(handle, table, locations, o).data;
        const raw = new DeltaIndex(base).createDelta(target);
        if (raw === undefined) return recompress(o);
        delta = { data: Buffer.from(deflater.deflate(raw)), size: raw.length };
        // Kept until written: a pack split may ask for the entry again.
        deltas.set(o, delta);
      }
      return entry(deltaHeader(o, delta.size, start, kind === Entry.NEW_THIN || !ofs), delta.data as Buffer, kind === Entry.NEW_THIN ? 'newThinDeltas' : 'newDeltas');
    }
    return recompress(o);
  };

  const commit = (o: number, e: Prepared): void => {
    offsets[o] = position;
    partOf[o] = part;
    if (e.head !== undefined) put(e.head);
    put(e.body);
    crcs[o] = e.crc;
    result[e.counter]++;
    if (e.badCrc) result.badCrc++;
    deltas.delete(o);
  };

  /** The trailer of the pack being written; with `split`, what `end` makes of it. */
  const finishPart = async (): Promise<Buffer> => {
    flush();
    if (waiting !== undefined) {
      const w = waiting;
      waiting = undefined;
      await w;
    }
    const hash = hasher.digest();
    if (split === undefined) {
      await sink(Buffer.from(hash));
      return hash;
    }
    const named = await split.end(part, inPart, declared, hash);
    result.parts.push(named);
    return named;
  };

  /** The next pack of a split: the one being written is finished first. */
  const nextPart = async (splitting: PackSplit): Promise<void> => {
    await finishPart();
    part++;
    declared = total - count;
    inPart = 0;
    hasher = newHasher();
    sink = splitting.begin(part);
    position = 0;
    putHeader(declared);
  };

  /** Writes entry `o`; a promise only when it starts the next pack of a split (no await per entry otherwise). */
  const writeOne = (o: number): Promise<void> | undefined => {
    const e = prepare(o, position);
    const length = (e.head?.length ?? 0) + e.body.length;
    if (split !== undefined && inPart > 0 && position + length + H >= split.maxSize) {
      return nextPart(split).then(() => {
        commit(o, prepare(o, position));
        inPart++;
      });
    }
    commit(o, e);
    inPart++;
    return undefined;
  };

  /** The entry header of a delta on `plan.base[o]`: OFS back to where the base was written, or REF. */
  const deltaHeader = (o: number, size: number, at: number, ref: boolean): Buffer => {
    const b = plan.base[o] as number;
    const typeSize = encodeEntryHeader(ref ? OBJ_REF_DELTA : OBJ_OFS_DELTA, size);
    if (ref) return Buffer.concat([typeSize, table.id(b)]);
    return Buffer.concat([typeSize, encodeOfsDistance(at - (offsets[b] as number))]);
  };

  const recompress = (o: number): Prepared => {
    const obj = readObject(handle, table, locations, o);
    return entry(encodeEntryHeader(typeNumber(obj.type), obj.data.length), deflater.deflate(obj.data), 'recompressed');
  };

  if (plan.verbatim !== undefined && split === undefined && ofs) {
    const k = plan.verbatim.pack;
    const reader = readers[k] as ForwardReader;
    // The run's objects in pack order (the plan lists a pack's objects so), from offset 12 on.
    const run: number[] = [];
    for (const o of plan.order) if (plan.kind[o] === Entry.VERBATIM && locations.pack[o] === k) run.push(o);
    // Whole entries up to half a read window at a time (so each is a view of the reader's
    // window), each checked against its index CRC before any of them goes out. The run ends
    // before a damaged entry: it and the rest of the run are written one by one, recompressed
    // from another copy, after the run.
    let r = 0;
    while (r < run.length) {
      const first = run[r] as number;
      const start = plan.sourceOffset[first] as number;
      // Entries follow each other from offset 12 in a pack its index describes truly.
      if (start !== position) {
        const file = (locations.packs[k] as StorePack).packPath;
        throw new PackwrightError('PACK_CORRUPT', `${file}: the entry after offset ${position} starts at ${start} by its index`, { file, offset: start });
      }
      let last = r + 1;
      while (last < run.length && (plan.sourceEnd[run[last] as number] as number) - start <= READ_WINDOW / 2) last++;
      const stop = plan.sourceEnd[run[last - 1] as number] as number;
      const bytes = reader.bytes(start, stop - start);
      let good = r;
      for (; good < last; good++) {
        const o = run[good] as number;
        const crc = entryCrc32(bytes, (plan.sourceOffset[o] as number) - start, (plan.sourceEnd[o] as number) - start);
        if (!reader.crcMatches(crc, locations.position[o] as number)) break;
        offsets[o] = plan.sourceOffset[o] as number;
        crcs[o] = crc;
        partOf[o] = 0;
      }
      const end = good < last ? (plan.sourceOffset[run[good] as number] as number) : stop;
      if (end > start) put(bytes.subarray(0, end - start));
      result.verbatim += good - r;
      count += good - r;
      inPart += good - r;
      if (good < last) {
        result.badCrc++;
        break;
      }
      r = last;
      if (waiting !== undefined) {
        const w = waiting;
        waiting = undefined;
        await w;
      }
      if (clock.due) await clock.turn();
      throwIfAborted(options.signal, 'writing the pack');
      options.onProgress?.(count, total, position);
    }
  }

  // Every base before its deltas: a delta whose base is not written yet writes the base first
  // (usually it already is: a pack's own order has bases first).
  const stack: number[] = [];
  for (let i = 0; i < total; i++) {
    const first = plan.order[i] as number;
    if (offsets[first] !== -1) continue;
    stack.push(first);
    while (stack.length > 0) {
      const o = stack[stack.length - 1] as number;
      const kind = plan.kind[o] as number;
      const b = plan.base[o] as number;
      if ((kind === Entry.COPY_DELTA || kind === Entry.NEW_DELTA) && offsets[b] === -1) {
        stack.push(b);
        continue;
      }
      stack.pop();
      if (offsets[o] !== -1) continue;
      const started = writeOne(o);
      if (started !== undefined) await started;
      count++;
      if (waiting !== undefined) {
        const w = waiting;
        waiting = undefined;
        await w;
      }
      // A sink that takes chunks at once (a socket to a fast reader) resolves without a turn of
      // the event loop: the whole pack would go out in one (8 s of a server's loop, 16 clones).
      if ((count & 63) === 0 && clock.due) await clock.turn();
      if ((count & 1023) === 0) {
        throwIfAborted(options.signal, 'writing the pack');
        options.onProgress?.(count, total, position);
      }
    }
  }
  options.onProgress?.(count, total, position);
  if (count !== total) throw new PackwrightError('PACK_CORRUPT', `wrote ${count} of ${total} planned objects`);
  deflater.close();
  result.hash = await finishPart();
  return result;
}

/**
 * Reads object `o` whole (for recompression): from the copy the plan chose, else from any other
 * copy (another pack, a loose file), as git falls back when a packed copy is corrupt. When no copy
 * can be read, OBJECT_CORRUPT names the object and what went wrong with the first.
 */
export function readObject(handle: StoreHandle, table: ObjectTable, locations: ObjectLocations, o: number): StoredObject {
  const k = locations.pack[o] as number;
  const id = table.id(o);
  let first: unknown;
  const attempt = (read: () => StoredObject): StoredObject | undefined => {
    try {
      return read();
    } catch (e) {
      first ??= e;
      return undefined;
    }
  };
  const found =
    (k >= 0 ? attempt(() => (locations.packs[k] as StorePack).read(locations.position[o] as number)) : undefined) ??
    (locations.otherCopies.get(o) ?? []).reduce<StoredObject | undefined>((got, c) => got ?? attempt(() => (locations.packs[c.pack] as StorePack).read(c.position)), undefined) ??
    readLooseCopy(handle, id, attempt) ??
    (k === LOOSE || k === NOWHERE ? attempt(() => handle.read(id)) : undefined);
  if (found !== undefined) return found;
  throw new PackwrightError('OBJECT_CORRUPT', `object ${toHex(id)} cannot be read for the pack: ${(first as Error | undefined)?.message ?? 'no copy found'}`, { cause: first });
}

/** `handle.read(id)`, or when the copy it finds cannot be read, a loose copy (a worker's fallback). */
export function readAnyCopy(handle: StoreHandle, id: Uint8Array): StoredObject {
  try {
    return handle.read(id);
  } catch (e) {
    if (!isPackwrightError(e)) throw e;
    const loose = readLooseCopy(handle, id, (read) => {
      try {
        return read();
      } catch {
        // A damaged loose copy is no copy: the packed one's error, thrown below, is the report.
        return undefined;
      }
    });
    if (loose !== undefined) return loose;
    throw new PackwrightError('OBJECT_CORRUPT', `object ${toHex(id)} cannot be read for the pack: ${e.message}`, { cause: e });
  }
}

/** The object from a loose file of the store (or an alternate), if one is there and reads. */
function readLooseCopy(
  handle: StoreHandle, id: Uint8Array, attempt: (read: () => StoredObject) => StoredObject | undefined,
): StoredObject | undefined {
  const hex = toHex(id);
  for (const dir of handle.looseDirs()) {
    const path = join(dir, hex.slice(0, 2), hex.slice(2));
    if (!existsSync(path)) continue;
    const got = attempt(() => handle.readAt({ kind: 'loose', path }));
    if (got !== undefined) return got;
  }
  return undefined;
}

/** The window ForwardReader starts with, and goes back to after a jump. */
const FIRST_WINDOW = 64 << 10;

/**
 * Reads spans of one pack through a window that moves forward: writing in pack order, each read
 * is a copy out of memory, and the file is read once, in large sequential reads. The window
 * doubles (up to READ_WINDOW) while the reads follow one another and starts small again after a
 * jump: a small fetch's 40 entries scattered over git.git's 190 MB pack read 4 MiB each, and the
 * first of those reads faulted in a fresh 4 MiB buffer (15 ms of a 0.5 s upload-pack).
 */
class ForwardReader {
  private window: Buffer = Buffer.alloc(0);
  private start = 0;
  /** The next window's size, and the memory windows are read into (grown as they grow). */
  private size = FIRST_WINDOW;
  private buffer: Buffer = Buffer.alloc(0);
  private readonly file: PackFile;
  private readonly hasCrc: boolean;
  private whole: Buffer | null | undefined;

  constructor(private readonly pack: StorePack) {
    this.file = pack.open().file;
    this.hasCrc = pack.index.version >= 2;
  }

  bytes(offset: number, length: number): Buffer {
    // A pack the store already holds whole (the walk read it densely) is not read again.
    const whole = this.whole ??= this.file.wholeBytes() ?? null;
    if (whole !== null) return whole.subarray(offset, offset + length);
    if (offset >= this.start && offset + length <= this.start + this.window.length) {
      return this.window.subarray(offset - this.start, offset - this.start + length);
    }
    if (length > READ_WINDOW / 2) {
      const buf = Buffer.allocUnsafe(length);
      this.file.readInto(buf, offset, length);
      return buf;
    }
    // Reading on past the window's end (an entry it cut, or one soon after): a larger window; a
    // jump: a small one.
    const end = this.start + this.window.length;
    this.size = offset >= this.start && offset < end + this.size ? Math.min(READ_WINDOW, this.size * 2) : FIRST_WINDOW;
    if (this.size < length) this.size = Math.min(READ_WINDOW, 2 ** Math.ceil(Math.log2(length)));
    if (this.buffer.length < this.size) this.buffer = Buffer.allocUnsafeSlow(this.size);
    const size = Math.min(this.size, this.file.dataEnd - offset);
    this.file.readInto(this.buffer, offset, size);
    this.window = this.buffer.subarray(0, size);
    this.start = offset;
    return this.window.subarray(0, length);
  }

  /** Whether a stored entry's CRC32 is the one its index stores (true for v1 indexes, which have none). */
  crcMatches(crc: number, position: number): boolean {
    return !this.hasCrc || crc === this.pack.index.crc32(position);
  }
}

/**
 * Sends a whole pack as it is (git's whole-pack reuse): the header, the entries in one pass of
 * big reads, each entry checked against the index's CRC32 on the way (v2 indexes), and the
 * pack's own trailer, which those bytes hash to: nothing is hashed again. A CRC mismatch in the
 * first window, before anything is sent, gives undefined (the caller makes the pack entry by
 * entry, from other copies where there are some); later it is PACK_CORRUPT, the pack being half
 * sent. Resolves to the trailer.
 */
export async function copyWholePack(pack: StorePack, sink: PackSink, signal?: AbortSignal, onProgress?: (bytes: number) => void, reuseChunks = false): Promise<Buffer | undefined> {
  const file = pack.open().file;
  const index = pack.index;
  const end = file.dataEnd;
  const order = index.version >= 2 ? index.packOrder() : undefined;
  const offsets = order?.offsets;
  let k = 0;
  let sent = 0;
  /** The read buffer, when the sink is done with each chunk as its promise settles (reuseChunks). */
  let reused: Buffer | undefined;
  for (let start = 12; start < end;) {
    // A window of whole entries: READ_WINDOW bytes, or one entry when it is bigger.
    let stop = Math.min(end, start + READ_WINDOW);
    if (offsets !== undefined) {
      let last = k;
      while (last < offsets.length && ((last + 1 < offsets.length ? (offsets[last + 1] as number) : end) <= stop)) last++;
      if (last === k && k < offsets.length) last = k + 1;
      stop = last < offsets.length ? (offsets[last] as number) : end;
    }
    // A fresh buffer each time, unless the sink is done with each as it settles: it may keep what it is given.
    let bytes: Buffer;
    if (reuseChunks && stop - start <= READ_WINDOW) {
      reused ??= Buffer.allocUnsafeSlow(READ_WINDOW);
      bytes = reused.subarray(0, stop - start);
    } else {
      bytes = Buffer.allocUnsafeSlow(stop - start);
    }
    file.readInto(bytes, start, stop - start);
    if (offsets !== undefined && order !== undefined) {
      for (; k < offsets.length && (offsets[k] as number) < stop; k++) {
        const from = offsets[k] as number;
        const to = k + 1 < offsets.length ? (offsets[k + 1] as number) : end;
        if (entryCrc32(bytes, from - start, to - start) !== index.crc32(order.positions[k] as number)) {
          if (sent === 0) return undefined;
          throw new PackwrightError('PACK_CORRUPT', `the entry at offset ${from} does not match its CRC32 in the index, after part of the pack was sent`, { file: pack.packPath, offset: from });
        }
      }
    }
    if (sent === 0) {
      // The file's own header: the trailer is the hash of it and the entries.
      const header = Buffer.allocUnsafe(12);
      file.readInto(header, 0, 12);
      await sink(header);
      sent = 12;
    }
    await sink(bytes);
    sent += bytes.length;
    start = stop;
    onProgress?.(sent);
    throwIfAborted(signal, 'making the pack');
  }
  const trailer = file.trailer();
  await sink(Buffer.from(trailer));
  return trailer;
}
