import { nodeZlib, Z_DEFAULT_COMPRESSION } from './node-zlib.js';

/** zlib-compresses `data`; git uses level 1 for loose objects and 6 (default) in packs. */
export function deflate(data: Uint8Array, level = Z_DEFAULT_COMPRESSION): Buffer {
  return nodeZlib().deflateSync(data, { level });
}
