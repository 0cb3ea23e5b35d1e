export { Bitset } from './bitset.js';
export { decodeEwah, ewahExtent, EwahFormatError } from './ewah.js';
export type { DecodedEwah, EwahExtent } from './ewah.js';
export { PackBitmap } from './pack-bitmap.js';
export type { PackBitmapOptions } from './pack-bitmap.js';
