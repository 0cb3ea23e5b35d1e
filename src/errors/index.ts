export { PackwrightError, isPackwrightError, serializeError, deserializeError, throwIfAborted } from './packwright-error.js';
export type { ErrorCode, PackwrightErrorOptions, SerializedError } from './packwright-error.js';
