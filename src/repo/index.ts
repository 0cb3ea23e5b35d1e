export { Repository, repositoryConfig } from './repository.js';
export type { OpenRepositoryOptions } from './repository.js';
export { discoverRepository, findGitDir, commonDirOf, gitFileTarget } from './discover.js';
export type { RepositoryLocation } from './discover.js';
export { parseIndexFile } from './index-file.js';
export type { IndexFile, IndexEntry, CacheTreeNode, ResolveUndo } from './index-file.js';
export { setupRepository } from './setup.js';
export type { RepositorySetup } from './setup.js';
