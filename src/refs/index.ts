export { resolveRevision, readRef } from './resolve-revision.js';
