import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { wildmatch } from '../config/index.js';
import { approxidate, DWIM_RULES, symbolicFullName } from '../refs/index.js';
import { mergeBases } from '../walk/index.js';
import { isPackwrightError, PackwrightError } from '../errors/index.js';
import { parseCommit, S_IFGITLINK, S_IFMT } from '../objects/index.js';
import { Repository, gitFileTarget, parseIndexFile, realpathForgiving, setupRepository, shallowFilePath, type RepositorySetup } from '../repo/index.js';
import { abbrevOption, configuredAbbrev } from './abbrev.js';
import { relativePath } from './relative-path.js';
import type { GlobalOptions } from './global-options.js';
import type { CommandIO } from './command-io.js';
import { isPartialClone, retryFetching } from './lazy-fetch.js';

/** git's local_repo_env: the variables a command in another repository must not inherit. */
const LOCAL_ENV = [
  'GIT_ALTERNATE_OBJECT_DIRECTORIES', 'GIT_CONFIG', 'GIT_CONFIG_PARAMETERS', 'GIT_CONFIG_COUNT', 'GIT_OBJECT_DIRECTORY',
  'GIT_DIR', 'GIT_WORK_TREE', 'GIT_IMPLICIT_WORK_TREE', 'GIT_GRAFT_FILE', 'GIT_INDEX_FILE', 'GIT_NO_REPLACE_OBJECTS',
  'GIT_REPLACE_REF_BASE', 'GIT_PREFIX', 'GIT_INTERNAL_SUPER_PREFIX', 'GIT_SHALLOW_FILE', 'GIT_COMMON_DIR',
];

/** Why a command stops: printed as `fatal: …` (exit 128), or silently with `status`. */
class Stop extends Error {
  constructor(readonly fatal: string | undefined, readonly status = 128) {
    super(fatal ?? '');
  }
}

type PathFormat = 'default' | 'absolute' | 'relative';
type PathDefault = 'unmodified' | 'relative' | 'relative-if-shared' | 'canonical';


/**
 * `git rev-parse`: revisions to ids (`--verify`, `-q`, `--short`, `--symbolic`, `--symbolic-full-name`,
 * `--abbrev-ref`, `^rev`, `A..B`, `rev^@`, `rev^!`, `rev^-N`, `--all`, `--branches`, `--tags`,
 * `--remotes`, `--glob`, `--not`, `--default`), and what git's setup found: `--git-dir`,
 * `--absolute-git-dir`, `--git-common-dir`, `--git-path`, `--path-format`, `--show-toplevel`,
 * `--show-prefix`, `--show-cdup`, `--is-bare-repository`, `--is-inside-git-dir`,
 * `--is-inside-work-tree`, `--is-shallow-repository`, `--show-object-format`,
 * `--show-superproject-working-tree`, `--resolve-git-dir`, `--local-env-vars`, `--sq-quote`,
 * `--since`/`--until` (ISO dates and timestamps). Other flags and file names are passed through, as git does.
 */
export async function revParseCommand(io: CommandIO, global: GlobalOptions, args: string[]): Promise<number> {
  const opened = await fetchPathTrees(io, global, args);
  const out: string[] = [];
  try {
    const status = revParse(io, global, args, out, opened);
    io.stdout.write(out.join(''));
    return status;
  } catch (e) {
    io.stdout.write(out.join(''));
    if (e instanceof Stop) {
      if (e.fatal !== undefined) io.stderr.write(`fatal: ${e.fatal}\n`);
      return e.status;
    }
    throw e;
  }
}

/** The repository rev-parse reads (with --git-dir, that one; else the one around the working directory). */
function openRevParseRepository(global: GlobalOptions): Repository {
  const options = { configParameters: global.configParameters, env: global.env };
  const repo = global.gitDir !== undefined ? Repository.openGitDir(resolve(global.cwd, global.gitDir), options) : Repository.open(global.cwd, options);
  global.opened.push(repo);
  return repo;
}

/**
 * git's lazy fetch for `<rev>:<path>` arguments in a partial clone: the trees the path goes
 * through are fetched before rev-parse reads them (the command itself reads synchronously, and
 * says in its own words what does not resolve). Returns the repository it opened, for the
 * command to go on with.
 */
