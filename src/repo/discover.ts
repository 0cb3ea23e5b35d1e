import { isNotFound } from '../io/read-dir-if-present.js';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { PackwrightError } from '../errors/packwright-error.js';

/** Where a repository's parts are (gitrepository-layout(5)). */
export interface RepositoryLocation {
  /** The git directory: HEAD and per-worktree state (for a linked worktree, `.git/worktrees/<name>`). */
  gitDir: string;
  /** Where objects, refs and config live: the git directory, or what its `commondir` file names. */
  commonDir: string;
  /** The work tree, when the repository is not bare and was found from inside one. */
  workTree: string | undefined;
}

/** A git directory has HEAD, and objects and refs of its own or through `commondir`. */
function isGitDir(dir: string): boolean {
  if (!existsSync(join(dir, 'HEAD'))) return false;
  if (existsSync(join(dir, 'commondir'))) return true;
  return existsSync(join(dir, 'objects')) && existsSync(join(dir, 'refs'));
}

/** The common directory of a git directory (its `commondir` file, relative to it, or itself). */
export function commonDirOf(gitDir: string): string {
  const file = join(gitDir, 'commondir');
  if (!existsSync(file)) return gitDir;
  const target = readFileSync(file, 'utf8').trim();
  return isAbsolute(target) ? target : resolve(gitDir, target);
}

/** The target of a `.git` file (`gitdir: <path>`, relative to the file's directory); undefined for anything else. */
export function gitFileTarget(dotGit: string): string | undefined {
  let text: string;
  try {
    if (!statSync(dotGit).isFile()) return undefined;
    text = readFileSync(dotGit, 'utf8');
  } catch (e) {
    if (!isNotFound(e)) throw e;
    return undefined;
  }
  const m = /^gitdir: (.*)$/m.exec(text);
  if (m?.[1] === undefined) return undefined;
  const target = m[1].trim();
  return isAbsolute(target) ? target : resolve(dirname(dotGit), target);
}

/**
 * Finds the repository for `start` as git does without GIT_DIR (setup.c, discovery): `start`
 * itself when it is a git directory (bare, `.git`, or a linked worktree's), else its `.git` (a
 * directory, or a file saying `gitdir: <path>`), else the same for each parent, never moving up
 * into a directory of GIT_CEILING_DIRECTORIES (absolute paths, `:`-separated) or above one.
 */
export function discoverRepository(start: string, env: Record<string, string | undefined> = process.env): RepositoryLocation {
  let dir = resolve(start);
  // The deepest ceiling that holds the start: the search stops before reaching it.
  const ceiling = (env['GIT_CEILING_DIRECTORIES'] ?? '').split(':')
    .filter((c) => isAbsolute(c))
    .map((c) => resolve(c))
    .filter((c) => dir.startsWith(c === '/' ? '/' : `${c}/`))
    .reduce((a, c) => (c.length > a.length ? c : a), '');
  for (;;) {
    if (isGitDir(dir)) return { gitDir: dir, commonDir: commonDirOf(dir), workTree: undefined };
    const dotGit = join(dir, '.git');
    if (existsSync(dotGit)) {
      const gitDir = statSync(dotGit).isFile() ? gitFileTarget(dotGit) : dotGit;
      if (gitDir !== undefined && isGitDir(gitDir)) return { gitDir, commonDir: commonDirOf(gitDir), workTree: dir };
    }
    const parent = dirname(dir);
    if (parent === dir || (ceiling !== '' && parent.length <= ceiling.length)) break;
    dir = parent;
  }
  throw new PackwrightError('REPO_NOT_FOUND', `not a git repository (or any of the parent directories): ${resolve(start)}`, { file: resolve(start) });
}

/** The git directory for `start` (see `discoverRepository`). */
export function findGitDir(start: string): string {
  return discoverRepository(start).gitDir;
}

/**
 * The git directory a server is asked to serve (git's enter_repo, for upload-pack and
 * receive-pack): `path` itself when `strict`, else the first of `path/.git`, `path`,
 * `path.git/.git` and `path.git` that is a git directory (or a `.git` file naming one);
 * undefined when none is.
 */
export function enterRepository(path: string, strict = false): string | undefined {
  const candidates = strict ? [path] : ['/.git', '', '.git/.git', '.git'].map((suffix) => `${path.length > 1 ? path.replace(/\/+$/, '') : path}${suffix}`);
  for (const candidate of candidates) {
    let isFile = false;
    try {
      const st = statSync(candidate);
      isFile = st.isFile();
      if (!isFile && !(st.isDirectory() && (strict || isGitDir(candidate)))) continue;
    } catch (e) {
      if (!isNotFound(e) && (e as NodeJS.ErrnoException).code !== 'ENOTDIR') throw e;
      continue;
    }
    const dir = (isFile ? gitFileTarget(candidate) : undefined) ?? candidate;
    return isGitDir(dir) ? resolve(dir) : undefined;
  }
  return undefined;
}
