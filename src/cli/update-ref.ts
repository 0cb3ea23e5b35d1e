import { isPackwrightError, PackwrightError } from '../errors/index.js';
import { isValidRefname, type RefExpectation, type RefUpdateOptions } from '../refs/index.js';
import type { Repository } from '../repo/index.js';
import type { CommandIO } from './command-io.js';
import { readLines } from './read-lines.js';
import { helpRequested, UsageError } from './usage-error.js';

const USAGE = `usage: packwright update-ref [<options>] -d <refname> [<old-val>]
   or: packwright update-ref [<options>]    <refname> <new-val> [<old-val>]
   or: packwright update-ref [<options>] --stdin [-z]

    -m <reason>           reason of the update
    -d                    delete the reference
    --no-deref            update <refname> not the one it points to
    -z                    stdin has NUL-terminated arguments
    --stdin               read updates from stdin
    --create-reflog       create a reflog`;

/**
 * `git update-ref`: sets, creates, deletes or checks refs, with the old value checked under a
 * lock (compare-and-swap), reflogs as git writes them, and with `--stdin` many changes in one
 * all-or-nothing transaction (`update`, `create`, `delete`, `verify`, `option no-deref`, and
 * `start`/`prepare`/`commit`/`abort`).
 */
export function updateRefCommand(io: CommandIO, open: () => Repository, args: string[]): number {
  const help = helpRequested(args, USAGE, io.stdout);
  if (help !== undefined) return help;
  let message: string | undefined;
  let remove = false;
  let noDeref = false;
  let stdin = false;
  let nul = false;
  let createReflog: boolean | undefined;
  const positional: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    if (a === '-m') {
      if (i + 1 >= args.length) throw new UsageError("error: switch `m' requires a value\n" + USAGE);
      message = args[++i] as string;
    } else if (a.startsWith('-m')) message = a.slice(2);
    else if (a === '-d') remove = true;
    else if (a === '--no-deref') noDeref = true;
    else if (a === '--stdin') stdin = true;
    else if (a === '-z') nul = true;
    else if (a === '--create-reflog') createReflog = true;
    else if (a === '--no-create-reflog') createReflog = false;
    else if (a === '--') positional.push(...args.slice(i + 1)), (i = args.length);
    else if (a.startsWith('-') && a !== '-') throw new UsageError(USAGE);
    else positional.push(a);
  }
  if (message !== undefined && message === '') throw new PackwrightError('INVALID_ARGUMENT', 'Refusing to perform update with empty message.');
  if (message !== undefined && message.includes('\n')) throw new PackwrightError('INVALID_ARGUMENT', 'Refusing to perform update with \\n in message.');
  const repo = open();
  const zero = '0'.repeat(2 * repo.objects.hashLength);
  const resolve = (value: string, what: string): Buffer => {
    if (value === zero) return Buffer.alloc(repo.objects.hashLength);
    try {
      return repo.resolve(value);
    } catch {
      throw new PackwrightError('INVALID_ARGUMENT', `${value}: not a valid SHA1`, { cause: what });
    }
  };
  const expectation = (value: string | undefined): RefExpectation => {
    if (value === undefined) return undefined;
    if (value === '' || value === zero) return 'absent';
    return resolve(value, 'old');
  };
  const base: RefUpdateOptions = { ...(message !== undefined ? { message } : {}), ...(createReflog !== undefined ? { createReflog } : {}) };
  if (stdin) {
    if (remove || positional.length > 0) throw new UsageError(USAGE);
    return runStdin(io, repo, nul, base, noDeref, zero, resolve);
  }
  if (nul) throw new UsageError(USAGE);
  const transaction = repo.refTransaction();
  const options = { ...base, ...(noDeref ? { noDeref } : {}) };
  let change: () => void;
  if (remove) {
    if (positional.length < 1 || positional.length > 2) throw new UsageError(USAGE);
    const old = positional[1];
    // git: an old value given as all zeros to -d means "must exist with some value": it refuses it.
    if (old !== undefined && (old === '' || old === zero)) throw new PackwrightError('INVALID_ARGUMENT', `${positional[0] as string}: not a valid SHA1`);
    const expect = expectation(old);
    change = () => transaction.delete(positional[0] as string, expect, options);
  } else {
    if (positional.length < 2 || positional.length > 3) throw new UsageError(USAGE);
    const name = positional[0] as string;
    const id = resolve(positional[1] as string, 'new');
    const expect = expectation(positional[2]);
    change = () => (id.every((b) => b === 0) ? transaction.delete(name, expect, options) : transaction.update(name, id, expect, options));
  }
  try {
    change();
    transaction.commit();
  } catch (e) {
    if (!isPackwrightError(e)) throw e;
    // git's delete_ref() reports the transaction's error and returns 1; its update_ref() dies.
    if (remove) {
      io.stderr.write(`error: ${e.message}\n`);
      return 1;
    }
    throw new PackwrightError(e.code, `update_ref failed for ref '${positional[0] as string}': ${e.message}`, { cause: e });
  }
  return 0;
}