async function fetchPathTrees(io: CommandIO, global: GlobalOptions, args: string[]): Promise<Repository | undefined> {
  const names = args.filter((a) => !a.startsWith('-') && a.includes(':')).map((a) => a.replace(/^\^/, ''));
  if (names.length === 0) return undefined;
  let repo: Repository;
  try {
    repo = openRevParseRepository(global);
  } catch {
    // Not in a repository: the command says so, or needs none.
    return undefined;
  }
  if (!isPartialClone(repo)) return repo;
  for (const name of names) {
    try {
      await retryFetching(io, repo, () => repo.resolve(name));
    } catch {
      // What does not resolve is the command's to report, in git's words.
    }
  }
  return repo;
}

function revParse(io: CommandIO, global: GlobalOptions, args: string[], out: string[], opened?: Repository): number {
  const puts = (s: string): void => { out.push(`${s}\n`); };
  if (args[0] === '--sq-quote') {
    puts(args.slice(1).map((a) => ` ${sq(a)}`).join(''));
    return 0;
  }
  if (args[0] === '-h') {
    io.stdout.write('usage: packwright rev-parse --parseopt [<options>] -- [<args>...]\n   or: packwright rev-parse --sq-quote [<arg>...]\n   or: packwright rev-parse [<options>] [<arg>...]\n');
    return 129;
  }
  const hasDashDash = args.includes('--');
  let setup: RepositorySetup | undefined;
  let repo: Repository | undefined;
  const needSetup = (): RepositorySetup => {
    if (setup === undefined) {
      try {
        setup = setupRepository(global.cwd, global.gitDir, io.env['GIT_WORK_TREE'], io.env);
      } catch (e) {
        if (isPackwrightError(e, 'REPO_NOT_FOUND')) throw new Stop('not a git repository (or any of the parent directories): .git');
        throw e;
      }
    }
    return setup;
  };
  const needRepo = (): Repository => {
    if (repo === undefined) {
      repo = opened ?? openRevParseRepository(global);
      repo.onWarning = (message) => { if (!quiet) io.stderr.write(`warning: ${message}\n`); };
      if (prefixOverride !== undefined) repo.prefix = prefixOverride;
      const s = needSetup();
      // With --git-dir (or GIT_DIR), where the work tree is comes from the setup, not a search.
      if (prefixOverride === undefined && global.gitDir !== undefined) repo.prefix = s.prefix ?? '';
      repo.outsideWorkTree = s.workTree !== undefined && !s.insideWorkTree && !s.insideGitDir;
    }
    return repo;
  };
  if (args.length === 0) {
    needSetup();
    return 0;
  }
  let format: PathFormat = 'default';
  let verify = false, quiet = false, sqOutput = false;
  let filterFlags = true, filterRevs = true, filterNonFlags = true, filterNoRev = true;
  let symbolic: 'none' | 'asis' | 'full' = 'none';
  let abbrevRef: 'none' | 'strict' | 'loose' = 'none';
  let abbrev = 0;
  let reversed = false;
  let asIs = 0;
  let def: string | undefined;
  let revsCount = 0;
  let lastRev: { reversed: boolean; id: Buffer; name: string } | undefined;
  let prefixOverride: string | undefined;
  let shown = 0;
  let endOfOptions = false;
  const show = (s: string): void => {
    // --sq: each word in single quotes, a space after it, no newline (git's show()).
    if (sqOutput) out.push(`'${s.replace(/'/g, "'\\''")}' `);
    else puts(s);
  };
  const printPath = (path: string, def2: PathDefault): void => {
    const s = needSetup();
    const prefix = prefixOverride ?? s.prefix;
    const base = prefix ?? (format !== 'default' || def2 !== 'relative-if-shared' ? s.cwd : undefined);
    const absPrefix = base === undefined ? undefined : isAbsolute(base) ? base : realpathForgiving(join(s.cwd, base));
    if (format === 'default' && def2 === 'unmodified') puts(path);
    else if (format === 'relative' || (format === 'default' && def2 === 'relative')) {
      const p = isAbsolute(path) ? path : realpathForgiving(join(s.cwd, path));
      puts(relativePath(p, absPrefix));
    } else if (format === 'default' && def2 === 'relative-if-shared') {
      puts(relativePath(path, prefix));
    } else {
      puts(realpathForgiving(isAbsolute(path) ? path : join(s.cwd, path)));
    }
  };
  const showRev = (rev: boolean, id: Buffer, name: string): void => {
    const r = needRepo();
    const mark = rev !== reversed ? '^' : '';
    if (symbolic === 'full' || abbrevRef !== 'none') {
      const full = dwimFull(r, name);
      if (full === undefined) return;
      show(`${mark}${abbrevRef !== 'none' ? shortenRef(r, full, abbrevRef === 'strict') : full}`);
    } else if (symbolic === 'asis') {
      show(`${mark}${name}`);
    } else if (abbrev !== 0) {
      show(`${mark}${r.objects.abbreviate(id, abbrev)}`);
    } else {
      show(`${mark}${id.toString('hex')}`);
    }
  };
  const noSingleRev = (): never => {
    if (quiet) throw new Stop(undefined, 1);
    throw new Stop('Needed a single revision');
  };
  const showFile = (arg: string): boolean => {
    if (filterNonFlags && filterNoRev) {
      // git's prefix_filename: the prefix and the name put together as they are.
      show(prefixOverride !== undefined && !arg.startsWith('-') ? `${prefixOverride}${arg}` : arg);
      return true;
    }
    return false;
  };
  const showFlag = (arg: string): boolean => {
    if (filterFlags && filterNoRev) {
      show(arg);
      return true;
    }
    return false;
  };
  const refs = (prefix: string, glob: string | undefined): void => {
    const r = needRepo();
    let pattern: string | undefined;
    if (glob !== undefined) {
      pattern = glob.startsWith('refs/') || prefix === '' ? glob : prefix + glob;
      if (!/[*?[]/.test(glob)) pattern += pattern.endsWith('/') ? '*' : '/*';
    }
    for (const ref of r.refs.list(prefix === '' ? 'refs/' : prefix)) {
      if (pattern !== undefined && !wildmatch(pattern, ref.name)) continue;
      if (filterRevs) showRev(false, ref.id, ref.name);
      shown++;
    }
  };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (asIs > 0) {
      if (showFile(arg) && asIs < 2) verifyFilename(needSetup(), arg, false, prefixOverride ?? needSetup().prefix);
      continue;
    }
    if (!endOfOptions) {
      if (arg === '--local-env-vars') { for (const v of LOCAL_ENV) puts(v); continue; }
      if (arg === '--resolve-git-dir') {
        const dir = args[++i];
        if (dir === undefined) throw new Stop('--resolve-git-dir requires an argument');
        const resolved = resolveGitDir(resolve(global.cwd, dir));
        if (resolved === undefined) throw new Stop(`not a gitdir '${dir}'`);
        puts(resolved === resolve(global.cwd, dir) ? dir : resolved);
        continue;
      }
    }
    const s = needSetup();
    if (arg === '--') {
      asIs = 2;
      if (filterFlags || filterRevs) showFile(arg);
      continue;
    }
    if (!endOfOptions && arg.startsWith('-')) {
      const value = (name: string): string | undefined | null => {
        if (arg === name) return undefined;
        if (arg.startsWith(`${name}=`)) return arg.slice(name.length + 1);
        return null;
      };
      let v: string | undefined | null;
      if (arg === '--git-path') {
        const p = args[++i];
        if (p === undefined) throw new Stop('--git-path requires an argument');
        printPath(gitPath(s, p), 'relative-if-shared');
      } else if (arg === '-n') {
        if (++i >= args.length) throw new Stop('-n requires an argument');
        if (filterFlags && filterRevs) { show(arg); show(args[i] as string); }
      } else if (arg.startsWith('-n')) {
        if (filterFlags && filterRevs) show(arg);
      } else if ((v = value('--path-format')) !== null) {
        if (v === undefined) throw new Stop('--path-format requires an argument');
        if (v === 'absolute') format = 'absolute';
        else if (v === 'relative') format = 'relative';
        else throw new Stop(`unknown argument to --path-format: ${v}`);
      } else if (arg === '--default') {
        def = args[++i];
        if (def === undefined) throw new Stop('--default requires an argument');
      } else if (arg === '--prefix') {
        prefixOverride = args[++i];
        if (prefixOverride === undefined) throw new Stop('--prefix requires an argument');
        if (repo !== undefined) repo.prefix = prefixOverride;
      } else if (arg === '--revs-only') filterNoRev = false;
      else if (arg === '--no-revs') filterRevs = false;
      else if (arg === '--flags') filterNonFlags = false;
      else if (arg === '--no-flags') filterFlags = false;
      else if (arg === '--verify') { filterFlags = false; filterNoRev = false; verify = true; }
      else if (arg === '--quiet' || arg === '-q') quiet = true;
      else if ((v = value('--short')) !== null) {
        filterFlags = false;
        filterNoRev = false;
        verify = true;
        abbrev = v === undefined ? resolveDefaultAbbrev(needRepo()) : Math.max(4, Math.min(parseInt(v, 10) || 0, needRepo().store.hashLength * 2));
      } else if (arg === '--sq') sqOutput = true;
      else if (arg === '--not') reversed = !reversed;
      else if (arg === '--symbolic') symbolic = 'asis';
      else if (arg === '--symbolic-full-name') symbolic = 'full';
      else if ((v = value('--abbrev-ref')) !== null) {
        if (v === undefined || v === 'loose') abbrevRef = 'loose';
        else if (v === 'strict') abbrevRef = 'strict';
        else throw new Stop(`unknown mode for --abbrev-ref: ${v}`);
        if (v === undefined) abbrevRef = needRepo().config.getBool('core.warnAmbiguousRefs') === false ? 'loose' : 'strict';
      } else if (arg === '--all') refs('', undefined);
      else if ((v = value('--branches')) !== null) refs('refs/heads/', v);
      else if ((v = value('--tags')) !== null) refs('refs/tags/', v);
      else if ((v = value('--remotes')) !== null) refs('refs/remotes/', v);
      else if (arg.startsWith('--glob=')) refs('', arg.slice(7));
      else if (arg === '--show-toplevel') {
        if (s.workTree === undefined) throw new Stop('this operation must be run in a work tree');
        printPath(s.workTree, 'unmodified');
      } else if (arg === '--show-superproject-working-tree') {
        const sup = superprojectWorkTree(s);
        if (sup !== undefined) printPath(sup, 'unmodified');
      } else if (arg === '--show-prefix') puts(prefixOverride ?? s.prefix ?? '');
      else if (arg === '--show-cdup') {
        if (!s.insideWorkTree) {
          if (s.workTree !== undefined) puts(s.workTree);
        } else puts('../'.repeat(((prefixOverride ?? s.prefix) ?? '').split('/').length - 1));
      } else if (arg === '--git-dir' || arg === '--absolute-git-dir') {
        let gitdir = s.gitDirVariable;
        const prefix = prefixOverride ?? s.prefix;
        let wanted: PathFormat = format;
        if (arg === '--git-dir') {
          if (gitdir !== undefined) { printPath(gitdir, 'unmodified'); continue; }
          if (prefix === undefined) { printPath('.git', 'unmodified'); continue; }
        } else {
          wanted = 'absolute';
          if (gitdir === undefined && prefix === undefined) gitdir = '.git';
          if (gitdir !== undefined) { puts(realpathForgiving(isAbsolute(gitdir) ? gitdir : join(gitDirBase(global, s), gitdir))); continue; }
        }
        const saved: PathFormat = format;
        format = wanted;
        printPath(join(s.cwd, '.git'), 'canonical');
        format = saved;
      } else if (arg === '--git-common-dir') {
        printPath(commonDirAsGit(s), 'relative-if-shared');
      } else if (arg === '--is-inside-git-dir') puts(String(s.insideGitDir));
      else if (arg === '--is-inside-work-tree') puts(String(s.insideWorkTree));
      else if (arg === '--is-bare-repository') puts(String(s.bare));
      else if (arg === '--is-shallow-repository') puts(String(isShallow(s, io.env)));
      else if (arg.startsWith('--since=') || arg.startsWith('--after=')) show(`--max-age=${dateArg(arg.slice(arg.indexOf('=') + 1))}`);
      else if (arg.startsWith('--before=') || arg.startsWith('--until=')) show(`--min-age=${dateArg(arg.slice(arg.indexOf('=') + 1))}`);
      else if ((v = value('--show-object-format')) !== null) {
        const mode = v ?? 'storage';
        if (mode !== 'storage' && mode !== 'input' && mode !== 'output') throw new Stop(`unknown mode for --show-object-format: ${v}`);
        puts(needRepo().format);
      } else if (arg === '--end-of-options') {
        endOfOptions = true;
        if (filterFlags || filterRevs) showFile(arg);
      } else if (arg.startsWith('--disambiguate=')) {
        for (const id of needRepo().objects.findByPrefix(arg.slice(15), Infinity)) puts(id.toString('hex'));
      } else if (arg === '--parseopt') {
        throw new Stop('--parseopt is not supported by packwright');
      } else if (showFlag(arg) && verify) {
        noSingleRev();
      }
      continue;
    }
    // A revision (or a range, or a parent shorthand), else a file name.
    const r = needRepo();
    const range = tryRange(r, arg);
    if (range !== undefined) {
      for (const x of range) {
        if (verify) { revsCount++; lastRev = x; } else showRev(x.reversed, x.id, x.name);
      }
      continue;
    }
    const neg = arg.startsWith('^');
    const name = neg ? arg.slice(1) : arg;
    let id: Buffer | undefined;
    try {
      id = r.resolve(name);
    } catch (e) {
      // Not a revision: go on (a file name, or "Needed a single revision"); anything else git dies of.
      if (!isPackwrightError(e) || e.code === 'CONFIG_INVALID') throw e;
      // git dies of these at once: no upstream and the like; a reflog too short, silently with -q.
      if (e.code === 'INVALID_ARGUMENT') throw new Stop(e.message);
      if (e.code === 'REFLOG_SHORT') throw new Stop(quiet ? undefined : e.message);
    }
    if (id !== undefined) {
      if (verify) { revsCount++; lastRev = { reversed: neg, id, name }; } else showRev(neg, id, name);
      continue;
    }
    if (verify) noSingleRev();
    if (hasDashDash) throw new Stop(`bad revision '${arg}'`);
    asIs = 1;
    if (!showFile(arg)) continue;
    verifyFilename(s, arg, true, prefixOverride ?? s.prefix, r);
  }
  const showDefault = (): boolean => {
    if (def === undefined || shown > 0) return false;
    let id: Buffer;
    try {
      id = needRepo().resolve(def);
    } catch (e) {
      if (isPackwrightError(e)) return false;
      throw e;
    }
    showRev(false, id, def);
    return true;
  };
  if (verify) {
    if (revsCount === 1 && lastRev !== undefined) showRev(lastRev.reversed, lastRev.id, lastRev.name);
    else if (!(revsCount === 0 && showDefault())) noSingleRev();
  } else {
    showDefault();
  }
  repo?.close();
  return 0;
}

