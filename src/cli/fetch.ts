import { anonymizeUrl, fetch, readRemoteConfig, type FetchedRef } from '../client/index.js';
import { isPackwrightError, PackwrightError } from '../errors/index.js';
import { runAutoMaintenance, writeReachableCommitGraph, type Repository } from '../repo/index.js';
import type { CommandIO } from './command-io.js';
import { prettyRefName } from './pretty-ref-name.js';
import { openRepository, type GlobalOptions } from './global-options.js';
import { helpRequested, UsageError } from './usage-error.js';
import { readShallowOption, type ShallowOptions } from './shallow-options.js';
import { cliAuth } from './credentials.js';
import { remoteMessagesOn } from './remote-messages.js';

const USAGE = `usage: packwright fetch [-q | -v] [-p | --prune | --no-prune] [-P | --prune-tags] [-t | --tags | -n | --no-tags] [-f | --force]
                        [--all | --multiple] [--atomic] [--dry-run] [-a | --append] [--refmap=<refspec>] [--negotiation-tip=<rev>]
                        [-u | --update-head-ok] [--upload-pack=<exec>] [--[no-]write-fetch-head] [--[no-]write-commit-graph] [--[no-]show-forced-updates] [--progress]
                        [--[no-]auto-maintenance | --[no-]auto-gc] [--prefetch] [-k | --keep]
                        [--depth=<n> | --deepen=<n> | --unshallow] [--shallow-since=<date>] [--shallow-exclude=<ref>] [--update-shallow] [--filter=<filter-spec>]
                        [<repository> [<refspec>...]]`;

/** The server's side of a line (the `what` of git's store_updated_refs). */
function remoteShown(name: string): string {
  return name === 'HEAD' ? '' : prettyRefName(name);
}

/**
 * `git fetch`: the refs of a remote (a configured one, default `origin`, or a URL) through its
 * refspecs or those given, tags following, `--prune`; git's report on stderr (`From <url>`, a line
 * a ref), FETCH_HEAD and reflogs as git writes them. Exit 1 when a ref was refused.
 */