/** A die() of git's update-ref: the message as git words it. */
function die(message: string): never {
  throw new PackwrightError('INVALID_ARGUMENT', message);
}

const COMMANDS: { prefix: string; args: number; state: State }[] = [
  { prefix: 'update', args: 3, state: 'open' },
  { prefix: 'create', args: 2, state: 'open' },
  { prefix: 'delete', args: 2, state: 'open' },
  { prefix: 'verify', args: 2, state: 'open' },
  { prefix: 'option', args: 1, state: 'open' },
  { prefix: 'start', args: 0, state: 'started' },
  { prefix: 'prepare', args: 0, state: 'prepared' },
  { prefix: 'abort', args: 0, state: 'closed' },
  { prefix: 'commit', args: 0, state: 'closed' },
];
type State = 'open' | 'started' | 'prepared' | 'closed';
const RANK: Record<State, number> = { open: 0, started: 1, prepared: 2, closed: 3 };

/**
 * `--stdin` (git's update_refs_stdin): each command is read, parsed and run as it arrives (so
 * `start`, `prepare` and `commit` answer "<command>: ok" at once to a caller that waits), with
 * git's parser: arguments split at white space or C-quoted, or NUL-terminated with -z; without
 * `start`, everything is one transaction committed at the end; a started one left open is aborted.
 */
