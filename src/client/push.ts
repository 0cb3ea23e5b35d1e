// `git push` (builtin/push.c, remote.c's match_push_refs and set_ref_status_for_push,
// send-pack.c): the server's receive-pack advertisement, the refspecs matched against local and
// remote refs, each ref judged as git judges it (up to date, fast-forward, forced, refused), the
// commands with a thin pack of what the server lacks, streamed as it is made, then the server's
// report and the remote-tracking refs updated.
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { setConfigValue } from '../config/set-config-value.js';
import { isPackwrightError, PackwrightError } from '../errors/packwright-error.js';
import { createPack } from '../create/create-pack.js';
import { packSettings } from '../create/pack-settings.js';
import { PackProgress } from '../create/pack-progress.js';
import { OBJ_COMMIT } from '../objects/object-type.js';
import { peelObject } from '../odb/peel-object.js';
import { encodePacket, FLUSH_PACKET, PacketReader } from '../protocol/pkt-line.js';
import { BAND_DATA, BAND_ERROR, BAND_PROGRESS } from '../protocol/sideband.js';
import { excludedByNegative, expandRefName, fetchDestination, mapPattern, matchesSource, parseRefspec, type Refspec } from '../refs/refspec.js';
import { DWIM_RULES } from '../refs/resolve-revision.js';
import { readReflog } from '../refs/reflog.js';
import type { Repository } from '../repo/repository.js';
import { CommitDag } from '../walk/commit-dag.js';
import { isAncestor } from '../walk/is-ancestor.js';
import type { RevTip } from '../walk/rev-args.js';
import { readAdvertisement, type AdvertisedRef } from './advertisement.js';
import { nextPacket } from './protocol-v2.js';
import { anonymizeUrl, checkCredentialsInUrl, defaultRemoteName, readRemoteConfig, type RemoteConfig } from './remote-config.js';
import { openConnection, parseRemoteUrl, type Connection } from './transport.js';
import { negotiateCommon } from './fetch-pack.js';
import { createNegotiator } from './negotiator.js';
import { readGreeting } from './upload-pack-conversation.js';
import { remoteCallOptions, withLocalRepository, type LocalRepositoryOptions, type RemoteCallOptions } from './client-options.js';
import { configuredProtocol, extraHeaders, httpSettings, sshSettings, transportPolicy } from './remote-call-config.js';
import { runPrePushHook, type PrePushUpdate } from './pre-push-hook.js';

/** What to push from (`dir` or `repository`), where, and how. */
export interface PushOptions extends LocalRepositoryOptions, RemoteCallOptions {
  /** A configured remote's name (default: defaultRemoteName's for a push), or a URL or path. */
  remote?: string | undefined;
  /** Refspecs (`main`, `HEAD:refs/heads/x`, `+topic`, `:gone`, `refs/heads/*:refs/heads/*`); default remote.<name>.push, else the current branch to its upstream (push.default=simple). */
  refspecs?: readonly string[] | undefined;
  /** Every branch (git's --all). */
  all?: boolean | undefined;
  /** Every tag as well (git's --tags). */
  tags?: boolean | undefined;
  /** Every ref under refs/, forced, and the server's refs this repository lacks deleted (git's --mirror; also remote.<name>.mirror). */
  mirror?: boolean | undefined;
  /** Delete the server's refs that a pattern refspec maps to from local refs that are gone (git's --prune). */
  prune?: boolean | undefined;
  /** Also push the annotated tags that point into what is pushed and the server lacks (git's --follow-tags; push.followTags). */
  followTags?: boolean | undefined;
  /** The refspecs name remote refs to delete (git's --delete). */
  delete?: boolean | undefined;
  /** Update refs even when it is not a fast-forward (git's --force). */
  force?: boolean | undefined;
  /**
   * git's --force-with-lease: a ref is overwritten only if the server's value is what is
   * expected: `true` (each ref's remote-tracking value; absent when there is none), or per ref a
   * revision giving the id expected ('': the ref must not exist; `undefined`: the remote-tracking value).
   */
  forceWithLease?: boolean | Readonly<Record<string, string | undefined>> | undefined;
  /**
   * With a lease taken from a remote-tracking ref: also refuse when that ref's value was never part
   * of the local branch (not reachable from its tip or any entry of its reflog; git's
   * --force-if-includes, push.useForceIfIncludes), so a fetch in the background does not arm a force.
   */
  forceIfIncludes?: boolean | undefined;
  /**
   * Do everything but send (git's --dry-run): the server's refs are read and each update judged
   * as a push would, the refs that would be sent are reported `'ok'`, and nothing changes on either
   * side (remote-tracking refs included).
   */
  dryRun?: boolean | undefined;
  /**
   * First find what the server has of the new tips' history by a fetch's negotiation, and leave
   * it out of the pack (git's push.negotiate; default that setting, else false). Protocol v2
   * only; when it cannot be done, a warning and the push as without it.
   */
  negotiate?: boolean | undefined;
  /** All refs or none (git's --atomic; the server must support it). */
  atomic?: boolean | undefined;
  /** git's --push-option values, for the server's hooks. */
  pushOptions?: readonly string[] | undefined;
  /** Send a thin pack (default true, unless the server says no-thin). */
  thin?: boolean | undefined;
  /** For a local repository: spawn this receive-pack command instead of serving it in this process. */
  receivePack?: string | undefined;
  /** What the server says (its hooks' output, band 2), as it comes. */
  onMessage?: ((text: string) => void) | undefined;
  /**
   * The pack's making, in git's progress lines ("Enumerating objects: 5, done.", "Writing
   * objects: 100% (3/3)…", "Total 3 (delta 0)…"; a line in progress ends in `\r`), as git push
   * shows them on stderr.
   */
  onProgress?: ((text: string) => void) | undefined;
  /**
   * Make each branch pushed (or already up to date) to a branch track it: branch.<name>.remote and
   * branch.<name>.merge written as git's --set-upstream writes them (branch.autoSetupRebase too);
   * with `dryRun`, only reported. See PushResult.upstreams.
   */
  setUpstream?: boolean | undefined;
  /** Leave out the repository's pre-push hook (git's --no-verify); by default it runs when there is one, as git runs it. */
  noVerify?: boolean | undefined;
  /** What the pre-push hook writes, as it comes (default: nowhere). */
  onHookOutput?: ((chunk: Buffer, stream: 'stdout' | 'stderr') => void) | undefined;
  /**
   * Called with what is about to be sent, after the pre-push hook and before anything goes out
   * (isomorphic-git's onPrePush): false stops the push, as a failing hook does.
   */
  onPrePush?: ((event: { remote: string; url: string; updates: PrePushUpdate[] }) => boolean | Promise<boolean>) | undefined;
}