/** `A..B`, `A...B`, `rev^@`, `rev^!`, `rev^-N`: the revisions they stand for, or undefined. */
function tryRange(repo: Repository, arg: string): { reversed: boolean; id: Buffer; name: string }[] | undefined {
  const resolveOr = (rev: string): Buffer | undefined => {
    try {
      return repo.resolve(rev);
    } catch (e) {
      if (isPackwrightError(e)) return undefined;
      throw e;
    }
  };
  // `..` alone is a path (the parent directory), not HEAD..HEAD.
  if (arg === '..') return undefined;
  // A..B: B and ^A; A...B: B, A and ^ each merge base (an empty side is HEAD).
  const three = arg.indexOf('...');
  const dots = three >= 0 ? three : arg.indexOf('..');
  if (dots >= 0) {
    const a = arg.slice(0, dots) || 'HEAD';
    const b = arg.slice(dots + (three >= 0 ? 3 : 2)) || 'HEAD';
    const ia = resolveOr(a);
    const ib = resolveOr(b);
    if (ia === undefined || ib === undefined) return undefined;
    if (three < 0) return [{ reversed: false, id: ib, name: b }, { reversed: true, id: ia, name: a }];
    const bases = mergeBasesOf(repo, ia, ib);
    if (bases === undefined) return undefined;
    return [{ reversed: false, id: ib, name: b }, { reversed: false, id: ia, name: a }, ...bases.map((id) => ({ reversed: true, id, name: id.toString('hex') }))];
  }
  const m = /^(.+)\^(@|!|-(\d*))$/.exec(arg);
  if (m === null) return undefined;
  const base = m[1] as string;
  const id = resolveOr(base);
  if (id === undefined) return undefined;
  let parents: Buffer[];
  try {
    const obj = repo.objects.read(repo.resolve(`${base}^0`));
    parents = parseCommit(obj.data, repo.store.hashLength).parents;
  } catch (e) {
    if (isPackwrightError(e)) return undefined;
    throw e;
  }
  if (m[2] === '@') return parents.map((p, i) => ({ reversed: false, id: p, name: `${base}^${i + 1}` }));
  if (m[2] === '!') return [{ reversed: false, id, name: base }, ...parents.map((p, i) => ({ reversed: true, id: p, name: `${base}^${i + 1}` }))];
  const n = m[3] === '' || m[3] === undefined ? 1 : Number(m[3]);
  const parent = parents[n - 1];
  if (parent === undefined) return undefined;
  return [{ reversed: false, id, name: base }, { reversed: true, id: parent, name: `${base}^${n}` }];
}

