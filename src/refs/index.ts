export { RefStore } from './ref-store.js';
export type { RefValue, RefEntry } from './ref-store.js';
export { resolveRevision, symbolicFullName, DWIM_RULES } from './resolve-revision.js';
export type { RevisionContext } from './resolve-revision.js';
export { isValidRefname } from './refname.js';
export { approxidate } from './approxidate.js';
export { readReflog, parseReflog } from './reflog.js';
export type { ReflogEntry } from './reflog.js';
export { HiddenRefs } from './hidden-refs.js';
