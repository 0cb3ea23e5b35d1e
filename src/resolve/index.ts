export { indexPack, defaultThreads } from './index-pack.js';
export type { IndexPackOptions, IndexPackResult, IndexPackPhase } from './index-pack.js';
export { scanPack } from './pack-scan.js';
export type { PackScan, ScanOptions } from './pack-scan.js';
export { resolveDeltas } from './resolve-deltas.js';
export type { ResolveStats, ResolveOptions, ExternalBaseLookup } from './resolve-deltas.js';
export { sortIds } from './sort-ids.js';
export { verifyPack, indexOptionsOf } from './verify-pack.js';
