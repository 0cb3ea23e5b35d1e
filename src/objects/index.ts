export { parseTree, formatTree, modeType } from './tree.js';
export type { TreeEntry } from './tree.js';
export { parseCommit, parseTag } from './commit.js';
export type { CommitHeader, TagHeader } from './commit.js';
