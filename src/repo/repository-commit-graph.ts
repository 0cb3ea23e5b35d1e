// What a repository brings to a commit-graph write (git's commit-graph.c as its commands call
// it): whether one may be written at all, the settings its configuration and git's test knobs
// give, the commits its refs name. The commit-graph command and fetch.writeCommitGraph share it.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { BloomSettings } from '../commit-graph/index.js';
import { peelObject, type StoreHandle } from '../odb/index.js';
import { writeCommitGraph, type WriteCommitGraphOptions, type WrittenCommitGraph } from '../walk/index.js';
import type { Repository } from './repository.js';
import { sharedFileMode } from './shared-file-mode.js';

/** git's commit_graph_compatible as its commit-graph writes see it (replace refs off): no grafts, not shallow. */
export function commitGraphCompatible(repo: Repository): boolean {
  if (existsSync(repo.env['GIT_GRAFT_FILE'] ?? join(repo.commonDir, 'info', 'grafts'))) return false;
  return repo.shallowCommits().length === 0;
}

/**
 * The settings a write takes from the repository: the files' mode (core.sharedRepository), the
 * generation version (commitGraph.generationVersion), commitGraph.maxNewFilters unless
 * `maxNewFilters` is given (a negative value, git's default -1, is no cap), and the filters' shape
 * from git's test knobs (GIT_TEST_BLOOM_SETTINGS_*).
 */
export function commitGraphSettings(repo: Repository, maxNewFilters?: number): Pick<WriteCommitGraphOptions, 'bloomSettings' | 'fileMode' | 'generationData' | 'maxNewFilters'> {
  const cap = maxNewFilters ?? repo.config.getInt('commitGraph.maxNewFilters');
  return {
    bloomSettings: bloomSettingsFrom(repo.env),
    fileMode: sharedFileMode(repo.config, 0o444),
    generationData: repo.config.getInt('commitGraph.generationVersion') !== 1,
    ...(cap !== undefined && cap >= 0 ? { maxNewFilters: cap } : {}),
  };
}

/** git's test knobs for the filters' shape (GIT_TEST_BLOOM_SETTINGS_*), which its test suite sets. */
function bloomSettingsFrom(env: Readonly<Record<string, string | undefined>>): Partial<BloomSettings> {
  const out: Partial<BloomSettings> = {};
  const read = (name: string): number | undefined => {
    const v = env[`GIT_TEST_BLOOM_SETTINGS_${name}`];
    return v !== undefined && /^\d+$/.test(v) ? Number(v) : undefined;
  };
  const bits = read('BITS_PER_ENTRY');
  const hashes = read('NUM_HASHES');
  const max = read('MAX_CHANGED_PATHS');
  if (bits !== undefined) out.bitsPerEntry = bits;
  if (hashes !== undefined) out.numHashes = hashes;
  if (max !== undefined) out.maxChangedPaths = max;
  return out;
}

/** The commits the refs name, tags peeled (git's --reachable); a ref to what is not here is passed over, as git's peel finds no commit. */
export function referencedCommits(repo: Repository, handle: StoreHandle, onEach?: (count: number) => void): Buffer[] {
  const commits: Buffer[] = [];
  for (const ref of repo.refs.list('refs/')) {
    const commit = peelToCommit(handle, ref.peeled ?? ref.id);
    if (commit !== undefined && commit !== null) commits.push(commit);
    onEach?.(commits.length);
  }
  return commits;
}

/**
 * The commit `id` is or that its tags lead to; undefined for another type of object (git passes
 * it over), null when an object on the way is not there.
 */
export function peelToCommit(handle: StoreHandle, id: Buffer): Buffer | undefined | null {
  const end = peelObject(handle, id, 'commit');
  return end.kind === 'found' ? end.id : end.kind === 'missing' ? null : undefined;
}

/**
 * git's write_commit_graph_reachable with COMMIT_GRAPH_WRITE_SPLIT, as fetch (fetch.writeCommitGraph)
 * and gc call it: a new layer of the split graph for what the refs reach. Nothing where git writes
 * nothing (core.commitGraph off, grafts, a shallow repository).
 */
export function writeReachableCommitGraph(repo: Repository, options: { onProgress?: ((commits: number) => void) | undefined; signal?: AbortSignal | undefined } = {}): WrittenCommitGraph | undefined {
  if (repo.config.getBool('core.commitGraph') === false || !commitGraphCompatible(repo)) return undefined;
  const handle = repo.objects;
  return writeCommitGraph(handle, {
    commits: referencedCommits(repo, handle),
    split: { mode: 'merge' },
    ...commitGraphSettings(repo),
    ...(options.onProgress !== undefined ? { onProgress: options.onProgress } : {}),
    ...(options.signal !== undefined ? { signal: options.signal } : {}),
  });
}