/**
 * The merge bases of two commits (peeled from whatever names them; refs/merge-bases.ts).
 * Undefined when one is not a commit-ish.
 */
function mergeBasesOf(repo: Repository, a: Buffer, b: Buffer): Buffer[] | undefined {
  let ca: Buffer;
  let cb: Buffer;
  try {
    ca = repo.resolve(`${a.toString('hex')}^{commit}`);
    cb = repo.resolve(`${b.toString('hex')}^{commit}`);
  } catch (e) {
    if (isPackwrightError(e)) return undefined;
    throw e;
  }
  return mergeBases(repo.objects, ca, cb);
}

/** The full ref name a name stands for (git's dwim_ref, with @{-n} and @{upstream}), or undefined when it names no ref. */
function dwimFull(repo: Repository, name: string): string | undefined {
  try {
    return symbolicFullName(repo, name);
  } catch (e) {
    if (isPackwrightError(e, 'INVALID_ARGUMENT')) throw new Stop(e.message);
    throw e;
  }
}

/** git's shorten_unambiguous_ref: the shortest name that the ref rules take back to `full`. */
function shortenRef(repo: Repository, full: string, strict: boolean): string {
  for (let r = DWIM_RULES.length - 1; r > 0; r--) {
    const [pre, post] = (DWIM_RULES[r] as string).split('%s') as [string, string];
    if (!full.startsWith(pre) || !full.endsWith(post) || full.length <= pre.length + post.length) continue;
    const short = full.slice(pre.length, full.length - post.length);
    // Unambiguous: no rule before this one (all of them, when strict) names an existing ref.
    let ambiguous = false;
    for (let j = 0; j < DWIM_RULES.length && !ambiguous; j++) {
      if (j === r || (!strict && j > r)) continue;
      const candidate = (DWIM_RULES[j] as string).replace('%s', short);
      if (candidate !== full && repo.refs.read(candidate) !== undefined) ambiguous = true;
    }
    if (!ambiguous) return short;
  }
  return full;
}

