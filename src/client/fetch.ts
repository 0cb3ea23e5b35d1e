// `git fetch` (builtin/fetch.c) over protocol v2: the server's refs by ls-refs, mapped through
// the refspecs (the command's, else the remote's) to local refs, tags following what is fetched,
// stale refs pruned, the objects negotiated and received, then each ref updated as git judges it
// (new, fast-forward, forced, refused), reflogs and FETCH_HEAD written as git writes them.
import { renameSync, rmSync, writeFileSync } from 'node:fs';
import { wildmatch } from '../config/wildmatch.js';
import { readFileIfPresent } from '../io/read-file-if-present.js';
import { join } from 'node:path';
import { isPackwrightError, PackwrightError } from '../errors/packwright-error.js';
import { peelObject } from '../odb/peel-object.js';
import { parseCommit } from '../objects/commit.js';
import { DWIM_RULES } from '../refs/resolve-revision.js';
import { alternateRefIds } from '../repo/alternate-refs.js';
import { excludedByNegative, expandRefName, fetchDestination, isFullObjectId, mapPattern, parseRefspec, refspecPrefixes, type Refspec } from '../refs/refspec.js';
import type { Repository } from '../repo/repository.js';
import { isConnected } from '../transfer/connectivity.js';
import { isAncestor } from '../walk/is-ancestor.js';
import type { Deepen } from './fetch-pack.js';
import { shallowFilePath, writeShallowFile } from '../repo/shallow-file.js';
import { writeReachableCommitGraph } from '../repo/repository-commit-graph.js';
import { checkedOutIn } from '../repo/checked-out-branch.js';
import { createNegotiator } from './negotiator.js';
import type { ServerRef } from './list-server-refs.js';
import { endWithoutFetch, fetchFromServer, readGreeting, serverObjectFormat, serverRefs } from './upload-pack-conversation.js';
import { checkCredentialsInUrl, defaultRemoteName, displayUrl, readRemoteConfig } from './remote-config.js';
import { openConnection, parseRemoteUrl, type Connection } from './transport.js';
import { remoteCallOptions, withLocalRepository, type LocalRepositoryOptions, type RemoteCallOptions } from './client-options.js';
import { configuredProtocol, extraHeaders, httpSettings, sshSettings, transportPolicy } from './remote-call-config.js';
import { normalizeFilterSpec } from '../walk/object-filter.js';

/** Where to fetch into (`dir` or `repository`), from where, and how. */
export interface FetchOptions extends LocalRepositoryOptions, RemoteCallOptions {
  /** A configured remote's name (default: defaultRemoteName's: the branch's remote, the only remote, else `origin`), or a URL or path. */
  remote?: string | undefined;
  /** Refspecs (git's command-line ones); default the remote's `remote.<name>.fetch`. */
  refspecs?: readonly string[] | undefined;
  /** Tags: `'all'` (git's --tags), `'none'` (--no-tags); default remote.<name>.tagOpt, else those pointing into what is fetched. */
  tags?: 'all' | 'none' | undefined;
  /** Delete local refs the refspecs map from server refs that are gone (git's --prune; default remote.<name>.prune, fetch.prune). */
  prune?: boolean | undefined;
  /** With `prune`, also delete local tags the server no longer has, and fetch all tags (git's --prune-tags; default remote.<name>.pruneTags, fetch.pruneTags). */
  pruneTags?: boolean | undefined;
  /** Update refs even when it is not a fast-forward (git's --force). */
  force?: boolean | undefined;
  /** All ref updates in one transaction: every one or none, and FETCH_HEAD only then (git's --atomic). */
  atomic?: boolean | undefined;
  /** Judge and report, change no ref and no FETCH_HEAD (git's --dry-run; the objects are still fetched). */
  dryRun?: boolean | undefined;
  /** Add to FETCH_HEAD instead of replacing it (git's --append). */
  append?: boolean | undefined;
  /** With command-line refspecs: the refspecs that map what they fetch to remote-tracking refs, instead of remote.<name>.fetch (git's --refmap; [] for none). */
  refmap?: readonly string[] | undefined;
  /**
   * git's --prefetch (what `git maintenance`'s prefetch task runs): each refspec's destination moved
   * under refs/prefetch/ (`refs/remotes/origin/*` to `refs/prefetch/remotes/origin/*`) and forced,
   * refspecs of tags and without a destination left out, and no fetch of HEAD when none is left.
   */
  prefetch?: boolean | undefined;
  /** Keep what is received as a pack (git's --keep), however few its objects: never written loose (fetch.unpackLimit). */
  keep?: boolean | undefined;
  /** Offer only the history of these local refs (names, globs or ids) as haves (git's --negotiation-tip). */
  negotiationTips?: readonly string[] | undefined;
  /**
   * Check whether each update is a fast-forward (git's --[no-]show-forced-updates; default
   * fetch.showForcedUpdates, else true). Unchecked, every update is written and shown as a
   * fast-forward, as git does: the walk it spares can be long.
   */
  showForcedUpdates?: boolean | undefined;
  /**
   * Write a layer of the split commit-graph for what the refs reach once fetched (git's
   * --[no-]write-commit-graph; default fetch.writeCommitGraph, else false).
   */
  writeCommitGraph?: boolean | undefined;
  /** Write FETCH_HEAD (default true). */
  writeFetchHead?: boolean | undefined;
  /** The reflog lines' action (git's GIT_REFLOG_ACTION; default `fetch <remote>`). */
  reflogAction?: string | undefined;
  /** Allow updating the branch HEAD is on in a repository with a work tree (git's --update-head-ok). */
  updateHeadOk?: boolean | undefined;
  /** For a local repository: spawn this upload-pack command instead of serving it in this process. */
  uploadPack?: string | undefined;
  /**
   * The protocol to ask the server for (default: protocol.version, else 2). A server that does
   * not speak v2 answers in v0, and the fetch goes on in it.
   */
  protocol?: 0 | 1 | 2 | undefined;
  /** The server's progress lines (band 2), as they come. */
  onProgress?: ((text: string) => void) | undefined;
  /** Make the history this many commits deep from the fetched tips (git's --depth). */
  depth?: number | undefined;
  /** Deepen the present shallow boundary by this many commits (git's --deepen). */
  deepen?: number | undefined;
  /** Make the history reach back to this date (git's --shallow-since; a Date or seconds since the epoch). */
  shallowSince?: Date | number | undefined;
  /** Cut the history short of what these refs reach (git's --shallow-exclude). */
  shallowExclude?: readonly string[] | undefined;
  /** Fetch the whole history of a shallow repository (git's --unshallow). */
  unshallow?: boolean | undefined;
  /**
   * From a shallow server: take its shallow commits into this repository's boundary so that every
   * ref can be updated (git's --update-shallow). Without it, refs whose history reaches them are
   * left alone, as git leaves them.
   */
  updateShallow?: boolean | undefined;
  /**
   * A partial fetch's object filter (git's --filter), only from the repository's promisor remote;
   * by default that remote's `partialclonefilter`, as git fetches from it.
   */
  filter?: string | undefined;
}

