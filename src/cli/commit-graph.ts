import { join, resolve } from 'node:path';
import { PackwrightError } from '../errors/index.js';
import { tryFromHex } from '../hash/index.js';
import { Store } from '../odb/index.js';
import { commitGraphCompatible, commitGraphSettings, peelToCommit, referencedCommits, type Repository } from '../repo/index.js';
import { verifyStoreCommitGraph, writeCommitGraph, type WriteCommitGraphOptions } from '../walk/index.js';
import type { CommandIO } from './command-io.js';
import type { GlobalOptions } from './global-options.js';
import { Progress } from '../progress/index.js';
import { readAll } from './read-lines.js';
import { helpRequested, UsageError } from './usage-error.js';

const USAGE = `usage: packwright commit-graph verify [--object-dir <objdir>] [--shallow] [--[no-]progress]
   or: packwright commit-graph write [--object-dir <objdir>] [--append] [--split[=<strategy>]] [--reachable | --stdin-packs | --stdin-commits] [--changed-paths] [--max-new-filters <n>] [--[no-]progress] <split options>`;

/**
 * `git commit-graph write` (a file, or with --split a layer of a chain; --changed-paths) and `verify`. write
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
  let shallow = false;
  let changedPaths: boolean | undefined;
  let maxNewFilters: number | undefined;
  let split: NonNullable<WriteCommitGraphOptions['split']> | undefined;
  const splitOptions: NonNullable<WriteCommitGraphOptions['split']> = {};
  const value = (a: string, i: number): [string, number] => {
    const eq = a.indexOf('=');
    if (eq >= 0) return [a.slice(eq + 1), i];
    const v = rest[i + 1];
    if (v === undefined) throw new UsageError(`error: option \`${a.slice(2)}' requires a value\n${USAGE}`);
    return [v, i + 1];
  };
  const count = (name: string, v: string): number => {
    if (!/^\d+$/.test(v)) throw new UsageError(`error: option \`${name}' expects a numerical value\n${USAGE}`);
    return Number(v);
  };
  for (let i = 0; i < rest.length; i++) {
    const a = rest[i] as string;
    if (a.startsWith('--object-dir=')) objectDir = a.slice(13);
    else if (a === '--object-dir') objectDir = rest[++i];
    else if (a === '--progress') showProgress = true;
    else if (a === '--no-progress') showProgress = false;
    else if (sub === 'verify' && a === '--shallow') shallow = true;
    else if (sub === 'write' && (a === '--reachable' || a === '--stdin-packs' || a === '--stdin-commits')) {
      source = a.slice(2) as typeof source;
      sources++;
    } else if (sub === 'write' && a === '--append') append = true;
    else if (sub === 'write' && a === '--changed-paths') changedPaths = true;
    else if (sub === 'write' && a === '--no-changed-paths') changedPaths = false;
    else if (sub === 'write' && a === '--no-split') split = undefined;
    else if (sub === 'write' && (a === '--split' || a.startsWith('--split='))) {
      const mode = a === '--split' ? 'merge' : a.slice(8);
      if (mode !== 'merge' && mode !== 'no-merge' && mode !== 'replace' && mode !== '') throw new UsageError(`error: unrecognized --split argument, ${mode}\n${USAGE}`);
      split = splitOptions;
      splitOptions.mode = mode === '' ? 'merge' : mode;
    } else if (sub === 'write' && (a === '--size-multiple' || a.startsWith('--size-multiple='))) {
      const [v, next] = value(a, i);
      splitOptions.sizeMultiple = count('size-multiple', v);
      i = next;
    } else if (sub === 'write' && (a === '--max-commits' || a.startsWith('--max-commits='))) {
      const [v, next] = value(a, i);
      splitOptions.maxCommits = count('max-commits', v);
      i = next;
    } else if (sub === 'write' && (a === '--expire-time' || a.startsWith('--expire-time='))) {
      const [v, next] = value(a, i);
      splitOptions.expireTime = expireTime(v);
      i = next;
    } else if (sub === 'write' && (a === '--max-new-filters' || a.startsWith('--max-new-filters='))) {
      const [v, next] = value(a, i);
      maxNewFilters = count('max-new-filters', v);
      i = next;
    } else throw new UsageError(`unknown option '${a.replace(/^-+/, '')}'\n${USAGE}`);
  }
  if (sources > 1) throw new PackwrightError('INVALID_ARGUMENT', 'use at most one of --reachable, --stdin-commits, or --stdin-packs');
  const repo = open();
  const store = objectDir !== undefined ? Store.open(resolve(ctx.cwd, objectDir), { objectFormat: repo.format }) : repo.store;
  const handle = store.objects;
  try {
    if (sub === 'verify') {
      const progress = new Progress(showProgress, io.stderr);
      const lines = verifyStoreCommitGraph(handle, handle.looseDirs()[0] as string, {
        shallow,
        // A line for each layer verified, as git's progress has.
        onLayer: (commits) => progress.finishWith('Verifying commits in commit graph', commits),
      });
      for (const line of lines) io.stderr.write(`${line}\n`);
      // A line git's verify dies of (its status 128), else 1 for what it reported (warnings alone: 0).
      if (lines.at(-1)?.startsWith('fatal: ') === true) return 128;
      return lines.some((l) => !l.startsWith('warning: ')) ? 1 : 0;
    }
    if (repo.config.getBool('core.commitGraph') === false) {
      io.stderr.write("warning: attempting to write a commit-graph, but 'core.commitGraph' is disabled\n");
      return 0;
    }
    // git writes no graph where it would not read one (commit_graph_compatible): grafts, a
    // shallow repository. (Not for replace refs: git's commit-graph command turns them off.)
    if (!commitGraphCompatible(repo)) return 0;
    const progress = new Progress(showProgress, io.stderr);
    let commits: Buffer[] | undefined;
    let packs: string[] | undefined;
    if (source === 'reachable') {
      commits = referencedCommits(repo, handle, (n) => progress.update('Collecting referenced commits', n, 0));
    } else if (source === 'stdin-commits') {
      commits = [];
      // git reports bad input as an error and exits 1.
      for (const line of lines(io)) {
        const id = tryFromHex(line, handle.hashLength);
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
      ...(split !== undefined ? { split } : {}),
      ...(changedPaths !== undefined ? { changedPaths } : {}),
      ...commitGraphSettings(repo, maxNewFilters),
      onProgress: (n) => progress.update('Expanding reachable commits in commit graph', n, 0),
    });
    progress.finish();
    return 0;
  } finally {
    if (store !== repo.store) store.close();
  }
}

/** --expire-time: seconds since the epoch, or a date Node can read ("2019-01-01 12:00 -05:00"). */
function expireTime(v: string): number {
  if (/^\d+$/.test(v)) return Number(v);
  if (v === 'now') return Math.floor(Date.now() / 1000);
  const ms = Date.parse(v);
  if (Number.isNaN(ms)) throw new UsageError(`error: malformed expiration date '${v}'\n${USAGE}`);
  return Math.floor(ms / 1000);
}

function inputError(io: CommandIO, message: string): number {
  io.stderr.write(`error: ${message}\n`);
  return 1;
}

function lines(io: CommandIO): string[] {
  return readAll(io.stdin).toString('utf8').split('\n').map((l) => l.trim()).filter((l) => l !== '');
}
