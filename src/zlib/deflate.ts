import zlib from 'node:zlib';

/** zlib-compresses `data`; git uses level 1 for loose objects and 6 (default) in packs. */
export function deflate(data: Uint8Array, level = zlib.constants.Z_DEFAULT_COMPRESSION): Buffer {
  return zlib.deflateSync(data, { level });
}