/** How a ref fared (git fetch's display): `'new'` ([new branch], [new tag], [new ref]), `'fast-forward'`, `'forced'`, `'tag-update'`, `'rejected'`, `'up-to-date'`, `'fetch-head'` (no local ref: FETCH_HEAD only). */
export type FetchedRefStatus = 'new' | 'fast-forward' | 'forced' | 'tag-update' | 'rejected' | 'up-to-date' | 'fetch-head';

/**
 * One ref `fetch` considered: where it came from, what it was and became, and why (new, fast-forward,
 * forced, rejected, up to date).
 */
export interface FetchedRef {
  /** The server's ref (`refs/heads/main`, `HEAD`), or the id asked for. */
  remoteRef: string;
  /** Where it was stored; undefined when only FETCH_HEAD has it. */
  localRef: string | undefined;
  /** The local ref's id before (undefined: it did not exist). */
  oldId: string | undefined;
  newId: string;
  status: FetchedRefStatus;
  /** Why it was refused (git's words: `non-fast-forward`, `would clobber existing tag`, `unable to update local ref`). */
  reason?: string | undefined;
  /**
   * For a ref that could not be written (`unable to update local ref`): the update it was to be
   * (`new`, `fast-forward`, `forced`, `tag-update`), which git's report shows, and the ref
   * store's error, which git prints as `error: <it>`.
   */
  attempted?: FetchedRefStatus | undefined;
  error?: string | undefined;
  /** FETCH_HEAD's mark: for merge (the first refspec's ref) or not. */
  forMerge: boolean;
  /** Not written to FETCH_HEAD (a remote-tracking ref updated by the way). */
  fetchHeadIgnored: boolean;
}

/** What `fetch` did: each ref's outcome (in FETCH_HEAD's order), the pruned refs and the objects received. */
export interface FetchResult {
  /** The URL as git shows it (`From <url>`). */
  url: string;
  /** The refs in git's order of display and of FETCH_HEAD: for merge first. */
  refs: FetchedRef[];
  /** Refs deleted by pruning, with the id each had. */
  pruned: { ref: string; oldId: string }[];
  /**
   * Why the pruned refs could not be deleted, in git's words (`could not delete reference …`, and
   * the second, empty line git's files backend adds); they stay, and the fetch goes on, as git's
   * does (its exit status is then 1).
   */
  pruneError?: string | undefined;
  /** With `atomic`: a ref was refused or could not be written, so none was. */
  aborted: boolean;
  /** Objects received (0 when everything was here). */
  objects: number;
}

interface MapEntry {
  remote: ServerRef | { ref: string; oid: string };
  local: string | undefined;
  force: boolean;
  status: 'merge' | 'not-for-merge' | 'ignore';
}

/**
 * git's get_fetch_map: what `spec` takes from `remoteRefs`. A pattern leaves out a destination
 * that is a symbolic ref here (git's ignore_symref_update: `refs/remotes/origin/HEAD` is not
 * overwritten by a server's ref of that name), as `isSymbolic` says.
 */
function fetchMap(remoteRefs: readonly ServerRef[], spec: Refspec, into: MapEntry[], missingOk: boolean, isSymbolic?: (name: string) => boolean): void {
  if (spec.negative) return;
  if (spec.pattern) {
    for (const r of remoteRefs) {
      if (r.ref.endsWith('^{}')) continue;
      const local = spec.dst === undefined || spec.dst === '' ? undefined : mapPattern(spec.src, spec.dst, r.ref);
      if (spec.dst !== undefined && spec.dst !== '' && local === undefined) continue;
      if (local !== undefined && isSymbolic?.(local) === true) continue;
      if (mapPattern(spec.src, spec.src, r.ref) === undefined) continue;
      into.push({ remote: r, local, force: spec.force, status: 'not-for-merge' });
    }
    return;
  }
  const src = spec.src === '' ? 'HEAD' : spec.src;
  let found: ServerRef | { ref: string; oid: string } | undefined;
  if (isFullObjectId(src)) found = { ref: src, oid: src };
  else {
    const full = expandRefName(src, (name) => remoteRefs.some((r) => r.ref === name));
    found = full === undefined ? undefined : remoteRefs.find((r) => r.ref === full);
  }
  if (found === undefined) {
    if (missingOk) return;
    throw new PackwrightError('REF_NOT_FOUND', `couldn't find remote ref ${src}`);
  }
  into.push({ remote: found, local: spec.dst === undefined || spec.dst === '' ? undefined : fetchDestination(spec.dst), force: spec.force, status: 'not-for-merge' });
}

