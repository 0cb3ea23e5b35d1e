import { closeSync, fstatSync, readSync } from 'node:fs';
import { readExactly } from '../io/read-exactly.js';
import { openForReading } from '../io/open-for-reading.js';
import { PackwrightError } from '../errors/packwright-error.js';
import { Inflater, INFLATE_INPUT_ENDED, inflateCodeName } from '../zlib/inflater.js';
import { EntryHeader, HEADER_INCOMPLETE, MAX_ENTRY_HEADER, parseEntryHeader } from './entry-header.js';
import { PACK_HEADER_LENGTH, parsePackHeader } from './pack-header.js';
import { WindowPool, type PooledWindow, type WindowOwner } from './window-pool.js';

/** Options of `PackFile.open`: the id length and how the file is read (windows, pool). */
export interface PackFileOptions {
  hashLength: number;
  /**
   * Packs up to this size may be read into memory whole (when the pool has room for them); larger
   * ones through windows no larger than this, so packs beyond 4 GiB (the limit of one Buffer) are
   * readable. Offsets are numbers.
   */
  windowSize?: number | undefined;
  /**
   * The budget of large windows this pack shares with the other packs of its store (see
   * WindowPool); default: a pool of its own, without a limit.
   */
  pool?: WindowPool | undefined;
  /**
   * Reads made through small windows (or one-off) before the pack is read in big windows or
   * whole; default: as many as it takes to read the pack's size in small windows.
   */
  denseAfter?: number | undefined;
}

/** 1 GiB: packs below it may be read whole. */
export const DEFAULT_WINDOW_SIZE = 1 << 30;
/** Large windows kept at once by one pack (the pool may hold fewer). */
const MAX_WINDOWS = 4;
/**
 * Large windows are an eighth of the pool's budget, within these bounds: a pread from the page
 * cache runs at several GB/s, so 32 MiB costs a few ms and the syscalls of a sequential read are
 * lost in its inflates; larger windows would only cost memory.
 */
const LARGE_WINDOW_MIN = 1 << 20;
const LARGE_WINDOW_MAX = 32 << 20;
/** Large windows of a pack read in scattered places (see `wholeAllowed`). */
const SCATTERED_WINDOW = 1 << 20;
/**
 * Misses in a row, each at or just past the end of the range read before it, after which a pack
 * that is not held whole is taken to be read front to back and read in large windows
 * (`--batch-all-objects --unordered`, pack-objects reusing entries). Random reads (a walk of
 * trees, lookups by id) keep to small windows: a large window read for every object would read
 * the pack many times over.
 */
const SEQUENTIAL_RUN = 3;
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

/** The window of `list` (most recently used first) that covers `[offset, wanted)`, moved to the front; undefined if none. */
function windowCovering<W extends Window>(list: W[], offset: number, wanted: number): W | undefined {
  for (let i = 0; i < list.length; i++) {
    const w = list[i] as W;
    if (w.start <= offset && w.start + w.bytes.length >= wanted) {
      if (i > 0) {
        list.splice(i, 1);
        list.unshift(w);
      }
      return w;
    }
  }
  return undefined;
}

/** The kind of window `view` chose for a miss. */
const SMALL = 0;
const LARGE = 1;
const ONE_OFF = 2;

/**
 * Random access to one `.pack` file: its header, entry headers and zlib streams. Decoding of delta
 * chains is in `PackReader`; this class only knows bytes.
 */
export class PackFile implements WindowOwner {
  readonly path: string;
  readonly size: number;
  readonly version: number;
  readonly objectCount: number;
  readonly hashLength: number;
  /** Offset of the trailer (the pack hash): entries end here. */
  readonly dataEnd: number;
  private fd: number;
  private readonly windowSize: number;
  private readonly pool: WindowPool;
  /** Windows counted by the pool (large ones, or the whole pack), most recently used first. */
  private large: PooledWindow[] = [];
  /** Small windows (their buffers reused), most recently used first. */
  private small: Window[] = [];
  /** `SMALL_WINDOW`, or the window size when that is smaller (tests exercise tiny windows). */
  private readonly smallSize: number;
  /** The range the last miss read, and how many misses in a row read forward from the one before. */
  private lastStart = -1;
  private lastEnd = -1;
  private forwardRun = 0;
  /** The range the last large window read, and how much it read (see `view`). */
  private rampStart = -1;
  private rampEnd = -1;
  private ramp = 0;
  /** Windows read for header questions only (see `headerWindow`). */
  private headerWindows: Window[] = [];
  /** Reads made so far in small windows or one-off; past `denseAfter`, the pack is read in big windows. */
  private smallLoads = 0;
  private readonly denseAfter: number;
  /**
   * False for a reader that will touch scattered parts of most of the pack, each about once (a
   * walk of every tree): it reads through large windows of at most SCATTERED_WINDOW, recycled,
   * and never the pack whole. Reading a pack whole means first touching as much fresh memory,
   * ~3 ms a MB on 4 KiB pages, where a window read again from the page cache costs ~0.1: rev-list
   * --objects --all on isomorphic-git took 0.78-0.84 s with the pack whole and 0.65-0.67 s through
   * 1 MiB windows (2, 4, 8 MiB: 0.66-0.74, 0.72-0.74, 0.76-0.81 s), 152 against 107 MB.
   */
  private wholeAllowed = true;
  private readonly inflater = new Inflater();

