export { unpackObjects } from './unpack-objects.js';
export type { UnpackObjectsOptions, UnpackObjectsResult } from './unpack-objects.js';