/**
 * Fetches from a remote into the repository at `options.dir`, as `git fetch` does: refs mapped
 * through the refspecs, tags following what is fetched, `prune`, fast-forward rules, reflogs and
 * FETCH_HEAD. Refs refused are reported, not thrown (git exits 1 then); a server that sends too
 * little, or a broken pack, fails with nothing changed.
 * @param options The repository (`dir` or `repository`), the remote (a name or URL), refspecs and git fetch's switches.
 * @returns Each ref's outcome, the pruned refs and the objects received.
 * @throws {PackwrightError} REF_NOT_FOUND (a refspec's source the server lacks), CONNECTION_CLOSED, PROTOCOL_ERROR, PACK_CORRUPT, OBJECT_NOT_FOUND, ABORTED.
 * @example const { refs } = await fetch({ dir: '.', remote: 'origin', prune: true });
 */
export async function fetch(options: FetchOptions): Promise<FetchResult> {
  return withLocalRepository(options, 'fetch', (repo) => fetchInto(repo, options));
}

async function fetchInto(repo: Repository, options: FetchOptions): Promise<FetchResult> {
  // Without a remote: the one git's remote_get(NULL) chooses.
  const current = repo.refs.symbolicEnd('HEAD');
  const remoteName = options.remote ?? defaultRemoteName(repo.config, current?.startsWith('refs/heads/') === true ? current.slice(11) : undefined);
  const remote = readRemoteConfig(repo.config, remoteName, repo);
  checkCredentialsInUrl(repo.config, remote.url, options.onWarning);
  const url = remote.url;
  const agent = options.agent ?? 'packwright';
  // --prefetch: every refspec rewritten into refs/prefetch/ (git's filter_prefetch_refspec).
  const prefetched = (list: readonly Refspec[]): Refspec[] => (options.prefetch === true ? prefetchRefspecs(list) : [...list]);
  const cmdline = prefetched((options.refspecs ?? []).map((s) => parseRefspec(s, 'fetch')));
  const remoteFetch = prefetched(remote.fetch);
  if (options.refmap !== undefined && cmdline.length === 0) throw new PackwrightError('INVALID_ARGUMENT', '--refmap option is only meaningful with command-line refspec(s)');
  let specs = cmdline.length > 0 ? cmdline : remoteFetch;
  const prune = options.prune ?? remote.prune ?? false;
  // --prune-tags is a refspec that fetches every tag, and so prunes the ones gone.
  // (Only for the configured refspecs: command-line ones say what to fetch and prune.)
  if (prune && cmdline.length === 0 && (options.pruneTags ?? remote.pruneTags ?? false)) specs = [...specs, parseRefspec('refs/tags/*:refs/tags/*', 'fetch')];
  const tagMode = options.tags ?? remote.tags;
  const hashHex = repo.store.hashLength * 2;
  const location = parseRemoteUrl(url, options.cwd ?? repo.workTree ?? repo.gitDir);
  // A server that does not speak v2 answers in v0.
  const protocol = options.protocol ?? configuredProtocol(repo.config, repo.env);
  const connect = (): Promise<Connection> => openConnection(location, {
    ...remoteCallOptions(options), ...sshSettings(repo), agent, headers: { ...extraHeaders(repo.config, url), ...options.headers },
    http: { ...httpSettings(repo.config, url, repo.env, remoteName), ...options.http },
    allowTransport: options.allowTransport ?? transportPolicy(repo.config, repo.env),
    service: 'git-upload-pack', protocol, command: options.uploadPack ?? remote.uploadPack, traceIdentity: 'fetch', localHas: (id) => repo.objects.has(id),
  });
  const conn = await connect();
  let backfill: Connection | undefined;
  try {
    const greeting = await readGreeting(conn);
    const format = serverObjectFormat(greeting);
    if (format !== repo.format) throw new PackwrightError('INVALID_ARGUMENT', `mismatched algorithms: client ${repo.format}; server ${format}`);

    // The current branch's upstream, when it is on this remote (branch.<name>.remote, .merge).
    const branchKey = current?.startsWith('refs/heads/') === true ? `branch.${current.slice(11)}` : undefined;
    const merges = cmdline.length === 0 && branchKey !== undefined && remote.name !== undefined && repo.config.get(`${branchKey}.remote`) === remote.name
      ? repo.config.getAll(`${branchKey}.merge`).filter((m): m is string => typeof m === 'string')
      : [];
    // Which server refs to list: the refspecs' sources, the upstream, and the tags when they may follow.
    // Nothing to fetch by: the server's HEAD, except for a prefetch (git's get_ref_map).
    const fetchesHead = specs.length === 0 && merges.length === 0 && options.prefetch !== true;
    const prefixes = fetchesHead ? ['HEAD'] : [...refspecPrefixes(specs), ...merges];
    const autoTags = tagMode !== 'none' && (tagMode === 'all' || specs.some((s) => s.dst !== undefined && s.dst !== ''));
    if (autoTags) prefixes.push('refs/tags/');
    // A v0/v1 server advertises every ref, and git's fetch maps them all (only v2 lists by prefix).
    const remoteRefs = await serverRefs(conn, greeting, agent, { peel: true, symrefs: true, ...(greeting.version === 2 ? { prefixes } : {}) });

    // git's get_ref_map.
    const isSymbolic = (name: string): boolean => repo.refs.read(name)?.kind === 'symbolic';
    const map: MapEntry[] = [];
    if (cmdline.length > 0) {
      for (const s of cmdline) fetchMap(remoteRefs, s, map, false, isSymbolic);
      for (const e of map) e.status = 'merge';
    } else if (!fetchesHead) {
      for (const [i, s] of specs.entries()) {
        const before = map.length;
        fetchMap(remoteRefs, s, map, false, isSymbolic);
        if (i === 0 && merges.length === 0 && !s.pattern && map.length > before) (map[before] as MapEntry).status = 'merge';
      }
      // git's add_merge_config: what the current branch merges from this remote is for merge, fetched if no refspec took it.
      for (const m of merges) {
        // git's branch_merge_matches: the merge value names the ref by git's rules for short names.
        const e = map.find((x) => DWIM_RULES.some((rule) => rule.replace('%s', m) === x.remote.ref));
        if (e !== undefined) e.status = 'merge';
        else {
          const before = map.length;
          fetchMap(remoteRefs, parseRefspec(m, 'fetch'), map, true);
          for (const x of map.slice(before)) x.status = 'merge';
        }
      }
    } else {
      const head = remoteRefs.find((r) => r.ref === 'HEAD');
      if (head === undefined) throw new PackwrightError('REF_NOT_FOUND', "couldn't find remote ref HEAD");
      map.push({ remote: head, local: undefined, force: false, status: 'merge' });
    }
    // The local refs (symbolic ones are neither pruned nor offered twice).
    const localRefs = new Map(repo.refs.list('refs/').filter((r) => r.symbolicTarget === undefined).map((r) => [r.name, r.id]));
    const have = (hex: string): boolean => repo.objects.has(Buffer.from(hex, 'hex'));
    if (tagMode === 'all') {
      fetchMap(remoteRefs, parseRefspec('refs/tags/*:refs/tags/*', 'fetch'), map, true, isSymbolic);
    } else if (autoTags) {
      // git's find_non_local_tags: a tag not here yet follows when what it points at is here or coming.
      const coming = new Set(map.map((e) => e.remote.oid));
      for (const r of remoteRefs) {
        if (!r.ref.startsWith('refs/tags/') || localRefs.has(r.ref) || map.some((e) => e.local === r.ref)) continue;
        const target = r.peeled ?? r.oid;
        if (have(target) || coming.has(target)) map.push({ remote: r, local: r.ref, force: false, status: 'not-for-merge' });
      }
    }
    // Refs a command-line refspec fetches also update their remote-tracking refs (git's opportunistic updates).
    if (cmdline.length > 0) {
      const extra: MapEntry[] = [];
      const refmap = options.refmap !== undefined ? options.refmap.map((r) => parseRefspec(r, 'fetch')) : remoteFetch;
      for (const s of refmap) fetchMap(map.map((e) => e.remote as ServerRef), s, extra, true, isSymbolic);
      for (const e of extra) map.push({ ...e, status: 'ignore' });
    }
    // A v0/v1 server serves an object id that is not a ref's tip only if it says so (git's
    // filter_refs: allow-tip-sha1-in-want or allow-reachable-sha1-in-want); v2 leaves it to the
    // server. One already here is not asked for at all (git's quickfetch comes first).
    if (greeting.version === 0 && !greeting.caps.has('allow-tip-sha1-in-want') && !greeting.caps.has('allow-reachable-sha1-in-want')) {
      const tips = new Set(greeting.advertisement.refs.map((r) => r.oid));
      for (const e of map) {
        if (isFullObjectId(e.remote.ref) && !tips.has(e.remote.oid) && !have(e.remote.oid)) throw new PackwrightError('REQUEST_REFUSED', `Server does not allow request for unadvertised object ${e.remote.oid}`);
      }
    }
    const negatives = cmdline.length > 0 ? cmdline : remoteFetch;
    let entries = dedupe(map.filter((e) => !excludedByNegative(negatives, e.remote.ref)), options.onWarning);

    // A branch a work tree has checked out (this one's, or a linked one's) is not fetched into
    // (git's check_not_current_branch).
    if (options.updateHeadOk !== true) {
      for (const e of entries) {
        if (e.local === undefined || !e.local.startsWith('refs/heads/')) continue;
        const worktree = checkedOutIn(repo, e.local);
        if (worktree !== undefined && !worktree.bare) throw new PackwrightError('INVALID_ARGUMENT', `refusing to fetch into branch '${e.local}' checked out at '${worktree.path}'`);
      }
    }

    const reflogAction = options.reflogAction ?? `fetch${options.remote !== undefined ? ` ${options.remote}` : ''}`;
    const result: FetchResult = { url: displayUrl(url), refs: [], pruned: [], objects: 0, aborted: false };
    const writes = refWriter(repo, options);
    if (prune) {
      result.pruned = pruneStale(specs, remoteRefs, entries, localRefs, writes);
      if (writes.pruneError !== undefined) result.pruneError = writes.pruneError;
    }

    // The objects: everything the map names that this repository lacks; with a deepening, all of
    // it (git marks nothing complete then: what is here may lie beyond the boundary).
    const shallow = repo.shallowCommits();
    const deepen = deepenOf(options, shallow.length > 0);
    // A partial clone's promisor remote: its filter (or the one given), the pack marked as its.
    const promisorRemote = remote.name !== undefined && repo.config.getBool(`remote.${remote.name}.promisor`) === true;
    if (options.filter !== undefined && !promisorRemote) throw new PackwrightError('INVALID_ARGUMENT', '--filter can only be used with the remote configured in extensions.partialclone');
    const configuredFilter = promisorRemote ? repo.config.get(`remote.${remote.name as string}.partialclonefilter`) : undefined;
    const filterSpec = options.filter ?? (typeof configuredFilter === 'string' && configuredFilter !== '' ? configuredFilter : undefined);
    const filter = filterSpec !== undefined ? normalizeFilterSpec(filterSpec) : undefined;
    const candidates = [...new Set(entries.map((e) => e.remote.oid))];
    let wants = candidates.filter((oid) => deepen !== undefined || !have(oid));
    // git's quickfetch (check_exist_and_connected): an id already here counts only when what it
    // reaches is here too; otherwise (a damaged or half-copied history) it is asked for again.
    if (wants.length < candidates.length) {
      const wanted = new Set(wants);
      const present = candidates.filter((oid) => !wanted.has(oid));
      if (!(await reachesLocal(repo, present, localRefs, shallow, options.signal))) wants = candidates;
    }
    // Checked whether or not anything is fetched, as git checks them before it fetches.
    const tips = negotiationTips(repo, localRefs, options.negotiationTips, options.onWarning);
    if (wants.length > 0) {
      const negotiator = createNegotiator(repo.config, repo.objects, shallow);
      // The server's refs first, then the local tips, as git's fetch-pack tells its negotiator:
      // in v0/v1 every ref advertised, not only those the refspecs take (v2 lists only those).
      const advertised = greeting.version === 2 ? remoteRefs : greeting.advertisement.refs;
      // (Only what is complete here: an id asked for again is not common, however present.)
      const asked = new Set(wants);
      for (const r of advertised) if (r.oid.length === hashHex && have(r.oid) && !asked.has(r.oid)) negotiator.knownCommon(Buffer.from(r.oid, 'hex'));
      for (const id of tips) negotiator.addTip(id);
      // And what the repositories this one borrows from have (git's for_each_cached_alternate).
      for (const id of alternateRefIds(repo)) negotiator.addTip(id);
      // --keep: what comes is kept as a pack, whatever its size (git's fetch -k).
      const unpackLimit = options.keep === true ? 0 : repo.config.getInt('fetch.unpacklimit') ?? repo.config.getInt('transfer.unpacklimit') ?? 100;
      const { received, shallowInfo } = await fetchFromServer(conn, greeting, repo, {
        wants, negotiator, includeTag: autoTags, unpackLimit, onProgress: options.onProgress, onWarning: options.onWarning, agent, signal: options.signal, shallow, deepen,
        // git's fetch marks the pack with an empty `.promisor` (only a clone lists the refs in it).
        filter, promisor: promisorRemote ? '' : undefined,
      });
      repo.store.refresh();
      result.objects = received?.objects ?? 0;
      try {
        // The boundary as the server moved it (git's register_shallow / unregister_shallow); a
        // shallow server's own boundary (without a deepening) only with updateShallow, else the
        // refs that reach it are left alone (git's update_shallow).
        const gone = new Set(shallowInfo.unshallow);
        let boundary = shallow.filter((id) => !gone.has(id.toString('hex')));
        const ours = new Set(boundary.map((id) => id.toString('hex')));
        // A deepening records every shallow line the server sent, as git's receive_shallow_info
        // registers them all (a commit the server cut may be one its pack does not reach: an
        // octopus's newer parent behind a cut merge); only the server's own boundary is
        // weighed against what is here (prepare_shallow_info).
        const sent = shallowInfo.shallow.filter((h) => !gone.has(h) && !ours.has(h));
        const theirs = deepen !== undefined ? sent : sent.filter((h) => have(h));
        let boundaryMoved = deepen !== undefined;
        let reachesTheirs: ((tip: string) => boolean) | undefined;
        if (theirs.length > 0 && (deepen !== undefined || options.updateShallow === true)) {
          boundary = [...boundary, ...theirs.map((h) => Buffer.from(h, 'hex'))];
          boundaryMoved = true;
        } else if (theirs.length > 0) {
          reachesTheirs = reachesShallow(repo, new Set(theirs), ours);
          entries = entries.filter((e) => !(reachesTheirs as (tip: string) => boolean)(e.remote.oid));
        }
        // A deepening fetch walks its tips whole, not down to the local refs (git's
        // is_deepening_fetch): a commit the server unshallowed must have its history here before
        // the new boundary is written, even under a ref that already points at it.
        await checkConnected(repo, entries, deepen !== undefined ? new Map() : localRefs, boundary, url, options.signal);
        if (boundaryMoved && options.dryRun !== true) writeShallowFile(shallowFilePath(repo.commonDir, repo.env), boundary);
        storeRefs(repo, entries, localRefs, options, reflogAction, result, writes);
        if (autoTags && tagMode !== 'all') {
          // git's backfill_tags: tags on what arrived besides the tips (history between them, a
          // deepened boundary) follow too, their tag objects fetched in a second round if the
          // first did not bring them.
          const followed: MapEntry[] = remoteRefs
            .filter((r) => r.ref.startsWith('refs/tags/') && !localRefs.has(r.ref) && !entries.some((e) => e.local === r.ref) && have(r.peeled ?? r.oid) && reachesTheirs?.(r.peeled ?? r.oid) !== true)
            .map((r) => ({ remote: r, local: r.ref, force: false, status: 'not-for-merge' }));
          const lacking = [...new Set(followed.map((e) => e.remote.oid))].filter((oid) => !have(oid));
          if (lacking.length > 0) {
            // v2's commands may follow one another; a v0 conversation ends with its pack, so git connects again.
            let again = conn;
            let againGreeting = greeting;
            if (greeting.version === 0) {
              backfill = again = await connect();
              againGreeting = await readGreeting(again);
            }
            const more = await fetchFromServer(again, againGreeting, repo, { wants: lacking, includeTag: true, unpackLimit, agent, signal: options.signal, shallow: boundary });
            repo.store.refresh();
            result.objects += more.received?.objects ?? 0;
            if (more.received?.keepPath !== undefined) rmSync(more.received.keepPath, { force: true });
          }
          if (followed.length > 0) {
            await checkConnected(repo, followed, localRefs, boundary, url, options.signal);
            storeRefs(repo, followed, localRefs, options, reflogAction, result, writes);
          }
        }
        result.aborted = !writes.finish(result.refs.some((r) => r.status === 'rejected'));
      } finally {
        if (received?.keepPath !== undefined) rmSync(received.keepPath, { force: true });
      }
    } else {
      await endWithoutFetch(conn, greeting);
      await checkConnected(repo, entries, localRefs, shallow, url, options.signal);
      storeRefs(repo, entries, localRefs, options, reflogAction, result, writes);
      result.aborted = !writes.finish(result.refs.some((r) => r.status === 'rejected'));
    }
    // An aborted atomic fetch leaves FETCH_HEAD as git leaves it: emptied (git truncates it before
    // fetching), or as it was with --append.
    if (options.writeFetchHead !== false && options.dryRun !== true && !(result.aborted && options.append === true)) {
      writeFetchHead(repo, result.aborted ? { ...result, refs: [] } : result, url, options.append === true);
    }
    // git's cmd_fetch: a layer of the split commit-graph for what the refs now reach.
    if (options.dryRun !== true && (options.writeCommitGraph ?? repo.config.getBool('fetch.writecommitgraph') ?? false)) {
      repo.store.refresh();
      writeReachableCommitGraph(repo, { signal: options.signal });
    }
    return result;
  } finally {
    conn.close();
    backfill?.close();
  }
}

