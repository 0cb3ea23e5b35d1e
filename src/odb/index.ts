export { ObjectStore, StorePack, notFound } from './object-store.js';
export type { StoredObject, ObjectInfo, OpenStoreOptions, ObjectLocation, InfoRequest, StoreSnapshot } from './object-store.js';
export { forEachObject, onlyPack } from './all-objects.js';
export { findGitDir, readObjectFormat, readConfigValue } from './git-dir.js';
export { readAlternates } from './alternates.js';
