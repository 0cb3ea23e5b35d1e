import { posix, relative, resolve } from 'node:path';
import { fetchLacking, isPartialClone, retryFetching } from './lazy-fetch.js';
import { isPackwrightError, PackwrightError } from '../errors/index.js';
import { listTree, type ListedTreeEntry } from '../odb/index.js';
import type { Repository } from '../repo/index.js';
import { abbrevOption, configuredAbbrev } from './abbrev.js';
import type { GlobalOptions } from './global-options.js';
import { quoteCStyle } from './quote-path.js';
import { relativePath } from './relative-path.js';
import { UsageError } from './usage-error.js';
import type { CommandIO } from './command-io.js';

const USAGE = 'usage: packwright ls-tree [<options>] <tree-ish> [<path>...]';

type Mode = 'default' | 'long' | 'name-only' | 'object-only';

/** The built-in formats, as git spells them: a --format equal to one is that mode. */
const FORMATS: Record<Mode, string> = {
  default: '%(objectmode) %(objecttype) %(objectname)%x09%(path)',
  long: '%(objectmode) %(objecttype) %(objectname) %(objectsize:padded)%x09%(path)',
  'name-only': '%(path)',
  'object-only': '%(objectname)',
};

/**
 * `git ls-tree`: the entries of a tree-ish, limited to paths (literal, relative to the current
 * directory inside a work tree), with `-r`, `-d`, `-t`, `-l`, `-z`, `--name-only`/`--name-status`,
 * `--object-only`, `--full-name`, `--full-tree`, `--abbrev` and `--format`.
 */
export async function lsTreeCommand(io: CommandIO, global: GlobalOptions, open: () => Repository, args: string[]): Promise<number> {
  let recursive = false, treesOnly = false, showTrees = false, nul = false, fullName = false, fullTree = false;
  let mode: Mode | undefined;
  // git's cmdmode: --name-only and --name-status list the same, but are two modes that conflict.
  let modeFlag: string | undefined;
  let format: string | undefined;
  let abbrev: number | 'default' = 0;
  const rest: string[] = [];
  let options = true;
  const setMode = (m: Mode, flag: string): void => {
    if (modeFlag !== undefined && modeFlag !== flag) throw new UsageError(`error: option \`${flag}' is incompatible with --${modeFlag}\n${USAGE}`);
    mode = m;
    modeFlag = flag;
  };
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    if (!options || !a.startsWith('-') || a === '-') { rest.push(a); continue; }
    if (a === '--') { options = false; continue; }
    if (a === '-h' || a === '--help') { io.stdout.write(`${USAGE}\n`); return a === '-h' ? 129 : 0; }
    if (/^-[drtzl]+$/.test(a)) {
      for (const c of a.slice(1)) {
        if (c === 'd') treesOnly = true;
        else if (c === 'r') recursive = true;
        else if (c === 't') showTrees = true;
        else if (c === 'z') nul = true;
        else setMode('long', 'long');
      }
    } else if (a === '--long') setMode('long', 'long');
    else if (a === '--name-only' || a === '--name-status') setMode('name-only', a.slice(2));
    else if (a === '--object-only') setMode('object-only', 'object-only');
    else if (a === '--full-name') fullName = true;
    else if (a === '--no-full-name') fullName = false;
    else if (a === '--full-tree') fullTree = true;
    else if (a === '--format') format = args[++i] ?? '';
    else if (a.startsWith('--format=')) format = a.slice(9);
    else if (a === '--abbrev') abbrev = 'default';
    else if (a.startsWith('--abbrev=')) abbrev = abbrevOption(a.slice(9), 64);
    else if (a === '--no-abbrev') abbrev = 0;
    else throw new UsageError(`error: unknown option \`${a.replace(/^--?/, '')}'\n${USAGE}`);
  }
  if (format !== undefined && mode !== undefined) throw new UsageError(`fatal: --format can't be combined with other format-altering options\n${USAGE}`);
  if (rest.length < 1) throw new UsageError(USAGE);
  const repo = open();
  try {
    const handle = repo.objects;
    const hexLength = handle.hashLength * 2;
    const length = abbrev === 'default' ? configuredAbbrev(repo.config, hexLength) : Math.min(abbrev, hexLength);
    const quoteHigh = repo.config.getBool('core.quotePath') !== false;
    // Inside a work tree, paths are relative to the current directory (git's prefix).
    let prefix = '';
    if (repo.workTree !== undefined) {
      const rel = relative(repo.workTree, resolve(global.cwd));
      if (rel !== '' && !rel.startsWith('..')) prefix = `${rel.split('\\').join('/')}/`;
    }
    if (fullTree) prefix = '';
    const chomp = prefix !== '' && !fullName;
    const rev = rest[0] as string;
    let id: Buffer;
    try {
      // In a partial clone, the trees `<rev>:<path>` goes through are fetched if missing (git's lazy fetch).
      id = await retryFetching(io, repo, () => repo.resolve(rev));
    } catch (e) {
      if (!isPackwrightError(e)) throw e;
      throw new PackwrightError('REF_NOT_FOUND', `Not a valid object name ${rev}`);
    }
    const tree = await retryFetching(io, repo, () => treeOf(repo, id));
    // Paths held as latin1 (one char a byte) until they reach listTree, which takes their bytes.
    const paths = rest.slice(1).map((p) => pathspec(prefix, p, repo.workTree));
    if (paths.length === 0 && prefix !== '') paths.push(prefix);
    const pathBytes = paths.map((p) => Buffer.from(p, 'latin1'));
    const effective = format ?? FORMATS[mode ?? 'default'];
    const fast = (Object.keys(FORMATS) as Mode[]).find((m) => FORMATS[m] === effective);
    const term = nul ? '\0' : '\n';
    const out: string[] = [];
    let bytes = 0;
    const flush = (): void => {
      if (out.length > 0) io.stdout.write(Buffer.from(out.join(''), 'latin1'));
      out.length = 0;
      bytes = 0;
    };
    const name = (e: ListedTreeEntry, alwaysQuote: boolean): string => {
      const path = e.pathBytes.toString('latin1');
      const shown = chomp ? relativePath(path, prefix) : path;
      return nul && !alwaysQuote ? shown : quoteCStyle(Buffer.from(shown, 'latin1'), quoteHigh);
    };
    const hex = (e: ListedTreeEntry): string => (length === 0 ? e.id.toString('hex') : handle.abbreviate(e.id, length));
    const size = (e: ListedTreeEntry, padded: boolean, bad: string): string => {
      let text = '-';
      if (e.type === 'blob') {
        try {
          text = String(handle.header(e.id).size);
        } catch (err) {
          if (!isPackwrightError(err)) throw err;
          if (bad === '') throw new PackwrightError('OBJECT_NOT_FOUND', `could not get object info about '${e.id.toString('hex')}'`);
          text = bad;
        }
      }
      return padded ? text.padStart(7) : text;
    };
    const mode6 = (e: ListedTreeEntry): string => e.mode.toString(8).padStart(6, '0');
    const listOptions = { recursive, treesOnly, showTrees, paths: pathBytes };
    if (isPartialClone(repo)) {
      // git's lazy fetch, before anything is printed: the trees the listing reads, then (for
      // sizes) the blobs it shows, each round fetching what the last one found missing.
      const sizes = fast === 'long' || (fast === undefined && effective.includes('%(objectsize'));
      const blobs = await retryFetching(io, repo, () => {
        const named: Buffer[] = [];
        for (const e of listTree(handle, tree, listOptions)) if (sizes && e.type === 'blob') named.push(e.id);
        return named;
      });
      await fetchLacking(io, repo, blobs);
    }
    for (const e of listTree(handle, tree, listOptions)) {
      let line: string;
      if (fast === 'default') line = `${mode6(e)} ${e.type} ${hex(e)}\t${name(e, false)}`;
      else if (fast === 'long') line = `${mode6(e)} ${e.type} ${hex(e)} ${size(e, true, 'BAD')}\t${name(e, false)}`;
      else if (fast === 'name-only') line = name(e, false);
      else if (fast === 'object-only') line = hex(e);
      else line = expandFormat(effective, e, { mode6, hex, size: (padded) => size(e, padded, ''), path: () => name(e, true) });
      out.push(line + term);
      if ((bytes += line.length) > 1 << 16) flush();
    }
    flush();
    return 0;
  } finally {
    repo.close();
  }
}

