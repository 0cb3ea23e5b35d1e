export { Bitset } from './bitset.js';
export { decodeEwah, ewahExtent, EwahFormatError } from './ewah.js';
export { encodeEwah } from './ewah-encode.js';
export type { DecodedEwah, EwahExtent } from './ewah.js';
export { PackBitmap } from './pack-bitmap.js';
export { bitmapFileBytes } from './bitmap-bytes.js';
export type { BitmapFileInput } from './bitmap-bytes.js';
export type { PackBitmapOptions } from './pack-bitmap.js';
