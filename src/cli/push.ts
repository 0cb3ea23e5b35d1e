import { COLOR_RESET, slotColor, wantColor } from '../config/index.js';
import { anonymizeUrl, defaultRemoteName, push, readRemoteConfig, type PushedRef } from '../client/index.js';
import { isPackwrightError } from '../errors/index.js';
import type { Repository } from '../repo/index.js';
import type { CommandIO } from './command-io.js';
import { prettyRefName } from './pretty-ref-name.js';
import { openRepository, type GlobalOptions } from './global-options.js';
import { helpRequested, UsageError } from './usage-error.js';
import { cliAuth } from './credentials.js';
import { remoteMessagesOn } from './remote-messages.js';

const USAGE = `usage: packwright push [-q | -v] [--all | --mirror | --tags] [--prune] [-d | --delete] [-f | --force] [--force-with-lease[=<ref>[:<expect>]] [--force-if-includes]]
                       [-n | --dry-run] [--atomic] [--follow-tags] [-o <option> | --push-option=<option>] [--[no-]thin] [--receive-pack=<exec>] [--porcelain] [--[no-]verify] [-u | --set-upstream] [--[no-]progress]
                       [<repository> [<refspec>...]]`;

/** git's advice after a refusal (builtin/push.c), by the first reason that applies. */
const ADVICE: readonly [string, string][] = [
  ['non-ff-head', "Updates were rejected because the tip of your current branch is behind\nits remote counterpart. Integrate the remote changes (e.g.\n'git pull ...') before pushing again.\nSee the 'Note about fast-forwards' in 'git push --help' for details."],
  ['non-fast-forward', "Updates were rejected because a pushed branch tip is behind its remote\ncounterpart. Check out this branch and integrate the remote changes\n(e.g. 'git pull ...') before pushing again.\nSee the 'Note about fast-forwards' in 'git push --help' for details."],
  ['already exists', 'Updates were rejected because the tag already exists in the remote.'],
  ['fetch first', "Updates were rejected because the remote contains work that you do\nnot have locally. This is usually caused by another repository pushing\nto the same ref. You may want to first integrate the remote changes\n(e.g., 'git pull ...') before pushing again.\nSee the 'Note about fast-forwards' in 'git push --help' for details."],
  ['needs force', "You cannot update a remote ref that points at a non-commit object,\nor update a remote ref to make it point at a non-commit object,\nwithout using the '--force' option.\n"],
];

/**
 * `git push`: refs to a remote (a configured one or a URL) through the refspecs given, the
 * remote's push refspecs, or the current branch (push.default=simple); `--all`, `--tags`,
 * `--delete`, `--force`, `--force-with-lease`, `--atomic`, `--push-option`, `--dry-run`. git's report on stderr
 * (or `--porcelain` on stdout); exit 1 when a ref was refused.
 */