/** The tree a tree-ish names (revision syntax's `^{tree}`: a tree, a commit's, what a tag points at). */
function treeOf(repo: Repository, id: Buffer): Buffer {
  try {
    return repo.resolve(`${id.toString('hex')}^{tree}`);
  } catch (e) {
    if (isPackwrightError(e)) throw new PackwrightError('OBJECT_CORRUPT', 'not a tree object', { cause: e });
    throw e;
  }
}

/** A path argument from the current directory, normalised as git's prefix_path does (a trailing `/` kept). */
function pathspec(prefix: string, arg: string, workTree: string | undefined): string {
  const bytes = Buffer.from(arg, 'utf8').toString('latin1');
  const joined = posix.normalize(prefix + bytes);
  if (joined === '..' || joined.startsWith('../')) {
    throw new PackwrightError('INVALID_ARGUMENT', `${arg}: '${arg}' is outside repository at '${workTree ?? ''}'`);
  }
  const keepSlash = bytes.endsWith('/') && !joined.endsWith('/');
  const p = joined === '.' || joined === './' ? '' : joined;
  return keepSlash ? `${p}/` : p;
}

/** `--format`: git's %(objectmode), %(objecttype), %(objectsize[:padded]), %(objectname), %(path), %n, %%, %xNN. */
function expandFormat(format: string, e: ListedTreeEntry, f: { mode6: (e: ListedTreeEntry) => string; hex: (e: ListedTreeEntry) => string; size: (padded: boolean) => string; path: () => string }): string {
  let out = '';
  for (let i = 0; i < format.length; i++) {
    const c = format[i] as string;
    if (c !== '%') { out += Buffer.from(c, 'utf8').toString('latin1'); continue; }
    const rest = format.slice(i + 1);
    if (rest.startsWith('%')) { out += '%'; i++; continue; }
    if (rest.startsWith('n')) { out += '\n'; i++; continue; }
    const x = /^x([0-9a-fA-F]{2})/.exec(rest);
    if (x !== null) { out += String.fromCharCode(parseInt(x[1] as string, 16)); i += 3; continue; }
    if (!rest.startsWith('(')) throw new PackwrightError('INVALID_ARGUMENT', `bad ls-tree format: element '${rest}' does not start with '('`);
    const end = rest.indexOf(')');
    if (end < 0) throw new PackwrightError('INVALID_ARGUMENT', `bad ls-tree format: element '${rest}' does not end in ')'`);
    const key = rest.slice(1, end);
    if (key === 'objectmode') out += f.mode6(e);
    else if (key === 'objecttype') out += e.type;
    else if (key === 'objectsize:padded') out += f.size(true);
    else if (key === 'objectsize') out += f.size(false);
    else if (key === 'objectname') out += f.hex(e);
    else if (key === 'path') out += f.path();
    else throw new PackwrightError('INVALID_ARGUMENT', `bad ls-tree format: %${rest.slice(0, end + 1)}`);
    i += end + 1;
  }
  return out;
}
