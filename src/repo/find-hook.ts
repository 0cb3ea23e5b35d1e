// Where git finds a repository's hooks (githooks(5)): core.hooksPath, else the common directory's hooks/.
import { accessSync, constants, statSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import type { Repository } from './repository.js';

/** The executable hook `name` of `repo`: `core.hooksPath/<name>` (relative to the git directory, where push hooks run), else `hooks/<name>` of the common directory. */
export function findHook(repo: Repository, name: string): string | undefined {
  const hooksPath = repo.config.get('core.hookspath');
  const dir = typeof hooksPath === 'string' && hooksPath !== ''
    ? (isAbsolute(hooksPath) ? hooksPath : join(repo.gitDir, hooksPath.replace(/^~(?=\/)/, repo.env['HOME'] ?? '~')))
    : join(repo.commonDir, 'hooks');
  const path = join(dir, name);
  try {
    if (!statSync(path).isFile()) return undefined;
    accessSync(path, constants.X_OK);
    return path;
  } catch {
    // Missing, or not executable: git runs no hook then (and hints that it ignored it).
    return undefined;
  }
}
