// Pack generation: count (on the walk layer, ../walk/) → plan → deltas → write.
export { createPack } from './create-pack.js';
export type { CreatePackOptions, CreatePackResult, CreatePackStats, CreatePackPhase } from './create-pack.js';
export { planPack, Entry } from './pack-plan.js';
export type { PackPlan, PlanOptions } from './pack-plan.js';
export type { PackSink } from './write-pack.js';
export { objectsOfPacks } from './pack-list.js';
export type { PackListOptions } from './pack-list.js';
export { repackMultiPackIndex } from './repack-multi-pack-index.js';
export { multiPackBitmap } from './multi-pack-bitmap.js';
export type { MultiPackBitmapOptions } from './multi-pack-bitmap.js';
export type { MidxRepackOptions, MidxRepackResult } from './repack-multi-pack-index.js';
export { packSettings } from './pack-settings.js';
export { PackProgress } from './pack-progress.js';
