/** Compresses `data` at zlib level `level` (-1 to 9); see `loadReferenceDeflate`. */
export type ReferenceDeflate = (data: Uint8Array, level: number) => Buffer;

/**
 * A deflate that writes the very bytes reference zlib (madler's, 1.2.x and 1.3.x: the one git
 * links on Debian and most systems) writes with `deflateInit(level)`: a 32 KiB window, memory
 * level 8, the default strategy. Node's zlib is Chromium's fork, whose deflate makes other (valid)
 * streams: at level 1 not one of 300 files compressed to the same bytes as Python's zlib 1.2.13
 * (and git), where pako, a port of reference zlib's deflate, matched all 300. Where git's output
 * is to be reproduced byte for byte (the bases `--fix-thin` appends to a pack) this is the one
 * to use; it runs several times slower than Node's, so nothing else does. pako is loaded on the
 * first call for it, so that no other command pays for loading it.
 */
export async function loadReferenceDeflate(): Promise<ReferenceDeflate> {
  const { deflate } = await import('pako');
  return (data, level) => {
    const out = deflate(data, { level: level as -1 | 0 | 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8 | 9 });
    return Buffer.from(out.buffer, out.byteOffset, out.byteLength);
  };
}