  private constructor(path: string, fd: number, size: number, options: PackFileOptions, header: { version: number; objectCount: number }) {
    this.path = path;
    this.fd = fd;
    this.size = size;
    this.hashLength = options.hashLength;
    this.windowSize = options.windowSize ?? DEFAULT_WINDOW_SIZE;
    this.pool = options.pool ?? new WindowPool();
    this.smallSize = Math.min(SMALL_WINDOW, this.windowSize);
    this.version = header.version;
    this.objectCount = header.objectCount;
    this.dataEnd = size - options.hashLength;
    // Small windows reuse their buffers, so each costs a copy; the first read of a whole pack costs
    // a first-touch fault per page (memory/index.ts: up to 0.5 s for 111 MB). Switch once small
    // windows have copied as much as the pack holds: 100 random objects of gitoxide with their
    // delta chains take ~175 small reads, and a read of all of them in id order goes dense.
    this.denseAfter = options.denseAfter ?? Math.max(1, Math.ceil(size / SMALL_WINDOW));
  }

  /** Opens a pack file and checks its header (PACK_MISSING, PACK_CORRUPT). */
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

  /** Closes the file and lets go of its windows. */
  close(): void {
    if (this.fd >= 0) closeSync(this.fd);
    this.fd = -1;
    this.dropLarge();
    this.small = [];
    this.headerWindows = [];
    this.inflater.close();
  }

  /**
   * Takes `bytes` as the whole pack (they must be this file's bytes: another thread's copy, in
   * shared memory), in place of reading it: threads that read one pack then hold it once.
   */
  adoptWhole(bytes: Buffer): void {
    if (bytes.length !== this.size) throw new PackwrightError('INVALID_ARGUMENT', `${this.path}: ${bytes.length} bytes offered for a ${this.size}-byte pack`, { file: this.path });
    this.dropLarge();
    this.small = [];
    this.addLarge(0, bytes, false);
    this.smallLoads = Math.max(this.smallLoads, this.denseAfter);
  }

  /** The whole pack when it is held in memory as one window (a dense read of a pack that fits one), else undefined. */
  wholeBytes(): Buffer | undefined {
    for (const w of this.large) if (w.start === 0 && w.bytes.length === this.size) return w.bytes;
    return undefined;
  }

  /** WindowOwner: the pool took `window` away to make room for another pack's. */
  dropWindow(window: PooledWindow): void {
    const i = this.large.indexOf(window);
    if (i >= 0) this.large.splice(i, 1);
  }

  private dropLarge(): void {
    for (const w of this.large) this.pool.release(w);
    this.large = [];
  }

  private addLarge(start: number, bytes: Buffer, recyclable: boolean, own?: Buffer): PooledWindow {
    const w: PooledWindow = { start, bytes, used: 0, owner: this, recyclable, ...(own !== undefined ? { own } : {}) };
    this.pool.add(w);
    this.large.unshift(w);
    return w;
  }

  /**
   * Reads from now on in big windows (a pack up to the window size: whole, at the next read), as
   * if many small reads had been made: for a caller that knows it will touch most of the pack
   * (a count of every object), which saves reading it twice. With `whole` false, never whole
   * (see `wholeAllowed`).
   */
  preferDense(whole = true): void {
    this.smallLoads = Math.max(this.smallLoads, this.denseAfter);
    this.wholeAllowed = whole;
  }

