export { PackFile, DEFAULT_WINDOW_SIZE } from './pack-file.js';
export type { PackFileOptions } from './pack-file.js';
export { PackReader } from './pack-reader.js';
export type { PackObject, PackObjectInfo, RefBaseLookup } from './pack-reader.js';
export { DeltaBaseCache, DEFAULT_DELTA_BASE_CACHE_LIMIT } from './delta-base-cache.js';
export type { CachedObject } from './delta-base-cache.js';
export { EntryHeader, parseEntryHeader, encodeEntryHeader, HEADER_INCOMPLETE, MAX_ENTRY_HEADER } from './entry-header.js';
export { parsePackHeader, writePackHeader, PACK_HEADER_LENGTH } from './pack-header.js';
export type { PackHeader } from './pack-header.js';
