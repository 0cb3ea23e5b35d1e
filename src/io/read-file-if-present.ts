import { readFileSync } from 'node:fs';
import { PackwrightError } from '../errors/packwright-error.js';
import { systemMessage } from './open-for-reading.js';

/**
 * The bytes of `path`, or undefined when there is no such file: missing, a path through a
 * non-directory, or (unless `directoryIsAbsent` is false) a directory. Configuration and ref files
 * are optional in git; any other failure is IO_ERROR naming the file.
 */
export function readFileIfPresent(path: string, what: string, directoryIsAbsent = true): Buffer | undefined {
  try {
    return readFileSync(path);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR' || (directoryIsAbsent && code === 'EISDIR')) return undefined;
    throw new PackwrightError('IO_ERROR', `cannot read ${what} ${path}: ${systemMessage(e)}`, { file: path, cause: e });
  }
}
