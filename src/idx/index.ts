export { PackIndex } from './pack-index.js';
export { writeIndex } from './write-index.js';
export type { IndexEntries, WriteIndexOptions } from './write-index.js';
export { writeRevIndex, readRevIndex } from './rev-index.js';