function runStdin(io: CommandIO, repo: Repository, nul: boolean, base: RefUpdateOptions, defaultNoDeref: boolean, zero: string, resolve: (value: string, what: string) => Buffer): number {
  const term = nul ? '\0' : '\n';
  let transaction = repo.refTransaction();
  let state: State = 'open';
  let noDeref = defaultNoDeref;
  const H = repo.objects.hashLength;
  const isZero = (id: Buffer): boolean => id.every((b) => b === 0);

  /** One argument at `next`: C-quoted, or up to white space (git's parse_arg). */
  const parseArg = (buf: string, next: number): [string, number] => {
    if (buf[next] === '"') {
      const orig = buf.slice(next);
      const unquoted = unquoteC(buf, next);
      if (unquoted === undefined) die(`badly quoted argument: ${orig}`);
      const [text, end] = unquoted;
      if (end < buf.length && !/\s/.test(buf[end] as string)) die(`unexpected character after quoted argument: ${orig}`);
      return [text, end];
    }
    let end = next;
    while (end < buf.length && !/\s/.test(buf[end] as string)) end++;
    return [buf.slice(next, end), end];
  };
  const parseRefname = (buf: string, next: number): [string | undefined, number] => {
    let name: string;
    let end: number;
    if (!nul) [name, end] = parseArg(buf, next);
    else {
      end = buf.indexOf('\0', next);
      if (end < 0) end = buf.length;
      name = buf.slice(next, end);
    }
    if (name === '') return [undefined, end];
    if (!isValidRefname(name, { allowOneLevel: true })) die(`invalid ref format: ${name}`);
    return [name, end];
  };
  /** git's parse_next_oid: [id or undefined when unspecified, where parsing goes on]. */
  const parseNextOid = (buf: string, next: number, command: string, ref: string, allowEmpty: boolean, old: boolean): [Buffer | undefined, number] => {
    const what = old ? 'oldvalue' : 'newvalue';
    if (next >= buf.length) die(`${command} ${ref}: unexpected end of input when reading <${what}>`);
    const parsed = (arg: string): Buffer => {
      try {
        return arg === zero ? Buffer.alloc(H) : resolve(arg, what);
      } catch {
        return die(`${command} ${ref}: invalid <${what}>: ${arg}`);
      }
    };
    if (!nul) {
      if (buf[next] === term) return [undefined, next];
      if (buf[next] !== ' ') die(`${command} ${ref}: expected SP but got: ${buf.slice(next)}`);
      const [arg, end] = parseArg(buf, next + 1);
      return [arg !== '' ? parsed(arg) : Buffer.alloc(H), end];
    }
    if (buf[next] !== '\0') die(`${command} ${ref}: expected NUL but got: ${buf.slice(next)}`);
    next++;
    if (next >= buf.length) die(`${command} ${ref}: unexpected end of input when reading <${what}>`);
    let end = buf.indexOf('\0', next);
    if (end < 0) end = buf.length;
    const arg = buf.slice(next, end);
    if (arg !== '') return [parsed(arg), end];
    if (allowEmpty) {
      io.stderr.write(`warning: ${command} ${ref}: missing <newvalue>, treating as zero\n`);
      return [Buffer.alloc(H), end];
    }
    return [undefined, end];
  };
  const options = (): RefUpdateOptions => ({ ...base, ...(noDeref ? { noDeref: true } : {}) });
  const endOf = (buf: string, next: number, command: string, ref?: string): void => {
    if (next < buf.length && buf[next] !== term) die(`${command}${ref !== undefined ? ` ${ref}` : ''}: extra input: ${buf.slice(next)}`);
  };
  const run = (command: string, buf: string, next: number): void => {
    switch (command) {
      case 'update': {
        const [ref, a] = parseRefname(buf, next);
        if (ref === undefined) die('update: missing <ref>');
        const [newId, b] = parseNextOid(buf, a, 'update', ref, true, false);
        if (newId === undefined) die(`update ${ref}: missing <newvalue>`);
        const [oldId, c] = parseNextOid(buf, b, 'update', ref, false, true);
        endOf(buf, c, 'update', ref);
        const expect = oldId === undefined ? undefined : isZero(oldId) ? 'absent' : oldId;
        if (isZero(newId)) transaction.delete(ref, expect, options());
        else transaction.update(ref, newId, expect, options());
        break;
      }
      case 'create': {
        const [ref, a] = parseRefname(buf, next);
        if (ref === undefined) die('create: missing <ref>');
        const [newId, b] = parseNextOid(buf, a, 'create', ref, false, false);
        if (newId === undefined) die(`create ${ref}: missing <newvalue>`);
        if (isZero(newId)) die(`create ${ref}: zero <newvalue>`);
        endOf(buf, b, 'create', ref);
        transaction.create(ref, newId, options());
        break;
      }
      case 'delete': {
        const [ref, a] = parseRefname(buf, next);
        if (ref === undefined) die('delete: missing <ref>');
        const [oldId, b] = parseNextOid(buf, a, 'delete', ref, false, true);
        if (oldId !== undefined && isZero(oldId)) die(`delete ${ref}: zero <oldvalue>`);
        endOf(buf, b, 'delete', ref);
        transaction.delete(ref, oldId, options());
        break;
      }
      case 'verify': {
        const [ref, a] = parseRefname(buf, next);
        if (ref === undefined) die('verify: missing <ref>');
        const [oldId, b] = parseNextOid(buf, a, 'verify', ref, false, true);
        endOf(buf, b, 'verify', ref);
        transaction.verify(ref, oldId === undefined || isZero(oldId) ? 'absent' : oldId, options());
        break;
      }
      case 'option':
        if (buf.startsWith('no-deref', next) && (buf[next + 8] === term || next + 8 === buf.length)) noDeref = true;
        else die(`option unknown: ${buf.slice(next)}`);
        return;
      case 'start':
        endOf(buf, next, 'start');
        io.stdout.write('start: ok\n');
        break;
      case 'prepare':
        endOf(buf, next, 'prepare');
        try {
          transaction.prepare();
        } catch (e) {
          die(`prepare: ${(e as Error).message}`);
        }
        io.stdout.write('prepare: ok\n');
        break;
      case 'abort':
        endOf(buf, next, 'abort');
        transaction.abort();
        io.stdout.write('abort: ok\n');
        break;
      case 'commit':
        endOf(buf, next, 'commit');
        try {
          transaction.commit();
        } catch (e) {
          die(`commit: ${(e as Error).message}`);
        }
        io.stdout.write('commit: ok\n');
        break;
    }
    noDeref = defaultNoDeref;
  };
  // One command's input (with -z, its extra NUL-terminated arguments appended), then dispatch.
  let pending: { cmd: (typeof COMMANDS)[number]; buf: string; need: number } | undefined;
  const dispatch = (p: NonNullable<typeof pending>): void => {
    const { cmd, buf } = p;
    const s = cmd.state;
    if (state === 'open' || state === 'started') {
      if (state === 'started' && s === 'started') die('cannot restart ongoing transaction');
      if (RANK[s] >= RANK[state]) state = s;
    } else if (state === 'prepared') {
      if (s !== 'closed') die('prepared transactions can only be closed');
      state = s;
    } else {
      if (s !== 'started') die('transaction is closed');
      state = s;
      transaction = repo.refTransaction();
    }
    run(cmd.prefix, buf, cmd.prefix.length + (cmd.args > 0 ? 1 : 0));
  };
  const record = (text: string): void => {
    const line = text + term;
    if (pending !== undefined) {
      pending.buf += line;
      if (--pending.need === 0) {
        const p = pending;
        pending = undefined;
        dispatch(p);
      }
      return;
    }
    if (line[0] === term) die('empty command in input');
    if (/\s/.test(line[0] as string)) die(`whitespace before command: ${line}`);
    const cmd = COMMANDS.find((c) => line.startsWith(c.prefix) && line[c.prefix.length] === (c.args > 0 ? ' ' : term));
    if (cmd === undefined) die(`unknown command: ${line}`);
    const need = nul ? Math.max(0, cmd.args - 1) : 0;
    if (need === 0) dispatch({ cmd, buf: line, need });
    else pending = { cmd, buf: line, need };
  };
  try {
    readRecords(io, term, record);
    // An early end of input: the command says what is missing.
    if (pending !== undefined) dispatch(pending);
    if (state === 'open') transaction.commit();
    else if (state === 'started' || state === 'prepared') transaction.abort();
  } catch (e) {
    transaction.abort();
    throw e;
  }
  return 0;
}

