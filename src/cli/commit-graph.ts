import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { isPackwrightError, PackwrightError } from '../errors/index.js';
import { fromHex, toHex } from '../hash/index.js';
import { OBJ_COMMIT, OBJ_TAG, parseCommit, parseTag } from '../objects/index.js';
import { Store, type StoreHandle } from '../odb/index.js';
import type { Repository } from '../repo/index.js';
import { CommitGraphChain, verifyCommitGraph } from '../commit-graph/index.js';
import { writeCommitGraph } from '../walk/index.js';
import type { CommandIO } from './command-io.js';
import type { GlobalOptions } from './global-options.js';
import { Progress } from './progress.js';
import { readAll } from './read-lines.js';
import { helpRequested, UsageError } from './usage-error.js';

const USAGE = `usage: packwright commit-graph verify [--object-dir <objdir>] [--shallow] [--[no-]progress]
   or: packwright commit-graph write [--object-dir <objdir>] [--append] [--reachable | --stdin-packs | --stdin-commits] [--[no-]progress]`;

/**
 * `git commit-graph write` (one file: not --split, no --changed-paths yet) and `verify`. write
 * takes the refs' commits (--reachable), the commits or packs named on stdin, or by default every
 * commit of the packs, and what they reach; as in git, a repository that turned the graph off
 * (core.commitGraph) gets a warning and no file.
 */
export function commitGraphCommand(io: CommandIO, ctx: GlobalOptions, open: () => Repository, args: string[]): number {
  const help = helpRequested(args, USAGE, io.stdout);
  if (help !== undefined) return help;
  const [sub, ...rest] = args;
  if (sub !== 'write' && sub !== 'verify') throw new UsageError(sub === undefined ? USAGE : `error: unknown subcommand: \`${sub}'\n${USAGE}`);
  let objectDir: string | undefined;
  let showProgress = io.stderr.isTTY;
  let source = 'packs' as 'packs' | 'reachable' | 'stdin-packs' | 'stdin-commits';
  let sources = 0;
  let append = false;
  for (let i = 0; i < rest.length; i++) {
    const a = rest[i] as string;
    if (a.startsWith('--object-dir=')) objectDir = a.slice(13);
    else if (a === '--object-dir') objectDir = rest[++i];
    else if (a === '--progress') showProgress = true;
    else if (a === '--no-progress') showProgress = false;
    else if (sub === 'verify' && a === '--shallow') continue;
    else if (sub === 'write' && (a === '--reachable' || a === '--stdin-packs' || a === '--stdin-commits')) {
      source = a.slice(2) as typeof source;
      sources++;
    } else if (sub === 'write' && a === '--append') append = true;
    else if (sub === 'write' && (a === '--no-changed-paths' || a === '--no-split')) continue;
    else if (sub === 'write' && (a.startsWith('--split') || a === '--changed-paths' || a.startsWith('--size-multiple') || a.startsWith('--max-commits') || a.startsWith('--expire-time') || a.startsWith('--max-new-filters'))) {
      throw new UsageError(`packwright commit-graph write: ${a} is not supported yet (one file, no changed-path filters)\n${USAGE}`);
    } else throw new UsageError(`unknown option '${a.replace(/^-+/, '')}'\n${USAGE}`);
  }
  if (sources > 1) throw new PackwrightError('INVALID_ARGUMENT', 'use at most one of --reachable, --stdin-commits, or --stdin-packs');
  const repo = open();
  const store = objectDir !== undefined ? Store.open(resolve(ctx.cwd, objectDir), { objectFormat: repo.format }) : repo.store;
  const handle = store.objects;
  try {
    if (sub === 'verify') {
      const lookup = (id: Buffer): { tree: Buffer; parents: Buffer[]; date: number } | undefined => {
        try {
          const obj = handle.read(id);
          if (obj.type !== OBJ_COMMIT) return undefined;
          const c = parseCommit(obj.data, handle.hashLength);
          return { tree: c.tree, parents: c.parents, date: c.time };
        } catch (e) {
          if (isPackwrightError(e)) return undefined;
          throw e;
        }
      };
      const lines = verifyCommitGraph(handle.looseDirs()[0] as string, handle.hashLength, lookup);
      for (const line of lines) io.stderr.write(`${line}\n`);
      if (showProgress && lines.length === 0) new Progress(true, io.stderr).finishWith('Verifying commits in commit graph', commitCount(handle));
      // A line git's verify dies of (its status 128), else 1 for what it reported.
      return lines.at(-1)?.startsWith('fatal: ') === true ? 128 : lines.length > 0 ? 1 : 0;
    }
    if (repo.config.getBool('core.commitGraph') === false) {
      io.stderr.write("warning: attempting to write a commit-graph, but 'core.commitGraph' is disabled\n");
      return 0;
    }
    // git writes no graph where it would not read one (commit_graph_compatible): grafts, a
    // shallow repository. (Not for replace refs: git's commit-graph command turns them off.)
    if (!graphCompatible(repo)) return 0;
    const progress = new Progress(showProgress, io.stderr);
    let commits: Buffer[] | undefined;
    let packs: string[] | undefined;
    if (source === 'reachable') {
      commits = [];
      for (const ref of repo.refs.list('refs/')) {
        // A ref to what is not here is passed over, as git's peel of it finds no commit.
        const commit = peelToCommit(handle, ref.peeled ?? ref.id);
        if (commit !== undefined && commit !== null) commits.push(commit);
        progress.update('Collecting referenced commits', commits.length, 0);
      }
    } else if (source === 'stdin-commits') {
      commits = [];
      // git reports bad input as an error and exits 1.
      for (const line of lines(io)) {
        const id = fromHex(line, handle.hashLength);
        if (id === undefined) return inputError(io, `unexpected non-hex object ID: ${line}`);
        const commit = peelToCommit(handle, id);
        if (commit === null) return inputError(io, `invalid object: ${line}`);
        if (commit !== undefined) commits.push(commit);
        progress.update('Collecting commits from input', commits.length, 0);
      }
    } else if (source === 'stdin-packs') {
      packs = lines(io).map((l) => (l.endsWith('.pack') ? `${l.slice(0, -5)}.idx` : l));
      const known = new Set(handle.packs().map((p) => p.idxPath.slice(p.idxPath.lastIndexOf('/') + 1)));
      const unknown = packs.find((p) => !known.has(p));
      if (unknown !== undefined) return inputError(io, `error adding pack ${join(handle.looseDirs()[0] as string, 'pack', unknown)}`);
    }
    writeCommitGraph(handle, {
      ...(commits !== undefined ? { commits } : {}),
      ...(packs !== undefined ? { packs } : {}),
      append,
      generationData: repo.config.getInt('commitGraph.generationVersion') !== 1,
      onProgress: (n) => progress.update('Expanding reachable commits in commit graph', n, 0),
    });
    progress.finish();
    return 0;
  } finally {
    if (store !== repo.store) store.close();
  }
}

