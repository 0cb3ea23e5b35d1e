export { MultiPackIndex, MIDX_SIGNATURE, MIDX_HEADER_LENGTH, MIDX_LARGE_OFFSET_NEEDED } from './multi-pack-index.js';
