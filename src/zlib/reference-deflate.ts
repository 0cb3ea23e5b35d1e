import { deflateBound } from './deflater.js';

/** Compresses `data` at zlib level `level` (-1 to 9); see `loadReferenceDeflate`. */
export type ReferenceDeflate = (data: Uint8Array, level: number) => Buffer;

/** The fields of pako's z_stream this module drives (pako/lib/zlib/zstream.js). */
interface PakoStream {
  input: Uint8Array | null;
  next_in: number;
  avail_in: number;
  output: Uint8Array | null;
  next_out: number;
  avail_out: number;
  /** The deflate state: its window and hash chains, zero in a new stream. */
  state: { window: Uint8Array; prev: Uint16Array };
}

/** pako's port of zlib's deflate.c, driven as zlib's own API is (pako/lib/zlib/deflate.js). */
interface PakoEngine {
  deflateInit2(strm: PakoStream, level: number, method: number, windowBits: number, memLevel: number, strategy: number, legacyHash: boolean): number;
  deflateReset(strm: PakoStream): number;
  deflate(strm: PakoStream, flush: number): number;
}

const Z_OK = 0;
const Z_STREAM_END = 1;
const Z_FINISH = 4;
const Z_DEFLATED = 8;
const Z_DEFAULT_STRATEGY = 0;
/** pako 2.2's hash choice: zlib's own, whose output git's is (the other, faster one makes Chromium zlib's). */
const LEGACY_HASH = true;
/** The output buffer git's write_compressed (index-pack) and loose-object writer deflate into. */
const GIT_OUTPUT_CHUNK = 4096;

/**
 * A deflate that writes the very bytes reference zlib (madler's, 1.2.x and 1.3.x: the one git
 * links on Debian and most systems) writes with `deflateInit(level)`: a 32 KiB window, memory
 * level 8, the default strategy. Node's zlib is Chromium's fork, whose deflate makes other (valid)
 * streams: at level 1 not one of 300 files compressed to the same bytes as Python's zlib 1.2.13
 * (and git), where pako, a port of reference zlib's deflate, matched all 300. Where git's output
 * is to be reproduced byte for byte (the bases `--fix-thin` appends to a pack) this is the one
 * to use; it runs several times slower than Node's, so nothing else does. pako is loaded on the
 * first call for it, so that no other command pays for loading it.
 *
 * One stream per level is kept and reset between objects (zlib's deflateReset, and the window
 * cleared: the same output as a new stream). pako's own `deflate()` builds a stream per call, ~300 KB of tables
 * allocated and cleared: for the small trees and blobs a thin pack's bases mostly are, that was a
 * fifth of the time (39 bases of git.git, 514 KB: 95 ms).
 */
export async function loadReferenceDeflate(): Promise<ReferenceDeflate> {
  const [engine, ZStream] = await Promise.all([
    import('pako/lib/zlib/deflate.js').then((m) => m.default as PakoEngine),
    import('pako/lib/zlib/zstream.js').then((m) => m.default as new () => PakoStream),
  ]);
  const streams = new Map<number, PakoStream>();
  return (data, level) => {
    let strm = streams.get(level);
    if (strm === undefined) {
      strm = new ZStream();
      if (engine.deflateInit2(strm, level, Z_DEFLATED, 15, 8, Z_DEFAULT_STRATEGY, LEGACY_HASH) !== Z_OK) throw new RangeError(`bad zlib compression level ${level}`);
      streams.set(level, strm);
    } else {
      engine.deflateReset(strm);
      // As new: zlib's deflateReset clears the hash heads but leaves the window's old bytes, which
      // matches near the end of the next input can reach (zlib zeroes past the data it reads,
      // pako's new arrays are zero). Left stale, a 158 KB text came out other than git's.
      strm.state.window.fill(0);
      strm.state.prev.fill(0);
    }
    const out = Buffer.allocUnsafe(deflateBound(data.length));
    strm.input = data;
    strm.next_in = 0;
    strm.avail_in = data.length;
    strm.output = out;
    strm.next_out = 0;
    try {
      // Output given 4 KiB at a time, as git's index-pack (and its loose objects) give it: a
      // stored block (level 0) ends where the output room does.
      for (;;) {
        strm.avail_out = Math.min(GIT_OUTPUT_CHUNK, out.length - strm.next_out);
        const status = engine.deflate(strm, Z_FINISH);
        if (status === Z_STREAM_END) return out.subarray(0, strm.next_out);
        if (status !== Z_OK || strm.next_out === out.length) throw new Error(`reference deflate of ${data.length} bytes failed (status ${status})`);
      }
    } finally {
      // The stream outlives the call: it keeps no reference to the caller's bytes.
      strm.input = null;
      strm.output = null;
    }
  };
}
