export { PackIndex } from './pack-index.js';
export type { PackIndexOpenOptions, PackOrder } from './pack-index.js';
export type { ObjectIndex } from './object-index.js';
export { compareBytes, fanoutStart, fanoutEnd, lowerBound, findId, findPrefixRange } from './sorted-ids.js';
export type { IdPosition } from './sorted-ids.js';
export { streamIndex, writeIndex } from './write-index.js';
export type { IndexEntries, IndexSink, WriteIndexOptions } from './write-index.js';
export { writeRevIndex, readRevIndex } from './rev-index.js';
export { sortIds } from './sort-ids.js';