function inputError(io: CommandIO, message: string): number {
  io.stderr.write(`error: ${message}\n`);
  return 1;
}

/** git's commit_graph_compatible as its commit-graph command sees it (replace refs off): no grafts, not shallow. */
function graphCompatible(repo: Repository): boolean {
  const env = repo.env;
  if (existsSync(env['GIT_GRAFT_FILE'] ?? join(repo.commonDir, 'info', 'grafts'))) return false;
  return repo.shallowCommits().length === 0;
}

/** How many commits the graph of the handle's directory holds (for verify's progress line). */
function commitCount(handle: StoreHandle): number {
  return CommitGraphChain.read(handle.looseDirs()[0] as string, handle.hashLength)?.count ?? 0;
}

function lines(io: CommandIO): string[] {
  return readAll(io.stdin).toString('utf8').split('\n').map((l) => l.trim()).filter((l) => l !== '');
}

/**
 * The commit `id` is or that its tags lead to; undefined for another type of object (git passes
 * it over), null when an object on the way is not there.
 */
function peelToCommit(handle: StoreHandle, id: Buffer): Buffer | undefined | null {
  let current = id;
  for (let depth = 0; depth < 64; depth++) {
    const location = handle.locate(current);
    if (location === undefined) return null;
    // The type alone (a delta's from its base's header): a commit is not read here.
    const type = handle.typeAt(location);
    if (type === OBJ_COMMIT) return current;
    if (type !== OBJ_TAG) return undefined;
    current = parseTag(handle.readTransientAt(location).data, handle.hashLength, toHex(current)).object;
  }
  return undefined;
}
