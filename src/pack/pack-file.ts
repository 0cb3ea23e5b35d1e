import { closeSync, fstatSync, readSync } from 'node:fs';
import { readExactly } from '../io/read-exactly.js';
import { openForReading } from '../io/open-for-reading.js';
import { PackwrightError } from '../errors/packwright-error.js';
import { Inflater, INFLATE_INPUT_ENDED, inflateCodeName } from '../zlib/inflater.js';
import { EntryHeader, HEADER_INCOMPLETE, MAX_ENTRY_HEADER, parseEntryHeader } from './entry-header.js';
import { PACK_HEADER_LENGTH, parsePackHeader } from './pack-header.js';

export interface PackFileOptions {
  hashLength: number;
  /**
   * Packs up to this size are read into memory whole, on first use; larger ones through windows of
   * this size, so packs beyond 4 GiB (the limit of one Buffer) are readable. Offsets are numbers.
   */
  windowSize?: number;
  /**
   * Reads made through small windows (or one-off) before the pack is read in big windows or
   * whole; default: as many as it takes to read the pack's size in small windows.
   */
  denseAfter?: number;
}

/** 1 GiB: one read for every pack below it, windows of 1 GiB above. */
export const DEFAULT_WINDOW_SIZE = 1 << 30;
/** Windows kept open at once for a windowed pack. */
const MAX_WINDOWS = 4;
/**
 * Until a pack is read densely, it is read through small windows: a lookup of one object must not
 * read a whole 100 MB pack (git mmaps it, so it pays only for the pages it touches).
 */
const SMALL_WINDOW = 64 * 1024;
const MAX_SMALL_WINDOWS = 32;
/**
 * Header questions (type, size, delta base) read 8 KiB windows, and never count toward reading the
 * pack densely: answering them for a list of names touches a few hundred bytes per object, and a
 * whole-pack read costs ~0.5 s of first-touch page faults for a 111 MB pack on this project's
 * machines (`cat-file --batch-check` of 1000 random names on gitoxide: 0.65 → 0.26 s).
 */
const HEADER_WINDOW = 8 * 1024;

/**
 * Compressed bytes read for `inflatePrefix`: a zlib header, the largest dynamic block header
 * (~290 bytes) and the few symbols wanted, with room to spare (see pack-info-table.ts, PREFIX).
 */
const PREFIX_BYTES = 1024;

interface Window {
  start: number;
  bytes: Buffer;
  /** The whole buffer of a small window, passed on to the window that evicts it. */
  own?: Buffer;
}

/**
 * Random access to one `.pack` file: its header, entry headers and zlib streams. Decoding of delta
 * chains is in `PackReader`; this class only knows bytes.
 */
export class PackFile {
  readonly path: string;
  readonly size: number;
  readonly version: number;
  readonly objectCount: number;
  readonly hashLength: number;
  /** Offset of the trailer (the pack hash): entries end here. */
  readonly dataEnd: number;
  private fd: number;
  private readonly windowSize: number;
  private windows: Window[] = [];
  /** Windows read for header questions only (see `headerWindow`). */
  private headerWindows: Window[] = [];
  /** Reads made so far in small windows or one-off; past `denseAfter`, the pack is read in big windows. */
  private smallLoads = 0;
  private readonly denseAfter: number;
  private readonly inflater = new Inflater();

  private constructor(path: string, fd: number, size: number, options: PackFileOptions, header: { version: number; objectCount: number }) {
    this.path = path;
    this.fd = fd;
    this.size = size;
    this.hashLength = options.hashLength;
    this.windowSize = options.windowSize ?? DEFAULT_WINDOW_SIZE;
    this.version = header.version;
    this.objectCount = header.objectCount;
    this.dataEnd = size - options.hashLength;
    // Small windows reuse their buffers, so each costs a copy; the first read of a whole pack costs
    // a first-touch fault per page (memory/index.ts: up to 0.5 s for 111 MB). Switch once small
    // windows have copied as much as the pack holds: 100 random objects of gitoxide with their
    // delta chains take ~175 small reads, and a read of all of them in id order goes dense.
    this.denseAfter = options.denseAfter ?? Math.max(1, Math.ceil(size / SMALL_WINDOW));
  }

  static open(path: string, options: PackFileOptions): PackFile {
    const fd = openForReading(path, 'PACK_MISSING');
    try {
      const size = fstatSync(fd).size;
      const head = Buffer.alloc(PACK_HEADER_LENGTH);
      const n = readSync(fd, head, 0, PACK_HEADER_LENGTH, 0);
      const header = parsePackHeader(head.subarray(0, n), path);
      if (size < PACK_HEADER_LENGTH + options.hashLength) {
        throw new PackwrightError('PACK_TRUNCATED', `${path}: early EOF: pack is ${size} bytes, too short for its trailer`, { file: path, offset: size });
      }
      return new PackFile(path, fd, size, options, header);
    } catch (e) {
      closeSync(fd);
      throw e;
    }
  }

