export { Inflater, inflateCodeName, INFLATE_INPUT_ENDED, INFLATE_TOO_LONG, INFLATE_TOO_SHORT, INFLATE_CORRUPT } from './inflater.js';
export { deflate } from './deflate.js';
export { Deflater, deflateBound } from './deflater.js';
