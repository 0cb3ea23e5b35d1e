/**
 * packwright: a git object database and pack engine. The main entry re-exports the everyday API;
 * each concept also has its own subpath (`packwright/odb`, `packwright/resolve`, `packwright/pack`, …).
 */
export { Store, StoreHandle, forEachObject, forEachObjectAsync, objects } from './odb/index.js';
export type { StoredObject, ObjectInfo, OpenStoreOptions, ObjectLocation, InfoRequest, PrefixMatch, ObjectHeader, RefreshPolicy, StoreCounters } from './odb/index.js';
export { indexPack, verifyPack, defaultThreads } from './resolve/index.js';
export type { IndexPackOptions, IndexPackResult, IndexPackPhase } from './resolve/index.js';
export { RefStore, resolveRevision } from './refs/index.js';
export type { RefEntry, RefValue, RevisionContext } from './refs/index.js';
export { Repository } from './repo/index.js';
export type { OpenRepositoryOptions, TreeEntryObject, TreeDiffEntry, UpdateRefRequest, LogOptions } from './repo/index.js';
export { GitConfig } from './config/index.js';
export { PackwrightError, isPackwrightError } from './errors/index.js';
export type { ErrorCode } from './errors/index.js';
export { hashObject, toHex, fromHex } from './hash/index.js';
export type { ObjectFormat } from './hash/index.js';
export { typeName, typeNumber } from './objects/index.js';
export type { ObjectType, CommitObject, TagObject, Person, NewCommit, NewTag, NewTreeEntry } from './objects/index.js';
export { parsePerson, formatPerson } from './objects/index.js';
export { fsck } from './fsck/index.js';
export type { FsckOptions, FsckResult, FsckMessage } from './fsck/index.js';
export { unpackObjects } from './unpack/index.js';
export type { UnpackObjectsOptions, UnpackObjectsResult } from './unpack/index.js';
