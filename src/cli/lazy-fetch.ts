import { isPackwrightError, PackwrightError } from '../errors/index.js';
import { toHex } from '../hash/index.js';
import type { Repository } from '../repo/index.js';
import { walkObjects, type RevTip, type WalkObjectsOptions } from '../walk/index.js';
import type { CommandIO } from './command-io.js';
import { cliAuth } from './credentials.js';

/** Rounds of fetching while a command's reads go on (each tree of a path, or of a walk's level, can be missing in turn). */
const FETCH_ROUNDS = 64;

/** Whether the repository is a partial clone: what it lacks, its promisor remote has (git's lazy fetch applies). */
export function isPartialClone(repo: Repository): boolean {
  return repo.promisorRemote !== undefined;
}

/**
 * git's lazy fetch: the objects of `ids` the partial clone lacks, fetched from its promisor
 * remote at once (git fetches each as it comes to it); nothing in a repository that is not one.
 * A fetch that fails is OBJECT_NOT_FOUND in git's words, after the reason on stderr.
 */
export async function fetchLacking(io: CommandIO, repo: Repository, ids: readonly Buffer[]): Promise<void> {
  const lacking = ids.filter((id) => !repo.objects.has(id));
  if (lacking.length === 0 || !isPartialClone(repo)) return;
  try {
    // The client, loaded only when a fetch happens: every read command imports this module.
    const { fetchMissing } = await import('../client/index.js');
    await io.interruptible((signal) => fetchMissing({ repository: repo, ids: lacking, signal, env: { ...io.env }, ...cliAuth(repo.config, io.env) }));
  } catch (e) {
    io.stderr.write(`fatal: ${e instanceof Error ? e.message : String(e)}\n`);
    throw new PackwrightError('OBJECT_NOT_FOUND', `could not fetch ${toHex(lacking[0] as Buffer)} from promisor remote`, { cause: e });
  }
}

/**
 * Runs `read` (which must have no effect before it fails: a name resolved, trees read ahead of
 * any output); in a partial clone, each object the store says it lacks (OBJECT_NOT_FOUND with an
 * id) is fetched and `read` runs again, until it goes through or an object cannot be had.
 */
export async function retryFetching<T>(io: CommandIO, repo: Repository, read: () => T): Promise<T> {
  for (let round = 0; ; round++) {
    try {
      return read();
    } catch (e) {
      if (round >= FETCH_ROUNDS || !isPackwrightError(e, 'OBJECT_NOT_FOUND') || e.id === undefined || !isPartialClone(repo)) throw e;
      const lacking = Buffer.from(e.id, 'hex');
      if (repo.objects.has(lacking)) throw e;
      await fetchLacking(io, repo, [lacking]);
      if (!repo.objects.has(lacking)) throw e;
    }
  }
}

/**
 * What a walk of `tips` would list and the partial clone lacks, fetched before the walk (rev-list
 * --objects): all at once (git fetches each as it meets it), round after round as the fetched
 * trees name more, until none is missing or a round brings nothing new (the walk then says what is
 * missing, in git's words).
 */
export async function fetchWhatWalkLacks(io: CommandIO, repo: Repository, tips: readonly RevTip[], options: WalkObjectsOptions): Promise<void> {
  let before = -1;
  for (let round = 0; round < FETCH_ROUNDS; round++) {
    const { missing, table } = walkObjects(repo.objects, tips, { ...options, missing: 'allow-any' });
    if (missing.length === 0 || missing.length === before) return;
    before = missing.length;
    await fetchLacking(io, repo, missing.map((n) => Buffer.from(table.id(n))));
  }
}
