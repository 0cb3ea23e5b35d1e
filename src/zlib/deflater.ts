import type { NativeHandle } from './inflater.js';
import { nodeZlib, Z_DEFAULT_COMPRESSION, Z_FINISH } from './node-zlib.js';

/**
 * Room enough for any deflate of `n` bytes: zlib's deflateBound for the default window and memory
 * level (n + n/4096 + n/16384 + n/2^25 + 13) plus the zlib wrapper (2-byte header, 4-byte Adler-32).
 */
export function deflateBound(n: number): number {
  return n + Math.floor(n / 4096) + Math.floor(n / 16384) + Math.floor(n / 33554432) + 13 + 6;
}

/**
 * Compresses many small buffers with one native zlib handle, reset between streams, as `Inflater`
 * does for inflate (see there, and docs/ARCHITECTURE.md): `deflateSync` makes and closes a handle per call,
 * ~15 µs each, which for a pack of 200k recompressed objects is seconds. Falls back to
 * `deflateSync` when the internals are absent.
 */
export class Deflater {
  private handle: NativeHandle | undefined;
  private state: Uint32Array | undefined;
  /** Whether the native handle was asked for yet (it is made at the first deflate, with node:zlib). */
  private opened = false;
  private failed: string | undefined;
  private out: Buffer = Buffer.allocUnsafeSlow(64 * 1024);

  constructor(readonly level: number = Z_DEFAULT_COMPRESSION) {}

  private open(): NativeHandle | undefined {
    this.opened = true;
    try {
      const stream = new (nodeZlib().Deflate)({ level: this.level }) as unknown as { _handle?: NativeHandle; _writeState?: Uint32Array };
      if (typeof stream._handle?.writeSync === 'function' && typeof stream._handle.reset === 'function' && stream._writeState instanceof Uint32Array) {
        this.handle = stream._handle;
        this.state = stream._writeState;
        this.handle.onerror = (message: string) => {
          this.failed = message;
        };
      }
    } catch {
      // zlib's internals are not there (another Node): deflateSync is used instead.
      this.handle = undefined;
    }
    return this.handle;
  }

  /**
   * The zlib stream of `data[start..end)`: a view of an internal buffer, valid until the next call
   * (copy it to keep it).
   */
  deflate(data: Uint8Array, start = 0, end = data.length): Buffer {
    const handle = this.opened ? this.handle : this.open();
    const n = end - start;
    if (handle === undefined) return nodeZlib().deflateSync(data.subarray(start, end), { level: this.level });
    const bound = deflateBound(n);
    if (this.out.length < bound) this.out = Buffer.allocUnsafeSlow(Math.max(bound, this.out.length * 2));
    handle.reset();
    this.failed = undefined;
    handle.writeSync(Z_FINISH, data, start, n, this.out, 0, bound);
    const state = this.state as Uint32Array;
    const outLeft = state[0] as number;
    const inLeft = state[1] as number;
    if (this.failed !== undefined || inLeft !== 0 || outLeft === 0) {
      // Cannot happen within deflateBound; the documented path is the safe answer if it does.
      this.handle?.close();
      this.handle = undefined;
      return nodeZlib().deflateSync(data.subarray(start, end), { level: this.level });
    }
    return this.out.subarray(0, bound - outLeft);
  }

  /** Frees the native zlib handle. */
  close(): void {
    this.handle?.close();
    this.handle = undefined;
  }
}