/**
 * How a ref fared (git push's report): `'ok'`, `'up-to-date'`, `'rejected'` (here: `non-fast-forward`,
 * `fetch first`, `already exists`, `needs force`, `stale info`, `atomic push failed`),
 * `'remote-rejected'` (the server refused: its reason), `'remote-failure'` (no report came).
 */
export type PushedRefStatus = 'ok' | 'up-to-date' | 'rejected' | 'remote-rejected' | 'remote-failure';

/** One ref `push` considered: source, destination, old and new ids, and its status as git reports it. */
export interface PushedRef {
  /** The local ref (or revision) pushed; undefined for a deletion. */
  localRef: string | undefined;
  remoteRef: string;
  /** The server's id before (undefined: the ref was new). */
  oldId: string | undefined;
  /** The id sent (undefined: a deletion). */
  newId: string | undefined;
  status: PushedRefStatus;
  reason?: string | undefined;
  /** Not a fast-forward, and updated all the same (forced). */
  forced: boolean;
}

/** What `push` did: each ref's outcome, in git's order, and whether all went well. */
export interface PushResult {
  /** The URL as git shows it (`To <url>`). */
  url: string;
  /** The refs in git's order: the server's existing ones as it listed them, then the new ones. */
  refs: PushedRef[];
  /** Every ref pushed or up to date. */
  ok: boolean;
  /** Why the server could not take the pack in, as it said (`unpack <reason>`; git: `error: remote unpack failed: <reason>`). */
  unpackError?: string | undefined;
  /** Refspecs git refuses once it sees the server's refs (a destination it cannot place): nothing was sent. */
  refspecErrors?: RefspecError[] | undefined;
  /** Nothing matched, and the server has no refs (git: "No refs in common and none specified; doing nothing."). */
  noRefsInCommon?: boolean | undefined;
  /** The pre-push hook failed (or onPrePush said no): nothing was sent, and git reports no ref. */
  declined?: boolean | undefined;
  /** With `setUpstream`: the branches now tracking what they were pushed to (with `dryRun`: that would be). */
  upstreams?: { branch: string; remote: string; merge: string; rebase: boolean }[] | undefined;
}

/** Refusals a pre-push hook is not told of (git's run_pre_push_hook passes over them). */
const SKIPPED_BY_HOOK = new Set(['non-fast-forward', 'stale info', 'fetch first']);

interface Entry {
  src: string | undefined;
  newId: Buffer | undefined;
  dst: string;
  force: boolean;
  remote: AdvertisedRef | undefined;
  result: PushedRef;
}

/**
 * Pushes from the repository at `options.dir` (or `options.repository`), as `git push` does.
 * Refs the rules refuse are reported, not thrown; a server that cannot be reached, or a
 * refspec that matches nothing, fails.
 * @param options The repository (`dir` or `repository`), the remote, refspecs and git push's switches.
 * @returns Each ref's outcome, as git reports it.
 * @throws {PackwrightError} INVALID_ARGUMENT (a refspec that matches nothing), CONNECTION_CLOSED, PROTOCOL_ERROR, ABORTED.
 * @example const result = await push({ dir: '.', remote: 'origin', refspecs: ['main'] }); if (!result.ok) process.exitCode = 1;
 */
export async function push(options: PushOptions): Promise<PushResult> {
  return withLocalRepository(options, 'push', (repo) => pushFrom(repo, options));
}