/**
 * Whether the history of a fetched tip reaches one of `theirs` (a shallow server's boundary
 * commits), not going past `ours` (this repository's boundary) or objects it lacks: git's
 * assign_shallow_commits_to_refs, for the refs it will not update without --update-shallow.
 */
function reachesShallow(repo: Repository, theirs: ReadonlySet<string>, ours: ReadonlySet<string>): (tip: string) => boolean {
  const memo = new Map<string, boolean>();
  return (tip) => {
    const start = peelObject(repo.objects, Buffer.from(tip, 'hex'), 'commit');
    if (start.kind !== 'found') return false;
    // Depth first, each commit decided once its parents are.
    const stack: { hex: string; parents?: string[] }[] = [{ hex: start.id.toString('hex') }];
    while (stack.length > 0) {
      const top = stack[stack.length - 1] as { hex: string; parents?: string[] };
      if (memo.has(top.hex)) {
        stack.pop();
        continue;
      }
      if (theirs.has(top.hex)) {
        memo.set(top.hex, true);
        stack.pop();
        continue;
      }
      if (top.parents === undefined) {
        const id = Buffer.from(top.hex, 'hex');
        const parents = ours.has(top.hex) || !repo.objects.has(id) ? [] : parseCommit(repo.objects.read(id).data, repo.objects.hashLength, top.hex).parents.map((p) => p.toString('hex'));
        top.parents = parents;
        for (const p of parents) if (!memo.has(p)) stack.push({ hex: p });
        continue;
      }
      memo.set(top.hex, top.parents.some((p) => memo.get(p) === true));
      stack.pop();
    }
    return memo.get(start.id.toString('hex')) === true;
  };
}

