import { readSync } from 'node:fs';
import { PackwrightError, type ErrorCode } from '../errors/packwright-error.js';

/**
 * Reads exactly `length` bytes of the file open as `fd`, from file position `position`, into
 * `buf[at..at+length)`. `readSync` may return fewer bytes than asked (and does, for large reads
 * and on some file systems), so it loops; a file that ends first fails with `code` (the caller
 * knows what a short file means: a cut index is IDX_CORRUPT, a cut pack PACK_TRUNCATED), naming
 * the file and the offset where it ended. An error from the system is IO_ERROR, naming the file.
 */
export function readExactly(fd: number, buf: Uint8Array, at: number, length: number, position: number, file: string, code: ErrorCode): void {
  let done = 0;
  while (done < length) {
    let got: number;
    try {
      got = readSync(fd, buf, at + done, length - done, position + done);
    } catch (e) {
      throw new PackwrightError('IO_ERROR', `${file}: cannot read ${length} bytes at offset ${position}: ${(e as Error).message}`, { file, offset: position + done, cause: e });
    }
    if (got === 0) {
      throw new PackwrightError(code, `${file}: early EOF at offset ${position + done} (reading ${length} bytes at offset ${position})`, { file, offset: position + done });
    }
    done += got;
  }
}
