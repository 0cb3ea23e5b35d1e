import { isPackwrightError } from '../errors/index.js';
import { parseTag } from '../objects/index.js';
import { isValidRefname } from '../refs/index.js';
import type { Repository } from '../repo/index.js';
import { abbrevOption, configuredAbbrev } from './abbrev.js';
import { readLines } from './read-lines.js';
import { helpRequested, UsageError } from './usage-error.js';
import type { CommandIO } from './command-io.js';

const USAGE = `usage: git show-ref [-q | --quiet] [--verify] [--head] [-d | --dereference]
             [-s | --hash[=<n>]] [--abbrev[=<n>]] [--tags]
             [--heads] [--] [<pattern>...]
   or: git show-ref --exclude-existing[=<pattern>]`.replace(/git show-ref/g, 'packwright show-ref');

/**
 * `git show-ref`: refs under refs/ (or only heads, tags), matched by their last components,
 * with their ids (abbreviated on request) and with `-d` what annotated tags peel to; `--verify`
 * takes exact names; `--exclude-existing` filters names from stdin. Exit 1 when nothing matched.
 */
export function showRefCommand(io: CommandIO, open: () => Repository, args: string[]): number {
  const help = args.length === 1 && args[0] === '-h' ? helpRequested(args, USAGE, io.stdout) : args.includes('--help') ? helpRequested(['--help'], USAGE, io.stdout) : undefined;
  if (help !== undefined) return help;
  let quiet = false, verify = false, showHead = false, deref = false, hashOnly = false, tags = false, heads = false;
  let abbrev: number | 'default' = 0;
  let exclude: string | undefined | null = null;
  const patterns: string[] = [];
  let options = true;
  for (const a of args) {
    if (!options || !a.startsWith('-') || a === '-') { patterns.push(a); continue; }
    if (a === '--') options = false;
    else if (a === '-q' || a === '--quiet') quiet = true;
    else if (a === '--verify') verify = true;
    else if (a === '--head' || a === '-h') showHead = true;
    else if (a === '-d' || a === '--dereference') deref = true;
    else if (a === '--tags') tags = true;
    else if (a === '--heads') heads = true;
    else if (a === '-s' || a === '--hash') hashOnly = true;
    else if (a.startsWith('--hash=')) { hashOnly = true; abbrev = Number(a.slice(7)) === 0 ? 0 : abbrevOption(a.slice(7), 64); }
    else if (/^-s[0-9]+$/.test(a)) { hashOnly = true; abbrev = abbrevOption(a.slice(2), 64); }
    else if (a === '--abbrev') abbrev = 'default';
    else if (a.startsWith('--abbrev=')) abbrev = abbrevOption(a.slice(9), 64);
    else if (a === '--no-abbrev') abbrev = 0;
    else if (a === '--exclude-existing') exclude = undefined;
    else if (a.startsWith('--exclude-existing=')) exclude = a.slice(19);
    else throw new UsageError(`error: unknown option \`${a.replace(/^--?/, '')}'\n${USAGE}`);
  }
  const repo = open();
  try {
    const hexLength = repo.store.hashLength * 2;
    const length = abbrev === 'default' ? configuredAbbrev(repo.config, hexLength) : Math.min(abbrev, hexLength);
    if (exclude !== null) return excludeExisting(io, repo, exclude);
    const out: string[] = [];
    const show = (name: string, id: Buffer): void => {
      if (!repo.objects.has(id)) {
        io.stdout.write(out.join(''));
        throw Object.assign(new Error(), { fatal: `git show-ref: bad ref ${name} (${id.toString('hex')})` });
      }
      if (quiet) return;
      const hex = length === 0 ? id.toString('hex') : repo.objects.abbreviate(id, length);
      out.push(hashOnly ? `${hex}\n` : `${hex} ${name}\n`);
      if (!deref) return;
      const peeled = peelTag(repo, id);
      if (peeled !== undefined) out.push(`${length === 0 ? peeled.toString('hex') : repo.objects.abbreviate(peeled, length)} ${name}^{}\n`);
    };
    try {
      if (verify) {
        if (patterns.length === 0) {
          io.stderr.write('fatal: --verify requires a reference\n');
          return 128;
        }
        for (const name of patterns) {
          const id = name.startsWith('refs/') || name === 'HEAD' ? repo.refs.resolve(name) : undefined;
          if (id !== undefined) {
            show(name, id);
          } else if (!quiet) {
            io.stdout.write(out.join(''));
            io.stderr.write(`fatal: '${name}' - not a valid ref\n`);
            return 128;
          } else {
            return 1;
          }
        }
        io.stdout.write(out.join(''));
        return 0;
      }
      let found = 0;
      const consider = (name: string, id: Buffer, always = false): void => {
        if (!always && patterns.length > 0 && !patterns.some((p) => p.length <= name.length && name.endsWith(p) && (p.length === name.length || name[name.length - p.length - 1] === '/'))) return;
        found++;
        show(name, id);
      };
      if (showHead) {
        const head = repo.refs.resolve('HEAD');
        if (head !== undefined) consider('HEAD', head, true);
      }
      const lists = heads || tags ? [...(heads ? ['refs/heads/'] : []), ...(tags ? ['refs/tags/'] : [])] : ['refs/'];
      for (const prefix of lists) for (const ref of repo.refs.list(prefix)) consider(ref.name, ref.id);
      io.stdout.write(out.join(''));
      return found === 0 ? 1 : 0;
    } catch (e) {
      const fatal = (e as { fatal?: string }).fatal;
      if (fatal === undefined) throw e;
      io.stderr.write(`fatal: ${fatal}\n`);
      return 128;
    }
  } finally {
    repo.close();
  }
}

/** What an annotated tag finally points at (the tag chain followed), or undefined for anything else. */
function peelTag(repo: Repository, id: Buffer): Buffer | undefined {
  let current = id;
  let peeled: Buffer | undefined;
  for (let depth = 0; depth < 64; depth++) {
    let obj;
    try {
      obj = repo.objects.read(current);
    } catch (e) {
      if (isPackwrightError(e)) return peeled;
      throw e;
    }
    if (obj.type !== 'tag') return peeled;
    current = parseTag(obj.data, repo.store.hashLength, current.toString('hex')).object;
    peeled = current;
  }
  return peeled;
}

/** `--exclude-existing[=<pattern>]`: lines from stdin naming refs this repository does not have. */
function excludeExisting(io: CommandIO, repo: Repository, match: string | undefined): number {
  const existing = new Set(repo.refs.list('refs/').map((r) => r.name));
  const out: string[] = [];
  const lines: string[] = [];
  readLines(io.stdin, (l) => lines.push(l), () => {});
  for (let line of lines) {
    if (line.endsWith('^{}')) line = line.slice(0, -3);
    const ref = line.slice(line.search(/\S*$/));
    if (match !== undefined && (ref.length < match.length || !ref.startsWith(match))) continue;
    if (!isValidRefname(ref)) {
      io.stderr.write(`warning: ref '${ref}' ignored\n`);
      continue;
    }
    if (!existing.has(ref)) out.push(`${line}\n`);
  }
  io.stdout.write(out.join(''));
  return 0;
}