function resolveDefaultAbbrev(repo: Repository): number {
  const n = configuredAbbrev(repo.config, repo.store.hashLength * 2);
  return n < 0 ? -1 : abbrevOption(String(n), repo.store.hashLength * 2);
}

/** git's verify_filename: a non-revision argument must name a file of the work tree. */
function verifyFilename(s: RepositorySetup, arg: string, diagnose = false, prefix = s.prefix, repo?: Repository): void {
  const base = s.workTree !== undefined ? join(s.workTree, prefix ?? '') : s.cwd;
  // git's check_filename: `:!` and `:^` excludes are always fine, `:/<path>` is from the top;
  // and looks_like_pathspec: an unescaped wildcard makes a pathspec, not a missing file.
  if (arg.startsWith(':!') || arg.startsWith(':^')) return;
  let escaped = false;
  for (const c of arg) {
    if (c === '\\') escaped = !escaped;
    else if ('*?['.includes(c) && !escaped) return;
    else escaped = false;
  }
  if (arg.startsWith(':/') ? existsSync(join(s.workTree ?? s.cwd, arg.slice(2))) : existsSync(join(base, arg))) return;
  if (diagnose) {
    // git first says what is wrong with a name that looks like <tree-ish>:<path> or :<path>.
    const said = repo?.diagnose(arg);
    if (said !== undefined) {
      const [first, ...hints] = said.split('\n');
      throw new Stop(hints.length > 0 ? `${first}\n${hints.join('\n')}` : first);
    }
    throw new Stop(`ambiguous argument '${arg}': unknown revision or path not in the working tree.\nUse '--' to separate paths from revisions, like this:\n'git <command> [<revision>...] -- [<file>...]'`);
  }
  throw new Stop(`${arg}: no such path in the working tree.\nUse 'git <command> -- <path>...' to specify paths that do not exist locally.`);
}

