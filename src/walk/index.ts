// The walk layer: the numbered object table, the commit walk, tree listing, filters and
// pathspecs, reachability from bitmaps, and the unreachable and promisor sets. rev-list, pack
// generation (create/), fsck's connectivity and unpack-objects' checks build on it.
export { ObjectTable, Flag, nameHash, foldNameHash } from './object-table.js';
export type { SharedTableParts } from './object-table.js';
export { RevWalk } from './rev-walk.js';
export type { MissingAction } from './rev-walk.js';
export { listObjects } from './list-objects.js';
export type { ListVisitor, ListObjectsOptions } from './list-objects.js';
export { locateObjects, locateAdded, LOOSE, NOWHERE } from './locate-objects.js';
export type { ObjectLocations } from './locate-objects.js';
export { walkCommits, walkObjects, walkObjectsSliced, walkObjectsParallel } from './walk-objects.js';
export type { WalkObjectsOptions, WalkedObjects } from './walk-objects.js';
export { walkObjectsWithBitmap, wholeBitmappedPack, checkCommitBitmap } from './bitmap-walk.js';
export type { BitmapWalkOptions, CommitBitmapCheck } from './bitmap-walk.js';
export { normalizeFilterSpec, parseObjectFilter } from './object-filter.js';
export type { ObjectFilter } from './object-filter.js';
export { RevArgs } from './rev-args.js';
export type { RevTip } from './rev-args.js';
export { mergeBases } from './merge-bases.js';
export { isAncestor } from './is-ancestor.js';
export { writeCommitGraph } from './write-commit-graph.js';
export type { WriteCommitGraphOptions, WrittenCommitGraph } from './write-commit-graph.js';
export { verifyStoreCommitGraph } from './verify-store-commit-graph.js';
