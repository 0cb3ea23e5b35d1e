export { OBJ_COMMIT, OBJ_TREE, OBJ_BLOB, OBJ_TAG, TYPE_NAMES, TYPE_NAME_BYTES, typeName, typeNumber } from './object-type.js';
export type { ObjectType } from './object-type.js';
export { TreeCursor, parseTree, formatTree, modeType, modeObjectType, canonicalMode } from './tree.js';
export type { TreeEntry } from './tree.js';
export { parseCommit, parseTag } from './commit.js';
export type { CommitHeader, TagHeader } from './commit.js';