  /**
   * Returns a buffer and the file offset of its first byte, covering at least
   * `[offset, min(offset + length, size))`.
   *
   * Where a miss reads from: header questions, before the pack is read densely, from 8 KiB header
   * windows; a pack read densely that the pool has room for, whole (unless `wholeAllowed` is
   * false); a span larger than half a
   * small window, by a one-off read (or a large window when reads run forward); else a small
   * window, or a large one when the last misses each read on from the one before (see
   * SEQUENTIAL_RUN). A `scattered` read (a delta base, read for the chain above it) takes a
   * small window or a one-off read, and leaves the run as it was: its place says nothing of
   * where the reader goes next, and a chain's levels, read base first, each run forward of the
   * one below, which took a whole large window (15 MB) per replay when a fetch of 10 commits
   * read through scattered chains of gitoxide.
   */
  view(offset: number, length: number, headerOnly = false, scattered = false): Window {
    if (offset < 0 || offset >= this.size) {
      throw new PackwrightError('PACK_CORRUPT', `${this.path}: offset ${offset} is outside the ${this.size}-byte pack`, { file: this.path, offset });
    }
    const wanted = Math.min(offset + length, this.size);
    const large = this.large;
    const hit = windowCovering(large, offset, wanted);
    if (hit !== undefined) {
      this.pool.touch(hit);
      return hit;
    }
    const smallHit = windowCovering(this.small, offset, wanted);
    if (smallHit !== undefined) return smallHit;
    const dense = this.smallLoads >= this.denseAfter;
    if (headerOnly && !dense && wanted - offset <= HEADER_WINDOW / 2) return this.headerWindow(offset, wanted);
    if (dense && this.wholeAllowed && this.size <= this.windowSize && this.pool.fits(this.size, this)) {
      this.dropLarge();
      this.small = [];
      return this.addLarge(0, this.readInto(this.pool.allocate(this.size), 0, this.size), false);
    }
    if (!dense) this.smallLoads++;
    const span = wanted - offset;
    const largeSize = this.wholeAllowed
      ? Math.min(this.windowSize, Math.max(LARGE_WINDOW_MIN, Math.min(LARGE_WINDOW_MAX, Math.floor(this.pool.budget / 8))))
      : Math.min(this.windowSize, SCATTERED_WINDOW);
    // A scattered read neither counts toward a forward run nor breaks one.
    const forward = offset >= this.lastStart && offset <= this.lastEnd + this.smallSize;
    if (!scattered) this.forwardRun = forward ? this.forwardRun + 1 : 0;
    const kind = !scattered && this.forwardRun >= SEQUENTIAL_RUN && span <= largeSize / 2 ? LARGE : span > this.smallSize / 2 ? ONE_OFF : SMALL;
    let w: Window;
    if (kind === LARGE) {
      // Ramped up as readahead is: a run's first large window reads LARGE_WINDOW_MIN, and each
      // next one that reads on from the last large window twice as much, up to `largeSize`.
      // Reads that run forward through scattered entries (the bases a thin pack names, sorted)
      // took a full window each, 15 MB, to use a few entries of it. The buffer is always one of
      // `capacity` bytes, recycled from window to window: only the pages read into are touched.
      const continues = offset >= this.rampStart && offset <= this.rampEnd + this.smallSize;
      let size = Math.min(largeSize, continues ? this.ramp * 2 : LARGE_WINDOW_MIN);
      while (size < largeSize && span > size / 2) size = Math.min(largeSize, size * 2);
      this.ramp = size;
      // A little before `offset` too, for the bases just behind it: spans up to half the window fit.
      const behind = Math.min(this.smallSize, size >>> 2);
      const start = Math.max(0, Math.floor(offset / behind) * behind - behind);
      const length = Math.min(size, this.size - start);
      const capacity = Math.min(largeSize, this.size);
      while (large.length >= MAX_WINDOWS) this.pool.release(large.pop() as PooledWindow);
      const own = this.pool.allocate(capacity);
      w = this.addLarge(start, this.readInto(own.subarray(0, length), start, length), true, own);
      this.rampStart = start;
      this.rampEnd = start + length;
    } else if (kind === ONE_OFF) {
      w = { start: offset, bytes: this.readInto(Buffer.allocUnsafeSlow(span), offset, span) };
    } else {
      w = this.loadSmall(offset);
    }
    if (!scattered) {
      this.lastStart = w.start;
      this.lastEnd = w.start + w.bytes.length;
    }
    return w;
  }

  /**
   * A small window on a half-window boundary (so any span up to half a window fits in one), first
   * in its LRU. It takes over the buffer of the window it evicts: views of windows never leave
   * this class (readEntryHeader, inflatePrefix and inflate use them and let go), and fresh
   * buffers would cost first-touch faults on every read.
   */
  private loadSmall(offset: number): Window {
    const size = this.smallSize;
    const half = size >>> 1;
    const start = Math.floor(offset / half) * half;
    const length = Math.min(size, this.size - start);
    const reuse = this.small.length >= MAX_SMALL_WINDOWS ? (this.small.pop() as Window).own : undefined;
    const own = reuse ?? Buffer.allocUnsafeSlow(size);
    this.readInto(own, start, length);
    const w = { start, bytes: own.subarray(0, length), own };
    this.small.unshift(w);
    return w;
  }

  /**
   * A window for a header question, from its own small LRU whose buffers are reused: views of
   * these never leave `readEntryHeader` and `inflatePrefix`, so a buffer can be refilled, and a
   * long list of lookups allocates nothing.
   */
  private headerWindow(offset: number, wanted: number): Window {
    const list = this.headerWindows;
    const hit = windowCovering(list, offset, wanted);
    if (hit !== undefined) return hit;
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
   * Reads `length` bytes of the pack at `position` into `buf` (from its start), through the file
   * this PackFile holds: for callers that read the pack their own way (the info table).
   */
  readInto<T extends Uint8Array>(buf: T, position: number, length: number): T {
    readExactly(this.fd, buf, 0, length, position, this.path, 'PACK_TRUNCATED');
    return buf;
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
   * `out` needs `size + 1` bytes of room. Returns the compressed length. `scattered`: see `view`.
   */
  inflate(entryOffset: number, dataOffset: number, size: number, out: Uint8Array, outOffset: number, scattered = false): number {
    // zlib's worst case is about size + size/1000 + a few bytes per block; start there and grow
    // only for streams that are odd (many empty blocks) or damaged.
    let span = size + (size >>> 9) + 64;
    for (;;) {
      const w = this.view(dataOffset, span, false, scattered);
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