async function pushFrom(repo: Repository, options: PushOptions): Promise<PushResult> {
  const branch = repo.refs.symbolicEnd('HEAD');
  const branchName = branch?.startsWith('refs/heads/') === true ? branch.slice(11) : undefined;
  const remoteName = options.remote ?? defaultRemoteName(repo.config, branchName, true);
  const remote = readRemoteConfig(repo.config, remoteName, repo);
  checkCredentialsInUrl(repo.config, remote.url, options.onWarning);
  const agent = options.agent ?? 'packwright';
  const location = parseRemoteUrl(remote.pushUrl, options.cwd ?? repo.workTree ?? repo.gitDir);
  const reach = {
    ...remoteCallOptions(options), ...sshSettings(repo), agent, headers: { ...extraHeaders(repo.config, remote.pushUrl), ...options.headers },
    http: { ...httpSettings(repo.config, remote.pushUrl, repo.env, remoteName), ...options.http },
    allowTransport: options.allowTransport ?? transportPolicy(repo.config, repo.env),
  };
  checkPushSwitches(options, remote);
  // With --delete the refspecs name what to delete (`:<ref>`), not sources.
  if (options.delete !== true) checkPushSources(repo, options.refspecs ?? []);
  const conn = await openConnection(location, { ...reach, service: 'git-receive-pack', protocol: 0, command: options.receivePack ?? remote.receivePack, traceIdentity: 'push' });
  try {
    const advertised = await readAdvertisement(conn.reader);
    // Over HTTP, git's push goes on in its send-pack child, whose packets it traces as such.
    if (conn.stateless) conn.traceAs?.('send-pack');
    const caps = advertised.capabilities;
    const format = caps.get('object-format') ?? 'sha1';
    if (format !== repo.format) throw new PackwrightError('INVALID_ARGUMENT', `the receiving end does not support this repository's hash algorithm (${repo.format}; it has ${format})`);
    if (options.atomic === true && !caps.has('atomic')) throw new PackwrightError('REQUEST_REFUSED', 'the receiving end does not support --atomic push');
    const pushOptions = options.pushOptions ?? [];
    if (pushOptions.length > 0 && !caps.has('push-options')) throw new PackwrightError('REQUEST_REFUSED', 'the receiving end does not support push options');

    const url = anonymizeUrl(remote.pushUrl);
    // Ends a push that sends no command: a server over a stream waits for the flush; HTTP needs nothing.
    const sendNothing = async (): Promise<void> => {
      if (!conn.stateless) await conn.request(FLUSH_PACKET).catch(() => undefined);
    };
    const { entries, refspecErrors, autoUpstream } = matchRefs(repo, remote, remoteName, advertised.refs, options, branchName);
    // push.autoSetupRemote: a default push of a branch without an upstream sets one.
    if (autoUpstream) options = { ...options, setUpstream: true };
    // A refspec git cannot place (match_explicit_refs): its error and advice, and nothing sent.
    if (refspecErrors.length > 0) {
      await sendNothing();
      return { url, refs: [], ok: false, refspecErrors };
    }
    // Nothing matched and the server has no refs: git's send_pack does nothing, and says so.
    if (entries.length === 0 && advertised.refs.length === 0) {
      await sendNothing();
      return { url, refs: [], ok: false, noRefsInCommon: true };
    }
    judge(repo, remote, entries, options);
    if (options.atomic === true && entries.some((e) => e.result.status === 'rejected')) {
      for (const e of entries) if (e.result.status === 'ok') Object.assign(e.result, { status: 'rejected', reason: 'atomic push failed' });
    }
    const sending = entries.filter((e) => e.result.status === 'ok');
    // git's pre-push hook, and the caller's, see what would change, whatever the rules said of it
    // but a refusal the server's state decided (behind, stale, or unknown here) or no change.
    const zero = '0'.repeat(repo.store.hashLength * 2);
    const updates: PrePushUpdate[] = entries.filter((e) => e.result.status !== 'up-to-date' && !(e.result.status === 'rejected' && SKIPPED_BY_HOOK.has(e.result.reason ?? '')))
      .map((e) => ({ localRef: e.src ?? '(delete)', localOid: e.result.newId ?? zero, remoteRef: e.dst, remoteOid: e.result.oldId ?? zero }));
    const hookName = remote.name ?? remoteName;
    let declined = options.noVerify !== true && (await runPrePushHook(repo, hookName, remote.pushUrl, updates, options.onHookOutput ?? (() => undefined))) !== 0;
    if (!declined && options.onPrePush !== undefined) declined = !(await options.onPrePush({ remote: hookName, url: remote.pushUrl, updates }));
    if (declined) {
      await sendNothing();
      return { url, refs: entries.map((e) => e.result), ok: false, declined: true };
    }
    if (sending.length === 0 || options.dryRun === true) {
      await sendNothing();
      if (options.dryRun === true) return withUpstreams(repo, hookName, entries, options, { url, refs: entries.map((e) => e.result), ok: entries.every((e) => e.result.status === 'ok' || e.result.status === 'up-to-date') });
      updateTracking(repo, remote, entries);
      return withUpstreams(repo, hookName, entries, options, { url, refs: entries.map((e) => e.result), ok: entries.every((e) => e.result.status === 'up-to-date') });
    }
    // The commands, the first with the capabilities git's send-pack asks for.
    const statusV2 = caps.has('report-status-v2');
    const sideband = caps.has('side-band-64k');
    const wanted = [statusV2 ? 'report-status-v2' : caps.has('report-status') ? 'report-status' : '', sideband ? 'side-band-64k' : '', caps.has('quiet') ? 'quiet' : '',
      options.atomic === true ? 'atomic' : '', pushOptions.length > 0 ? 'push-options' : '', caps.has('object-format') ? `object-format=${repo.format}` : '', caps.has('agent') ? `agent=${agent}` : ''].filter((c) => c !== '');
    // A shallow repository names its boundary first (git's advertise_shallow_grafts_buf), so the
    // server knows what the pack's history stops at, and can refuse it (receive.shallowUpdate).
    const head: Buffer[] = repo.shallowCommits().map((id) => encodePacket(`shallow ${Buffer.from(id).toString('hex')}`));
    head.push(...sending.map((e, i) => encodePacket(`${e.result.oldId ?? zero} ${e.result.newId ?? zero} ${e.dst}${i === 0 ? `\0 ${wanted.join(' ')}` : ''}`)));
    head.push(FLUSH_PACKET);
    if (pushOptions.length > 0) head.push(...pushOptions.map((o) => encodePacket(o)), FLUSH_PACKET);
    // push.negotiate: what the server has of the new tips' history, found by a fetch's
    // negotiation, is left out of the pack too; without it the push goes on as it would.
    let commons: Buffer[] = [];
    const newTips = sending.flatMap((e) => (e.newId !== undefined ? [e.newId] : []));
    if (newTips.length > 0 && (options.negotiate ?? repo.config.getBool('push.negotiate') ?? false)) {
      commons = await negotiatedCommons(repo, (protocol) => openConnection(location, { ...reach, service: 'git-upload-pack', protocol, command: remote.uploadPack, traceIdentity: 'fetch' }), newTips, agent).catch((e: unknown) => {
        if (!isPackwrightError(e) || e.code === 'ABORTED') throw e;
        // git's `fetch --negotiate-only` says why first (a warning), then push says it goes on.
        if (e.message === '--negotiate-only requires protocol v2') options.onWarning?.(e.message);
        options.onWarning?.('push negotiation failed; proceeding anyway with push');
        return [];
      });
    }
    const body = newTips.length > 0 ? packStream(repo, sending, advertised.refs, commons, Buffer.concat(head), options, caps) : Buffer.concat(head);
    const reader = await conn.request(body);
    const unpackError = await readReport(reader, sideband, entries, options.onMessage);
    updateTracking(repo, remote, entries);
    return withUpstreams(repo, hookName, entries, options, {
      url, refs: entries.map((e) => e.result), ok: entries.every((e) => e.result.status === 'ok' || e.result.status === 'up-to-date'),
      ...(unpackError !== undefined ? { unpackError } : {}),
    });
  } finally {
    conn.close();
  }
}

/**
 * git's set_upstreams (--set-upstream): each branch pushed, or already up to date, to a branch of
 * the server tracks it from now on (install_branch_config: branch.<name>.remote, one
 * branch.<name>.merge, branch.<name>.rebase under branch.autoSetupRebase=always or remote). HEAD
 * counts as the branch it is on. With `dryRun` nothing is written.
 */
