import type { Digester } from '../hash/digester.js';
import { PackwrightError } from '../errors/packwright-error.js';
import type { PackSource } from './pack-source.js';

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
export class ScanWindow {
  buf: Buffer;
  /** Pack offset of `buf[0]`. */
  start = 0;
  /** Valid bytes in `buf`. */
  end = 0;
  eof = false;
  private flushedUpTo = 0;
  private sealed = false;

  constructor(
    private readonly source: PackSource,
    private readonly hash: Digester,
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

  /** Bytes up to `readUpTo` were put in the (whole) buffer by another thread. */
  adoptRead(readUpTo: number): void {
    if (readUpTo > this.end) this.end = Math.min(readUpTo, this.buf.length);
    if (this.end === this.buf.length) this.eof = true;
  }

  /**
   * The pack ended (trailer flushed): what follows is not part of it, and is neither hashed nor
   * written.
   */
  seal(): void {
    this.sealed = true;
  }

  /** Hashes (and sinks) everything before `pos`. */
  flush(pos: number, hash = true): void {
    if (this.sealed || pos <= this.flushedUpTo) return;
    const bytes = this.buf.subarray(this.flushedUpTo - this.start, pos - this.start);
    if (hash) this.hash.update(bytes);
    this.sink?.(bytes);
    this.flushedUpTo = pos;
  }

  /**
   * Moves over bytes a helper thread has scanned from the file (a pack not held in memory): they
   * are read again here only to be hashed, a window at a time. False if the input ends first.
   */
  async skipTo(pos: number): Promise<boolean> {
    while (this.start + this.end < pos && !this.eof) await this.fill(this.start + this.end, 1);
    return this.start + this.end >= pos;
  }

  /**
   * Slides the window to start at `pos` (with room for `need` bytes) and reads until `atLeast`
   * bytes are there (default `need`) or input ends. A stream gives what it has: a caller that can
   * use fewer bytes than it would like asks for `atLeast` less, so that the last entries of a pack
   * whose sender keeps the connection open are not held up waiting for bytes that never come.
   */
  async fill(pos: number, need: number, atLeast = need): Promise<void> {
    this.flush(pos);
    if (this.whole !== undefined) {
      // Read ahead in steps; the buffer already has room for the whole input.
      const want = Math.min(this.buf.length, Math.max(pos + need, this.end + WINDOW));
      while (this.end < want && !this.eof) {
        const to = Math.min(want, this.end + WINDOW);
        this.whole.claim?.(this.end, to);
        // The buffer holds the pack from offset 0: read positionally (helpers may have filled
        // parts of it already, see adoptRead).
        const got = await this.source.read(this.buf, this.end, to - this.end, this.end);
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
    while (this.end < atLeast && !this.eof) {
      const got = await this.source.read(this.buf, this.end, this.buf.length - this.end);
      if (got === 0) this.eof = true;
      this.end += got;
      if (this.max !== undefined && this.start + this.end > this.max) {
        throw new PackwrightError('PACK_TOO_LARGE', `${this.name}: pack exceeds maximum allowed size (${this.max} bytes)`, { file: this.name, offset: this.max });
      }
    }
  }
}
