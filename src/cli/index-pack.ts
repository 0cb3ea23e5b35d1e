import { join, resolve } from 'node:path';
import { mkdirSync } from 'node:fs';
import { PackwrightError } from '../errors/index.js';
import { hashLength, type ObjectFormat } from '../hash/index.js';
import { indexOptionsOf, indexPack, type IndexPackOptions, type IndexPackPhase } from '../resolve/index.js';
import { indexPackChecks, type IndexPackCheckOptions } from '../fsck/index.js';
import { Output } from './output.js';
import { writePackStats } from './verify-pack.js';
import type { CommandIO } from './command-io.js';
import { Progress } from '../progress/index.js';
import { configFromParameters, objectFormatOption, tryOpenRepository, type GlobalOptions } from './global-options.js';
import { maxMemoryOf } from './max-memory.js';
import { helpRequested, indexVersionOption, integerOption, packHeaderOption, UsageError } from './usage-error.js';

const USAGE = 'usage: packwright index-pack [-v] [-o <index-file>] [--keep | --keep=<msg>] [--promisor[=<msg>]] [--rev-index] [--verify | --verify-stat | --verify-stat-only] [--strict[=<msg-types>]] [--fsck-objects] [--check-self-contained-and-connected] [--fix-thin] [--threads=<n>] [--index-version=<v>[,<limit>]] [--object-format=<fmt>] [--max-input-size=<n>] [--max-memory=<n>] [--[no-]collision-detection] [--pack_header=<version>,<count>] [--report-end-of-input] [--progress-title <title>] [--show-resolving-progress] (<pack-file> | --stdin [<pack-file>])';

const TITLES: Record<IndexPackPhase, string> = {
  receiving: 'Receiving objects', indexing: 'Indexing objects', resolving: 'Resolving deltas', writing: 'Writing index',
};