function withUpstreams(repo: Repository, remoteName: string, entries: readonly Entry[], options: PushOptions, result: PushResult): PushResult {
  if (options.setUpstream !== true) return result;
  const rebaseSetting = String(repo.config.get('branch.autosetuprebase') ?? 'never').toLowerCase();
  const rebase = rebaseSetting === 'always' || rebaseSetting === 'remote';
  const upstreams: NonNullable<PushResult['upstreams']> = [];
  const file = join(repo.commonDir, 'config');
  for (const e of entries) {
    if ((e.result.status !== 'ok' && e.result.status !== 'up-to-date') || e.src === undefined || e.newId === undefined) continue;
    const local = e.src === 'HEAD' ? repo.refs.symbolicEnd('HEAD') : e.src;
    if (local === undefined || !local.startsWith('refs/heads/') || !e.dst.startsWith('refs/heads/')) continue;
    const branch = local.slice(11);
    upstreams.push({ branch, remote: remoteName, merge: e.dst, rebase });
    if (options.dryRun === true) continue;
    setConfigValue(file, `branch.${branch}.remote`, remoteName);
    setConfigValue(file, `branch.${branch}.merge`, e.dst, { replaceAll: true });
    if (rebase) setConfigValue(file, `branch.${branch}.rebase`, 'true');
  }
  return { ...result, upstreams };
}

/** A refspec refused as git's match_explicit_refs refuses it: git's error, and its advice (unless advice.* turns it off). */
export interface RefspecError {
  message: string;
  hint?: string | undefined;
}

/** git's show_push_unqualified_ref_name_error: `dst` names no ref of the server, and the source says nothing of where it goes. */
function unqualifiedDestination(repo: Repository, dst: string, src: string, id: Buffer): RefspecError {
  const message = `The destination you provided is not a full refname (i.e.,\nstarting with "refs/"). We tried to guess what you meant by:\n\n- Looking for a ref that matches '${dst}' on the remote side.\n- Checking if the <src> being pushed ('${src}')\n  is a ref in "refs/{heads,tags}/". If so we add a corresponding\n  refs/{heads,tags}/ prefix on the remote side.\n\nNeither worked, so we gave up. You must fully qualify the ref.`;
  if (repo.config.getBool('advice.pushunqualifiedrefname') === false) return { message };
  const type = repo.objects.info(id).type;
  const [what, verb, where] = type === 'commit' ? ['commit', 'create a new branch', 'heads'] : type === 'tag' ? ['tag', 'create a new tag', 'tags'] : [type, `tag a new ${type}`, 'tags'];
  return { message, hint: `The <src> part of the refspec is a ${what} object.\nDid you mean to ${verb} by pushing to\n'${src}:refs/${where}/${dst}'?` };
}

/** git's cmd_push: switches that cannot go together, refused as git refuses them (remote.<name>.mirror counts as --mirror). */
function checkPushSwitches(options: PushOptions, remote: RemoteConfig): void {
  const refspecs = (options.refspecs ?? []).length > 0;
  const mirror = options.mirror === true || remote.mirror;
  const together = (a: string, b: string): never => {
    throw new PackwrightError('INVALID_ARGUMENT', `options '${a}' and '${b}' cannot be used together`);
  };
  if (options.delete === true && (options.tags === true || options.all === true || mirror)) together('--delete', '--all/--mirror/--tags');
  if (options.all === true) {
    if (options.tags === true) together('--all', '--tags');
    if (refspecs) throw new PackwrightError('INVALID_ARGUMENT', "--all can't be combined with refspecs");
  }
  if (mirror) {
    if (options.tags === true) together('--mirror', '--tags');
    if (refspecs) throw new PackwrightError('INVALID_ARGUMENT', "--mirror can't be combined with refspecs");
  }
  if (options.all === true && mirror) together('--all', '--mirror');
  if ((options.pushOptions ?? []).some((o) => o.includes('\n'))) throw new PackwrightError('INVALID_ARGUMENT', 'push options must not have new line characters');
}

/**
 * git's check_push_refs, before the server is contacted: the source of each refspec that names
 * one (not a pattern, `:` or a deletion) must be one local ref by git's matching rules
 * (count_refspec_match: a ref outside refs/heads and refs/tags matched by a short name counts
 * only when nothing else matches), or else an object name. Throws REF_NOT_FOUND with git's line
 * for each that is not ("src refspec <src> does not match any", "… matches more than one").
 */
function checkPushSources(repo: Repository, refspecs: readonly string[]): void {
  const errors: string[] = [];
  const names = repo.refs.list('refs/').map((r) => r.name);
  for (const given of refspecs) {
    const s = parseRefspec(given, 'push');
    if (s.pattern || s.negative || s.src === '') continue;
    let strong = 0;
    let weak = 0;
    for (const name of names) {
      if (!DWIM_RULES.some((rule) => rule.replace('%s', s.src) === name)) continue;
      if (name.length !== s.src.length && s.src.length !== name.length - 5 && !name.startsWith('refs/heads/') && !name.startsWith('refs/tags/')) weak++;
      else strong++;
    }
    const count = strong > 0 ? strong : weak;
    if (count > 1) errors.push(`src refspec ${s.src} matches more than one`);
    else if (count === 0) {
      try {
        repo.resolve(s.src);
      } catch {
        errors.push(`src refspec ${s.src} does not match any`);
      }
    }
  }
  if (errors.length > 0) throw new PackwrightError('REF_NOT_FOUND', errors.join('\n'));
}

/** The request after the commands: the pack of what the new tips reach and the server's refs do not, thin, streamed as it is made. */
function packStream(repo: Repository, sending: readonly Entry[], remoteRefs: readonly AdvertisedRef[], commons: readonly Buffer[], head: Buffer, options: PushOptions, caps: ReadonlyMap<string, string>): AsyncIterable<Buffer> {
  const out = new PassThrough({ highWaterMark: 1 << 20 });
  const tips: RevTip[] = [];
  for (const e of sending) if (e.newId !== undefined) tips.push({ id: e.newId, uninteresting: false, name: '' });
  for (const r of remoteRefs) {
    const id = Buffer.from(r.oid, 'hex');
    if (repo.objects.has(id)) tips.push({ id, uninteresting: true, name: '' });
  }
  for (const id of commons) tips.push({ id, uninteresting: true, name: '' });
  out.write(head);
  const settings = packSettings(repo.config, repo.env);
  // As many threads as createPack will use (pack.threads, else one); send-pack asks pack-objects
  // for --all-progress-implied, so "Writing objects" shows too.
  const threads = Math.max(1, settings.threads ?? 1);
  const meter = options.onProgress !== undefined ? new PackProgress({ write: options.onProgress }, true, threads, true) : undefined;
  // A shallow repository's walk stops at its boundary (git's pack-objects --shallow, which send-pack passes).
  const shallow = repo.shallowCommits();
  void createPack({
    ...settings,
    ...(shallow.length > 0 ? { shallow } : {}),
    ...(meter !== undefined ? { onProgress: meter.onProgress } : {}),
    objects: repo.objects,
    refs: repo.refs,
    tips,
    thin: options.thin !== false && !caps.has('no-thin'),
    deltaBaseOffset: caps.has('ofs-delta'),
    ...(options.signal !== undefined ? { signal: options.signal } : {}),
    sink: (chunk) => (out.write(chunk) ? undefined : new Promise<void>((ok) => out.once('drain', ok))),
  }).then((made) => {
    meter?.finish();
    meter?.total(made.stats);
    out.end();
  }, (e: unknown) => out.destroy(e instanceof Error ? e : new Error(String(e))));
  return out;
}

