import { renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PackwrightError } from '../errors/packwright-error.js';
import { toHex, tryFromHex } from '../hash/hex.js';
import { readFileIfPresent } from '../io/read-file-if-present.js';

/**
 * Where a repository's shallow boundary is written: GIT_SHALLOW_FILE when set (git sets it for
 * `--shallow-file`), else `shallow` in the common directory. An empty name means none (git's
 * upload-pack passes `--shallow-file ''`).
 */
export function shallowFilePath(commonDir: string, env: Readonly<Record<string, string | undefined>>): string {
  return env['GIT_SHALLOW_FILE'] ?? join(commonDir, 'shallow');
}

/**
 * The commits of a shallow file (git's is_repository_shallow): none when the file is not there,
 * one id a line, and git's "bad shallow line" for anything else. Other failures to read it are
 * IO_ERROR naming it.
 */
export function readShallowFile(path: string, hashLength: number): Buffer[] {
  if (path === '') return [];
  const text = readFileIfPresent(path, 'shallow file');
  const ids: Buffer[] = [];
  for (const line of text?.toString('latin1').split('\n') ?? []) {
    if (line === '') continue;
    const id = tryFromHex(line, hashLength);
    if (id === undefined) throw new PackwrightError('INVALID_ARGUMENT', `bad shallow line: ${line}`, { file: path });
    ids.push(id);
  }
  return ids;
}

/**
 * Writes the shallow boundary `ids` to `path` as git does: one id a line, sorted (git keeps its
 * grafts in id order), through `<path>.lock` (exclusive: a lock held by another git fails) and a
 * rename; no ids removes the file, as git does when a repository stops being shallow.
 */
export function writeShallowFile(path: string, ids: Iterable<Uint8Array>): void {
  const lines = [...new Set([...ids].map((id) => toHex(id)))].sort();
  const lock = `${path}.lock`;
  try {
    writeFileSync(lock, lines.map((h) => `${h}\n`).join(''), { flag: 'wx' });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') throw new PackwrightError('REF_LOCKED', `Unable to create '${lock}': File exists.`, { file: lock });
    throw e;
  }
  try {
    if (lines.length === 0) {
      rmSync(path, { force: true });
      rmSync(lock, { force: true });
    } else {
      renameSync(lock, path);
    }
  } catch (e) {
    rmSync(lock, { force: true });
    throw e;
  }
}
