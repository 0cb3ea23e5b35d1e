export { applyDelta, readDeltaHeader, deltaResultSize, DeltaFormatError } from './apply-delta.js';
export type { DeltaHeader } from './apply-delta.js';