export async function pushCommand(io: CommandIO, global: GlobalOptions, agent: string, args: string[]): Promise<number> {
  const help = helpRequested(args, USAGE, io.stdout);
  if (help !== undefined) return help;
  let verbosity = 0;
  let all = false, tags = false, del = false, force = false, atomic = false, porcelain = false, mirror = false, prune = false, dryRun = false;
  let thin = true;
  let noVerify = false;
  let setUpstream = false;
  let progress: boolean | undefined;
  let forceIfIncludes: boolean | undefined;
  let followTags: boolean | undefined;
  let lease: boolean | Record<string, string | undefined> = false;
  let receivePack: string | undefined;
  const pushOptions: string[] = [];
  const positional: string[] = [];
  const addLease = (spec: string): void => {
    const colon = spec.indexOf(':');
    if (lease === true || lease === false) lease = {};
    if (colon < 0) lease[spec.startsWith('refs/') ? spec : `refs/heads/${spec}`] = undefined;
    else lease[spec.slice(0, colon).startsWith('refs/') ? spec.slice(0, colon) : `refs/heads/${spec.slice(0, colon)}`] = spec.slice(colon + 1);
  };
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    if (a === '-q' || a === '--quiet') verbosity = -1;
    else if (a === '-v' || a === '--verbose') verbosity = Math.max(verbosity, 0) + 1;
    else if (a === '--all') all = true;
    else if (a === '--mirror') mirror = true;
    else if (a === '--prune') prune = true;
    else if (a === '--tags') tags = true;
    else if (a === '-d' || a === '--delete') del = true;
    else if (a === '-f' || a === '--force') force = true;
    else if (a === '--no-force') force = false;
    else if (a === '--atomic') atomic = true;
    else if (a === '-n' || a === '--dry-run') dryRun = true;
    else if (a === '--follow-tags') followTags = true;
    else if (a === '--no-follow-tags') followTags = false;
    else if (a === '--force-if-includes') forceIfIncludes = true;
    else if (a === '--no-force-if-includes') forceIfIncludes = false;
    else if (a === '--porcelain') porcelain = true;
    else if (a === '--thin') thin = true;
    else if (a === '--no-thin') thin = false;
    else if (a === '--no-verify') noVerify = true;
    else if (a === '-u' || a === '--set-upstream') setUpstream = true;
    else if (a === '--progress') progress = true;
    else if (a === '--no-progress') progress = false;
    else if (a === '--verify') noVerify = false;
    else if (a === '--force-with-lease') lease = lease === false ? true : lease;
    else if (a.startsWith('--force-with-lease=')) addLease(a.slice(19));
    else if (a.startsWith('--push-option=')) pushOptions.push(a.slice(14));
    else if ((a === '-o' || a === '--push-option') && i + 1 < args.length) pushOptions.push(args[++i] as string);
    else if (a.startsWith('--receive-pack=') || a.startsWith('--exec=')) receivePack = a.slice(a.indexOf('=') + 1);
    else if (a === '--receive-pack' && i + 1 < args.length) receivePack = args[++i];
    else if (a === '--') positional.push(...args.slice(i + 1)), (i = args.length);
    else if (a.startsWith('-')) throw new UsageError(`error: unknown option \`${a.replace(/^-+/, '')}'\n${USAGE}`);
    else positional.push(a);
  }
  // `tag <name>` on the command line is refs/tags/<name>:refs/tags/<name>, as git reads it.
  for (let i = 1; i < positional.length; i++) {
    if (positional[i] === 'tag' && i + 1 < positional.length) positional.splice(i, 2, `refs/tags/${positional[i + 1] as string}`);
  }
  const repo = openRepository(global);
  if (verbosity > 0) io.stderr.write(`Pushing to ${anonymizeUrl(readRemoteConfig(repo.config, positional[0] ?? 'origin', repo).pushUrl)}\n`);
  const remoteSays = remoteMessagesOn(io);
  let result: Awaited<ReturnType<typeof push>>;
  const colors = pushColors(repo, io.stderr.isTTY === true, global.env);
  const failed = (url: string): string => `${colors.error}error: failed to push some refs to '${url}'\n${colors.errorReset}`;
  const hints = (text: string): string => `${text.split('\n').map((l) => `${colors.hint}hint:${l === '' ? '' : ` ${l}`}${colors.hintReset}`).join('\n')}\n`;
  try {
    result = await io.interruptible((signal) => push({
      repository: repo, remote: positional[0], refspecs: positional.slice(1), all, mirror, prune, tags, delete: del, force, atomic, dryRun, pushOptions, thin, receivePack, agent, signal,
      forceWithLease: lease, forceIfIncludes, followTags, noVerify, setUpstream, ...cliAuth(repo.config, global.env),
      onHookOutput: (chunk, stream) => (stream === 'stdout' ? io.stdout : io.stderr).write(chunk),
      // git's progress: on a terminal unless -q, or asked for with --progress.
      ...((progress ?? (io.stderr.isTTY === true && verbosity >= 0)) ? { onProgress: (text: string) => void io.stderr.write(text) } : {}),
      ...(verbosity < 0 ? {} : { onWarning: (message: string) => void io.stderr.write(`warning: ${message}\n`) }),
      // git's remote-curl at -v -v: how each HTTP request goes out.
      ...(verbosity > 1 ? { onVerbose: (line: string) => void io.stderr.write(line) } : {}),
      onMessage: (text) => remoteSays.text(text),
      onStderr: (text) => io.stderr.write(text),
    })).finally(() => remoteSays.end());
  } catch (e) {
    // A refspec whose source is no ref or object: git's line for each, before anything was sent.
    if (!isPackwrightError(e) || e.code !== 'REF_NOT_FOUND' || !e.message.startsWith('src refspec ')) throw e;
    const branch = repo.refs.symbolicEnd('HEAD');
    const name = positional[0] ?? defaultRemoteName(repo.config, branch?.startsWith('refs/heads/') === true ? branch.slice(11) : undefined, true);
    io.stderr.write(`${e.message.split('\n').map((l) => `error: ${l}\n`).join('')}${failed(anonymizeUrl(readRemoteConfig(repo.config, name, repo).pushUrl))}`);
    return 1;
  }
  if (result.noRefsInCommon === true) io.stderr.write('No refs in common and none specified; doing nothing.\nPerhaps you should specify a branch.\n');
  // A destination git could not place: its error and advice for each, then the failure.
  for (const e of result.refspecErrors ?? []) {
    io.stderr.write(`error: ${e.message}\n`);
    if (e.hint !== undefined) io.stderr.write(hints(e.hint));
  }
  // A pre-push hook that failed (or nothing to push at all): git says only that the push failed.
  if (result.declined === true || result.noRefsInCommon === true || result.refspecErrors !== undefined) {
    io.stderr.write(failed(result.url));
    return 1;
  }
  if (result.unpackError !== undefined) io.stderr.write(`error: remote unpack failed: ${result.unpackError}\n`);
  // Made only when shown: abbreviating its ids reads the store's indexes.
  if (porcelain || verbosity >= 0 || !result.ok) (porcelain ? io.stdout : io.stderr).write(pushReport(repo, result.url, result.refs, verbosity, porcelain, colors));
  // --set-upstream, after the report (git's set_upstreams and install_branch_config).
  if (verbosity >= 0) {
    for (const u of result.upstreams ?? []) {
      const merge = u.merge.replace(/^refs\/heads\//, '');
      io.stdout.write(dryRun ? `Would set upstream of '${u.branch}' to '${merge}' of '${u.remote}'\n` : `branch '${u.branch}' set up to track '${u.remote}/${merge}'${u.rebase ? ' by rebasing' : ''}.\n`);
    }
  }
  if (porcelain) io.stdout.write('Done\n');
  if (result.ok) return 0;
  io.stderr.write(failed(result.url));
  const head = repo.refs.symbolicEnd('HEAD');
  // git names the current branch when the ref refused has its name on the server (transport.c
  // compares the remote ref's name with HEAD's), whatever was pushed to it.
  const reasons = new Set(result.refs.filter((r) => r.status === 'rejected').map((r) => (r.reason === 'non-fast-forward' && r.remoteRef === head ? 'non-ff-head' : r.reason)));
  const advice = ADVICE.find(([reason]) => reasons.has(reason));
  if (advice !== undefined) io.stderr.write(hints(advice[1]));
  return 1;
}

