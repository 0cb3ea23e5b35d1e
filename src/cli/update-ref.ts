import { PackwrightError } from '../errors/index.js';
import type { RefExpectation, RefTransaction, RefUpdateOptions } from '../refs/index.js';
import type { Repository } from '../repo/index.js';
import type { CommandIO } from './command-io.js';
import { readAll } from './read-lines.js';
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
  let createReflog = false;
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
  const base: RefUpdateOptions = { ...(message !== undefined ? { message } : {}), ...(createReflog ? { createReflog } : {}) };
  if (stdin) {
    if (remove || positional.length > 0) throw new UsageError(USAGE);
    return runStdin(io, repo, nul, base, noDeref, zero, resolve);
  }
  if (nul) throw new UsageError(USAGE);
  const transaction = repo.refTransaction();
  const options = { ...base, ...(noDeref ? { noDeref } : {}) };
  if (remove) {
    if (positional.length < 1 || positional.length > 2) throw new UsageError(USAGE);
    const old = positional[1];
    // git: an old value given as all zeros to -d means "must exist with some value": it refuses it.
    if (old !== undefined && (old === '' || old === zero)) throw new PackwrightError('INVALID_ARGUMENT', `${positional[0] as string}: not a valid SHA1`);
    transaction.delete(positional[0] as string, expectation(old), options);
  } else {
    if (positional.length < 2 || positional.length > 3) throw new UsageError(USAGE);
    const name = positional[0] as string;
    const id = resolve(positional[1] as string, 'new');
    if (id.every((b) => b === 0)) transaction.delete(name, expectation(positional[2]), options);
    else transaction.update(name, id, expectation(positional[2]), options);
  }
  transaction.commit();
  return 0;
}

/** `--stdin`: commands one a line (or NUL-separated fields with -z), in one transaction unless start/commit say otherwise. */
function runStdin(io: CommandIO, repo: Repository, nul: boolean, base: RefUpdateOptions, defaultNoDeref: boolean, zero: string, resolve: (value: string, what: string) => Buffer): number {
  const text = readAll(io.stdin).toString('utf8');
  let transaction: RefTransaction | undefined;
  let state: 'open' | 'started' | 'prepared' | 'closed' = 'open';
  let noDeref = defaultNoDeref;
  const current = (): RefTransaction => (transaction ??= repo.refTransaction());
  // Fields: with -z, every argument ends in NUL; without, a line's arguments are separated by spaces.
  const tokens = nul ? text.split('\0') : [];
  let t = 0;
  const lines = nul ? [] : text.split('\n');
  if (!nul && lines[lines.length - 1] === '') lines.pop();
  const value = (command: string, ref: string, raw: string | undefined, old: boolean): Buffer | 'absent' | undefined => {
    if (raw === undefined) return undefined;
    if (raw === '' || raw === zero) return old ? 'absent' : Buffer.alloc(repo.objects.hashLength);
    try {
      return resolve(raw, old ? 'old' : 'new');
    } catch {
      throw new PackwrightError('INVALID_ARGUMENT', `${command} ${ref}: invalid <${old ? 'oldvalue' : 'newvalue'}>: ${raw}`);
    }
  };
  const handle = (command: string, fields: string[]): void => {
    const options: RefUpdateOptions = { ...base, ...(noDeref ? { noDeref: true } : {}) };
    const ref = fields[0];
    const needRef = (): string => {
      if (ref === undefined || ref === '') throw new PackwrightError('INVALID_ARGUMENT', `${command}: missing <ref>`);
      return ref;
    };
    switch (command) {
      case 'update': {
        const name = needRef();
        if (fields[1] === undefined) throw new PackwrightError('INVALID_ARGUMENT', `update ${name}: missing <newvalue>`);
        const next = value('update', name, fields[1], false) as Buffer;
        const old = value('update', name, fields[2], true);
        if (next.every((b) => b === 0)) current().delete(name, old, options);
        else current().update(name, next, old, options);
        break;
      }
      case 'create': {
        const name = needRef();
        if (fields[1] === undefined) throw new PackwrightError('INVALID_ARGUMENT', `create ${name}: missing <newvalue>`);
        const next = value('create', name, fields[1], false) as Buffer;
        if (next.every((b) => b === 0)) throw new PackwrightError('INVALID_ARGUMENT', `create ${name}: zero <newvalue>`);
        current().create(name, next, options);
        break;
      }
      case 'delete': {
        const name = needRef();
        const old = value('delete', name, fields[1], true);
        if (old === 'absent') throw new PackwrightError('INVALID_ARGUMENT', `delete ${name}: zero <oldvalue>`);
        current().delete(name, old, options);
        break;
      }
      case 'verify': {
        const name = needRef();
        current().verify(name, value('verify', name, fields[1], true) ?? 'absent', options);
        break;
      }
      case 'option':
        if (ref !== 'no-deref') throw new PackwrightError('INVALID_ARGUMENT', `option unknown: ${ref ?? ''}`);
        noDeref = true;
        return;
      case 'start':
        if (state !== 'open') throw new PackwrightError('INVALID_ARGUMENT', `start: transaction already ${state}`);
        state = 'started';
        io.stdout.write('start: ok\n');
        break;
      case 'prepare':
        current().prepare();
        state = 'prepared';
        io.stdout.write('prepare: ok\n');
        break;
      case 'commit':
        current().commit();
        transaction = undefined;
        state = 'open';
        io.stdout.write('commit: ok\n');
        break;
      case 'abort':
        current().abort();
        transaction = undefined;
        state = 'open';
        io.stdout.write('abort: ok\n');
        break;
      default:
        throw new PackwrightError('INVALID_ARGUMENT', `unknown command: ${command}${fields.length > 0 ? ` ${fields.join(' ')}` : ''}`);
    }
    noDeref = defaultNoDeref;
  };
  try {
    if (nul) {
      while (t < tokens.length) {
        const head = tokens[t++] as string;
        if (head === '' && t >= tokens.length) break;
        const sp = head.indexOf(' ');
        const command = sp < 0 ? head : head.slice(0, sp);
        const ref = sp < 0 ? undefined : head.slice(sp + 1);
        const count = { update: 2, create: 1, delete: 1, verify: 1 }[command] ?? 0;
        const fields = ref === undefined ? [] : [ref];
        for (let k = 0; k < count; k++) {
          if (t >= tokens.length || (t === tokens.length - 1 && tokens[t] === '')) {
            if (command === 'update' && k === 0) throw new PackwrightError('INVALID_ARGUMENT', `${command} ${ref ?? ''}: unexpected end of input when reading <newvalue>`);
            break;
          }
          const field = tokens[t++] as string;
          if (k > 0 && field === '') continue;
          fields.push(field);
        }
        handle(command, fields);
      }
    } else {
      for (const line of lines) {
        const [command, ...fields] = line.split(' ');
        handle(command as string, fields);
      }
    }
    if (transaction !== undefined) transaction.commit();
  } catch (e) {
    transaction?.abort();
    throw e;
  }
  return 0;
}