/** git's largest depth: what --unshallow asks for. */
const INFINITE_DEPTH = 0x7fffffff;

/** What the options ask of a shallow fetch, refused where git refuses the combination; undefined for none. */
function deepenOf(options: FetchOptions, shallow: boolean): Deepen | undefined {
  const { depth, deepen, shallowSince, shallowExclude, unshallow } = options;
  if (depth !== undefined && deepen !== undefined) throw new PackwrightError('INVALID_ARGUMENT', '--deepen and --depth are mutually exclusive');
  for (const [name, n] of [['depth', depth], ['deepen', deepen]] as const) {
    if (n !== undefined && (!Number.isInteger(n) || n < 1)) throw new PackwrightError('INVALID_ARGUMENT', `${name} ${n} is not a positive number`);
  }
  if (unshallow === true) {
    if (depth !== undefined) throw new PackwrightError('INVALID_ARGUMENT', '--depth and --unshallow cannot be used together');
    if (!shallow) throw new PackwrightError('INVALID_ARGUMENT', '--unshallow on a complete repository does not make sense');
    return { depth: INFINITE_DEPTH };
  }
  const since = shallowSince instanceof Date ? Math.floor(shallowSince.getTime() / 1000) : shallowSince;
  const not = shallowExclude !== undefined && shallowExclude.length > 0 ? shallowExclude : undefined;
  if (depth === undefined && deepen === undefined && since === undefined && not === undefined) return undefined;
  return { depth: depth ?? deepen, relative: deepen !== undefined, since, not };
}