/**
 * git's get_commons_through_negotiation (`git fetch --negotiate-only` with the new tips as its
 * negotiation tips, over protocol v2 only): the commits the server acknowledged having.
 */
async function negotiatedCommons(repo: Repository, connect: (protocol: 2) => Promise<Connection>, tips: readonly Buffer[], agent: string): Promise<Buffer[]> {
  if (configuredProtocol(repo.config, repo.env) !== 2) throw new PackwrightError('INVALID_ARGUMENT', '--negotiate-only requires protocol v2');
  const conn = await connect(2);
  try {
    const greeting = await readGreeting(conn);
    if (greeting.version !== 2) throw new PackwrightError('REQUEST_REFUSED', '--negotiate-only requires protocol v2');
    const negotiator = createNegotiator(repo.config, repo.objects, repo.shallowCommits());
    const commits = tips.flatMap((t) => {
      negotiator.addTip(t);
      const c = peelToCommit(repo, t);
      return c !== undefined ? [c] : [];
    });
    // git's can_all_from_reach_with_flag: every tip has an acknowledged commit below it.
    const reachesCommon = (common: ReadonlySet<string>): boolean => commits.every((c) => [...common].some((h) => isAncestor(repo.objects, Buffer.from(h, 'hex'), c)));
    return [...(await negotiateCommon(conn, greeting.caps, negotiator, reachesCommon, agent))].map((h) => Buffer.from(h, 'hex'));
  } finally {
    conn.close();
  }
}

/**
 * git's match_push_refs: what each refspec sends where; the refspecs refused (a destination it
 * cannot place), and whether push.autoSetupRemote chose the refspec (the branch then tracks it).
 */
function matchRefs(repo: Repository, remote: RemoteConfig, remoteLabel: string, remoteRefs: readonly AdvertisedRef[], options: PushOptions, branchName: string | undefined): { entries: Entry[]; refspecErrors: RefspecError[]; autoUpstream: boolean } {
  let specs: Refspec[];
  let autoUpstream = false;
  const refused: RefspecError[] = [];
  const given = options.refspecs ?? [];
  if (options.delete === true) {
    if (given.length === 0) throw new PackwrightError('INVALID_ARGUMENT', '--delete doesn\'t make sense without any refs');
    if (given.some((s) => s === '' || s.includes(':'))) throw new PackwrightError('INVALID_ARGUMENT', '--delete only accepts plain target ref names');
    specs = given.map((s) => parseRefspec(`:${s}`, 'push'));
  } else {
    specs = given.map((s) => parseRefspec(s.includes(':') ? s : mappedRefspec(repo, remote, s), 'push'));
    if (options.mirror === true || (given.length === 0 && remote.mirror)) specs.push(parseRefspec('+refs/*:refs/*', 'push'));
    if (options.all === true) specs.push(parseRefspec('refs/heads/*:refs/heads/*', 'push'));
    if (options.tags === true) specs.push(parseRefspec('refs/tags/*:refs/tags/*', 'push'));
    if (specs.length === 0 && remote.push.length > 0) specs = [...remote.push];
    else if (specs.length === 0) {
      const chosen = pushDefault(repo, remote.name ?? remoteLabel, branchName, repo.config.getBool('push.autosetupremote') ?? false);
      specs = [chosen.spec];
      autoUpstream = chosen.setUpstream;
    }
  }
  const localRefs = repo.refs.list('refs/').filter((r) => r.symbolicTarget === undefined);
  const byRemote = new Map(remoteRefs.map((r) => [r.ref, r]));
  const entries: Entry[] = [];
  const add = (src: string | undefined, newId: Buffer | undefined, dst: string, force: boolean): void => {
    if (entries.some((e) => e.dst === dst)) return;
    const r = byRemote.get(dst);
    entries.push({
      src, newId, dst, force, remote: r,
      result: { localRef: src, remoteRef: dst, oldId: r?.oid, newId: newId?.toString('hex'), status: 'ok', forced: false },
    });
  };
  const localNames = new Set(localRefs.map((l) => l.name));
  const onServer = (name: string): boolean => byRemote.has(name);
  for (const s of specs) {
    if (s.negative) continue;
    const force = s.force || options.force === true;
    if (s.pattern) {
      for (const l of localRefs) {
        const dst = mapPattern(s.src, s.dst ?? s.src, l.name);
        if (dst !== undefined && mapPattern(s.src, s.src, l.name) !== undefined) add(l.name, l.id, dst, force);
      }
      continue;
    }
    if (s.src === '' && s.dst === '') {
      // `:`: "matching", every branch the server has too.
      for (const l of localRefs) if (l.name.startsWith('refs/heads/') && byRemote.has(l.name)) add(l.name, l.id, l.name, force);
      continue;
    }
    if (s.src === '') {
      // `:dst`: delete the server's ref.
      // A full name is deleted whether or not the server has it (its hooks hear of it); a short one must match.
      const dst = s.dst?.startsWith('refs/') === true ? s.dst : expandRefName(s.dst ?? '', onServer);
      if (dst === undefined || (!byRemote.has(dst) && !dst.startsWith('refs/'))) throw new PackwrightError('REF_NOT_FOUND', `unable to delete '${s.dst ?? ''}': remote ref does not exist`);
      add(undefined, undefined, dst, force);
      continue;
    }
    // The source: a local ref by git's rules (HEAD: the branch it is on), else any revision.
    let srcRef = s.src === 'HEAD' ? repo.refs.symbolicEnd('HEAD') : expandRefName(s.src, (name) => localNames.has(name));
    const resolved = srcRef !== undefined ? repo.refs.resolve(srcRef) : undefined;
    let id: Buffer;
    if (resolved !== undefined) id = resolved;
    else {
      srcRef = undefined;
      try {
        id = repo.resolve(s.src);
      } catch {
        throw new PackwrightError('REF_NOT_FOUND', `src refspec ${s.src} does not match any`);
      }
    }
    let dst: string | undefined;
    if (s.dst === undefined || s.dst === '') dst = srcRef;
    else if (s.dst.startsWith('refs/')) dst = s.dst;
    else dst = expandRefName(s.dst, onServer) ?? (srcRef?.startsWith('refs/heads/') === true ? `refs/heads/${s.dst}` : srcRef?.startsWith('refs/tags/') === true ? `refs/tags/${s.dst}` : undefined);
    if (dst === undefined) {
      refused.push(unqualifiedDestination(repo, s.dst === undefined || s.dst === '' ? s.src : s.dst, srcRef ?? s.src, id));
      continue;
    }
    // HEAD is named as such (git shows `HEAD -> main`), though it goes where its branch would.
    add(s.src === 'HEAD' ? 'HEAD' : srcRef ?? s.src, id, dst, force);
  }
  if (options.followTags ?? repo.config.getBool('push.followtags') ?? false) followTags(repo, localRefs, remoteRefs, entries, add);
  // --prune (and --mirror): the server's refs a pattern maps to from a local ref that is gone are deleted.
  if (options.prune === true || options.mirror === true || (given.length === 0 && remote.mirror)) {
    for (const spec of specs) {
      // The matching refspec prunes as `refs/heads/*` would.
      const s = spec.src === '' && spec.dst === '' ? parseRefspec('refs/heads/*:refs/heads/*', 'push') : spec;
      if (!s.pattern || s.negative) continue;
      for (const r of remoteRefs) {
        const src = mapPattern(s.dst ?? s.src, s.src, r.ref);
        if (src !== undefined && !localNames.has(src)) add(undefined, undefined, r.ref, true);
      }
    }
  }
  // git's apply_negative_refspecs: a `^` refspec leaves out what would go to a name it matches
  // (in a push, the server's side), whether sent, deleted or pruned.
  const kept = entries.filter((e) => !excludedByNegative(specs, e.dst));
  // git's order: the server's refs as it listed them, then the new ones as matched.
  const position = new Map(remoteRefs.map((r, i) => [r.ref, i]));
  const ordered = kept.map((e, i) => ({ e, k: position.get(e.dst) ?? remoteRefs.length + i })).sort((a, b) => a.k - b.k).map((x) => x.e);
  return { entries: ordered, refspecErrors: refused, autoUpstream };
}