/** The escapes push's lines are colored with (empty where no color is wanted). */
export interface PushColors {
  /** color.transport.rejected, for a ref line from the first refused ref of the list on. */
  rejected: string;
  rejectedReset: string;
  /** color.push.error, for "error: failed to push some refs". */
  error: string;
  errorReset: string;
  /** color.advice.hint, for each hint line. */
  hint: string;
  hintReset: string;
}

/**
 * git's colors for push: color.transport, color.push and color.advice and their slots (git's push
 * reads no color.ui: unset, each is auto).
 */
export function pushColors(repo: Repository, stderrIsTTY: boolean, env: Readonly<Record<string, string | undefined>>): PushColors {
  const config = repo.config;
  const slots = (key: string, slot: string, fallback: string, reset: string): [string, string] => (wantColor(config, key, stderrIsTTY, env, false) ? [slotColor(config, `${key}.${slot}`, fallback), slotColor(config, `${key}.${reset}`, COLOR_RESET)] : ['', '']);
  const [rejected, rejectedReset] = slots('color.transport', 'rejected', '\x1b[31m', 'reset');
  const [error, errorReset] = slots('color.push', 'error', '\x1b[31m', 'reset');
  const [hint, hintReset] = slots('color.advice', 'hint', '\x1b[33m', 'reset');
  return { rejected, rejectedReset, error, errorReset, hint, hintReset };
}

