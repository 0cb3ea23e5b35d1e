// `git clone --bare` over protocol v2 (builtin/clone.c, fetch-pack.c): the refs by ls-refs, one
// fetch of everything they name (no haves), the pack streamed into index-pack as it arrives, then
// packed-refs, HEAD and the remote's URL written as git writes them.
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { PackwrightError } from '../errors/packwright-error.js';
import type { ObjectFormat } from '../hash/object-format.js';
import { initBareRepository } from '../repo/init-repository.js';
import { Repository } from '../repo/repository.js';
import { isConnected } from '../transfer/connectivity.js';
import type { Deepen } from './fetch-pack.js';
import { writeShallowFile } from '../repo/shallow-file.js';
import { endWithoutFetch, fetchFromServer, readGreeting, serverObjectFormat, serverRefs } from './upload-pack-conversation.js';
import { openConnection, parseRemoteUrl } from './transport.js';
import { GitConfig } from '../config/git-config.js';
import { httpSettings } from './remote-call-config.js';
import { defaultBranchName } from './remote-config.js';
import { remoteCallOptions, type RemoteCallOptions } from './client-options.js';
import { normalizeFilterSpec } from '../walk/object-filter.js';

/**
 * Options of `cloneBare` (and of a clone with a work tree's `.git`): bare or mirror, the protocol, progress
 * and what every remote call takes.
 */
export interface CloneOptions extends RemoteCallOptions {
  /** Where the bare repository is made (missing or empty). */
  dir: string;
  /**
   * A repository with a work tree's layout (`<dir>/.git`) but no checkout, as `git clone
   * --no-checkout` leaves it: the branches as `refs/remotes/origin/*`, the server's HEAD branch
   * made locally and tracking it, reflogs (default: bare).
   */
  bare?: boolean | undefined;
  /** git's --mirror: every ref under refs/ (not only branches and tags), and a remote that fetches them all (`+refs/*:refs/*`, `mirror = true`). */
  mirror?: boolean | undefined;
  /** For a local repository: spawn this upload-pack command instead of serving it in this process. */
  uploadPack?: string | undefined;
  /**
   * The protocol to ask the server for (git's protocol.version; default 2). A server that does
   * not speak v2 answers in v0, and the clone goes on in it.
   */
  protocol?: 0 | 1 | 2 | undefined;
  /** The server's progress lines (band 2), as they come. */
  onProgress?: ((text: string) => void) | undefined;
  /** The environment git's variables are read from (the reflogs' committer); default the process's. */
  env?: Record<string, string | undefined> | undefined;
  /** The branch HEAD is to name (git's --branch), instead of the server's HEAD branch. */
  branch?: string | undefined;
  /**
   * Only the one branch (HEAD's, or `branch`), and the tags that point into its history (git's
   * --single-branch). Default: on for a shallow clone, as in git, else off.
   */
  singleBranch?: boolean | undefined;
  /** A shallow clone of this many commits from the tip (git's --depth). */
  depth?: number | undefined;
  /** A shallow clone of the history after this date (git's --shallow-since; a Date or seconds since the epoch). */
  shallowSince?: Date | number | undefined;
  /** A shallow clone of the history not reachable from these refs (git's --shallow-exclude). */
  shallowExclude?: readonly string[] | undefined;
  /**
   * A partial clone (git's --filter): objects the filter leaves out (`blob:none`, `blob:limit=<n>`,
   * `tree:<depth>`) stay on the server, which becomes the repository's promisor remote. git fetches
   * them when it needs them; packwright's own reads of them fail with OBJECT_NOT_FOUND.
   */
  filter?: string | undefined;
}

/** What `cloneBare` wrote: the refs, and where HEAD points. */
export interface CloneResult {
  /** The refs written (`refs/heads/*`, `refs/tags/*`), hex ids. */
  refs: { ref: string; oid: string }[];
  /** Where HEAD points (the server's HEAD), or undefined when the server has no HEAD branch. */
  head: string | undefined;
}