/** Where GIT_DIR is relative to (git's cwd after setup). */
function gitDirBase(global: GlobalOptions, s: RepositorySetup): string {
  return global.gitDir !== undefined ? global.cwd : s.cwd;
}

/** git's get_git_common_dir as git holds it: `.git` from the top of a work tree, else absolute. */
function commonDirAsGit(s: RepositorySetup): string {
  if (s.gitDirVariable === undefined) return '.git';
  if (s.gitDir === s.commonDir) return s.gitDirVariable;
  return s.commonDir;
}

/** git_path: a file of the git directory (objects, refs, config… live in the common directory). */
function gitPath(s: RepositorySetup, path: string): string {
  const shared = /^(objects|refs|config|packed-refs|info|hooks|logs\/refs|remotes|branches|shallow|worktrees|rr-cache|svn|common)(\/|$)/.test(path)
    && !/^(logs\/HEAD|refs\/bisect|refs\/worktree|refs\/rewritten|info\/sparse-checkout)/.test(path);
  const dir = shared ? commonDirAsGit(s) : (s.gitDirVariable ?? '.git');
  // git's cleanup_path drops a leading "./" (a bare repository's GIT_DIR is ".").
  return `${dir}/${path}`.replace(/^\.\/(?=.)/, '');
}

function isShallow(s: RepositorySetup, env: CommandIO['env']): boolean {
  const file = shallowFilePath(s.commonDir, env);
  try {
    return statSync(file).size > 0;
  } catch {
    // git's is_repository_shallow: a shallow file it cannot stat is no shallow boundary.
    return false;
  }
}

