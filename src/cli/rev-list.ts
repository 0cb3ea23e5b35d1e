import { walkObjects, type MissingAction } from '../create/index.js';
import { RevArgs } from '../refs/index.js';
import type { Repository } from '../repo/index.js';
import { OBJ_COMMIT } from '../objects/index.js';
import { Output } from './output.js';
import { readLines } from './read-lines.js';
import { helpRequested, UsageError } from './usage-error.js';

const USAGE = 'usage: packwright rev-list [--objects] [--[no-]object-names] [--count] [--missing=(error|allow-any|allow-promisor|print)] [--stdin] [--end-of-options] <revs>... (--all, --branches, --tags, --remotes, --not, ^<rev>, <a>..<b>)';

const MISSING = new Set(['error', 'allow-any', 'allow-promisor', 'print']);

/**
 * `git rev-list [--objects] <revs>`: the commits (and with --objects the trees, blobs and tags,
 * each with its path) reachable from the revisions, in git's order. The counting phase of
 * pack-objects, on its own.
 */
export function revListCommand(open: () => Repository, args: string[]): number {
  const help = helpRequested(args, USAGE);
  if (help !== undefined) return help;
  let withObjects = false;
  let missing: MissingAction = 'error';
  let stdin = false;
  const revArgs: [string, boolean][] = [];
  let onlyRevs = false;
  let literal = false;
  let names = true;
  let count = false;
  for (const a of args) {
    if (onlyRevs || literal) revArgs.push([a, literal]);
    else if (a === '--objects') withObjects = true;
    else if (a === '--object-names') names = true;
    else if (a === '--no-object-names') names = false;
    else if (a === '--count') count = true;
    // git's --end-of-options: what follows are revisions, dashes and all.
    else if (a === '--end-of-options') literal = true;
    else if (a.startsWith('--missing=')) {
      const v = a.slice(10);
      if (!MISSING.has(v)) throw new UsageError(`fatal: invalid value for '--missing': '${v}'`);
      missing = v as MissingAction;
    } else if (a === '--stdin') stdin = true;
    else if (a === '--') onlyRevs = true;
    else revArgs.push([a, false]);
  }
  const repo = open();
  const revs = new RevArgs(repo);
  for (const [a, asRevision] of revArgs) revs.add(a, asRevision);
  if (stdin) readLines(0, (line) => line !== '' && revs.add(line), () => {});
  if (revs.tips.length === 0 && !stdin) throw new UsageError(USAGE);
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
  const { table, order, missing: absent } = walkObjects(repo.objects, revs.tips, {
    missing,
    paths: withObjects,
    visit: (n, type, path) => {
      if (!withObjects && type !== OBJ_COMMIT) return;
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
  const out = new Output(1);
  if (count) {
    // git's --count: how many lines the listing would have (missing objects not among them).
    let lines = 0;
    for (const n of order) if (n < starts.length && starts[n] !== UNLISTED) lines++;
    out.string(`${lines}\n`);
    out.flush();
    return 0;
  }
  for (const n of order) {
    const start = n < starts.length ? (starts[n] as number) : UNLISTED;
    if (start === UNLISTED) continue;
    out.hex(table.id(n));
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
