// Differences: between two trees (git diff-tree's raw changes).
export { diffTrees } from './diff-trees.js';
export type { TreeChange, DiffTreesOptions } from './diff-trees.js';
