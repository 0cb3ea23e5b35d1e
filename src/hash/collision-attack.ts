import { PackwrightError, type PackwrightErrorOptions } from '../errors/packwright-error.js';
import { toHex } from './hex.js';

/**
 * The error for data that sha1dc flags, in git's words (sha1dc_git.c): "SHA-1 appears to be part of
 * a collision attack: <digest>", the digest being plain SHA-1, as git prints it.
 */
export function collisionAttack(digest: Uint8Array, options: PackwrightErrorOptions = {}): PackwrightError {
  const where = options.file !== undefined ? ` (${options.file}${options.offset !== undefined ? ` at offset ${options.offset}` : ''})` : '';
  return new PackwrightError('COLLISION_ATTACK', `SHA-1 appears to be part of a collision attack: ${toHex(digest)}${where}`, options);
}
