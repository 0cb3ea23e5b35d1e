import { openSync } from 'node:fs';
import { PackwrightError, type ErrorCode } from '../errors/packwright-error.js';

/** The system's words for a failed call, as C's strerror gives them ("No such file or directory"). */
export function systemMessage(e: unknown): string {
  const m = /^[A-Z]+: ([^,]*)/.exec((e as Error).message ?? '');
  const text = m?.[1] ?? String((e as Error).message ?? e);
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/**
 * Opens `path` for reading. A file that is not there fails with `missingCode` (the caller knows
 * what it was: IDX_MISSING, PACK_MISSING; a refreshing store tells those apart from an object
 * that does not exist), any other system error with IO_ERROR; both name the file, in git's words
 * ("could not open '<file>' for reading: No such file or directory").
 */
export function openForReading(path: string, missingCode: ErrorCode): number {
  try {
    return openSync(path, 'r');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code === 'ENOENT' ? missingCode : 'IO_ERROR';
    throw new PackwrightError(code, `could not open '${path}' for reading: ${systemMessage(e)}`, { file: path, cause: e });
  }
}