export async function fetchCommand(io: CommandIO, global: GlobalOptions, agent: string, args: string[]): Promise<number> {
  const help = helpRequested(args, USAGE, io.stdout);
  if (help !== undefined) return help;
  let verbosity = 0;
  let progress = io.stderr.isTTY;
  let prune: boolean | undefined;
  let tags: 'all' | 'none' | undefined;
  let force = false;
  let updateHeadOk = false;
  let writeFetchHead = true;
  let atomic = false, dryRun = false, append = false, all = false, multiple = false;
  let pruneTags: boolean | undefined;
  let refmap: string[] | undefined;
  const negotiationTips: string[] = [];
  let showForcedUpdates: boolean | undefined;
  let writeCommitGraph: boolean | undefined;
  let autoMaintenance = true;
  let prefetch = false;
  let keep = false;
  let uploadPack: string | undefined;
  const shallow: ShallowOptions = {};
  let filter: string | undefined;
  const positional: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    const taken = readShallowOption(args, i, shallow, true);
    if (taken >= 0) i = taken;
    else if (a.startsWith('--filter=')) filter = a.slice(9);
    else if (a === '-q' || a === '--quiet') (verbosity = -1), (progress = false);
    else if (a === '-v' || a === '--verbose') verbosity = Math.max(verbosity, 0) + 1;
    else if (a === '-p' || a === '--prune') prune = true;
    else if (a === '--no-prune') prune = false;
    else if (a === '-P' || a === '--prune-tags') pruneTags = true;
    else if (a === '--no-prune-tags') pruneTags = false;
    else if (a === '--atomic') atomic = true;
    else if (a === '--all') all = true;
    else if (a === '--multiple') multiple = true;
    else if (a === '--dry-run') dryRun = true;
    else if (a === '-a' || a === '--append') append = true;
    else if (a === '--write-commit-graph') writeCommitGraph = true;
    else if (a === '--no-write-commit-graph') writeCommitGraph = false;
    else if (a === '--show-forced-updates') showForcedUpdates = true;
    else if (a === '--no-show-forced-updates') showForcedUpdates = false;
    else if (a.startsWith('--refmap=')) (refmap ??= []), a.length > 9 && refmap.push(a.slice(9));
    else if (a.startsWith('--negotiation-tip=')) negotiationTips.push(a.slice(18));
    else if (a === '-t' || a === '--tags') tags = 'all';
    else if (a === '-n' || a === '--no-tags') tags = 'none';
    else if (a === '-f' || a === '--force') force = true;
    else if (a === '-u' || a === '--update-head-ok') updateHeadOk = true;
    else if (a === '--write-fetch-head') writeFetchHead = true;
    else if (a === '--no-write-fetch-head') writeFetchHead = false;
    else if (a === '--progress') progress = true;
    else if (a === '--auto-maintenance' || a === '--auto-gc') autoMaintenance = true;
    else if (a === '--no-auto-maintenance' || a === '--no-auto-gc') autoMaintenance = false;
    else if (a === '--prefetch') prefetch = true;
    else if (a === '-k' || a === '--keep') keep = true;
    else if (a === '--no-keep') keep = false;
    else if (a === '--no-prefetch') prefetch = false;
    else if (a.startsWith('--upload-pack=')) uploadPack = a.slice(14);
    else if (a === '--upload-pack' && i + 1 < args.length) uploadPack = args[++i];
    else if (a === '--') positional.push(...args.slice(i + 1)), (i = args.length);
    else if (a.startsWith('-')) throw new UsageError(`error: unknown option \`${a.replace(/^-+/, '')}'\n${USAGE}`);
    else positional.push(a);
  }
  // `tag <name>` is refs/tags/<name>:refs/tags/<name>, as git reads it.
  for (let i = 1; i < positional.length; i++) {
    if (positional[i] === 'tag' && i + 1 < positional.length) positional.splice(i, 2, `refs/tags/${positional[i + 1] as string}:refs/tags/${positional[i + 1] as string}`);
  }
  const repo = openRepository(global);
  // git's default reflog action: the command line as given, URLs without their passwords.
  const reflogAction = global.env['GIT_REFLOG_ACTION'] ?? ['fetch', ...args.map(anonymizeUrl)].join(' ');
  // git's cmd_fetch: --all, every configured remote but those with skipFetchAll; --multiple, the
  // remotes and groups (remotes.<group>) named; else one remote, or a group of them.
  if (all && positional.length === 1) throw new PackwrightError('INVALID_ARGUMENT', 'fetch --all does not take a repository argument');
  if (all && positional.length > 1) throw new PackwrightError('INVALID_ARGUMENT', 'fetch --all does not make sense with refspecs');
  let remotes: (string | undefined)[];
  if (all) remotes = configuredRemotes(repo).filter((name) => !(repo.config.getBool(`remote.${name}.skipfetchall`) ?? repo.config.getBool(`remote.${name}.skipdefaultupdate`) ?? false));
  else if (multiple) {
    remotes = positional.flatMap((name) => {
      const members = remoteOrGroup(repo, name);
      if (members === undefined) throw new PackwrightError('INVALID_ARGUMENT', `no such remote or remote group: ${name}`);
      return members;
    });
  } else {
    const group = positional[0] !== undefined ? remoteGroup(repo, positional[0]) : undefined;
    if (group !== undefined && group.length > 1 && positional.length > 1) throw new PackwrightError('INVALID_ARGUMENT', 'fetching a group and specifying refspecs does not make sense');
    remotes = group !== undefined && group.length > 1 ? group : [positional[0]];
  }
  // Several remotes are fetched in turn, as git's fetch_multiple runs a fetch a remote: one that
  // fails is named and the others still fetched.
  const several = all || multiple || remotes.length > 1;
  const refspecs = several ? [] : positional.slice(1);
  // git's prepare_format_display: fetch.output is `full` or `compact`, anything else refused.
  const output = verbosity < 0 ? 'full' : String(repo.config.get('fetch.output') ?? 'full').toLowerCase();
  if (output !== 'full' && output !== 'compact') throw new PackwrightError('CONFIG_INVALID', `invalid value for 'fetch.output': '${String(repo.config.get('fetch.output'))}'`);
  const compact = output === 'compact';
  let status = 0;
  for (const remote of remotes) {
    if (several && verbosity >= 0) io.stdout.write(`Fetching ${remote ?? ''}\n`);
    const remoteSays = remoteMessagesOn(io);
    let result: Awaited<ReturnType<typeof fetch>>;
    try {
      result = await io.interruptible((signal) => fetch({
        repository: repo, remote, refspecs, tags, prune, pruneTags, atomic, dryRun, append: append || (several && remote !== remotes[0]), refmap, negotiationTips, prefetch, keep, showForcedUpdates, writeCommitGraph: several ? false : writeCommitGraph, force, updateHeadOk, writeFetchHead, uploadPack, agent, signal, reflogAction, ...shallow, filter, ...cliAuth(repo.config, global.env),
        ...(progress ? { onProgress: (text: string) => remoteSays.text(text) } : {}),
        ...(verbosity < 0 ? {} : { onWarning: (message: string) => void io.stderr.write(`warning: ${message}\n`) }),
        ...(verbosity > 1 ? { onVerbose: (line: string) => void io.stderr.write(line) } : {}),
        onStderr: (text: string) => void io.stderr.write(text),
      })).finally(() => remoteSays.end());
    } catch (e) {
      if (!several || !isPackwrightError(e) || e.code === 'ABORTED') throw e;
      io.stderr.write(`fatal: ${e.message}\nerror: could not fetch ${remote ?? ''}\n`);
      status = 1;
      continue;
    }
    if (result.aborted || result.refs.some((r) => r.status === 'rejected')) status = 1;
    // Before the report, as git's prune_refs says it before it lists the refs it meant to delete.
    if (result.pruneError !== undefined) {
      io.stderr.write(`error: ${result.pruneError}\n`);
      status = 1;
    }
    // git shows what goes to FETCH_HEAD only when it is written (or would be, with --dry-run).
    const shown = writeFetchHead || dryRun ? result.refs : result.refs.filter((r) => r.status !== 'fetch-head');
    if (verbosity >= 0) io.stderr.write(fetchReport(repo, result.url, shown, result.pruned, verbosity, Number(global.env['COLUMNS']) || 80, compact));
    // Quiet, git still says why a ref could not be written.
    else for (const r of result.refs) if (r.error !== undefined) io.stderr.write(`error: ${r.error}\n`);
    // git's advice when the forced-update check is off (store_updated_refs), quiet or not.
    if (!(showForcedUpdates ?? repo.config.getBool('fetch.showforcedupdates') ?? true) && (repo.config.getBool('advice.fetchshowforcedupdates') ?? true)) {
      io.stderr.write("warning: fetch normally indicates which branches had a forced update,\nbut that check has been disabled; to re-enable, use '--show-forced-updates'\nflag or run 'git config fetch.showForcedUpdates true'\n");
    }
  }
  // Several remotes: one commit-graph write at the end, as git's cmd_fetch does it once.
  if (several && !dryRun && (writeCommitGraph ?? repo.config.getBool('fetch.writecommitgraph') ?? false)) {
    repo.store.refresh();
    writeReachableCommitGraph(repo);
  }
  // Last, as git's cmd_fetch: its maintenance, whatever the refs' fate (a fetch that died never gets here).
  if (autoMaintenance) await runAutoMaintenance(repo, { quiet: verbosity < 0, stdout: (chunk) => void io.stdout.write(chunk), stderr: (chunk) => void io.stderr.write(chunk) });
  return status;
}

