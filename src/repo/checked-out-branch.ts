// Which work tree has a branch checked out (git's find_shared_symref over get_worktrees): the main
// one, or a linked one under $GIT_COMMON_DIR/worktrees/<id>. receive-pack (denyCurrentBranch) and
// fetch (no fetching into a checked-out branch) ask it.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { RefStore } from '../refs/ref-store.js';
import type { Repository } from './repository.js';

/** A work tree whose HEAD is a branch (git's struct worktree). */
export interface CheckedOut {
  /** The main work tree of a repository with core.bare unset or true: nothing to update. */
  bare: boolean;
  /** Its top directory. */
  path: string;
  /** Its git directory (the repository's, or `worktrees/<id>` for a linked one). */
  gitDir: string;
}

/** The main work tree's directory: core.worktree, else the directory the git directory sits in. */
export function mainWorktreePath(repo: Repository): string {
  const configured = repo.config.get('core.worktree');
  if (typeof configured === 'string' && configured !== '') return resolve(repo.gitDir, configured);
  return dirname(repo.commonDir);
}

/** A linked work tree's directory: what `worktrees/<id>/gitdir` names, less its `.git`. */
export function linkedWorktreePath(adminDir: string): string | undefined {
  const file = join(adminDir, 'gitdir');
  if (!existsSync(file)) return undefined;
  return dirname(readFileSync(file, 'utf8').trim());
}

/** The work tree whose HEAD is the branch `name` (git's find_shared_symref), main or linked. */
export function checkedOutIn(repo: Repository, name: string): CheckedOut | undefined {
  const head = new RefStore(repo.commonDir, repo.commonDir, repo.refs.hashLength).read('HEAD');
  if (head?.kind === 'symbolic' && head.target === name) {
    // git's is_bare_repository: core.bare unset counts as bare where no work tree was found.
    return { bare: repo.config.getBool('core.bare') !== false, path: mainWorktreePath(repo), gitDir: repo.commonDir };
  }
  let ids: string[] = [];
  try {
    ids = readdirSync(join(repo.commonDir, 'worktrees'));
  } catch {
    return undefined;
  }
  for (const id of ids) {
    const adminDir = join(repo.commonDir, 'worktrees', id);
    const v = new RefStore(adminDir, repo.commonDir, repo.refs.hashLength).read('HEAD');
    const path = linkedWorktreePath(adminDir);
    if (v?.kind === 'symbolic' && v.target === name && path !== undefined) return { bare: false, path, gitDir: adminDir };
  }
  return undefined;
}
