import { writeSync } from 'node:fs';
import { PackwrightError } from '../errors/packwright-error.js';

/**
 * Writes all of `data` to the file open as `fd` (at `position`, or where the file stands), looping
 * over short writes. A failure from the system (a full disk, a file-size limit) is IO_ERROR naming
 * the file, so the caller's clean-up runs and the user reads one line about what happened.
 */
export function writeFully(fd: number, data: Uint8Array, file: string, position?: number): void {
  let done = 0;
  try {
    while (done < data.length) done += writeSync(fd, data, done, data.length - done, position === undefined ? null : position + done);
  } catch (e) {
    const reason = (e as Error).message.replace(/^[A-Z]+: ([^,]*).*$/, '$1');
    throw new PackwrightError('IO_ERROR', `unable to write ${file}: ${reason}`, { file, cause: e });
  }
}
