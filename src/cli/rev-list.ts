import { checkCommitBitmap, parseObjectFilter, walkCommits, walkObjects, walkObjectsWithBitmap, type MissingAction, type ObjectFilter, type RevWalk, type WalkedObjects } from '../walk/index.js';
import { fetchWhatWalkLacks, isPartialClone } from './lazy-fetch.js';
import { toHex } from '../hash/index.js';
import type { RevTip } from '../walk/index.js';
import { RevArgs } from '../walk/index.js';
import type { Repository } from '../repo/index.js';
import { OBJ_COMMIT } from '../objects/index.js';
import { TextDecoder } from 'node:util';
import { lstatSync } from 'node:fs';
import { join } from 'node:path';
import { isPackwrightError, PackwrightError } from '../errors/index.js';
import { Pathspec } from '../objects/index.js';
import { approxidate } from '../refs/index.js';
import { Output } from './output.js';
import { readLines } from './read-lines.js';
import { helpRequested, UsageError } from './usage-error.js';
import type { CommandIO } from './command-io.js';

const USAGE = 'usage: packwright rev-list [--objects] [--[no-]object-names] [--count] [--quiet] [--header] [--first-parent] [--bisect] [--since=<date>] [--until=<date>] [-n <n> | --max-count=<n> | -<n>] [--skip=<n>] [--min-parents=<n>] [--max-parents=<n>] [--[no-]merges] [--missing=(error|allow-any|allow-promisor|print)] [--exclude-promisor-objects] [--use-bitmap-index] [--filter=<spec> [--filter-print-omitted] [--filter-provided-objects]] [--stdin] [--end-of-options] <revs>... (--all, --branches, --tags, --remotes, --reflog, --indexed-objects, --not, ^<rev>, <a>..<b>) [--] [<path>...]';

/** C's atoi, as git reads --max-count: leading blanks, a sign, then digits up to the first other character (none: 0). */
function atoi(s: string): number {
  const m = /^[ \t\n\v\f\r]*([+-]?\d+)/.exec(s);
  return m === null ? 0 : Number.parseInt(m[1] as string, 10);
}

const MISSING = new Set(['error', 'allow-any', 'allow-promisor', 'print']);

/** git's message for an argument that is neither clearly a revision nor clearly a path. */
function ambiguous(what: string): PackwrightError {
  return new PackwrightError('REF_NOT_FOUND', `${what}\nUse '--' to separate paths from revisions, like this:\n'git <command> [<revision>...] -- [<file>...]'`);
}

/** Whether `arg` names something in the work tree, from the directory the command runs in (git's check_filename). */
function inWorkTree(repo: Repository, arg: string): boolean {
  if (repo.workTree === undefined) return false;
  try {
    lstatSync(join(repo.workTree, repo.prefix, arg));
    return true;
  } catch {
    // Whether a name is a file of the work tree, to tell it from a revision: not there (or unreadable) is "no", as in git.
    return false;
  }
}

/** git's verify_filename: a path given without `--` must be there. */
function verifyFilename(repo: Repository, arg: string): void {
  if (arg.startsWith('-')) throw new UsageError(`fatal: option '${arg}' must come before non-option arguments`);
  if (!inWorkTree(repo, arg)) throw ambiguous(`ambiguous argument '${arg}': unknown revision or path not in the working tree.`);
}

/**
 * `git rev-list [--objects] <revs>`: the commits (and with --objects the trees, blobs and tags,
 * each with its path) reachable from the revisions, in git's order. The counting phase of
 * pack-objects, on its own.
 */
