// The layout of a pack index (gitformat-pack, "pack-*.idx files"), shared by its reader, its
// writers and the entry listing.

/** The first word of a v2 (and later) index: "\377tOc", which no v1 fan-out can start with. */
export const IDX_V2_MAGIC = 0xff744f63;
/** Header bytes of a v2 index: the magic and the version. */
export const IDX_V2_HEADER_LENGTH = 8;
/** The fan-out table: 256 cumulative counts, one by first byte of the id. */
export const IDX_FANOUT_LENGTH = 1024;
/** In a v2 index's 32-bit offset table, the high bit marks an index into the 64-bit offset table. */
export const IDX_LARGE_OFFSET = 0x80000000;
/** The rest of such a word: which 64-bit offset it names. */
export const IDX_LARGE_INDEX_MASK = 0x7fffffff;
/** The largest offset a v2 index stores in 32 bits. */
export const IDX_MAX_SMALL_OFFSET = 0x7fffffff;