/**
 * A name given to fetch as git's add_remote_or_group takes it: the remotes of the group
 * `remotes.<name>` (its values split at spaces), else the remote itself when it is one (configured,
 * or one of git's remotes files), else undefined.
 */
function remoteOrGroup(repo: Repository, name: string): string[] | undefined {
  const group = remoteGroup(repo, name);
  if (group !== undefined) return group;
  const remote = readRemoteConfig(repo.config, name, repo);
  return remote.name !== undefined ? [name] : undefined;
}

/** The remotes of the group `remotes.<name>`, or undefined when there is no such group. */
function remoteGroup(repo: Repository, name: string): string[] | undefined {
  // git compares the variable's name (`remotes.<group>`, lowercased as config keys are) with the
  // argument as given: a path or URL is no group.
  const key = `remotes.${name}`;
  const values = repo.config.entries.filter((e) => e.key === key && typeof e.value === 'string').map((e) => e.value as string);
  return values.length > 0 ? values.flatMap((v) => v.split(/[ \t\n]+/).filter((x) => x !== '')) : undefined;
}

/** The remotes the configuration names (`remote.<name>.url`), in the order first named. */
function configuredRemotes(repo: Repository): string[] {
  const names: string[] = [];
  for (const e of repo.config.entries) {
    const m = /^remote\.(.+)\.url$/.exec(e.key);
    if (m !== null && !names.includes(m[1] as string)) names.push(m[1] as string);
  }
  return names;
}

/**
 * fetch.output=compact (git's print_compact): the part both sides share written once, as `*`
 * on the other (`main -> origin/*`, `v1.0 -> *`), where it is a whole path component.
 */
function compactPair(remote: string, local: string, refcol: number): string {
  if (remote === local) return `${remote.padEnd(refcol)} -> *`;
  let r = starred(remote, local);
  let l = local;
  if (r === undefined) {
    r = remote;
    l = starred(local, remote) ?? local;
  }
  return `${r.padEnd(refcol)} -> ${l}`;
}