export async function revListCommand(io: CommandIO, open: () => Repository, argv: string[]): Promise<number> {
  let args = argv;
  const help = helpRequested(args, USAGE, io.stdout);
  if (help !== undefined) return help;
  let withObjects = false;
  let missing: MissingAction = 'error';
  let missingGiven = false;
  let excludePromisor = false;
  let stdin = false;
  const revArgs: [string, boolean][] = [];
  // git's `--`: what follows are paths (git finds the first one before reading any option).
  const dashdash = args.indexOf('--');
  const paths = dashdash >= 0 ? args.slice(dashdash + 1) : [];
  if (dashdash >= 0) args = args.slice(0, dashdash);
  let literal = false;
  let names = true;
  let count = false;
  let header = false;
  let firstParent = false;
  let bisect = false;
  let maxCount = -1;
  let skip = 0;
  let minParents = 0;
  let maxParents = -1;
  let maxAge: number | undefined;
  let minAge: number | undefined;
  let useBitmap = false;
  let testBitmap = false;
  const filters: ObjectFilter[] = [];
  let printOmitted = false;
  let quiet = false;
  let filterProvided = false;
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    if (literal) revArgs.push([a, literal]);
    else if (a === '--objects') withObjects = true;
    else if (a === '--header') header = true;
    else if (a === '--first-parent') firstParent = true;
    else if (a === '--bisect') bisect = true;
    // git's --max-count=<n>, --max-count <n>, -n <n>, -n<n> and -<n> (atoi: a negative count is no limit).
    else if (a.startsWith('--max-count=')) maxCount = atoi(a.slice(12));
    else if (a === '--max-count' || a === '-n') {
      const v = args[++i];
      if (v === undefined) throw new UsageError(`fatal: ${a === '-n' ? 'switch `n\'' : 'option `max-count\''} requires a value`);
      maxCount = atoi(v);
    } else if (/^-n./.test(a)) maxCount = atoi(a.slice(2));
    else if (/^-\d/.test(a)) maxCount = atoi(a.slice(1));
    // git's --skip, and the parent counts: --min-parents, --max-parents (their --no- forms reset), --merges, --no-merges.
    else if (a.startsWith('--skip=')) skip = atoi(a.slice(7));
    else if (a.startsWith('--min-parents=')) minParents = atoi(a.slice(14));
    else if (a.startsWith('--max-parents=')) maxParents = atoi(a.slice(14));
    else if (a === '--no-min-parents') minParents = 0;
    else if (a === '--no-max-parents') maxParents = -1;
    else if (a === '--merges') minParents = 2;
    else if (a === '--no-merges') maxParents = 1;
    // git's --since/--after (approxidate), --max-age (seconds); --until/--before, --min-age.
    else if (/^--(since|after|max-age|until|before|min-age)=/.test(a)) {
      const eq = a.indexOf('=');
      const key = a.slice(2, eq);
      const v = a.slice(eq + 1);
      const t = key.endsWith('-age') ? atoi(v) : approxidate(v);
      if (t === undefined) throw new UsageError(`fatal: invalid date '${v}' for --${key}`);
      if (key === 'since' || key === 'after' || key === 'max-age') maxAge = t;
      else minAge = t;
    } else if (a === '--object-names') names = true;
    else if (a === '--no-object-names') names = false;
    else if (a === '--count') count = true;
    // git's --quiet: walk, print nothing listed (omitted and missing objects are still printed).
    else if (a === '--quiet') quiet = true;
    // git's --end-of-options: what follows are revisions, dashes and all.
    else if (a === '--end-of-options') literal = true;
    else if (a.startsWith('--missing=')) {
      const v = a.slice(10);
      if (!MISSING.has(v)) throw new UsageError(`fatal: invalid value for '--missing': '${v}'`);
      missing = v as MissingAction;
      missingGiven = v !== 'error';
    } else if (a === '--stdin') stdin = true;
    else if (a === '--exclude-promisor-objects') excludePromisor = true;
    else if (a === '--use-bitmap-index') useBitmap = true;
    else if (a === '--test-bitmap') testBitmap = true;
    // git's --filter (repeated: each must keep an object, as combine: does), --no-filter.
    else if (a.startsWith('--filter=')) filters.push(parseObjectFilter(a.slice('--filter='.length)));
    else if (a === '--no-filter') filters.length = 0;
    else if (a === '--filter-print-omitted') printOmitted = true;
    else if (a === '--filter-provided-objects') filterProvided = true;
    else revArgs.push([a, false]);
  }
  const filter: ObjectFilter | undefined = filters.length > 1 ? { kind: 'combine', filters } : filters[0];
  if (filter !== undefined && !withObjects) throw new PackwrightError('INVALID_ARGUMENT', 'object filtering requires --objects');
  const repo = open();
  repo.onWarning = (message) => void io.stderr.write(`warning: ${message}\n`);
  const revs = new RevArgs(repo);
  for (let j = 0; j < revArgs.length; j++) {
    const [a, asRevision] = revArgs[j] as [string, boolean];
    try {
      revs.add(a, asRevision);
    } catch (e) {
      // git's setup_revisions: without `--`, what is not a revision starts the paths, and each of
      // them must be there in the work tree.
      // A path a tree-ish lacks (`HEAD:nope`): git dies of it, in its words, unless `--` made it a
      // revision for sure ("bad revision").
      if (isPackwrightError(e, 'PATH_NOT_FOUND')) throw dashdash >= 0 ? new PackwrightError('REF_NOT_FOUND', `bad revision '${a}'`) : e;
      if (!isPackwrightError(e, 'REF_NOT_FOUND') || dashdash >= 0 || asRevision || a.startsWith('^')) throw e;
      for (const [rest] of revArgs.slice(j)) {
        verifyFilename(repo, rest);
        paths.push(rest);
      }
      break;
    }
    if (dashdash < 0 && !asRevision && !a.startsWith('-') && inWorkTree(repo, a)) throw ambiguous(`ambiguous argument '${a}': both revision and filename`);
  }
  if (stdin) {
    // git 2.39's read_revisions_from_stdin: revisions up to an empty line; a `--` line, and
    // every line after it is a path; any other option is refused.
    let ended = false;
    let pathLines = false;
    readLines(io.stdin, (line) => {
      if (pathLines) paths.push(line);
      else if (ended) return;
      else if (line === '') ended = true;
      else if (line === '--') pathLines = true;
      else if (line.startsWith('-')) throw new PackwrightError('INVALID_ARGUMENT', 'options not supported in --stdin mode');
      else revs.add(line);
    }, () => {});
  }
  if (paths.length > 0 && bisect) throw new PackwrightError('INVALID_ARGUMENT', '--bisect with paths is not supported');
  const pathspec = paths.length > 0 ? Pathspec.parse(paths, repo.prefix, repo.workTree) : undefined;
  if (revs.tips.length === 0 && !stdin) throw new UsageError(USAGE);
  if (testBitmap) return testBitmapCommand(io, repo, revs.tips);
  // git's try_bitmap_count and try_bitmap_traversal: a count (of commits, or with --objects of
  // everything, then without a commit limit), or the commits (with --objects, every object)
  // without a commit limit; never with paths. The walks packwright does not take through bitmaps
  // (--first-parent, --bisect, promisor exclusion, --missing=print, --header) walk as usual: the
  // same set, in the walk's order.
  const bitmapCount = count && !(maxCount >= 0 && withObjects);
  const bitmapList = !count && maxCount < 0 && !header;
  if (useBitmap && (bitmapCount || bitmapList) && pathspec === undefined && filter === undefined && !firstParent && !bisect && !excludePromisor && missing !== 'print' && maxAge === undefined && minAge === undefined && skip === 0 && minParents === 0 && maxParents < 0) {
    const warn = repo.onWarning;
    const walked = walkObjectsWithBitmap(repo.objects, revs.tips, { missing, ...(warn !== undefined ? { onWarning: warn } : {}) });
    if (walked !== undefined) return printBitmapWalk(io, walked, bitmapCount, withObjects, maxCount);
  }
  const walkOptions = {
    missing,
    ...(excludePromisor ? { excludePromisor } : {}),
    maxCount,
    ...(skip > 0 ? { skip } : {}),
    ...(minParents > 0 ? { minParents } : {}),
    ...(maxParents >= 0 ? { maxParents } : {}),
    firstParent,
    bisect,
    ...(maxAge !== undefined ? { maxAge } : {}),
    ...(minAge !== undefined ? { minAge } : {}),
    ...(pathspec !== undefined ? { pathspec } : {}),
  };
  // git's lazy fetch (fetch_if_missing, on unless --missing says otherwise or promisor objects
  // are left out): in a partial clone, what the listing lacks comes from the promisor remote first.
  const filterOptions = filter !== undefined ? { filter, filterProvided, refs: repo.refs } : {};
  if (withObjects && !missingGiven && !excludePromisor && isPartialClone(repo)) await fetchWhatWalkLacks(io, repo, revs.tips, { ...walkOptions, ...filterOptions });
  if (!withObjects) {
    // The commits alone: no tree is listed, so none is read (or needs to be there).
    const walk = walkCommits(repo.objects, revs.tips, walkOptions);
    return printCommits(io, repo, quiet ? [] : walk.commits, walk, count, header, missing === 'print');
  }
  // Paths go into one arena while listing: an object is printed only once the pass over the
  // indexes has said it is there.
  let arena = Buffer.allocUnsafe(1 << 16);
  let used = 0;
  // By object number (met in any order): where its path starts in the arena, NO_PATH, or
  // UNLISTED; typed arrays, since a JS array written out of order turns into a dictionary
  // (~0.5 µs a write on gitoxide's 226k objects).
  const UNLISTED = -2;
  const NO_PATH = -1;
  let starts = new Int32Array(1 << 16).fill(UNLISTED);
  let ends = new Int32Array(1 << 16);
  const room = (n: number): void => {
    if (n < starts.length) return;
    const size = Math.max(n + 1, starts.length * 2);
    const s2 = new Int32Array(size).fill(UNLISTED);
    s2.set(starts);
    const e2 = new Int32Array(size);
    e2.set(ends);
    starts = s2;
    ends = e2;
  };
  const { table, order, missing: absent, omitted } = walkObjects(repo.objects, revs.tips, {
    ...walkOptions,
    ...filterOptions,
    collectOmitted: printOmitted,
    paths: true,
    visit: (n, type, path) => {
      room(n);
      if (path === undefined || type === OBJ_COMMIT) {
        starts[n] = NO_PATH;
        return;
      }
      if (used + path.length > arena.length) {
        const grown = Buffer.allocUnsafe(Math.max(arena.length * 2, used + path.length));
        arena.copy(grown, 0, 0, used);
        arena = grown;
      }
      starts[n] = used;
      arena.set(path, used);
      used += path.length;
      ends[n] = used;
    },
  });
  const out = new Output(io.stdout);
  if (count) {
    // git's --count: how many lines the listing would have (missing objects not among them).
    let lines = 0;
    for (const n of order) if (n < starts.length && starts[n] !== UNLISTED) lines++;
    out.string(`${lines}\n`);
    out.flush();
    return 0;
  }
  for (const n of quiet ? [] : order) {
    const start = n < starts.length ? (starts[n] as number) : UNLISTED;
    if (start === UNLISTED) continue;
    out.hex(table.id(n));
    if (header && start === NO_PATH && table.types[n] === OBJ_COMMIT) {
      out.byte(0x0a);
      out.bytes(rawCommit(repo.objects.read(table.id(n)).data));
      out.byte(0);
      continue;
    }
    if (start >= 0 && names) {
      out.byte(0x20);
      // git prints a path up to its first newline (show_object_with_name).
      const end = ends[n] as number;
      const path = arena.subarray(start, end);
      const nl = path.indexOf(0x0a);
      out.bytes(nl >= 0 ? path.subarray(0, nl) : path);
    }
    out.byte(0x0a);
  }
  if (printOmitted && omitted !== undefined) {
    for (const n of omitted) {
      out.byte(0x7e);
      out.hex(table.id(n));
      out.byte(0x0a);
    }
  }
  if (missing === 'print') {
    for (const n of absent) {
      out.byte(0x3f);
      out.hex(table.id(n));
      out.byte(0x0a);
    }
  }
  out.flush();
  return 0;
}

/** What rev-list prints of a walk of commits alone: each id of `commits` (with --header, the commit), or the walk's count. */
function printCommits(io: CommandIO, repo: Repository, commits: readonly number[], walk: RevWalk, count: boolean, header: boolean, printMissing: boolean): number {
  const out = new Output(io.stdout);
  const { table } = walk;
  if (count) {
    out.string(`${walk.commits.length}\n`);
    out.flush();
    return 0;
  }
  for (const n of commits) {
    out.hex(table.id(n));
    if (header) {
      out.byte(0x0a);
      out.bytes(rawCommit(repo.objects.read(table.id(n)).data));
      out.byte(0);
      continue;
    }
    out.byte(0x0a);
  }
  if (printMissing) {
    for (const n of walk.missing) {
      out.byte(0x3f);
      out.hex(table.id(n));
      out.byte(0x0a);
    }
  }
  out.flush();
  return 0;
}

/**
 * git's rev-list --test-bitmap <commit>: the commit's stored bitmap against a walk of everything
 * it reaches; "OK!" on stderr when they agree, else git's fatal error.
 */
function testBitmapCommand(io: CommandIO, repo: Repository, tips: readonly RevTip[]): number {
  const tip = tips[0];
  if (tips.length !== 1 || tip === undefined) throw new PackwrightError('INVALID_ARGUMENT', 'you must specify exactly one commit to test');
  const check = checkCommitBitmap(repo.objects, tip.id);
  io.stderr.write(`Bitmap v1 test (${check.entries} entries loaded)\n`);
  if (check.bits === undefined) throw new PackwrightError('OBJECT_NOT_FOUND', `commit '${toHex(tip.id)}' doesn't have an indexed bitmap`);
  io.stderr.write(`Found bitmap for '${toHex(tip.id)}'. ${check.bits} objects\n`);
  if (!check.same) throw new PackwrightError('BITMAP_CORRUPT', 'mismatch in bitmap results');
  io.stderr.write('OK!\n');
  return 0;
}

/**
 * What rev-list prints from a bitmap walk: the count (commits only without --objects, at most
 * --max-count of them), or each object's id alone in the bitmap's order (git's show_object_fast).
 */
function printBitmapWalk(io: CommandIO, walked: WalkedObjects, count: boolean, withObjects: boolean, maxCount: number): number {
  const out = new Output(io.stdout);
  const { table, order } = walked;
  if (count) {
    let n = 0;
    for (const o of order) if (withObjects || table.types[o] === OBJ_COMMIT) n++;
    out.string(`${maxCount >= 0 ? Math.min(n, maxCount) : n}\n`);
  } else {
    for (const o of order) {
      if (!withObjects && table.types[o] !== OBJ_COMMIT) continue;
      out.hex(table.id(o));
      out.byte(0x0a);
    }
  }
  out.flush();
  return 0;
}

const isSpace = (c: number): boolean => c === 0x20 || (c >= 0x09 && c <= 0x0d);

/**
 * A commit as `rev-list --header` prints it (git's CMIT_FMT_RAW, pretty.c): the header lines as
 * stored, a blank line, then the message from its first non-blank line, each line indented by four
 * spaces with its trailing whitespace cut, the whole trimmed at the end and closed by one newline.
 * Like git, the object's text ends at its first NUL, and a commit in another encoding (its
 * `encoding` header) is first re-encoded to UTF-8 with that header dropped (logmsg_reencode); an
 * encoding this runtime does not know leaves it as stored.
 */
function rawCommit(data: Uint8Array): Buffer {
  const nul = data.indexOf(0);
  const text = reencoded(nul >= 0 ? data.subarray(0, nul) : data);
  const parts: Uint8Array[] = [];
  // The headers, up to the empty line (or the end).
  let p = 0;
  while (p < text.length) {
    const nl = text.indexOf(0x0a, p);
    const end = nl < 0 ? text.length : nl + 1;
    if (text[p] === 0x0a) {
      p = end;
      break;
    }
    parts.push(text.subarray(p, end));
    p = end;
  }
  parts.push(Buffer.from('\n'));
  const indent = Buffer.from('    ');
  const newline = Buffer.from('\n');
  // Message lines, each cut of its trailing whitespace; blank lines before the first are skipped.
  let started = false;
  while (p < text.length) {
    const nl = text.indexOf(0x0a, p);
    const end = nl < 0 ? text.length : nl + 1;
    let cut = end;
    while (cut > p && isSpace(text[cut - 1] as number)) cut--;
    if (cut > p) started = true;
    if (started) parts.push(indent, text.subarray(p, cut), newline);
    p = end;
  }
  // git trims the whole buffer's trailing whitespace (blank lines at the end included), then ends
  // it with one newline.
  const joined = Buffer.concat(parts);
  let last = joined.length;
  while (last > 0 && isSpace(joined[last - 1] as number)) last--;
  return Buffer.concat([joined.subarray(0, last), newline]);
}

/** `text` in UTF-8 without its `encoding` header, when that header names another encoding (see rawCommit). */
function reencoded(text: Uint8Array): Uint8Array {
  const latin = Buffer.from(text.buffer, text.byteOffset, text.byteLength).toString('latin1');
  const headersEnd = latin.indexOf('\n\n');
  const m = /(?:^|\n)encoding ([^\n]*)\n/.exec(headersEnd < 0 ? latin : latin.slice(0, headersEnd + 1));
  if (m === null) return text;
  const label = m[1] as string;
  if (/^utf-?8$/i.test(label)) return text;
  let decoder: TextDecoder;
  try {
    decoder = new TextDecoder(label);
  } catch {
    // An encoding Node does not know: printed as stored, as git prints it when iconv cannot convert.
    return text;
  }
  // latin1 gives a character per byte: the header's place in the string is its place in the bytes.
  const start = m.index + (m[0].startsWith('\n') ? 1 : 0);
  const end = m.index + m[0].length;
  return Buffer.from(decoder.decode(Buffer.concat([text.subarray(0, start), text.subarray(end)])), 'utf8');
}
