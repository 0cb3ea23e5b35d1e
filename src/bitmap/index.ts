export { Bitset } from './bitset.js';
export { decodeEwah, EwahFormatError } from './ewah.js';
export type { DecodedEwah } from './ewah.js';
export { PackBitmap } from './pack-bitmap.js';
export type { PackBitmapOptions } from './pack-bitmap.js';
