import { resolve } from 'node:path';
import { enterRepository, Repository, userConfig, type OpenRepositoryOptions } from '../repo/index.js';
import { GitConfig } from '../config/index.js';
import { isPackwrightError, PackwrightError } from '../errors/index.js';
import type { ObjectFormat } from '../hash/index.js';
import type { CommandIO } from './command-io.js';

/** Options that come before the command, as in `git -C <path> --git-dir=<dir> <command>`. */
export interface GlobalOptions {
  cwd: string;
  /** The environment the command sees: the caller's, with what the options set (`--work-tree`, `--no-replace-objects`). */
  env: Readonly<Record<string, string | undefined>>;
  gitDir: string | undefined;
  verbose: boolean;
  /** `-c name=value`, in order. */
  configParameters: string[];
  /** `--shallow-file <file>`: the shallow commits (git upload-pack passes '' for none). */
  shallowFile?: string | undefined;
  /** The repositories the command opened (openRepository): run() closes them when the command ends, so one run in-process leaves no file or thread open. */
  opened: Repository[];
}

export function parseGlobalOptions(argv: string[], io: Pick<CommandIO, 'cwd' | 'env'>): { global: GlobalOptions; rest: string[] } {
  const env = { ...io.env };
  const global: GlobalOptions = { cwd: io.cwd, env, gitDir: io.env['GIT_DIR'], verbose: false, configParameters: [], opened: [] };
  let i = 0;
  for (; i < argv.length; i++) {
    const a = argv[i] as string;
    if (a === '-C') global.cwd = resolve(global.cwd, argv[++i] ?? '.');
    else if (a.startsWith('--git-dir=')) global.gitDir = a.slice(10);
    else if (a === '--git-dir') global.gitDir = argv[++i];
    else if (a === '--verbose') global.verbose = true;
    else if (a === '-c') global.configParameters.push(argv[++i] ?? '');
    else if (a === '--shallow-file') global.shallowFile = argv[++i] ?? '';
    else if (a.startsWith('--shallow-file=')) global.shallowFile = a.slice(15);
    // `--no-replace-objects`: refs/replace/ is not used to read objects; as git, through
    // GIT_NO_REPLACE_OBJECTS, for this command and what it runs.
    else if (a === '--no-replace-objects') env['GIT_NO_REPLACE_OBJECTS'] = '1';
    // git's --work-tree sets GIT_WORK_TREE for the command (and what it runs).
    // git's --namespace sets GIT_NAMESPACE (gitnamespaces(7): what a server shows of its refs).
    else if (a.startsWith('--namespace=')) env['GIT_NAMESPACE'] = a.slice(12);
    else if (a === '--namespace') env['GIT_NAMESPACE'] = argv[++i] ?? '';
    else if (a.startsWith('--work-tree=')) env['GIT_WORK_TREE'] = a.slice(12);
    else if (a === '--work-tree') env['GIT_WORK_TREE'] = argv[++i] ?? '';
    else break;
  }
  return { global, rest: argv.slice(i) };
}

/** Where the repository is: `--git-dir` (or GIT_DIR) against `-C`, else the directory `-C` gives. */
export function repositoryPath(global: GlobalOptions): string {
  return global.gitDir !== undefined ? resolve(global.cwd, global.gitDir) : global.cwd;
}

/** The repository as git finds it: the git directory `--git-dir` names, or a search up from `-C`. */
export function openRepository(global: GlobalOptions, extra: OpenRepositoryOptions = {}): Repository {
  // git lists the pack directory again on every miss; so does the CLI, unless config says otherwise.
  const options: OpenRepositoryOptions = { defaultRefresh: 'on-miss', configParameters: global.configParameters, env: global.env, ...extra };
  const repo = global.gitDir !== undefined ? Repository.openGitDir(resolve(global.cwd, global.gitDir), options) : Repository.open(global.cwd, options);
  global.opened.push(repo);
  return repo;
}

/**
 * A git directory a server command serves (upload-pack, receive-pack, http-backend, serve), opened
 * with the command line's configuration; its store lists the packs again on a miss, so a
 * long-lived one sees what others push or repack. `env` replaces the command's environment.
 */
export function openServedGitDir(global: GlobalOptions, gitDir: string, env: Readonly<Record<string, string | undefined>> = global.env): Repository {
  return Repository.openGitDir(gitDir, { defaultRefresh: 'on-miss', configParameters: global.configParameters, env });
}

/**
 * upload-pack's and receive-pack's `<directory>`, entered as git's enter_repo does (`strict`: no
 * `.git` tried), opened, and closed with the command; git's words when it is no repository.
 */
export function enterServedRepository(global: GlobalOptions, dir: string, strict: boolean): Repository {
  const gitDir = enterRepository(dir.startsWith('/') ? dir : `${global.cwd}/${dir}`, strict);
  if (gitDir === undefined) throw new PackwrightError('REPO_NOT_FOUND', `'${dir}' does not appear to be a git repository`);
  const repo = openServedGitDir(global, gitDir);
  global.opened.push(repo);
  return repo;
}

/**
 * The repository, or undefined outside one: index-pack and verify-pack work on pack files alone
 * and take only defaults (the object format, a pack directory) from a repository when there is one.
 */
export function tryOpenRepository(global: GlobalOptions): Repository | undefined {
  try {
    return openRepository(global);
  } catch (e) {
    // Outside a repository these commands work on files alone; any other failure is the user's to see.
    if (isPackwrightError(e, 'REPO_NOT_FOUND')) return undefined;
    throw e;
  }
}

/** An `--object-format=` value, as git checks it. */
export function objectFormatOption(value: string): ObjectFormat {
  if (value !== 'sha1' && value !== 'sha256') throw new PackwrightError('INVALID_ARGUMENT', `unknown hash algorithm '${value}'`);
  return value;
}

/**
 * The configuration of a command that runs outside a repository (clone, ls-remote with a URL): the
 * system and global files, then its `-c name=value` options, as git reads them.
 */
export function configOutsideRepository(global: GlobalOptions): GitConfig {
  const config = userConfig({ ...global.env });
  for (const p of global.configParameters) config.addParameter(p);
  return config;
}

/** The `-c name=value` options alone, for commands that run outside a repository. */
export function configFromParameters(parameters: readonly string[]): GitConfig {
  const config = new GitConfig();
  for (const p of parameters) config.addParameter(p);
  return config;
}