/** git's check_connected before any ref moves: what the map names, down to what the local refs reach. */
async function checkConnected(repo: Repository, entries: readonly MapEntry[], localRefs: ReadonlyMap<string, Buffer>, shallow: readonly Uint8Array[], url: string, signal: AbortSignal | undefined): Promise<void> {
  if (!(await reachesLocal(repo, new Set(entries.map((e) => e.remote.oid)), localRefs, shallow, signal))) {
    throw new PackwrightError('OBJECT_NOT_FOUND', `${displayUrl(url)} did not send all necessary objects`);
  }
}

/** Whether everything the tips (hex ids) reach is here, down to what the local refs reach: git's check_connected. */
async function reachesLocal(repo: Repository, tips: Iterable<string>, localRefs: ReadonlyMap<string, Buffer>, shallow: readonly Uint8Array[], signal: AbortSignal | undefined): Promise<boolean> {
  // In a partial clone, what its promisor remotes' objects name may be missing (git's --exclude-promisor-objects).
  const promisor = repo.promisorRemote !== undefined;
  return isConnected(repo.objects, [...tips].map((h) => Buffer.from(h, 'hex')), [...localRefs.values()], { shallow, promisor, signal });
}

/** git's ref_remove_duplicates: one entry per local ref (two sources for one ref are refused), one per server ref without one. */
function dedupe(map: readonly MapEntry[], onWarning?: (message: string) => void): MapEntry[] {
  const out: MapEntry[] = [];
  const byLocal = new Map<string, MapEntry>();
  for (const e of map) {
    if (e.local === undefined) {
      out.push(e);
      continue;
    }
    const seen = byLocal.get(e.local);
    if (seen === undefined) {
      byLocal.set(e.local, e);
      out.push(e);
    } else if (seen.remote.ref !== e.remote.ref) {
      // git's handle_duplicate: a refspec given against the configured one's usual mapping
      // wins with a warning; two given, or two configured, cannot share a destination.
      if (seen.status === 'ignore' && e.status === 'ignore') throw new PackwrightError('INVALID_ARGUMENT', `${e.local} tracks both ${seen.remote.ref} and ${e.remote.ref}`);
      if (seen.status === 'ignore') Object.assign(seen, e);
      else if (e.status !== 'ignore') throw new PackwrightError('INVALID_ARGUMENT', `Cannot fetch both ${seen.remote.ref} and ${e.remote.ref} to ${e.local}`);
      else onWarning?.(`${e.local} usually tracks ${e.remote.ref}, not ${seen.remote.ref}`);
    } else if (seen.status === 'ignore' && e.status !== 'ignore') {
      seen.status = e.status;
    }
  }
  return out;
}

