export { ObjectStore, StorePack, notFound, objectFormatOf } from './object-store.js';
export type { StoredObject, ObjectInfo, OpenStoreOptions, ObjectLocation, InfoRequest, StoreSnapshot } from './object-store.js';
export { forEachObject, onlyPack } from './all-objects.js';
export { readAlternates } from './alternates.js';
