/**
 * File access shared by every format: exact positioned reads and atomic writes.
 *
 * Why packwright reads through several windows rather than one: each reader sees a different
 * access pattern, and on these machines fresh memory costs a page fault per 4 KiB (the first-touch
 * cost, memory/index.ts) while a `pread` costs ~5 µs, so each picks the cheapest of the two:
 * - `PackFile` (random access for the store): small reused windows for lookups, 8 KiB windows
 *   for header questions, and the whole pack (or 1 GiB windows) once reads cover most of it;
 * - `buildInfoTable` (one pass over a pack, back to front): one 256 KiB window that stays in the
 *   CPU cache between the read and the parsing;
 * - the resolver in index-pack (entries of a subtree, near each other): 128 KiB blocks per thread
 *   when the pack is not held in memory;
 * - pass 1 of index-pack (a stream, front to back): `ScanWindow`, or the whole pack in shared memory;
 * - `PackIndex` (a large `.idx`): sections read whole on demand, single ids by small reads before that.
 */
export { readExactly } from './read-exactly.js';
export { openForReading, systemMessage } from './open-for-reading.js';
export { readFileIfPresent } from './read-file-if-present.js';
export { isNotFound, readDirIfPresent } from './read-dir-if-present.js';
export { fileStamp, stampAge } from './file-stamp.js';
export { nodeStream } from './node-stream.js';
export { realpathForgiving } from './realpath-forgiving.js';
export { writeFileAtomic, writeTemporaryFile, temporaryPathBeside } from './write-file-atomic.js';
export { writeFully } from './write-fully.js';