const NO_COLORS: PushColors = { rejected: '', rejectedReset: '', error: '', errorReset: '', hint: '', hintReset: '' };

/** git push's lines (transport_print_push_status): `To <url>`, the refs pushed, then the ones refused. */
export function pushReport(repo: Repository, url: string, refs: readonly PushedRef[], verbosity: number, porcelain: boolean, colors: PushColors = NO_COLORS): string {
  const abbrev = (hex: string): string => repo.objects.abbreviate(Buffer.from(hex, 'hex'));
  const ids = refs.flatMap((r) => [r.oldId, r.newId].filter((x): x is string => x !== undefined));
  const width = 2 * Math.max(abbrev('0'.repeat(repo.store.hashLength * 2)).length, ...ids.map((h) => abbrev(h).length)) + 3;
  const lines: string[] = [];
  const line = (r: PushedRef, flag: string, summary: string, withSource: boolean, msg: string | undefined): void => {
    const from = withSource && r.localRef !== undefined ? r.localRef : undefined;
    if (porcelain) {
      lines.push(`${flag}\t${from ?? ''}:${r.remoteRef}\t${summary}${msg !== undefined ? ` (${msg})` : ''}`);
      return;
    }
    // git's push_had_errors(ref): this ref or any after it in the list was refused.
    const red = refs.slice(refs.indexOf(r)).some((x) => x.status !== 'ok' && x.status !== 'up-to-date');
    const [on, off] = red ? [colors.rejected, colors.rejectedReset] : ['', ''];
    lines.push(` ${on}${flag} ${summary.padEnd(width)}${off} ${from !== undefined ? `${prettyRefName(from)} -> ${prettyRefName(r.remoteRef)}` : prettyRefName(r.remoteRef)}${msg !== undefined ? ` (${msg})` : ''}`);
  };
  const ok = (r: PushedRef): void => {
    if (r.newId === undefined) line(r, '-', '[deleted]', false, undefined);
    else if (r.oldId === undefined) line(r, '*', r.remoteRef.startsWith('refs/tags/') ? '[new tag]' : r.remoteRef.startsWith('refs/heads/') ? '[new branch]' : '[new reference]', true, undefined);
    else if (r.forced) line(r, '+', `${abbrev(r.oldId)}...${abbrev(r.newId)}`, true, 'forced update');
    else line(r, ' ', `${abbrev(r.oldId)}..${abbrev(r.newId)}`, true, undefined);
  };
  if (verbosity > 0) for (const r of refs) if (r.status === 'up-to-date') line(r, '=', '[up to date]', true, undefined);
  for (const r of refs) if (r.status === 'ok') ok(r);
  for (const r of refs) {
    if (r.status === 'rejected') line(r, '!', '[rejected]', true, r.reason);
    else if (r.status === 'remote-rejected') line(r, '!', '[remote rejected]', r.newId !== undefined, r.reason);
    else if (r.status === 'remote-failure') line(r, '!', '[remote failure]', r.newId !== undefined, r.reason);
  }
  if (lines.length === 0) return porcelain ? '' : 'Everything up-to-date\n';
  return `To ${url}\n${lines.join('\n')}\n`;
}
