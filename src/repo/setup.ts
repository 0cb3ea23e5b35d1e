import { existsSync } from 'node:fs';
import { realpathForgiving } from '../io/realpath-forgiving.js';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { GitConfig } from '../config/git-config.js';
import { PackwrightError } from '../errors/packwright-error.js';
import { commonDirOf, discoverRepository, gitFileTarget } from './discover.js';

/**
 * What git's setup_git_directory decides for a command run in `cwd` (setup.c; the cases t1510
 * lists): where the git directory is, as git would hold it in GIT_DIR, the work tree, the prefix
 * (the current directory inside the work tree), and whether the repository is bare and the current
 * directory inside the git directory or the work tree.
 */
export interface RepositorySetup {
  /** The git directory, absolute. */
  gitDir: string;
  commonDir: string;
  /**
   * GIT_DIR as git's setup leaves it (what `rev-parse --git-dir` prints when set): the value given,
   * `.` or an absolute path when found from inside a git directory, a `.git` file's target; unset
   * for a `.git` directory found from a work tree.
   */
  gitDirVariable: string | undefined;
  /** The work tree, absolute; undefined for a bare repository. */
  workTree: string | undefined;
  /** The current directory relative to the work tree, ending in `/` (undefined at its top or outside it). */
  prefix: string | undefined;
  bare: boolean;
  insideGitDir: boolean;
  insideWorkTree: boolean;
  /** The directory git works in after its setup (the work tree's top, or the current directory). */
  cwd: string;
}


function isInside(dir: string, path: string): boolean {
  const r = relative(realpathForgiving(dir), realpathForgiving(path));
  return r === '' || (!r.startsWith('..') && !isAbsolute(r));
}

function coreBare(commonDir: string): boolean | undefined {
  return GitConfig.read(join(commonDir, 'config')).getBool('core.bare');
}

/**
 * git's repository setup for `cwd`, with `gitDirArg` the GIT_DIR (or `--git-dir`) given, if any,
 * and `workTreeArg` GIT_WORK_TREE. Throws REPO_NOT_FOUND outside a repository.
 */
export function setupRepository(cwd: string, gitDirArg?: string, workTreeArg?: string, env: Record<string, string | undefined> = process.env): RepositorySetup {
  const here = resolve(cwd);
  if (workTreeArg !== undefined && workTreeArg !== '') checkWorkTreePath(resolve(here, workTreeArg));
  if (gitDirArg !== undefined) {
    // setup_explicit_git_dir: the work tree is GIT_WORK_TREE, core.worktree, or (unless bare) here.
    // GIT_DIR may name a `gitdir: <path>` file too (git's read_gitfile).
    const named = resolve(here, gitDirArg);
    const gitDir = gitFileTarget(named) ?? named;
    if (!existsSync(join(gitDir, 'HEAD'))) throw new PackwrightError('REPO_NOT_FOUND', `not a git repository: '${gitDirArg}'`);

    const commonDir = commonDirOf(gitDir);
    const config = GitConfig.read(join(commonDir, 'config'));
    const configured = config.get('core.worktree');
    let workTree: string | undefined;
    if (workTreeArg !== undefined) workTree = resolve(here, workTreeArg);
    else if (typeof configured === 'string') workTree = resolve(gitDir, configured);
    else if (config.getBool('core.bare') !== true) workTree = here;
    let prefix: string | undefined;
    if (workTree !== undefined && isInside(workTree, here)) {
      const r = relative(realpathForgiving(workTree), realpathForgiving(here));
      prefix = r === '' ? undefined : `${r.split(sep).join('/')}/`;
    }
    const insideWorkTree = workTree !== undefined && isInside(workTree, here);
    return {
      // Through a gitdir file, git's idea of GIT_DIR is where the file points.
      gitDir, commonDir, gitDirVariable: gitDir !== named ? gitDir : gitDirArg, workTree, prefix,
      bare: config.getBool('core.bare') === true && workTree === undefined,
      insideGitDir: isInside(gitDir, here), insideWorkTree, cwd: insideWorkTree ? (workTree as string) : here,
    };
  }
  const location = discoverRepository(here, env);
  // setup_discovered_git_dir: with GIT_WORK_TREE set, the git directory found is taken as if
  // GIT_DIR had named it (relative to here, as git passes it on).
  if (workTreeArg !== undefined && workTreeArg !== '') return setupRepository(cwd, relative(here, location.gitDir) || '.', workTreeArg, env);
  const gitDir = location.gitDir;
  const commonDir = location.commonDir;
  if (location.workTree === undefined) {
    // setup_bare_git_dir: found from inside a git directory. GIT_DIR becomes `.` there, or the
    // git directory's real path from a directory below it.
    const at = realpathForgiving(gitDir) === realpathForgiving(here);
    return {
      gitDir, commonDir, gitDirVariable: at ? '.' : realpathForgiving(gitDir), workTree: undefined, prefix: undefined,
      // git goes back to the directory it was started in.
      bare: coreBare(commonDir) === true, insideGitDir: true, insideWorkTree: false, cwd: here,
    };
  }
  const top = location.workTree;
  const dotGit = join(top, '.git');
  const viaFile = gitFileTarget(dotGit);
  if (coreBare(commonDir) === true) {
    // A work tree's .git in a repository configured bare: git takes it as a bare repository.
    return {
      gitDir, commonDir, gitDirVariable: realpathForgiving(here) === realpathForgiving(top) ? (viaFile ?? '.git') : (viaFile ?? realpathForgiving(dotGit)),
      workTree: undefined, prefix: undefined, bare: true, insideGitDir: false, insideWorkTree: false, cwd: here,
    };
  }
  const r = relative(realpathForgiving(top), realpathForgiving(here));
  return {
    gitDir, commonDir, gitDirVariable: viaFile, workTree: top, prefix: r === '' ? undefined : `${r.split(sep).join('/')}/`,
    bare: false, insideGitDir: false, insideWorkTree: true, cwd: top,
  };
}

/**
 * git's set_git_work_tree takes the work tree's real path, which may end in a name that does not
 * exist yet, but not pass through one (strbuf_realpath): `/.invalid/work/tree` dies naming `/.invalid`.
 */
function checkWorkTreePath(path: string): void {
  const parts = path.split(sep).filter((p) => p !== '');
  let at: string = sep;
  for (let i = 0; i < parts.length - 1; i++) {
    at = join(at, parts[i] as string);
    if (!existsSync(at)) throw new PackwrightError('INVALID_ARGUMENT', `Invalid path '${at}': No such file or directory`);
  }
}
