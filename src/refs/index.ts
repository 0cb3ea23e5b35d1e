export { RefStore } from './ref-store.js';
export type { RefValue, RefEntry } from './ref-store.js';
export { resolveRevision } from './resolve-revision.js';
export type { RevisionContext } from './resolve-revision.js';
export { RevArgs } from './rev-args.js';
export type { RevTip } from './rev-args.js';
export { isValidRefname } from './refname.js';
