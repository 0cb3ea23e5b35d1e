import { ftruncateSync, readSync } from 'node:fs';
import type { Readable } from 'node:stream';
import { abortedError, PackwrightError } from '../errors/packwright-error.js';
import { writeFully } from '../io/write-fully.js';
import type { PackSource } from './pack-source.js';

/**
 * How far the spool may run ahead of pass 1's own reading before it stops taking input (the
 * sender then waits, as it would for a reader that is busy). Helpers scan at most a few regions
 * ahead of the main thread (parallel-scan.ts), so more would only hold input nobody reads yet; it
 * also bounds what a sender can make us write past the end of a pack before the scan finds it.
 */
const AHEAD = 64 << 20;

/**
 * A received pack (a stream: stdin, a socket, an HTTP body) written to the temporary pack file as
 * fast as it arrives, ahead of pass 1, so that helper threads can scan regions of it from the file
 * while the main thread is still scanning earlier ones (a parallel pass 1 for a stream, as files
 * have). Pass 1 reads it back from the file (`read`, from the page cache) and hashes it there.
 *
 * Input is taken as 'data' events and the stream paused once the scan is over (`stop`): whatever
 * follows the pack stays in the stream for its next reader, except what arrived before the scan
 * reached the trailer, which `stop` returns as it cuts the file back to the pack.
 */
export class StreamSpool implements PackSource {
  /** Bytes written to the file so far. */
  received = 0;
  private readAt = 0;
  private ended = false;
  private failure: unknown;
  private paused = false;
  private stopped = false;
  private wake: (() => void) | undefined;
  private readonly onData = (chunk: Buffer): void => this.take(chunk);
  private readonly onEnd = (): void => this.finishInput();
  private readonly onError = (e: unknown): void => {
    this.failure = e;
    this.finishInput();
  };

  constructor(
    private readonly stream: Readable,
    private readonly fd: number,
    private readonly path: string,
    private readonly options: {
      signal?: AbortSignal | undefined;
      /** Refuse input beyond this many bytes (PACK_TOO_LARGE). */
      maxInputSize?: number | undefined;
      /** The input's name in errors (default: the file's path). */
      name?: string | undefined;
      /** Told after each chunk is in the file (helpers wait for it). */
      onReceived?: ((received: number) => void) | undefined;
    } = {},
  ) {
    stream.on('data', this.onData);
    stream.once('end', this.onEnd);
    // A socket closed without an end: no more input (the scan reports the pack short).
    stream.once('close', this.onEnd);
    stream.once('error', this.onError);
    if (stream.readableEnded) this.ended = true;
    else stream.resume();
  }

  /** Whether input is still being taken (not ended, failed, stopped, or paused 64 MiB ahead). */
  get takingInput(): boolean {
    return !this.ended && !this.paused && !this.stopped;
  }

  private take(chunk: Buffer): void {
    if (this.stopped) return;
    const max = this.options.maxInputSize;
    if (max !== undefined && this.received + chunk.length > max) {
      const name = this.options.name ?? this.path;
      this.failure = new PackwrightError('PACK_TOO_LARGE', `${name}: pack exceeds maximum allowed size (${max} bytes)`, { file: name, offset: max });
      this.finishInput();
      return;
    }
    try {
      writeFully(this.fd, chunk, this.path, this.received);
    } catch (e) {
      this.failure = e;
      this.finishInput();
      return;
    }
    this.received += chunk.length;
    this.options.onReceived?.(this.received);
    if (this.received - this.readAt >= AHEAD) {
      this.paused = true;
      this.stream.pause();
    }
    this.notify();
  }

  private finishInput(): void {
    this.ended = true;
    this.detach();
    this.notify();
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }

  /** Reads the next bytes after those read so far: what is in the file, or waits for more. */
  async read(buf: Uint8Array, offset: number, length: number): Promise<number> {
    for (;;) {
      const ready = this.received - this.readAt;
      if (ready > 0) {
        const n = readSync(this.fd, buf, offset, Math.min(length, ready), this.readAt);
        this.readAt += n;
        if (this.paused && this.received - this.readAt < AHEAD / 2) {
          this.paused = false;
          this.stream.resume();
        }
        return n;
      }
      if (this.failure !== undefined) throw this.failure;
      if (this.ended) return 0;
      await this.arrival();
    }
  }

  private arrival(): Promise<void> {
    const signal = this.options.signal;
    if (signal?.aborted === true) return Promise.reject(abortedError(signal, 'reading the pack'));
    return new Promise<void>((resolve, reject) => {
      const onAbort = (): void => {
        this.wake = undefined;
        reject(abortedError(signal as AbortSignal, 'reading the pack'));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.wake = () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      };
    });
  }

  /**
   * Takes no more input: the pack ended at `packEnd` (or the scan failed, `packEnd` undefined).
   * Returns what arrived after the pack, and cuts the file back to the pack.
   */
  stop(packEnd?: number): Buffer {
    this.stopped = true;
    this.detach();
    if (packEnd === undefined || this.received <= packEnd) return Buffer.alloc(0);
    const trailing = Buffer.allocUnsafe(this.received - packEnd);
    readSync(this.fd, trailing, 0, trailing.length, packEnd);
    ftruncateSync(this.fd, packEnd);
    this.received = packEnd;
    return trailing;
  }

  private detach(): void {
    const s = this.stream;
    s.off('data', this.onData);
    s.off('end', this.onEnd);
    s.off('close', this.onEnd);
    s.off('error', this.onError);
    // Whoever reads the stream next listens for its errors; until then, one (a connection reset
    // after the pack was complete) must not become an uncaught exception.
    if (s.listenerCount('error') === 0) s.on('error', () => undefined);
    if (!this.ended) s.pause();
  }
}
