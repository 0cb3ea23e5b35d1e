import { closeSync, fsyncSync, openSync, renameSync, rmSync } from 'node:fs';
import { writeFully } from './write-fully.js';
import { dirname, extname, join } from 'node:path';
import { nodeCrypto } from '../hash/node-crypto.js';

/**
 * Writes `data` to a temporary file beside `path`, fsyncs it and renames it into place, so readers
 * see either nothing or the whole file (a failure leaves nothing visible). `tempPath` names the
 * temporary file, created exclusively: a fixed name such as git's `<file>.lock` makes it a lock
 * too (a second writer fails with EEXIST).
 */
export function writeFileAtomic(path: string, data: Uint8Array, mode = 0o444, tempPath?: string): void {
  const tmp = tempPath ?? temporaryPathBeside(path);
  writeTemporaryFile(tmp, (fd) => writeFully(fd, data, tmp), mode);
  try {
    renameSync(tmp, path);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw e;
  }
}

/**
 * Creates `tmp` exclusively, has `write` fill it, fsyncs and closes it, and returns its name for
 * the caller to rename when it is time (index-pack renames the index last); on failure the file
 * is removed and the error passed on.
 */
export function writeTemporaryFile(tmp: string, write: (fd: number) => void, mode = 0o444): string {
  const fd = openSync(tmp, 'wx', mode);
  try {
    write(fd);
    fsyncSync(fd);
    closeSync(fd);
  } catch (e) {
    try { closeSync(fd); } catch { /* already closed */ }
    rmSync(tmp, { force: true });
    throw e;
  }
  return tmp;
}

/**
 * A fresh temporary name in the directory of `path`, named as git names its own (`tmp_idx_…`,
 * `tmp_pack_…`): one a killed process leaves behind is then git's to clean up (`git prune` removes
 * old `tmp_` files from the object and pack directories).
 */
export function temporaryPathBeside(path: string): string {
  const ext = extname(path).slice(1) || 'file';
  return join(dirname(path), `tmp_${ext}_${process.pid}_${nodeCrypto().randomBytes(4).toString('hex')}`);
}
