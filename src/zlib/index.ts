export { Inflater, inflateCodeName, INFLATE_INPUT_ENDED, INFLATE_TOO_LONG, INFLATE_TOO_SHORT, INFLATE_CORRUPT } from './inflater.js';
export { deflate } from './deflate.js';
export { Deflater, deflateBound } from './deflater.js';
export { crc32 } from './crc32.js';
