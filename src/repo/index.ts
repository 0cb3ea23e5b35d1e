export { Repository, repositoryConfig } from './repository.js';
export type { OpenRepositoryOptions } from './repository.js';
export { discoverRepository, findGitDir, commonDirOf } from './discover.js';
export type { RepositoryLocation } from './discover.js';
