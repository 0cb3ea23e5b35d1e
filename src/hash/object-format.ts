/** The two object formats git supports (hash-function-transition.txt). */
export type ObjectFormat = 'sha1' | 'sha256';

/** The length in bytes of an object id in `format`: 20 for SHA-1, 32 for SHA-256. */
export function hashLength(format: ObjectFormat): 20 | 32 {
  return format === 'sha1' ? 20 : 32;
}

/** The object format whose ids are `length` bytes long (20 or 32); anything else is INVALID_ARGUMENT. */
export function formatForHashLength(length: number): ObjectFormat {
  if (length === 20) return 'sha1';
  if (length === 32) return 'sha256';
  throw new RangeError(`No object format has ${length}-byte ids`);
}

/**
 * Whether collision detection, when asked for, applies to `format`: sha1dc is SHA-1's (git has none
 * for SHA-256, against which no attack is known).
 */
export function detectsCollisions(format: ObjectFormat, asked: boolean | undefined): boolean {
  return asked === true && format === 'sha1';
}

/** The hash id stored in .rev, .midx and commit-graph headers: 1 = SHA-1, 2 = SHA-256. */
export function formatId(format: ObjectFormat): 1 | 2 {
  return format === 'sha1' ? 1 : 2;
}
