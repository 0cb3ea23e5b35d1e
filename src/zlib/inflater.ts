import type zlib from 'node:zlib';
import { nodeZlib, Z_BUF_ERROR, Z_FINISH, Z_SYNC_FLUSH } from './node-zlib.js';

/**
 * Inflates one zlib stream of known output size and reports exactly how many input bytes it used.
 * Pack entries store no compressed length (gitformat-pack): an entry ends where its zlib stream
 * ends, so the consumed count is what finds the next entry.
 *
 * Fast path: one native zlib handle, reset and reused for every stream. Node's synchronous API
 * closes its handle after every call and allocates output chunks, which costs ~4× on a real pack
 * (docs/ARCHITECTURE.md, measured facts: 0.79 s against 3.1 s for 226k entries). The handle is an internal of `zlib.Inflate`
 * (`_handle`, `_writeState`), so it lives only here, is checked against the documented
 * `inflateSync({ info: true })` path by a test, and that path is used if the internals are absent.
 *
 * The trick: ask for `size + 1` bytes of output with Z_FINISH. "No error and exactly one byte of
 * space left" means the stream ended at exactly `size`; zero left means the data is longer than
 * declared; more than one means it ended short. Truncated input and corrupt data come back as
 * zlib errors ("unexpected end of file", "invalid ...").
 */

/** Result codes of `inflateExact` below zero; zero or more is the consumed input length. */
export const INFLATE_INPUT_ENDED = -1;
/** Inflater result: the stream held more bytes than declared. */
export const INFLATE_TOO_LONG = -2;
/** Inflater result: the stream ended before the declared size. */
export const INFLATE_TOO_SHORT = -3;
/** Inflater result: the compressed data is not a valid zlib stream. */
export const INFLATE_CORRUPT = -4;

/** The native zlib handle inside `zlib.Inflate`/`zlib.Deflate`, driven directly (see Inflater). */
export interface NativeHandle {
  reset(): void;
  writeSync(flush: number, input: Uint8Array, inOff: number, inLen: number, out: Uint8Array, outOff: number, outLen: number): void;
  close(): void;
  onerror: (message: string, errno: number) => void;
}

let available: boolean | undefined;

/** Whether this Node's `zlib.Inflate` has the internals the fast path drives (asked once). */
function nativeAvailable(): boolean {
  if (available === undefined) {
    try {
      const probe = new (nodeZlib().Inflate)() as unknown as { _handle?: NativeHandle; _writeState?: Uint32Array };
      available = typeof probe._handle?.writeSync === 'function' && typeof probe._handle.reset === 'function' && probe._writeState instanceof Uint32Array;
      probe._handle?.close();
    } catch {
      // zlib's internals are not there (another Node): the documented path is used instead.
      available = false;
    }
  }
  return available;
}

/**
 * Inflates zlib streams through Node's native zlib handle driven synchronously, with exact sizes checked:
 * what packs and loose objects need, without a stream per object.
 */
export class Inflater {
  private handle: NativeHandle | undefined;
  private state: Uint32Array | undefined;
  private errorMessage: string | undefined;
  private errorNumber = 0;
  /** zlib's message for the last failure, for error reports. */
  lastError = '';
  private readonly wantNative: boolean;

  constructor(options: { native?: boolean } = {}) {
    // The native handle, and node:zlib with it, is made at the first inflate: a store opened to
    // answer a header question (cat-file -t) inflates nothing.
    this.wantNative = options.native !== false;
  }

  /** Whether this inflater drives zlib's native handle: unless asked not to, or Node lacks the internals. */
  get native(): boolean {
    return this.wantNative && nativeAvailable();
  }

  /** The native handle, made now if there is none yet; undefined when the documented path is used. */
  private open(): NativeHandle | undefined {
    if (!this.native) return undefined;
    this.createHandle();
    return this.handle;
  }

  private createHandle(): void {
    const stream = new (nodeZlib().Inflate)() as unknown as { _handle: NativeHandle; _writeState: Uint32Array };
    const handle = stream._handle;
    // Errors are reported synchronously through this callback during writeSync. We take it over
    // from the stream, which we never use as a stream.
    handle.onerror = (message: string, errno: number) => {
      this.errorMessage = message;
      this.errorNumber = errno;
    };
    this.handle = handle;
    this.state = stream._writeState;
  }

  /**
   * Inflates the zlib stream starting at `input[start]` (and ending no later than `end`) into
   * `out[outOffset .. outOffset + size)`. `out` must have room for `size + 1` bytes from
   * `outOffset`. Returns the number of input bytes consumed, or a negative INFLATE_* code.
   */
  inflateExact(input: Uint8Array, start: number, end: number, out: Uint8Array, outOffset: number, size: number): number {
    const handle = this.handle ?? this.open();
    if (handle === undefined) return this.inflateDocumented(input, start, end, out, outOffset, size);
    const state = this.state as Uint32Array;
    handle.reset();
    this.errorMessage = undefined;
    const inLength = end - start;
    handle.writeSync(Z_FINISH, input, start, inLength, out, outOffset, size + 1);
    if (this.errorMessage !== undefined) return this.recover(handle);
    const outLeft = state[0] as number;
    if (outLeft === 1) return inLength - (state[1] as number);
    return this.wrongLength(outLeft === 0);
  }

  /**
   * After a zlib error the native stream is in an undefined state: the message kept, a new handle
   * made; input that ran out (Z_BUF_ERROR, which Node reports only under Z_FINISH) is
   * INFLATE_INPUT_ENDED, anything else INFLATE_CORRUPT.
   */
  private recover(handle: NativeHandle): number {
    this.lastError = this.errorMessage as string;
    const errno = this.errorNumber;
    handle.close();
    this.createHandle();
    return errno === Z_BUF_ERROR ? INFLATE_INPUT_ENDED : INFLATE_CORRUPT;
  }

