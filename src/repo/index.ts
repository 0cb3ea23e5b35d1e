export { Repository, repositoryConfig } from './repository.js';
export type { OpenRepositoryOptions } from './repository.js';
export { discoverRepository, findGitDir, commonDirOf, gitFileTarget, enterRepository } from './discover.js';
export type { RepositoryLocation } from './discover.js';
export { parseIndexFile } from './index-file.js';
export type { IndexFile, IndexEntry, CacheTreeNode, ResolveUndo } from './index-file.js';
export { setupRepository } from './setup.js';
export { followSymlinks } from './follow-symlinks.js';
export type { FollowResult } from './follow-symlinks.js';
export { replaceRefs } from './replace-refs.js';
export { readShallowFile, shallowFilePath } from './shallow-file.js';
export { sharedFileMode } from './shared-file-mode.js';
// How git compares the paths of repositories, work trees and includes (rev-parse prints them so).
export { realpathForgiving } from '../io/realpath-forgiving.js';
export type { RepositorySetup } from './setup.js';
export { Attributes } from './attributes.js';
export type { AttributeValue } from './attributes.js';
export { convertToGit, convertToWorkTree, textconv } from './convert-to-git.js';
export { committerIdent } from './ident.js';
