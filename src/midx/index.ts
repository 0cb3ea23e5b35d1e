export { MultiPackIndex, MIDX_SIGNATURE, MIDX_HEADER_LENGTH, MIDX_LARGE_OFFSET_NEEDED } from './multi-pack-index.js';
export { writeMultiPackIndex } from './write-multi-pack-index.js';
export type { MidxPack, MidxPackIndex, WriteMidxInput } from './write-multi-pack-index.js';