/**
 * Clones the repository at `url` into a new bare repository `options.dir`, as `git clone --bare`
 * (or `--mirror`): every branch and tag (every ref), HEAD as the server's, `remote.origin.url`; the pack checked as git's
 * index-pack checks a fetched one and every ref's history connected. A failure removes what it made.
 * @param url A path, `file://`, `git://`, `http://` or `https://` URL.
 * @returns The refs written and where HEAD points.
 * @throws {PackwrightError} CONNECTION_CLOSED, PROTOCOL_ERROR, REQUEST_REFUSED (the server's words), PACK_CORRUPT, OBJECT_NOT_FOUND (the server sent too little), ABORTED.
 * @example await cloneBare('https://github.com/git/git.git', { dir: 'git.git', onProgress: (text) => process.stderr.write(text) });
 */
export async function cloneBare(url: string, options: CloneOptions): Promise<CloneResult> {
  const dir = resolve(options.cwd ?? process.cwd(), options.dir);
  const location = parseRemoteUrl(url, options.cwd);
  // git's clone looks at a path itself first (get_repo_path, which also tries `<path>.git`):
  // nothing there, and not host:path, it is refused before anything is asked of a server.
  if (location.kind === 'local' && !url.includes(':') && !existsSync(location.path) && !existsSync(`${location.path}.git`)) {
    throw new PackwrightError('REPO_NOT_FOUND', `repository '${url}' does not exist`);
  }
  const agent = options.agent ?? 'packwright';
  const filter = options.filter !== undefined ? normalizeFilterSpec(options.filter) : undefined;
  const conn = await openConnection(location, {
    ...remoteCallOptions(options), agent, service: 'git-upload-pack', protocol: options.protocol ?? 2, command: options.uploadPack, env: options.env, traceIdentity: 'clone',
    // A bundle's prerequisites: a new repository has none of them.
    localHas: () => false,
    // No repository yet: the proxy and the rest from the environment, as git reads it (the CLI adds the user's configuration).
    http: { ...httpSettings(new GitConfig(), url, options.env ?? process.env), ...options.http },
  });
  let made = false;
  let existed = true;
  try {
    const greeting = await readGreeting(conn);
    const format = serverObjectFormat(greeting) as ObjectFormat;
    const prefixes = options.mirror === true ? ['HEAD', 'refs/', 'refs/tags/'] : ['HEAD', 'refs/heads/', 'refs/tags/'];
    const listed = await serverRefs(conn, greeting, agent, { peel: true, symrefs: true, unborn: true, prefixes });
    let refs: { ref: string; oid: string; peeled?: string }[] = [];
    let head: string | undefined;
    for (const r of listed) {
      if (r.ref === 'HEAD') head = r.target;
      else if (r.oid !== 'unborn') refs.push(r.peeled !== undefined ? { ref: r.ref, oid: r.oid, peeled: r.peeled } : { ref: r.ref, oid: r.oid });
    }
    const remoteHeadId = listed.find((r) => r.ref === 'HEAD' && r.oid !== 'unborn')?.oid;
    // A server that names no target for HEAD (a bundle, an old server): git's guess_remote_head,
    // the default branch if HEAD is at it, else the first branch that is.
    if (head === undefined && remoteHeadId !== undefined) {
      const defaultBranch = defaultBranchName(new GitConfig(), options.env ?? process.env);
      const at = (name: string): boolean => refs.some((r) => r.ref === name && r.oid === remoteHeadId);
      head = [`refs/heads/${defaultBranch}`, 'refs/heads/master'].find(at) ?? refs.find((r) => r.ref.startsWith('refs/heads/') && r.oid === remoteHeadId)?.ref;
    }
    // The server's HEAD, for origin/HEAD; the local HEAD may name another branch (--branch).
    const remoteHead = head;
    let partial = false;
    if (options.branch !== undefined) {
      head = `refs/heads/${options.branch}`;
      if (!refs.some((r) => r.ref === head)) throw new PackwrightError('REF_NOT_FOUND', `Remote branch ${options.branch} not found in upstream origin`);
    }
    const deepen = deepenOf(options);
    // git's --single-branch, implied by a shallow clone: the branch alone is mapped; tags that
    // point into what arrives are written after (write_followtags).
    const single = options.mirror !== true && (options.singleBranch ?? deepen !== undefined);
    const followTags = single ? refs.filter((r) => r.ref.startsWith('refs/tags/')) : [];
    if (single) refs = refs.filter((r) => r.ref === head);
    const bare = options.bare !== false || options.mirror === true;
    const gitDir = bare ? dir : join(dir, '.git');
    if (!bare) existed = assertEmpty(dir);
    const branch = head?.startsWith('refs/heads/') === true ? head.slice(11) : undefined;
    initBareRepository(gitDir, format, branch ?? 'master');
    made = true;
    const wants = [...new Set(refs.map((r) => r.oid))];
    const openOptions = { defaultRefresh: 'on-miss' as const, ...(options.env !== undefined ? { env: options.env } : {}) };
    const repo = Repository.openGitDir(gitDir, openOptions);
    try {
      if (wants.length > 0) {
        // A clone keeps what it receives as a pack whatever its size (git's TRANS_OPT_KEEP).
        // A partial clone's pack is a promisor pack: its `.promisor` lists what was asked for, as git's.
        const sought = [...(remoteHeadId !== undefined && !single ? [`${remoteHeadId} HEAD`] : []), ...refs.map((r) => `${r.oid} ${r.ref}`)];
        const { received, shallowInfo, filtered } = await fetchFromServer(conn, greeting, repo, {
          wants, unpackLimit: 0, onProgress: options.onProgress, onWarning: options.onWarning, agent, signal: options.signal, includeTag: single, deepen,
          filter, promisor: filter !== undefined ? sought.map((l) => `${l}\n`).join('').replace(/\n$/, '') : undefined,
          // git's clone asks index-pack whether the pack names only what it holds (not for a
          // shallow or partial clone, whose packs name what they leave out).
          checkSelfContained: deepen === undefined && filter === undefined,
        });
        partial = filtered;
        repo.store.refresh();
        const shallow = shallowInfo.shallow.map((h) => Buffer.from(h, 'hex'));
        const tips = wants.map((w) => Buffer.from(w, 'hex'));
        // Then, as git's check_connected, tips in that pack need no walk: everything they reach is
        // in it (on gitoxide, the walk took ~1 s of a 6 s clone). The repository is new, so the
        // pack is all it has.
        const walkNeeded = received?.selfContained !== true || !tips.every((id) => repo.objects.has(id));
        if (walkNeeded && !(await isConnected(repo.objects, tips, [], { shallow, promisor: partial, signal: options.signal }))) {
          throw new PackwrightError('OBJECT_NOT_FOUND', `${url}: the pack received does not hold everything the refs need`);
        }
        if (shallow.length > 0) writeShallowFile(join(gitDir, 'shallow'), shallow);
        if (received?.keepPath !== undefined) rmSync(received.keepPath, { force: true });
      } else {
        await endWithoutFetch(conn, greeting);
      }
      // packed-refs as git clone writes it: sorted, each annotated tag followed by what it peels to;
      // with a work tree's layout the branches are the remote's (refs/remotes/origin/*).
      const local = refs.map((r) => (bare || !r.ref.startsWith('refs/heads/') ? r : { ...r, ref: `refs/remotes/origin/${r.ref.slice(11)}` }));
      const sorted = [...local].sort((a, b) => (a.ref < b.ref ? -1 : a.ref > b.ref ? 1 : 0));
      if (sorted.length > 0) {
        const text = `# pack-refs with: peeled fully-peeled sorted \n${sorted.map((r) => `${r.oid} ${r.ref}\n${r.peeled !== undefined ? `^${r.peeled}\n` : ''}`).join('')}`;
        const tmp = join(gitDir, 'packed-refs.lock');
        writeFileSync(tmp, text, { flag: 'wx' });
        renameSync(tmp, join(gitDir, 'packed-refs'));
      }
      // The URL as given; a local path made absolute, as git writes it.
      const recorded = location.kind === 'local' && !/^file:\/\//i.test(url) ? location.path : url;
      // git clone starts from a SHA-1 repository's config and adds the object format once the
      // server has said it: for SHA-256 the extension comes after the remote (and before the branch).
      let core = readFileSync(join(gitDir, 'config'), 'utf8').replace(/\[extensions\]\n\tobjectformat = [^\n]*\n/, '');
      // A partial clone: format version 1, and the remote its promisor (git's partial_clone_register).
      if (partial) core = core.replace('\trepositoryformatversion = 0\n', '\trepositoryformatversion = 1\n');
      const promisorConfig = partial ? `\tpromisor = true\n\tpartialclonefilter = ${filter ?? ''}\n` : '';
      if (!bare) core = core.replace('\tbare = true\n', '\tbare = false\n\tlogallrefupdates = true\n');
      const fetchSpec = options.mirror === true ? '\tfetch = +refs/*:refs/*\n\tmirror = true\n'
        : bare ? ''
          : single && branch !== undefined ? `\tfetch = +refs/heads/${branch}:refs/remotes/origin/${branch}\n` : '\tfetch = +refs/heads/*:refs/remotes/origin/*\n';
      const extension = format === 'sha1' ? '' : `[extensions]\n\tobjectformat = ${format}\n`;
      const tracking = !bare && branch !== undefined && refs.some((r) => r.ref === head) ? `[branch "${branch}"]\n\tremote = origin\n\tmerge = ${head}\n` : '';
      writeFileSync(join(gitDir, 'config'), `${core}[remote "origin"]\n\turl = ${recorded}\n${fetchSpec}${promisorConfig}${extension}${tracking}`);
      if (!bare && branch !== undefined) {
        const tip = refs.find((r) => r.ref === head);
        if (tip !== undefined) {
          // The local branch and origin/HEAD, with git clone's reflog lines ("clone: from <url>"),
          // through a repository opened again: `repo` read its config before logallrefupdates was written.
          const reopened = Repository.openGitDir(gitDir, openOptions);
          try {
            const message = `clone: from ${recorded}`;
            reopened.refTransaction().create(head as string, Buffer.from(tip.oid, 'hex'), { message }).commit();
            // origin/HEAD follows the server's HEAD, when that branch was cloned.
            if (remoteHead?.startsWith('refs/heads/') === true && refs.some((r) => r.ref === remoteHead)) {
              reopened.refTransaction().setSymbolic('refs/remotes/origin/HEAD', `refs/remotes/origin/${remoteHead.slice(11)}`, { message }).commit();
            }
          } finally {
            reopened.close();
          }
        }
      }
      // A single branch's clone: the tags whose objects arrived (include-tag brings the annotated ones).
      const present = followTags.filter((t) => repo.objects.has(Buffer.from(t.oid, 'hex'), { refresh: false }));
      if (present.length > 0) {
        const transaction = repo.refTransaction();
        for (const t of present) transaction.create(t.ref, Buffer.from(t.oid, 'hex'), { message: `clone: from ${recorded}` });
        transaction.commit();
      }
    } finally {
      repo.close();
    }
    return { refs: refs.map((r) => ({ ref: r.ref, oid: r.oid })), head };
  } catch (e) {
    // What the clone made goes: the repository, and the directory around it when it made that too.
    if (made) rmSync(options.bare === false && options.mirror !== true && existed ? join(dir, '.git') : dir, { recursive: true, force: true });
    throw e;
  } finally {
    conn.close();
  }
}

/** What a shallow clone's options ask of the server, or undefined for a whole clone. */
function deepenOf(options: CloneOptions): Deepen | undefined {
  const { depth, shallowSince, shallowExclude } = options;
  if (depth === undefined && shallowSince === undefined && (shallowExclude === undefined || shallowExclude.length === 0)) return undefined;
  if (depth !== undefined && (!Number.isInteger(depth) || depth < 1)) throw new PackwrightError('INVALID_ARGUMENT', `depth ${depth} is not a positive number`);
  return {
    depth,
    since: shallowSince instanceof Date ? Math.floor(shallowSince.getTime() / 1000) : shallowSince,
    not: shallowExclude,
  };
}

/** git's check of a clone's destination: missing (false), or an empty directory (true). */
function assertEmpty(dir: string): boolean {
  let entries: string[] = [];
  try {
    entries = readdirSync(dir);
  } catch {
    return false;
  }
  if (entries.length > 0) throw new PackwrightError('INVALID_ARGUMENT', `destination path '${dir}' already exists and is not an empty directory.`);
  return true;
}
