import { PackwrightError } from '../errors/packwright-error.js';
import { toHex } from '../hash/hex.js';
import type { Repository } from '../repo/repository.js';
import { remoteCallOptions, withLocalRepository, type LocalRepositoryOptions, type RemoteCallOptions } from './client-options.js';
import { fetchFromServer, readGreeting, serverObjectFormat } from './upload-pack-conversation.js';
import { extraHeaders, httpSettings, sshSettings, transportPolicy } from './remote-call-config.js';
import { readRemoteConfig } from './remote-config.js';
import { openConnection, parseRemoteUrl } from './transport.js';

/** What `fetchMissing` is given: the repository, the objects it lacks, and how to reach its promisor remote. */
export interface FetchMissingOptions extends LocalRepositoryOptions, RemoteCallOptions {
  /** The objects to fetch, as hex ids or bytes. */
  ids: readonly (string | Uint8Array)[];
  /** git's --upload-pack for a local or ssh remote. */
  uploadPack?: string | undefined;
  /** The server's progress messages (band 2), as they come. */
  onProgress?: ((text: string) => void) | undefined;
}

/** What `fetchMissing` did: the promisor remote asked, and how many objects came. */
export interface FetchMissingResult {
  remote: string;
  /** Objects received (with `ids`, what they reach that the filter kept). */
  objects: number;
  /** Of `ids`, those that were already here and not asked for. */
  present: number;
}

/**
 * The remote a partial clone's missing objects come from, undefined when the repository is not a
 * partial clone: `repo.promisorRemote` (kept here, beside `fetchMissing`, where callers found it first).
 */
export function promisorRemoteName(repo: Repository): string | undefined {
  return repo.promisorRemote;
}

/**
 * Fetches objects a partial clone lacks from its promisor remote, as git does when a command needs
 * one (promisor-remote.c's fetch_objects: `git fetch <remote> --no-tags --filter=blob:none` of the
 * ids, with no negotiation). Each id is wanted by itself, so a server must allow wants of objects
 * its refs reach (protocol v2 servers do, as git's; over v0, uploadpack.allowAnySHA1InWant or
 * allowReachableSHA1InWant); a wanted tree or commit comes without the
 * blobs under it. The objects arrive in a promisor pack (an empty `.promisor` beside it), no ref
 * changes, and the repository's reads find them at once.
 * @param options The repository (`dir` or `repository`), the ids, and how to reach the server.
 * @returns The remote asked and the objects received.
 * @throws {PackwrightError} INVALID_ARGUMENT (not a partial clone), CONNECTION_CLOSED, PROTOCOL_ERROR,
 *   REQUEST_REFUSED (the server would not send an object), PACK_CORRUPT, ABORTED.
 * @example await fetchMissing({ repository: repo, ids: [blobId] }); repo.readBlob(blobId);
 */
export async function fetchMissing(options: FetchMissingOptions): Promise<FetchMissingResult> {
  return withLocalRepository(options, 'fetchMissing', async (repo) => {
    const name = repo.promisorRemote;
    if (name === undefined) throw new PackwrightError('INVALID_ARGUMENT', `${repo.gitDir} is not a partial clone: it has no promisor remote to fetch missing objects from`);
    const remote = readRemoteConfig(repo.config, name, repo);
    const hexLength = repo.store.hashLength * 2;
    const wants: string[] = [];
    let present = 0;
    for (const id of options.ids) {
      const hex = typeof id === 'string' ? id.toLowerCase() : toHex(id);
      if (hex.length !== hexLength || !/^[0-9a-f]+$/.test(hex)) throw new PackwrightError('INVALID_ARGUMENT', `not an object id: '${hex}'`);
      if (repo.objects.has(Buffer.from(hex, 'hex'))) present++;
      else if (!wants.includes(hex)) wants.push(hex);
    }
    if (wants.length === 0) return { remote: name, objects: 0, present };
    const agent = options.agent ?? 'packwright';
    const location = parseRemoteUrl(remote.url, options.cwd ?? repo.workTree ?? repo.gitDir);
    const conn = await openConnection(location, {
      ...remoteCallOptions(options), ...sshSettings(repo), agent, headers: { ...extraHeaders(repo.config, remote.url), ...options.headers },
      http: { ...httpSettings(repo.config, remote.url, repo.env, name), ...options.http },
      allowTransport: options.allowTransport ?? transportPolicy(repo.config, repo.env),
      service: 'git-upload-pack', protocol: 2, command: options.uploadPack ?? remote.uploadPack, traceIdentity: 'fetch',
    });
    try {
      const greeting = await readGreeting(conn);
      const format = serverObjectFormat(greeting);
      if (format !== repo.format) throw new PackwrightError('INVALID_ARGUMENT', `mismatched algorithms: client ${repo.format}; server ${format}`);
      // No haves (git's noop negotiator for lazy fetches): the server sends what the wants reach, less the filtered blobs.
      const { received } = await fetchFromServer(conn, greeting, repo, {
        wants, filter: 'blob:none', promisor: '', agent, signal: options.signal, onProgress: options.onProgress,
      });
      repo.store.refresh();
      return { remote: name, objects: received?.objects ?? 0, present };
    } finally {
      conn.close();
    }
  });
}
