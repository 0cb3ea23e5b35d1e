import { PackwrightError } from '../errors/index.js';
import { isValidRefname } from '../refs/index.js';
import type { Repository } from '../repo/index.js';
import type { CommandIO } from './command-io.js';
import { helpRequested, UsageError } from './usage-error.js';

const USAGE = `usage: packwright symbolic-ref [-m <reason>] <name> <ref>
   or: packwright symbolic-ref [-q] [--short] [--no-recurse] <name>
   or: packwright symbolic-ref --delete [-q] <name>

    -q, --quiet           suppress error message for non-symbolic (detached) refs
    -d, --delete          delete symbolic ref
    --short               shorten ref output
    --recurse             recursively dereference (default)
    -m <reason>           reason of the update`;

/** `git symbolic-ref`: reads, sets or deletes a symbolic ref (HEAD, usually), with git's checks and words. */
export function symbolicRefCommand(io: CommandIO, open: () => Repository, args: string[]): number {
  const help = helpRequested(args, USAGE, io.stdout);
  if (help !== undefined) return help;
  let quiet = false;
  let remove = false;
  let short = false;
  let recurse = true;
  let message: string | undefined;
  const positional: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    if (a === '-q' || a === '--quiet') quiet = true;
    else if (a === '-d' || a === '--delete') remove = true;
    else if (a === '--short') short = true;
    else if (a === '--recurse') recurse = true;
    else if (a === '--no-recurse') recurse = false;
    else if (a === '-m') message = args[++i];
    else if (a.startsWith('-m')) message = a.slice(2);
    else if (a === '--') positional.push(...args.slice(i + 1)), (i = args.length);
    else if (a.startsWith('-')) throw new UsageError(USAGE);
    else positional.push(a);
  }
  if (message === '') throw new PackwrightError('INVALID_ARGUMENT', 'Refusing to perform update with empty message');
  const repo = open();
  const refs = repo.refs;
  /** Where `name` points (one level, or to the end with `recurse`); undefined when it is not symbolic. */
  const check = (name: string, quietly: boolean): string | undefined => {
    // A ref that does not exist is no symbolic ref either (git's resolve_ref_unsafe without READING).
    const v = refs.read(name);
    if (v?.kind !== 'symbolic') {
      if (!quietly) throw new PackwrightError('INVALID_ARGUMENT', `ref ${name} is not a symbolic ref`);
      return undefined;
    }
    return recurse ? (refs.symbolicEnd(v.target) ?? v.target) : v.target;
  };
  if (remove) {
    if (positional.length !== 1) throw new UsageError(USAGE);
    const name = positional[0] as string;
    if (check(name, true) === undefined) throw new PackwrightError('INVALID_ARGUMENT', `Cannot delete ${name}, not a symbolic ref`);
    if (name === 'HEAD') throw new PackwrightError('INVALID_ARGUMENT', `deleting '${name}' is not allowed`);
    repo.refTransaction().delete(name, undefined, { noDeref: true }).commit();
    return 0;
  }
  if (positional.length === 1) {
    const target = check(positional[0] as string, quiet);
    if (target === undefined) return 1;
    io.stdout.write(`${short ? shorten(target) : target}\n`);
    return 0;
  }
  if (positional.length !== 2) throw new UsageError(USAGE);
  const [name, target] = positional as [string, string];
  if (name === 'HEAD' && !target.startsWith('refs/')) throw new PackwrightError('INVALID_ARGUMENT', 'Refusing to point HEAD outside of refs/');
  if (!isValidRefname(target, { allowOneLevel: true })) throw new PackwrightError('INVALID_ARGUMENT', `Refusing to set '${name}' to invalid ref '${target}'`);
  repo.refTransaction().setSymbolic(name, target, message !== undefined ? { message } : {}).commit();
  return 0;
}

/** A ref's short name as git's --short gives it for the usual namespaces. */
function shorten(name: string): string {
  for (const prefix of ['refs/heads/', 'refs/tags/', 'refs/remotes/', 'refs/']) if (name.startsWith(prefix)) return name.slice(prefix.length);
  return name;
}