  /** A stream that inflated to more (`long`) or fewer bytes than declared. */
  private wrongLength(long: boolean): number {
    this.lastError = long ? 'stream is longer than the declared size' : 'stream ended before the declared size';
    return long ? INFLATE_TOO_LONG : INFLATE_TOO_SHORT;
  }

  /** What the stream inflateStreaming is inside of has consumed and produced so far. */
  private streamed = { consumed: 0, produced: 0 };

  /**
   * `inflateExact` for a stream whose input arrives in pieces, each byte inflated once: with
   * `resume` false it starts the stream at `input[start]`; with `resume` true it goes on with the
   * stream the last call left unfinished, whose start is `input[start]` again (the buffer may have
   * moved; input is read on from what was consumed, output written on after what was produced,
   * in the same `out`). Returns as inflateExact does; INFLATE_INPUT_ENDED means "call again, with
   * `resume`, once more input is there". inflateExact restarts from the stream's first byte each
   * time, which on a 3.8 MB blob arriving 64 KiB at a time inflated 120 MB.
   *
   * The end of the stream is known once input follows it (zlib then stops short of the end of the
   * input); when a stream ends exactly where the input does, this asks for more. In a pack more
   * always follows: the next entry, or the trailer.
   */
  inflateStreaming(input: Uint8Array, start: number, end: number, out: Uint8Array, outOffset: number, size: number, resume: boolean): number {
    const handle = this.handle ?? this.open();
    if (handle === undefined) return this.inflateExact(input, start, end, out, outOffset, size);
    const state = this.state as Uint32Array;
    const s = this.streamed;
    if (!resume) {
      handle.reset();
      s.consumed = 0;
      s.produced = 0;
    }
    this.errorMessage = undefined;
    const inLength = end - start - s.consumed;
    // Z_SYNC_FLUSH: input running out is no error (Z_FINISH would call it one, and Node's binding
    // would not report where the stream stood).
    handle.writeSync(Z_SYNC_FLUSH, input, start + s.consumed, inLength, out, outOffset + s.produced, size + 1 - s.produced);
    if (this.errorMessage !== undefined) return this.recover(handle);
    const outLeft = state[0] as number;
    const inLeft = state[1] as number;
    s.consumed += inLength - inLeft;
    s.produced = size + 1 - outLeft;
    if (outLeft === 0) return this.wrongLength(true);
    if (inLeft === 0) return INFLATE_INPUT_ENDED;
    // Input left over with room to write: the stream ended.
    if (outLeft === 1) return s.consumed;
    return this.wrongLength(false);
  }

  /**
   * Inflates at most `n` bytes from the start of the stream at `input[start]`; returns how many
   * came out (fewer when the stream is shorter), or a negative INFLATE_* code.
   */
  inflatePrefix(input: Uint8Array, start: number, end: number, out: Uint8Array, outOffset: number, n: number): number {
    const handle = this.handle ?? this.open();
    if (handle === undefined) {
      try {
        const all = nodeZlib().inflateSync(input.subarray(start, end), { finishFlush: Z_SYNC_FLUSH });
        const k = Math.min(n, all.length);
        out.set(all.subarray(0, k), outOffset);
        return k;
      } catch (e) {
        this.lastError = (e as Error).message;
        return INFLATE_CORRUPT;
      }
    }
    const state = this.state as Uint32Array;
    handle.reset();
    this.errorMessage = undefined;
    // With Z_FINISH a full output buffer is not an error (Z_BUF_ERROR with no space left).
    handle.writeSync(Z_FINISH, input, start, end - start, out, outOffset, n);
    if (this.errorMessage !== undefined) return this.recover(handle);
    return n - (state[0] as number);
  }

  /** The documented API: slower (allocates, and closes its handle each call) but stable. */
  private inflateDocumented(input: Uint8Array, start: number, end: number, out: Uint8Array, outOffset: number, size: number): number {
    let result: { buffer: Buffer; engine: zlib.Inflate };
    try {
      result = nodeZlib().inflateSync(input.subarray(start, end), {
        info: true,
        chunkSize: Math.max(64, size + 1),
        maxOutputLength: size + 1,
      }) as unknown as { buffer: Buffer; engine: zlib.Inflate };
    } catch (e) {
      const err = e as { code?: string; message?: string };
      this.lastError = err.message ?? String(e);
      if (err.code === 'ERR_BUFFER_TOO_LARGE') return INFLATE_TOO_LONG;
      if (err.code === 'Z_BUF_ERROR') return INFLATE_INPUT_ENDED;
      return INFLATE_CORRUPT;
    }
    const produced = result.buffer.length;
    if (produced !== size) return this.wrongLength(produced > size);
    out.set(result.buffer, outOffset);
    return result.engine.bytesWritten;
  }

  /** Frees the native zlib handle. */
  close(): void {
    this.handle?.close();
    this.handle = undefined;
  }
}

/** What an Inflater result code means, in words for an error message. */
export function inflateCodeName(code: number): string {
  switch (code) {
    case INFLATE_INPUT_ENDED: return 'input ended inside the compressed data';
    case INFLATE_TOO_LONG: return 'inflated data is longer than the declared size';
    case INFLATE_TOO_SHORT: return 'inflated data is shorter than the declared size';
    default: return 'corrupt compressed data';
  }
}