  /** The pack's trailer: the hash of everything before it. */
  trailer(): Buffer {
    const t = Buffer.allocUnsafe(this.hashLength);
    this.readInto(t, this.dataEnd, this.hashLength);
    return t;
  }

  close(): void {
    if (this.fd >= 0) closeSync(this.fd);
    this.fd = -1;
    this.windows = [];
    this.headerWindows = [];
    this.inflater.close();
  }

  /**
   * Takes `bytes` as the whole pack (they must be this file's bytes: another thread's copy, in
   * shared memory), in place of reading it: threads that read one pack then hold it once.
   */
  adoptWhole(bytes: Buffer): void {
    if (bytes.length !== this.size) throw new PackwrightError('INVALID_ARGUMENT', `${this.path}: ${bytes.length} bytes offered for a ${this.size}-byte pack`, { file: this.path });
    this.windows = [{ start: 0, bytes }];
    this.smallLoads = Math.max(this.smallLoads, this.denseAfter);
  }

  /** The whole pack when it is held in memory as one window (a dense read of a pack that fits one), else undefined. */
  wholeBytes(): Buffer | undefined {
    for (const w of this.windows) if (w.start === 0 && w.bytes.length === this.size) return w.bytes;
    return undefined;
  }

  /**
   * Reads from now on in big windows (a pack up to the window size: whole, at the next read), as
   * if many small reads had been made: for a caller that knows it will touch most of the pack
   * (a count of every object), which saves reading it twice.
   */
  preferDense(): void {
    this.smallLoads = Math.max(this.smallLoads, this.denseAfter);
  }

  /**
   * Returns a buffer and the file offset of its first byte, covering at least
   * `[offset, min(offset + length, size))`.
   */
  view(offset: number, length: number, headerOnly = false): Window {
    if (offset < 0 || offset >= this.size) {
      throw new PackwrightError('PACK_CORRUPT', `${this.path}: offset ${offset} is outside the ${this.size}-byte pack`, { file: this.path, offset });
    }
    const wanted = Math.min(offset + length, this.size);
    for (let i = 0; i < this.windows.length; i++) {
      const w = this.windows[i] as Window;
      if (w.start <= offset && w.start + w.bytes.length >= wanted) {
        if (i > 0) {
          this.windows.splice(i, 1);
          this.windows.unshift(w);
        }
        return w;
      }
    }
    const dense = this.smallLoads >= this.denseAfter;
    if (headerOnly && !dense && wanted - offset <= HEADER_WINDOW / 2) return this.headerWindow(offset, wanted);
    if (dense && this.size <= this.windowSize) {
      this.windows = [];
      return this.load(0, this.size, 1);
    }
    const windowSize = dense ? this.windowSize : SMALL_WINDOW;
    if (wanted - offset > windowSize / 2) {
      // Larger than half a window: a one-off read, not cached.
      if (!dense) this.smallLoads++;
      return { start: offset, bytes: this.readAt(offset, wanted - offset) };
    }
    if (!dense) this.smallLoads++;
    // Windows start on half-window boundaries so any span up to half a window fits in one.
    const half = Math.floor(windowSize / 2);
    const start = Math.floor(offset / half) * half;
    return this.load(start, Math.min(windowSize, this.size - start), dense ? MAX_WINDOWS : MAX_SMALL_WINDOWS);
  }

  /**
   * A window for a header question, from its own small LRU whose buffers are reused: views of
   * these never leave `readEntryHeader` and `inflatePrefix`, so a buffer can be refilled, and a
   * long list of lookups allocates nothing.
   */
  private headerWindow(offset: number, wanted: number): Window {
    const list = this.headerWindows;
    for (let i = 0; i < list.length; i++) {
      const w = list[i] as Window;
      if (w.start <= offset && w.start + w.bytes.length >= wanted) {
        if (i > 0) {
          list.splice(i, 1);
          list.unshift(w);
        }
        return w;
      }
    }
    const half = HEADER_WINDOW / 2;
    const start = Math.floor(offset / half) * half;
    const length = Math.min(HEADER_WINDOW, this.size - start);
    const reuse = list.length >= MAX_SMALL_WINDOWS ? (list.pop() as Window) : undefined;
    const bytes = reuse?.bytes.length === HEADER_WINDOW ? reuse.bytes : Buffer.allocUnsafeSlow(HEADER_WINDOW);
    this.readInto(bytes, start, length);
    const w = { start, bytes: bytes.subarray(0, length) };
    list.unshift(w);
    return w;
  }

