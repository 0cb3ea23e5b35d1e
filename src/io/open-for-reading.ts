import { openSync } from 'node:fs';
import { PackwrightError, type ErrorCode } from '../errors/packwright-error.js';

/**
 * Opens `path` for reading. A file that is not there fails with `missingCode` (the caller knows
 * what it was: IDX_MISSING, PACK_MISSING; a refreshing store tells those apart from an object
 * that does not exist), any other system error with IO_ERROR; both name the file.
 */
export function openForReading(path: string, missingCode: ErrorCode, what: string): number {
  try {
    return openSync(path, 'r');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code === 'ENOENT' ? missingCode : 'IO_ERROR';
    throw new PackwrightError(code, `Cannot open ${what} ${path}: ${(e as Error).message}`, { file: path, cause: e });
  }
}
