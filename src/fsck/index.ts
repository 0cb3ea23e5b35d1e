export { fsck, FSCK_ERROR_OBJECT, FSCK_ERROR_REACHABLE, FSCK_ERROR_PACK, FSCK_ERROR_REFS, FSCK_ERROR_COMMIT_GRAPH, FSCK_ERROR_MULTI_PACK_INDEX } from './fsck.js';
export type { FsckOptions, FsckResult, FsckMessage, FsckMessageKind } from './fsck.js';
export { ObjectChecker } from './pack-checker.js';
export type { ObjectFinding, CheckFindings } from './pack-checker.js';
export { addSkipListFile, fsckRulesFromConfig } from './config-rules.js';
export { indexPackChecks } from './index-pack-checks.js';
export type { IndexPackCheckOptions } from './index-pack-checks.js';