/** Records from stdin as they arrive: lines (without the newline), or NUL-terminated with -z; a last unterminated record too. */
function readRecords(io: CommandIO, term: string, onRecord: (text: string) => void): void {
  readLines(io.stdin, onRecord, () => {}, term === '\0');
}

/** git's unquote_c_style from `at` (a double quote): the text and where parsing goes on, or undefined. */
function unquoteC(buf: string, at: number): [string, number] | undefined {
  let out = '';
  let i = at + 1;
  const escapes: Record<string, string> = { a: '\x07', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v', '\\': '\\', '"': '"' };
  for (;;) {
    const c = buf[i++];
    if (c === undefined) return undefined;
    if (c === '"') return [out, i];
    if (c !== '\\') {
      out += c;
      continue;
    }
    const e = buf[i++];
    if (e === undefined) return undefined;
    if (escapes[e] !== undefined) out += escapes[e];
    else if (e >= '0' && e <= '3') {
      const d1 = buf[i++];
      const d2 = buf[i++];
      if (d1 === undefined || d2 === undefined || d1 < '0' || d1 > '7' || d2 < '0' || d2 > '7') return undefined;
      out += String.fromCharCode(((e.charCodeAt(0) - 48) << 6) | ((d1.charCodeAt(0) - 48) << 3) | (d2.charCodeAt(0) - 48));
    } else return undefined;
  }
}