/** git's prune_refs: local refs a refspec maps to from a server ref that is no longer there. */
function pruneStale(specs: readonly Refspec[], remoteRefs: readonly ServerRef[], entries: readonly MapEntry[], localRefs: Map<string, Buffer>, writes: RefWriter): { ref: string; oldId: string }[] {
  const remoteNames = new Set(remoteRefs.map((r) => r.ref));
  const mapped = new Set(entries.map((e) => e.local));
  const stale: { ref: string; oldId: string }[] = [];
  for (const [name, id] of localRefs) {
    if (mapped.has(name)) continue;
    // git's get_stale_heads_cb: every server name a refspec maps to this ref; none of them there
    // any more, it is stale, unless one of them is left out by a negative refspec
    // (query_matches_negative_refspec).
    const sources: string[] = [];
    for (const s of specs) {
      if (s.negative || s.dst === undefined || s.dst === '') continue;
      const src = s.pattern ? mapPattern(fetchDestination(s.dst), s.src, name) : fetchDestination(s.dst) === name ? s.src : undefined;
      if (src !== undefined) sources.push(src);
    }
    if (sources.length === 0 || sources.some((src) => excludedByNegative(specs, src))) continue;
    if (!sources.some((src) => remoteNames.has(src))) stale.push({ ref: name, oldId: id.toString('hex') });
  }
  if (stale.length > 0) {
    writes.prune(stale.map((s) => s.ref));
    for (const s of stale) localRefs.delete(s.ref);
  }
  return stale;
}

interface RefWriter {
  /** Deletes pruned refs (at once, or in the atomic transaction). */
  prune(refs: readonly string[]): void;
  /** Why `prune` deleted nothing, when it could not (git's delete_refs error). */
  pruneError?: string | undefined;
  /** Sets a ref; true when written, else the ref store's error message. */
  update(ref: string, id: Buffer, old: Buffer | undefined, message: string): true | string;
  /** Ends the fetch's writes: commits the atomic transaction unless a ref was refused; false when it was abandoned. */
  finish(refused: boolean): boolean;
}

/** How a fetch writes refs: each in its own transaction (git's default), all in one (`atomic`), or not at all (`dryRun`). */
function refWriter(repo: Repository, options: FetchOptions): RefWriter {
  if (options.dryRun === true) return { prune: () => undefined, update: () => true, finish: () => true };
  if (options.atomic === true) {
    const tx = repo.refTransaction();
    return {
      prune: (refs) => void refs.forEach((r) => tx.delete(r, undefined, { message: 'fetch: prune' })),
      update: (ref, id, old, message) => (tx.update(ref, id, old, { message }), true),
      finish: (refused) => {
        if (refused) return false;
        try {
          tx.commit();
          return true;
        } catch {
          return false;
        }
      },
    };
  }
  const writer: RefWriter = {
    // git's delete_refs: packed-refs rewritten first, whether or not they are packed there; if it
    // cannot be, no loose ref goes either, and the fetch goes on.
    prune: (refs) => {
      const tx = repo.refTransaction({ rewritePacked: true });
      for (const r of refs) tx.delete(r, undefined, { message: 'fetch: prune' });
      try {
        tx.commit();
      } catch (e) {
        if (!isPackwrightError(e)) throw e;
        // git says it twice: packed_delete_refs with the reason, then files_delete_refs with
        // its own, empty, account of it.
        const what = refs.length === 1 ? `could not delete reference ${refs[0] as string}` : 'could not delete references';
        writer.pruneError = `${what}: ${e.message}\nerror: ${what}: `;
      }
    },
    update: (ref, id, old, message) => {
      try {
        repo.refTransaction().update(ref, id, old, { message }).commit();
        return true;
      } catch (e) {
        if (!isPackwrightError(e)) throw e;
        return e.message;
      }
    },
    finish: () => true,
  };
  return writer;
}

