/** The commit-graph file (gitformat-commit-graph): reading one, and git's verification of it against the objects. */
export { CommitGraphFile } from './commit-graph.js';
export { verifyCommitGraph } from './verify-commit-graph.js';
export type { CommitLookup } from './verify-commit-graph.js';
export { CommitGraphChain } from './commit-graph-chain.js';
export { commitGraphBytes, computeGenerations, GENERATION_V1_MAX } from './commit-graph-bytes.js';
export type { GraphCommits } from './commit-graph-bytes.js';
export { bloomFilter, murmur3Seeded, DEFAULT_BLOOM_SETTINGS } from './bloom-filter.js';
export type { BloomSettings } from './bloom-filter.js';
