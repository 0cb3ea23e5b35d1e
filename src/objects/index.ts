export { OBJ_COMMIT, OBJ_TREE, OBJ_BLOB, OBJ_TAG, TYPE_NAMES, TYPE_NAME_BYTES, typeName, typeNumber } from './object-type.js';
export type { ObjectType } from './object-type.js';
export { TreeCursor, parseTree, formatTree, findTreeEntry, modeType, modeObjectType, canonicalMode, S_IFMT, S_IFDIR, S_IFREG, S_IFLNK, S_IFGITLINK } from './tree.js';
export type { TreeEntry } from './tree.js';
export { parseCommit, parseTag } from './commit.js';
export type { CommitHeader, TagHeader } from './commit.js';
export { Pathspec, NOT_INTERESTING, INTERESTING, ALL_INTERESTING } from './pathspec.js';
export type { Interest } from './pathspec.js';