export async function indexPackCommand(io: CommandIO, ctx: GlobalOptions, args: string[]): Promise<number> {
  const options: IndexPackOptions = {};
  const checks: IndexPackCheckOptions = { onMessage: (line) => io.stderr.write(`${line}\n`) };
  let stdin = false;
  let fixThin = false;
  let progress = io.stderr.isTTY;
  let format: ObjectFormat | undefined;
  let packArg: string | undefined;
  let maxMemory: string | undefined;
  let detectCollisions: boolean | undefined;
  // git's fetch-pack and receive-pack: whether the pack named only its own objects (exit 1 when
  // not), where the input ended (a NUL on stderr), the title of the first progress line.
  let selfContained: boolean | undefined;
  let reportEndOfInput = false;
  let progressTitle: string | undefined;
  let showResolving = false;
  let stat: 'full' | 'only' | undefined;
  const help = helpRequested(args, USAGE, io.stdout);
  if (help !== undefined) return help;
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    if (a === '-o') {
      const v = args[++i];
      if (v === undefined) throw new UsageError(USAGE);
      options.indexPath = resolve(ctx.cwd, v);
    } else if (a === '--stdin') stdin = true;
    else if (a === '--rev-index') options.revIndex = true;
    else if (a === '--no-rev-index') options.revIndex = false;
    else if (a === '--keep') options.keep = '';
    else if (a.startsWith('--keep=')) options.keep = a.slice(7);
    else if (a === '--fix-thin') fixThin = true;
    else if (a === '--strict' || a.startsWith('--strict=')) {
      // The objects checked as fsck checks them, and their links (git 2.39's --fsck-objects, below, takes no message types).
      options.strict = checks.strict = checks.fsckObjects = true;
      if (a.length > 8) checks.messageTypes = checks.messageTypes === undefined ? a.slice(9) : `${checks.messageTypes},${a.slice(9)}`;
    } else if (a === '--fsck-objects') checks.fsckObjects = true;
    else if (a === '--check-self-contained-and-connected') {
      // git's strict mode without fsck's checks: links, and a duplicate object is an error.
      options.strict = checks.selfContained = true;
      checks.onSelfContained = (ok) => (selfContained = ok);
    } else if (a.startsWith('--pack_header=')) options.packHeader = packHeaderOption(a);
    else if (a === '--report-end-of-input') reportEndOfInput = true;
    else if (a === '--show-resolving-progress') showResolving = true;
    else if (a === '--progress-title') {
      const v = args[++i];
      if (v === undefined || progressTitle !== undefined) throw new UsageError(USAGE);
      progressTitle = v;
    }
    else if (a === '--promisor') options.promisor = '';
    else if (a.startsWith('--promisor=')) options.promisor = a.slice(11);
    else if (a === '--verify') options.verify = true;
    else if (a === '--verify-stat' || a === '--verify-stat-only') {
      // What git's verify-pack -v and -s run: the check, then show_pack_info's listing.
      options.verify = true;
      stat = a === '--verify-stat' ? 'full' : 'only';
      if (stat === 'full') options.depths = true;
    }
    else if (a === '-v' || a === '--progress') progress = true;
    else if (a === '-q' || a === '--no-progress') progress = false;
    else if (a.startsWith('--threads=')) {
      // git's parse-options: a value that is no number is a usage error (129).
      const n = /^[0-9]+$/.test(a.slice(10)) ? Number(a.slice(10)) : NaN;
      if (!Number.isSafeInteger(n)) throw new UsageError(USAGE);
      // 0 means "as many as git would use", like git.
      if (n > 0) options.threads = n;
    }
    else if (a.startsWith('--object-format=')) format = objectFormatOption(a.slice(16));
    else if (a.startsWith('--index-version=')) {
      const { version, largeOffsetLimit } = indexVersionOption(a);
      options.idxVersion = version;
      if (largeOffsetLimit !== undefined) options.largeOffsetLimit = largeOffsetLimit;
    } else if (a.startsWith('--max-input-size=')) options.maxInputSize = integerOption(a, a.slice(17));
    else if (a.startsWith('--max-memory=')) maxMemory = a.slice(13);
    else if (a === '--collision-detection') detectCollisions = true;
    else if (a === '--no-collision-detection') detectCollisions = false;
    else if (a.startsWith('-')) throw new UsageError(`unknown option '${a}'\n${USAGE}`);
    else if (packArg === undefined) packArg = resolve(ctx.cwd, a);
    else throw new UsageError(USAGE);
  }
  if (fixThin && !stdin) throw new UsageError('fatal: the option --fix-thin requires --stdin');
  // git hashes everything with sha1dc; here it costs about 2.4× the hashing time, so it is on for
  // what comes from outside (a pack on standard input: a fetch or a push) unless turned off.
  if (detectCollisions ?? stdin) options.detectCollisions = true;
  if (!stdin && packArg === undefined) throw new UsageError(USAGE);
  if (!stdin && packArg !== undefined && !packArg.endsWith('.pack') && options.indexPath === undefined) {
    throw new PackwrightError('INVALID_ARGUMENT', `packfile name '${packArg}' does not end with '.pack'`);
  }
  // In a repository, git compares incoming objects with the ones it has (and --strict looks there
  // for what links name), so the repository is opened whenever there is one.
  const repo = tryOpenRepository(ctx);
  // pack.writeReverseIndex (git 2.39's default: false), when neither --rev-index nor
  // --no-rev-index is given; -c values apply without a repository too.
  const config = repo?.config ?? configFromParameters(ctx.configParameters);
  if (options.revIndex === undefined) {
    options.revIndex = io.env['GIT_TEST_WRITE_REV_INDEX'] === '1' || config.getBool('pack.writeReverseIndex') === true;
  }
  const ceiling = maxMemoryOf(maxMemory, config, USAGE);
  if (ceiling !== undefined) options.maxMemory = ceiling;
  options.objectFormat = format ?? repo?.format ?? 'sha1';
  // git's --verify rebuilds the index with the version and 64-bit threshold of the one on disk.
  if (options.verify && !stdin && packArg !== undefined) {
    Object.assign(options, indexOptionsOf(options.indexPath ?? packArg.replace(/\.pack$/, '.idx'), options.objectFormat));
  }
  if (options.packHeader !== undefined && !stdin) throw new PackwrightError('INVALID_ARGUMENT', '--pack_header is for a pack on standard input');
  const bar = new Progress(progress, io.stderr);
  const resolvingBar = showResolving && !progress ? new Progress(true, io.stderr) : undefined;
  let inputEnded = false;
  options.onProgress = (phase, done, total, bytes) => {
    const first = phase === 'receiving' || phase === 'indexing';
    // git writes a NUL once the whole pack is read (receive-pack waits for it to stop its keepalives).
    if (reportEndOfInput && !first && !inputEnded) {
      inputEnded = true;
      io.stderr.write('\0');
    }
    const title = first && progressTitle !== undefined ? progressTitle : TITLES[phase];
    bar.update(title, done, total, phase === 'receiving' ? bytes : undefined);
    if (phase === 'resolving') resolvingBar?.update(title, done, total);
  };
  if (fixThin) {
    if (repo === undefined) throw new PackwrightError('REPO_NOT_FOUND', '--fix-thin needs a repository to take bases from');
    const store = repo.objects;
    options.fixThin = (id) => (store.has(id) ? store.read(id) : undefined);
    // git deflates the bases it appends at zlib_compression_level (config.c sets it from these).
    const level = repo.config.getInt('core.looseCompression') ?? repo.config.getInt('core.compression');
    if (level !== undefined) options.fixThinCompression = level;
  }
  let input: string | NodeJS.ReadableStream;
  if (stdin) {
    input = io.stdin.stream();
    if (packArg !== undefined) options.packPath = packArg;
    else {
      if (repo === undefined) throw new PackwrightError('REPO_NOT_FOUND', '--stdin requires a git repository');
      // The store's objects directory: GIT_OBJECT_DIRECTORY when set (receive-pack's quarantine).
      options.packDir = join(repo.store.objectsDir, 'pack');
      mkdirSync(options.packDir, { recursive: true });
    }
  } else {
    input = packArg as string;
  }
  // --verify only compares what it rebuilt; everything else is checked as git checks it in a repository.
  if (!options.verify && (repo !== undefined || checks.fsckObjects === true)) {
    if (repo !== undefined) checks.repo = repo;
    Object.assign(options, indexPackChecks(checks));
  }
  // The pack ends at its trailer: what the sender leaves open on stdin after it is not waited for.
  const result = await io.interruptible((signal) => indexPack(input as string, { ...options, signal }))
    .finally(() => (typeof input === 'string' ? undefined : (input as NodeJS.ReadableStream & { destroy?: () => void }).destroy?.()));
  if (reportEndOfInput && !inputEnded) io.stderr.write('\0');
  // As git ends its "Resolving deltas" line after --fix-thin (only where progress is shown).
  const n = result.localObjects;
  const ending = n > 0 ? `completed with ${n} local object${n === 1 ? '' : 's'}` : undefined;
  bar.finish(ending);
  resolvingBar?.finish(ending);
  const out = new Output(io.stdout);
  const hex = result.packHash.toString('hex');
  if (!options.verify) out.string(stdin ? `${options.keep !== undefined ? 'keep' : 'pack'}\t${hex}\n` : `${hex}\n`);
  if (stat !== undefined) writePackStats(out, result, hashLength(options.objectFormat), stat === 'only');
  if (stdin && result.trailing.length > 0) out.bytes(result.trailing);
  out.flush();
  repo?.close();
  // "Let the caller know this pack is not self contained" (git): fetch-pack then checks connectivity itself.
  return selfContained === false ? 1 : 0;
}