/** The local refs whose history is offered: all, or those `tips` name (ref names, globs, ids), as git's --negotiation-tip. */
function negotiationTips(repo: Repository, localRefs: ReadonlyMap<string, Buffer>, tips: readonly string[] | undefined, onWarning: ((message: string) => void) | undefined): Buffer[] {
  if (tips === undefined || tips.length === 0) return [...localRefs.values()];
  const out: Buffer[] = [];
  for (const tip of tips) {
    if (/[*?[\\]/.test(tip)) {
      // git's for_each_glob_ref: under refs/ unless it says so, `*` crossing slashes.
      const pattern = tip.startsWith('refs/') ? tip : `refs/${tip}`;
      const before = out.length;
      for (const [name, id] of localRefs) if (wildmatch(pattern, name)) out.push(id);
      if (out.length === before) onWarning?.(`ignoring --negotiation-tip=${tip} because it does not match any refs`);
    } else {
      // git's add_negotiation_tips: a name that resolves to nothing, or to an object not here, ends the fetch.
      let id: Buffer;
      try {
        id = repo.resolve(tip);
      } catch (e) {
        if (!isPackwrightError(e, 'REF_NOT_FOUND') && !isPackwrightError(e, 'OBJECT_NOT_FOUND')) throw e;
        throw new PackwrightError('INVALID_ARGUMENT', `${tip} is not a valid object`, { cause: e });
      }
      if (!repo.objects.has(id)) throw new PackwrightError('OBJECT_NOT_FOUND', `the object ${id.toString('hex')} does not exist`);
      out.push(id);
    }
  }
  return out;
}

/** git's store_updated_refs and update_local_ref: each ref judged and written, merge entries first. */
function storeRefs(repo: Repository, entries: readonly MapEntry[], localRefs: ReadonlyMap<string, Buffer>, options: FetchOptions, action: string, result: FetchResult, writes: RefWriter): void {
  const order = { merge: 0, 'not-for-merge': 1, ignore: 2 } as const;
  // FETCH_HEAD names something that is no commit as not for merge.
  const judged = entries.map((e) => ({ e, status: e.status === 'merge' && !isCommitish(repo, e.remote.oid) ? 'not-for-merge' as const : e.status }));
  for (const pass of [0, 1, 2]) {
    for (const { e, status } of judged) {
      if (order[status] !== pass) continue;
      const newId = e.remote.oid;
      const forMerge = status === 'merge';
      const fetchHeadIgnored = status === 'ignore';
      if (e.local === undefined) {
        result.refs.push({ remoteRef: e.remote.ref, localRef: undefined, oldId: undefined, newId, status: 'fetch-head', forMerge, fetchHeadIgnored });
        continue;
      }
      const old = localRefs.get(e.local);
      const oldId = old?.toString('hex');
      const report = (s: FetchedRefStatus, reason?: string, failure?: Pick<FetchedRef, 'attempted' | 'error'>): void => {
        result.refs.push({ remoteRef: e.remote.ref, localRef: e.local, oldId, newId, status: s, ...(reason !== undefined ? { reason } : {}), ...failure, forMerge, fetchHeadIgnored });
      };
      if (oldId === newId) {
        report('up-to-date');
        continue;
      }
      /** Writes the ref and reports `status`, or that it could not be written (git's "unable to update local ref"). */
      const write = (message: string, checkOld: boolean, status: FetchedRefStatus): void => {
        const written = writes.update(e.local as string, Buffer.from(newId, 'hex'), checkOld ? old : undefined, `${action}: ${message}`);
        if (written === true) report(status);
        else report('rejected', 'unable to update local ref', { attempted: status, error: written });
      };
      const force = options.force === true || e.force;
      if (old !== undefined && e.local.startsWith('refs/tags/')) {
        if (!force) report('rejected', 'would clobber existing tag');
        else write('updating tag', false, 'tag-update');
        continue;
      }
      const oldCommit = old !== undefined && isCommitish(repo, oldId as string);
      if (!oldCommit || !isCommitish(repo, newId)) {
        const what = e.remote.ref.startsWith('refs/tags/') ? 'storing tag' : e.remote.ref.startsWith('refs/heads/') ? 'storing head' : 'storing ref';
        write(what, false, 'new');
        continue;
      }
      const a = commitOf(repo, old as Buffer);
      const b = commitOf(repo, Buffer.from(newId, 'hex'));
      // Without the check (git's --no-show-forced-updates, fetch.showForcedUpdates=false) every
      // update is taken as a fast-forward, as git takes it.
      const fastForward = !(options.showForcedUpdates ?? repo.config.getBool('fetch.showforcedupdates') ?? true) || isAncestor(repo.objects, a, b);
      if (fastForward) {
        write('fast-forward', true, 'fast-forward');
      } else if (force) {
        write('forced-update', true, 'forced');
      } else {
        report('rejected', 'non-fast-forward');
      }
    }
  }
}

/** Whether `hex` is a commit or a tag that leads to one (git's lookup_commit_reference_gently). */
function isCommitish(repo: Repository, hex: string): boolean {
  const end = peelObject(repo.objects, Buffer.from(hex, 'hex'), 'commit');
  return end.kind === 'found';
}

/** The commit `id` leads to (callers have checked it is commit-ish). */
function commitOf(repo: Repository, id: Buffer): Buffer {
  return peelObject(repo.objects, id, 'commit').id;
}

/** FETCH_HEAD as git writes it: `<id>\t[not-for-merge]\t<kind> '<name>' of <url>` a line, merge entries first. */
function writeFetchHead(repo: Repository, result: FetchResult, url: string, append: boolean): void {
  const shown = displayUrl(url);
  let text = '';
  for (const r of result.refs) {
    if (r.fetchHeadIgnored) continue;
    const name = r.remoteRef;
    let kind = '';
    let what = name;
    for (const [prefix, k] of [['refs/heads/', 'branch'], ['refs/tags/', 'tag'], ['refs/remotes/', 'remote-tracking branch']] as const) {
      if (name.startsWith(prefix)) {
        kind = k;
        what = name.slice(prefix.length);
        break;
      }
    }
    if (name === 'HEAD') what = '';
    const note = what === '' ? '' : `${kind !== '' ? `${kind} ` : ''}'${what}' of `;
    text += `${r.newId}\t${r.forMerge ? '' : 'not-for-merge'}\t${note}${shown.replace(/\n/g, '\\n')}\n`;
  }
  // git truncates and appends; a rename leaves no half-written file to a reader.
  const path = join(repo.gitDir, 'FETCH_HEAD');
  if (append) text = (readFileIfPresent(path, 'FETCH_HEAD')?.toString('utf8') ?? '') + text;
  writeFileSync(`${path}.lock`, text);
  renameSync(`${path}.lock`, path);
}

/** git's filter_prefetch_refspec: destinations under refs/prefetch/, forced; tags and destination-less refspecs gone. */
function prefetchRefspecs(list: readonly Refspec[]): Refspec[] {
  const out: Refspec[] = [];
  for (const s of list) {
    if (s.negative) {
      out.push(s);
      continue;
    }
    if (s.dst === undefined || s.dst === '' || s.src.startsWith('refs/tags/')) continue;
    const dst = `refs/prefetch/${s.dst.startsWith('refs/') ? s.dst.slice(5) : s.dst}`;
    out.push({ ...s, dst, force: true, text: `+${s.src}:${dst}` });
  }
  return out;
}
