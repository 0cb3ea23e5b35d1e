export { applyDelta, readDeltaHeader, DeltaFormatError } from './apply-delta.js';
export type { DeltaHeader } from './apply-delta.js';