/**
 * git's add_missing_tags: annotated tags the server lacks whose commit is reachable from what is
 * pushed or what the server has, sent to the same name.
 */
function followTags(repo: Repository, localRefs: readonly { name: string; id: Buffer }[], remoteRefs: readonly AdvertisedRef[], entries: readonly Entry[], add: (src: string, id: Buffer, dst: string, force: boolean) => void): void {
  const onServer = new Set(remoteRefs.map((r) => r.ref));
  const candidates = new Map<string, { name: string; id: Buffer }[]>();
  for (const l of localRefs) {
    if (!l.name.startsWith('refs/tags/') || onServer.has(l.name) || entries.some((e) => e.dst === l.name)) continue;
    if (peelObject(repo.objects, l.id, 'non-tag').id.equals(l.id)) continue; // not an annotated tag
    const commit = peelToCommit(repo, l.id);
    if (commit === undefined) continue;
    const key = commit.toString('hex');
    candidates.set(key, [...(candidates.get(key) ?? []), l]);
  }
  if (candidates.size === 0) return;
  // One walk down from the tips until every candidate commit is found or history ends.
  const tips = [...entries.flatMap((e) => (e.newId !== undefined ? [e.newId] : [])), ...remoteRefs.map((r) => Buffer.from(r.oid, 'hex'))];
  const dag = new CommitDag(repo.objects);
  const stack: number[] = [];
  const seen = new Set<number>();
  for (const t of tips) {
    const n = repo.objects.has(t) ? dag.peel(dag.intern(t)) : -1;
    if (n >= 0 && dag.type(n) === OBJ_COMMIT && !seen.has(n)) seen.add(n), stack.push(n);
  }
  let left = candidates.size;
  const found: { name: string; id: Buffer }[] = [];
  while (stack.length > 0 && left > 0) {
    const n = stack.pop() as number;
    const tags = candidates.get(dag.hex(n));
    if (tags !== undefined) {
      found.push(...tags);
      left--;
    }
    for (const p of dag.parents(n)) if (!seen.has(p) && dag.type(p) === OBJ_COMMIT) seen.add(p), stack.push(p);
  }
  for (const t of found.sort((a, b) => (a.name < b.name ? -1 : 1))) add(t.name, t.id, t.name, false);
}

/**
 * git's refspec_append_mapped: a refspec without a colon that names one local ref (by git's
 * rules for short names) goes where the remote's push refspecs send that ref, else, under
 * push.default=upstream, to its branch's upstream; otherwise it stays as given (the same name).
 */
function mappedRefspec(repo: Repository, remote: RemoteConfig, given: string): string {
  const matches = new Set(DWIM_RULES.map((rule) => rule.replace('%s', given)).filter((name) => name.startsWith('refs/') && repo.refs.resolve(name) !== undefined));
  if (matches.size !== 1) return given;
  const name = [...matches][0] as string;
  for (const spec of remote.push) {
    if (spec.negative || spec.dst === undefined || spec.dst === '' || !matchesSource(spec, name)) continue;
    const dst = spec.pattern ? mapPattern(spec.src, spec.dst, name) : spec.dst;
    if (dst !== undefined) return `${spec.force ? '+' : ''}${name}:${dst}`;
  }
  // A branch's merge config counts only with its remote set (git's set_merge).
  if (repo.config.get('push.default') === 'upstream' && name.startsWith('refs/heads/') && typeof repo.config.get(`branch.${name.slice(11)}.remote`) === 'string') {
    const merges = repo.config.getAll(`branch.${name.slice(11)}.merge`);
    if (merges.length === 1 && typeof merges[0] === 'string') return `${given}:${merges[0]}`;
  }
  return given;
}