  /**
   * Reads a window and puts it first in the LRU. A small window takes over the buffer of the one it
   * evicts: views of windows never leave this class (readEntryHeader, inflatePrefix and inflate use
   * them and let go), and fresh buffers would cost first-touch faults on every read.
   */
  private load(start: number, length: number, keep: number): Window {
    let recycled: Buffer | undefined;
    while (this.windows.length >= keep) {
      const evicted = this.windows.pop() as Window;
      if (evicted.own?.length === SMALL_WINDOW) recycled = evicted.own;
    }
    let w: Window;
    if (length <= SMALL_WINDOW && keep === MAX_SMALL_WINDOWS) {
      const own = recycled ?? Buffer.allocUnsafeSlow(SMALL_WINDOW);
      this.readInto(own, start, length);
      w = { start, bytes: own.subarray(0, length), own };
    } else {
      w = { start, bytes: this.readAt(start, length) };
    }
    this.windows.unshift(w);
    return w;
  }

  private readAt(position: number, length: number): Buffer {
    const buf = Buffer.allocUnsafeSlow(length);
    this.readInto(buf, position, length);
    return buf;
  }

  /**
   * Reads `length` bytes of the pack at `position` into `buf` (from its start), through the file
   * this PackFile holds: for callers that read the pack their own way (the info table).
   */
  readInto(buf: Uint8Array, position: number, length: number): void {
    readExactly(this.fd, buf, 0, length, position, this.path, 'PACK_TRUNCATED');
  }

  /** Parses the entry header at `offset` into `out` (REF ids are copied into `out.baseId`). */
  readEntryHeader(offset: number, out: EntryHeader): void {
    if (offset < PACK_HEADER_LENGTH || offset >= this.dataEnd) {
      throw new PackwrightError('PACK_CORRUPT', `${this.path}: entry offset ${offset} is outside the pack's entries`, { file: this.path, offset });
    }
    const w = this.view(offset, MAX_ENTRY_HEADER, true);
    const pos = offset - w.start;
    const end = Math.min(w.bytes.length, this.dataEnd - w.start);
    const n = parseEntryHeader(w.bytes, pos, end, offset, this.hashLength, out, this.path);
    if (n === HEADER_INCOMPLETE) {
      throw new PackwrightError('PACK_TRUNCATED', `${this.path}: entry header at offset ${offset} runs into the pack trailer`, { file: this.path, offset });
    }
    if (out.baseIdPosition >= 0) {
      out.baseId = Buffer.from(w.bytes.subarray(out.baseIdPosition, out.baseIdPosition + this.hashLength));
    } else {
      out.baseId = undefined;
    }
  }

  /**
   * Inflates up to `n` bytes of the stream at `dataOffset` into `out` and returns how many came
   * out: enough to read a delta's size varints without inflating all of it.
   */
  inflatePrefix(entryOffset: number, dataOffset: number, n: number, out: Uint8Array): number {
    const w = this.view(dataOffset, PREFIX_BYTES, true);
    const pos = dataOffset - w.start;
    const end = Math.min(w.bytes.length, this.dataEnd - w.start);
    const r = this.inflater.inflatePrefix(w.bytes, pos, end, out, 0, n);
    if (r >= 0) return r;
    throw new PackwrightError(
      'PACK_CORRUPT',
      `${this.path}: cannot inflate the entry at offset ${entryOffset}: ${inflateCodeName(r)} (${this.inflater.lastError})`,
      { file: this.path, offset: entryOffset },
    );
  }

  /**
   * Inflates the zlib stream at `dataOffset` (entry at `entryOffset`) into `out[outOffset..+size)`;
   * `out` needs `size + 1` bytes of room. Returns the compressed length.
   */
  inflate(entryOffset: number, dataOffset: number, size: number, out: Uint8Array, outOffset: number): number {
    // zlib's worst case is about size + size/1000 + a few bytes per block; start there and grow
    // only for streams that are odd (many empty blocks) or damaged.
    let span = size + (size >>> 9) + 64;
    for (;;) {
      const w = this.view(dataOffset, span);
      const pos = dataOffset - w.start;
      const end = Math.min(w.bytes.length, this.dataEnd - w.start);
      const r = this.inflater.inflateExact(w.bytes, pos, end, out, outOffset, size);
      if (r >= 0) return r;
      const reachedEnd = w.start + end >= this.dataEnd;
      if (r === INFLATE_INPUT_ENDED && !reachedEnd) {
        span *= 2;
        continue;
      }
      throw new PackwrightError(
        'PACK_CORRUPT',
        `${this.path}: cannot inflate the entry at offset ${entryOffset}: ${inflateCodeName(r)} (${this.inflater.lastError})`,
        { file: this.path, offset: entryOffset },
      );
    }
  }
}

