export { applyDelta, readDeltaHeader, deltaResultSize, deltaBaseSize, maxDeltaResult, DeltaFormatError } from './apply-delta.js';
export type { DeltaHeader } from './apply-delta.js';
export { DeltaIndex, createDelta } from './create-delta.js';
