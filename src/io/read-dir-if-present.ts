import { readdirSync } from 'node:fs';
import { PackwrightError } from '../errors/packwright-error.js';
import { systemMessage } from './open-for-reading.js';

/** Whether a failed file system call failed because the path is not there (ENOENT, or ENOTDIR: a path through a file). */
export function isNotFound(e: unknown): boolean {
  const code = (e as NodeJS.ErrnoException | undefined)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

/**
 * The names in directory `path`, or undefined when there is no such directory. Loose object
 * directories, pack directories and reflog trees are optional in git; any other failure (a
 * permission, an I/O error) is IO_ERROR naming the directory, never an empty listing, which
 * would read as "no objects here".
 */
export function readDirIfPresent(path: string, what: string): string[] | undefined {
  try {
    return readdirSync(path);
  } catch (e) {
    if (isNotFound(e)) return undefined;
    throw new PackwrightError('IO_ERROR', `cannot list ${what} ${path}: ${systemMessage(e)}`, { file: path, cause: e });
  }
}