/** git's find_and_replace: `needle` in `haystack` (at its end first) as whole components, replaced by `*`. */
function starred(haystack: string, needle: string): string | undefined {
  const at = haystack.endsWith(needle) ? haystack.length - needle.length : haystack.indexOf(needle);
  if (at < 0 || needle === '') return undefined;
  if (at > 0 && haystack[at - 1] !== '/') return undefined;
  if (haystack.length - at > needle.length && haystack[at + needle.length] !== '/') return undefined;
  return `${haystack.slice(0, at)}*${haystack.slice(at + needle.length)}`;
}

/** git fetch's lines (store_updated_refs, prune_refs, format_display): `From <url>`, then a line a ref. */
export function fetchReport(repo: Repository, url: string, refs: readonly FetchedRef[], pruned: readonly { ref: string; oldId: string }[], verbosity: number, columns: number, compact = false): string {
  const abbrev = (hex: string): string => repo.objects.abbreviate(Buffer.from(hex, 'hex'));
  const nullWidth = abbrev('0'.repeat(repo.store.hashLength * 2)).length;
  const summaryWidth = (ids: readonly string[]): number => 2 * Math.max(nullWidth, ...ids.map((h) => abbrev(h).length)) + 3;
  let out = '';
  let shownUrl = false;
  let refcol = 10;
  /** The ref store's error for the ref about to be shown (git prints it as the write fails, before the ref's line). */
  let failure: string | undefined;
  const line = (code: string, summary: string, error: string | undefined, remote: string, local: string, width: number): void => {
    if (failure !== undefined) out += `error: ${failure}\n`;
    if (!shownUrl) out += `From ${url}\n`;
    shownUrl = true;
    out += ` ${code} ${summary.padEnd(width)} ${compact ? compactPair(remote, local, refcol) : `${remote.padEnd(refcol)} -> ${local}`}${error !== undefined ? `  (${error})` : ''}\n`;
  };
  // Pruning comes first, before git has measured the ref column.
  const pruneWidth = summaryWidth(pruned.map((p) => p.oldId));
  for (const p of pruned) line('-', '[deleted]', undefined, '(none)', prettyRefName(p.ref), pruneWidth);
  for (const r of refs) {
    if (r.localRef === undefined || r.remoteRef === 'HEAD' || (verbosity <= 0 && r.status === 'up-to-date')) continue;
    // git's adjust_refcol_width: compact lines leave the local side out and aim at two thirds.
    const rlen = prettyRefName(r.remoteRef).length;
    if (21 + rlen + 4 + (compact ? 0 : prettyRefName(r.localRef).length) < (compact ? Math.floor((columns * 2) / 3) : columns)) refcol = Math.max(refcol, rlen);
  }
  const width = summaryWidth(refs.map((r) => r.newId));
  for (const r of refs) {
    const what = remoteShown(r.remoteRef);
    const local = r.localRef !== undefined ? prettyRefName(r.localRef) : 'FETCH_HEAD';
    // A ref that could not be written shows the update it was to be, marked `!` (git's update_local_ref).
    failure = r.error;
    const failed = r.attempted !== undefined;
    const code = (ok: string): string => (failed ? '!' : ok);
    const note = (ok: string | undefined): string | undefined => (failed ? r.reason : ok);
    switch (r.attempted ?? r.status) {
      case 'fetch-head': {
        const kind = r.remoteRef.startsWith('refs/heads/') ? 'branch' : r.remoteRef.startsWith('refs/tags/') ? 'tag' : r.remoteRef.startsWith('refs/remotes/') ? 'remote-tracking branch' : '';
        line('*', kind !== '' ? kind : 'branch', undefined, what !== '' ? what : 'HEAD', 'FETCH_HEAD', width);
        break;
      }
      case 'up-to-date':
        if (verbosity > 0) line('=', '[up to date]', undefined, what, local, width);
        break;
      case 'new': {
        const kind = r.remoteRef.startsWith('refs/tags/') ? '[new tag]' : r.remoteRef.startsWith('refs/heads/') ? '[new branch]' : '[new ref]';
        line(code('*'), kind, note(undefined), what, local, width);
        break;
      }
      case 'fast-forward':
        line(code(' '), `${abbrev(r.oldId as string)}..${abbrev(r.newId)}`, note(undefined), what, local, width);
        break;
      case 'forced':
        line(code('+'), `${abbrev(r.oldId as string)}...${abbrev(r.newId)}`, note('forced update'), what, local, width);
        break;
      case 'tag-update':
        line(code('t'), '[tag update]', note(undefined), what, local, width);
        break;
      case 'rejected':
        line('!', '[rejected]', r.reason, what, local, width);
        break;
    }
  }
  return out;
}