/** git's resolve_gitdir: a git directory, or the target of a `.git` file. */
function resolveGitDir(path: string): string | undefined {
  if (existsSync(join(path, 'HEAD')) && (existsSync(join(path, 'objects')) || existsSync(join(path, 'commondir')))) return path;
  return gitFileTarget(path);
}

/**
 * The work tree of the superproject this work tree is a submodule of: a work tree above this one
 * whose index has a submodule (mode 160000) at this one's path.
 */
function superprojectWorkTree(s: RepositorySetup): string | undefined {
  if (s.workTree === undefined) return undefined;
  let dir = dirname(s.workTree);
  while (dir !== dirname(dir)) {
    let sup: RepositorySetup | undefined;
    try {
      sup = setupRepository(dir);
    } catch {
      // No repository above: not inside a superproject, as git answers it.
      return undefined;
    }
    if (sup.workTree === undefined) return undefined;
    const path = relative(sup.workTree, s.workTree).split('\\').join('/');
    try {
      const format = Repository.openGitDir(sup.gitDir).format;
      const index = parseIndexFile(readFileSync(join(sup.gitDir, 'index')), format);
      if (index.entries.some((e) => e.path === path && (e.mode & S_IFMT) === S_IFGITLINK)) return sup.workTree;
    } catch {
      // A superproject whose index cannot be read does not list us: git answers nothing then.
      return undefined;
    }
    dir = dirname(sup.workTree);
  }
  return undefined;
}

/** A date for --since/--until (git's approxidate); an unreadable one is refused. */
function dateArg(text: string): number {
  const t = approxidate(text);
  if (t === undefined) throw new PackwrightError('INVALID_ARGUMENT', `unsupported date: ${text}`);
  return t;
}

/** git's sq_quote: `'…'` with `'` and `!` escaped. */
function sq(s: string): string {
  return `'${s.replace(/'/g, "'\\''").replace(/!/g, "'\\!'")}'`;
}