/**
 * What a push without refspecs sends (git's setup_default_push_refspecs, push.default): `simple`
 * (the default: the current branch to the branch of the same name, which must be its upstream
 * when pushing to its own remote), `current`, `upstream` (to what it merges from), `matching`
 * (every branch the server has too), `nothing`. `autoUpstream` (push.autoSetupRemote): a branch
 * without an upstream goes to its own name, and is then made to track it (`setUpstream` true).
 */
function pushDefault(repo: Repository, remoteLabel: string, branchName: string | undefined, autoUpstream: boolean): { spec: Refspec; setUpstream: boolean } {
  const configured = repo.config.get('push.default');
  const mode = typeof configured === 'string' ? configured.toLowerCase() : 'simple';
  if (mode === 'matching') return { spec: parseRefspec(':', 'push'), setUpstream: false };
  if (mode === 'nothing') throw new PackwrightError('INVALID_ARGUMENT', "You didn't specify any refspecs to push, and push.default is \"nothing\".");
  if (branchName === undefined) {
    throw new PackwrightError('INVALID_ARGUMENT', `You are not currently on a branch.\nTo push the history leading to the current (detached HEAD)\nstate now, use\n\n    git push ${remoteLabel} HEAD:<name-of-remote-branch>\n`);
  }
  const own = `refs/heads/${branchName}`;
  const merges = repo.config.getAll(`branch.${branchName}.merge`).filter((m): m is string => typeof m === 'string');
  const branchRemote = repo.config.get(`branch.${branchName}.remote`);
  // git's remote_for_branch: the branch's remote, else the only remote, else origin.
  const sameRemote = remoteLabel === defaultRemoteName(repo.config, branchName, false);
  // git's get_upstream_ref.
  const upstreamRef = (): string => {
    if (merges.length === 0 && autoUpstream) return own;
    if (merges.length === 0 || typeof branchRemote !== 'string') {
      const advice = autoUpstream ? '' : "\nTo have this happen automatically for branches without a tracking\nupstream, see 'push.autoSetupRemote' in 'git help config'.\n";
      throw new PackwrightError('INVALID_ARGUMENT', `The current branch ${branchName} has no upstream branch.\nTo push the current branch and set the remote as upstream, use\n\n    git push --set-upstream ${remoteLabel} ${branchName}\n${advice}`);
    }
    if (merges.length !== 1) throw new PackwrightError('INVALID_ARGUMENT', `The current branch ${branchName} has multiple upstream branches, refusing to push.`);
    return merges[0] as string;
  };
  let dst = own;
  if (mode === 'upstream' || mode === 'tracking') {
    if (!sameRemote) throw new PackwrightError('INVALID_ARGUMENT', `You are pushing to remote '${remoteLabel}', which is not the upstream of\nyour current branch '${branchName}', without telling me what to push\nto update which remote branch.`);
    dst = upstreamRef();
  } else if (mode !== 'current' && sameRemote) {
    const upstream = upstreamRef();
    if (upstream !== own) {
      const short = upstream.replace(/^refs\/heads\//, '');
      const pushDefaultAdvice = typeof configured !== 'string' ? "\nTo choose either option permanently, see push.default in 'git help config'.\n" : '';
      const autoSetupMerge = repo.config.get('branch.autosetupmerge');
      const trackAdvice = typeof autoSetupMerge === 'string' && autoSetupMerge.toLowerCase() === 'simple' ? '' : "\nTo avoid automatically configuring an upstream branch when its name\nwon't match the local branch, see option 'simple' of branch.autoSetupMerge\nin 'git help config'.\n";
      throw new PackwrightError('INVALID_ARGUMENT', `The upstream branch of your current branch does not match\nthe name of your current branch.  To push to the upstream branch\non the remote, use\n\n    git push ${remoteLabel} HEAD:${short}\n\nTo push to the branch of the same name on the remote, use\n\n    git push ${remoteLabel} HEAD\n${pushDefaultAdvice}${trackAdvice}`);
    }
  }
  return { spec: parseRefspec(`${own}:${dst}`, 'push'), setUpstream: autoUpstream && merges.length === 0 };
}

/** git's set_ref_status_for_push: up to date, stale (a lease broken), already exists, fetch first, needs force, non-fast-forward. */
function judge(repo: Repository, remote: RemoteConfig, entries: Entry[], options: PushOptions): void {
  for (const e of entries) {
    const r = e.result;
    if (e.newId !== undefined && r.oldId === r.newId) {
      r.status = 'up-to-date';
      continue;
    }
    let force = e.force;
    const lease = options.forceWithLease;
    if (lease !== undefined && lease !== false) {
      const named = lease === true ? undefined : Object.hasOwn(lease, e.dst) ? { value: lease[e.dst] } : undefined;
      if (lease === true || named !== undefined) {
        // An explicit expectation is a revision here ('' for "must not exist"); otherwise the tracking ref's value.
        const value = named?.value;
        const expect = value === '' ? null : value !== undefined ? repo.resolve(value).toString('hex') : trackingValue(repo, remote, e.dst) ?? null;
        if (value === undefined && expect !== null && e.src !== undefined && e.newId !== undefined && (options.forceIfIncludes ?? repo.config.getBool('push.useforceifincludes') ?? false)) {
          if (!includedLocally(repo, e.src, e.newId, Buffer.from(expect, 'hex'))) {
            Object.assign(r, { status: 'rejected', reason: 'remote ref updated since checkout' });
            continue;
          }
        }
        if ((r.oldId ?? null) !== expect) {
          // --force overrides a broken lease, as git's does (and the update counts as forced).
          if (!force) {
            Object.assign(r, { status: 'rejected', reason: 'stale info' });
            continue;
          }
          r.forced = true;
        }
        force = true;
      }
    }
    let reason: string | undefined;
    if (e.newId !== undefined && r.oldId !== undefined) {
      const old = Buffer.from(r.oldId, 'hex');
      if (e.dst.startsWith('refs/tags/')) reason = 'already exists';
      else if (!repo.objects.has(old)) reason = 'fetch first';
      else {
        const a = peelToCommit(repo, old);
        const b = peelToCommit(repo, e.newId);
        if (a === undefined || b === undefined) reason = 'needs force';
        else if (!isAncestor(repo.objects, a, b)) reason = 'non-fast-forward';
      }
    }
    if (reason === undefined) continue;
    if (force) r.forced = true;
    else Object.assign(r, { status: 'rejected', reason });
  }
}

/** Whether `tracked` is the local ref's tip or an entry of its reflog, or below one (git's is_reachable_in_reflog). */
function includedLocally(repo: Repository, localRef: string, tip: Buffer, tracked: Buffer): boolean {
  if (!repo.objects.has(tracked)) return false;
  const candidates = [tip, ...readReflog(repo.gitDir, repo.commonDir, localRef, repo.store.hashLength).map((l) => l.new)];
  if (candidates.some((c) => c.equals(tracked))) return true;
  const target = peelToCommit(repo, tracked);
  if (target === undefined) return false;
  return candidates.some((c) => {
    const commit = repo.objects.has(c) ? peelToCommit(repo, c) : undefined;
    return commit !== undefined && isAncestor(repo.objects, target, commit);
  });
}

/** The local remote-tracking ref's value for a server ref (through the remote's fetch refspecs), hex. */
function trackingValue(repo: Repository, remote: RemoteConfig, dst: string): string | undefined {
  const tracking = trackingRef(remote, dst);
  return tracking === undefined ? undefined : repo.refs.resolve(tracking)?.toString('hex');
}

function trackingRef(remote: RemoteConfig, dst: string): string | undefined {
  for (const s of remote.fetch) {
    if (s.negative || s.dst === undefined || s.dst === '') continue;
    const mapped = s.pattern ? mapPattern(s.src, fetchDestination(s.dst), dst) : s.src === dst ? fetchDestination(s.dst) : undefined;
    if (mapped !== undefined) return mapped;
  }
  return undefined;
}

function peelToCommit(repo: Repository, id: Buffer): Buffer | undefined {
  const end = peelObject(repo.objects, id, 'commit');
  return end.kind === 'found' ? end.id : undefined;
}

/**
 * The server's report (send-pack.c receive_status): `unpack ok`, then `ok <ref>` or `ng <ref> <reason>`
 * (v2: `option` lines). Returns the unpack failure's reason, if the server gave one.
 */
async function readReport(outer: PacketReader, sideband: boolean, entries: readonly Entry[], onMessage: ((text: string) => void) | undefined): Promise<string | undefined> {
  let reader = outer;
  if (sideband) {
    // Band 1 carries the report's own packets; band 2 the server's messages; band 3 its last words.
    // The outer packets are the demultiplexer's (git's trace names them `sideband`), the inner ones
    // this conversation's, traced as they are read here.
    outer.tracedAs = 'sideband';
    const inner = new PassThrough();
    for (;;) {
      const p = await outer.read();
      if (p.kind !== 'data') break;
      const band = p.data[0];
      if (band === BAND_DATA) inner.write(p.data.subarray(1));
      else if (band === BAND_PROGRESS) onMessage?.(p.data.toString('utf8', 1));
      else if (band === BAND_ERROR) throw new PackwrightError('REQUEST_REFUSED', `remote error: ${p.data.toString('utf8', 1).trimEnd()}`);
      else throw new PackwrightError('PROTOCOL_ERROR', `bad band #${band ?? -1}`);
    }
    inner.end();
    reader = new PacketReader(inner);
    reader.onPacket = outer.onPacket;
  }
  const pending = new Set(entries.filter((e) => e.result.status === 'ok'));
  let unpack: string | undefined;
  try {
    const first = await nextPacket(reader);
    if (first.kind !== 'data' || !first.line.startsWith('unpack ')) throw new PackwrightError('PROTOCOL_ERROR', `unpack status missing in the report`);
    unpack = first.line.slice(7);
    let last: Entry | undefined;
    for (let p = await nextPacket(reader); p.kind === 'data'; p = await nextPacket(reader)) {
      const line = p.line;
      if (line.startsWith('option ')) {
        if (last === undefined) continue;
        const [key, value] = [line.slice(7, line.indexOf(' ', 7) < 0 ? undefined : line.indexOf(' ', 7)), line.slice(line.indexOf(' ', 7) + 1)];
        if (key === 'forced-update') last.result.forced = true;
        else if (key === 'old-oid') last.result.oldId = /^0+$/.test(value) ? undefined : value;
        else if (key === 'new-oid') last.result.newId = /^0+$/.test(value) ? undefined : value;
        continue;
      }
      const ok = line.startsWith('ok ');
      if (!ok && !line.startsWith('ng ')) throw new PackwrightError('PROTOCOL_ERROR', `invalid ref status from remote: ${line}`);
      const rest = line.slice(3);
      const space = rest.indexOf(' ');
      const ref = ok || space < 0 ? rest : rest.slice(0, space);
      const e = [...pending].find((x) => x.dst === ref);
      if (e === undefined) continue;
      pending.delete(e);
      last = e;
      if (!ok) Object.assign(e.result, { status: 'remote-rejected', reason: space < 0 ? undefined : rest.slice(space + 1) });
    }
  } catch (e) {
    if (unpack === undefined) throw e;
  }
  for (const e of pending) Object.assign(e.result, { status: 'remote-failure', reason: 'remote failed to report status' });
  if (unpack !== undefined && unpack !== 'ok') {
    for (const e of entries) if (e.result.status === 'ok') Object.assign(e.result, { status: 'remote-rejected', reason: 'unpacker error' });
    return unpack;
  }
  return undefined;
}

/** git's update_tracking_ref: what the server now has, in the remote-tracking refs ("update by push"). */
function updateTracking(repo: Repository, remote: RemoteConfig, entries: readonly Entry[]): void {
  for (const e of entries) {
    if (e.result.status !== 'ok' && e.result.status !== 'up-to-date') continue;
    const tracking = trackingRef(remote, e.dst);
    if (tracking === undefined) continue;
    const tx = repo.refTransaction();
    if (e.newId === undefined) {
      if (repo.refs.resolve(tracking) === undefined) continue;
      tx.delete(tracking, undefined, { message: 'update by push' });
    } else {
      if (repo.refs.resolve(tracking)?.equals(e.newId) === true) continue;
      tx.update(tracking, e.newId, undefined, { message: 'update by push' });
    }
    tx.commit();
  }
}
