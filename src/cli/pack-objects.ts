import { createPack, objectsOfPacks, PackProgress, packSettings, type CreatePackOptions } from '../create/index.js';
import { parseObjectFilter, type MissingAction } from '../walk/index.js';
import { resolve } from 'node:path';
import { PackwrightError } from '../errors/index.js';
import { tryFromHex, toHex } from '../hash/index.js';
import { approxidate } from '../refs/index.js';
import { RevArgs } from '../walk/index.js';
import type { Repository } from '../repo/index.js';
import { defaultThreads } from '../resolve/index.js';
import type { GlobalOptions } from './global-options.js';
import { readLines } from './read-lines.js';
import { helpRequested, indexVersionOption, integerOption, magnitudeOption, UsageError } from './usage-error.js';
import type { CommandIO } from './command-io.js';

const USAGE = `usage: packwright pack-objects [<options>] [<base-name> | --stdout]
    --revs                read revisions from stdin (and --all, --not, --shallow <id> lines)
    --all                 with --revs: all refs
    --reflog              with --revs: the objects every reflog names
    --indexed-objects     with --revs: the index's blobs and cache-tree trees
    --stdout              write the pack to stdout
    --thin                deltas may refer to objects the receiver has
    --delta-base-offset   OFS_DELTA references
    --include-tag         include annotated tags of packed objects
    --window=<n>          objects tried as delta bases (default 10)
    --window-memory=<n>   bytes the window may hold (k/m/g; pack.windowMemory; 0: no limit)
    --depth=<n>           longest delta chain (default 50)
    --threads=<n>         threads for delta compression
    --no-reuse-delta      compute every delta anew
    --no-reuse-object     recompress every object
    --missing=<action>    error, allow-any, allow-promisor
    --exclude-promisor-objects  leave out what promisor packs hold (repack in a partial clone)
    --filter=<spec>       blob:none, blob:limit=<n>[kmg], tree:<depth>, object:type=<type>,
                          combine:<spec>+<spec>... (a partial clone)
    --rev-index           with <base-name>: also write the .rev
    --index-version=<v>[,<limit>]  .idx version (1 or 2) and the 64-bit offset threshold
    --max-pack-size=<n>   with <base-name>: packs of at most n bytes (k/m/g; pack.packSizeLimit)
    --local, --incremental, --honor-pack-keep, --keep-pack=<pack-name>  leave out objects in such packs
    --keep-unreachable    also pack the unreachable objects of the local packs (repack -k)
    --pack-loose-unreachable  also pack the loose objects
    --unpack-unreachable[=<time>]  write the unreachable objects of the local packs as loose
                          objects, but those of packs older than <time> (repack -A)
    --cruft, --cruft-expiration=<time>  a cruft pack of the packs named on stdin (-<name>: to be
                          deleted) and the loose objects, with their times (repack --cruft)
    -q, --progress, --all-progress, --all-progress-implied`;

/** Options git's upload-pack and repack pass that change nothing here. */
const ACCEPTED = new Set(['--keep-true-parents']);

/** A signed option value clamped to 0 (git clamps a negative --window or --depth). */
function clampedOption(option: string, value: string): number {
  if (/^-[0-9]+$/.test(value)) return 0;
  return integerOption(option, value);
}

/**
 * `git pack-objects`: objects from stdin (ids, or revisions with --revs) into a pack on stdout or
 * in `<base-name>-<hash>.pack` with its index (then the hash is printed, as git prints it). This is
 * what `git upload-pack` runs to serve a clone or fetch (`uploadpack.packObjectsHook`).
 */
export async function packObjectsCommand(io: CommandIO, global: GlobalOptions, open: () => Repository, args: string[]): Promise<number> {
  const help = helpRequested(args, USAGE, io.stdout);
  if (help !== undefined) return help;
  let stdout = false;
  let revs = false;
  let all = false;
  let indexed = false;
  let reflog = false;
  let progress = io.stderr.isTTY;
  // git's progress level 2 (--all-progress, or --all-progress-implied with progress on): "Writing
  // objects" is shown for a pack to stdout too.
  let allProgress = false;
  let allProgressImplied = false;
  let base: string | undefined;
  let stdinPacks = false;
  let unpacked = false;
  // git's --unpack-unreachable: off (undefined), on for every object (0), or from a date on.
  let unpackExpiration: number | undefined;
  // git's --cruft[-expiration]: off (undefined), on without a date (0), or with one.
  let cruftExpiration: number | undefined;
  // git's --[no-]use-bitmap-index (undefined: pack.useBitmaps, for --stdout only), and
  // --write-bitmap-index, which turns it off for a pack written to disk.
  let useBitmap: boolean | undefined;
  let writeBitmap: boolean | 'quiet' | undefined;
  let sparse: boolean | undefined;
  // git writes REF_DELTA unless told the receiver reads OFS_DELTA (the library's default is OFS).
  const options: Partial<CreatePackOptions> = { deltaBaseOffset: false };
  for (const a of args) {
    const [name, value] = a.includes('=') ? [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)] : [a, undefined];
    if (a === '--stdout') stdout = true;
    else if (a === '--revs') revs = true;
    else if (a === '--all') all = true;
    else if (a === '--indexed-objects') indexed = true;
    else if (a === '--reflog') reflog = true;
    else if (a === '--stdin-packs') stdinPacks = true;
    else if (a === '--unpacked') unpacked = true;
    // git's parse-options reads --stdin as an abbreviation it refuses (of --stdin-packs).
    else if (a === '--stdin') throw new PackwrightError('INVALID_ARGUMENT', "disallowed abbreviated or ambiguous option 'stdin'");
    else if (a === '--thin') options.thin = true;
    else if (a === '--shallow') options.shallowClient = true;
    else if (a === '--no-shallow') options.shallowClient = false;
    else if (a === '--delta-base-offset') options.deltaBaseOffset = true;
    else if (a === '--include-tag') options.includeTag = true;
    else if (a === '--no-reuse-delta') options.reuseDelta = false;
    else if (a === '--no-reuse-object') options.reuseObject = false;
    else if (a === '--rev-index') options.writeReverseIndex = true;
    else if (a === '--incremental') options.incremental = true;
    else if (a === '--non-empty') options.nonEmpty = true;
    else if (a === '--exclude-promisor-objects') options.excludePromisor = true;
    else if (a === '--keep-unreachable') options.keepUnreachable = true;
    else if (a === '--no-keep-unreachable') options.keepUnreachable = false;
    else if (a === '--pack-loose-unreachable') options.packLooseUnreachable = true;
    else if (a === '--no-pack-loose-unreachable') options.packLooseUnreachable = false;
    else if (a === '--unpack-unreachable') unpackExpiration = 0;
    else if (a === '--no-unpack-unreachable') unpackExpiration = undefined;
    else if (name === '--unpack-unreachable' && value !== undefined) unpackExpiration = expirationOption(value);
    else if (a === '--cruft') cruftExpiration ??= 0;
    else if (a === '--no-cruft' || a === '--no-cruft-expiration') cruftExpiration = undefined;
    else if (a === '--cruft-expiration') cruftExpiration ??= 0;
    else if (name === '--cruft-expiration' && value !== undefined) cruftExpiration = expirationOption(value);
    else if (name === '--index-version' && value !== undefined) {
      const { version, largeOffsetLimit } = indexVersionOption(a);
      options.indexVersion = version;
      if (largeOffsetLimit !== undefined) options.largeOffsetLimit = largeOffsetLimit;
    } else if (a === '--use-bitmap-index') useBitmap = true;
    else if (a === '--no-use-bitmap-index') useBitmap = false;
    else if (a === '--write-bitmap-index' || a === '--write-bitmap-index-quiet') writeBitmap = a === '--write-bitmap-index' ? true : 'quiet';
    else if (a === '--no-write-bitmap-index') writeBitmap = false;
    else if (a === '--sparse' || a === '--no-sparse') sparse = a === '--sparse';
    else if (a === '--local') options.local = true;
    else if (a === '--honor-pack-keep') options.honorPackKeep = true;
    else if (a === '-q' || a === '--quiet') progress = false;
    else if (a === '--progress' || a === '--all-progress') {
      progress = true;
      allProgress = a === '--all-progress';
    } else if (a === '--all-progress-implied') allProgressImplied = true;
    else if (name === '--window' && value !== undefined) options.window = clampedOption(a, value);
    else if (name === '--window-memory' && value !== undefined) options.windowMemory = magnitudeOption('window-memory', value, USAGE);
    else if (name === '--keep-pack' && value !== undefined) options.keepPacks = [...(options.keepPacks ?? []), value];
    else if (name === '--depth' && value !== undefined) options.depth = Math.min(clampedOption(a, value), 4095);
    else if (name === '--threads' && value !== undefined) options.threads = integerOption(a, value) || defaultThreads();
    else if (name === '--compression' && value !== undefined) options.compression = integerOption(a, value);
    else if (name === '--missing' && value !== undefined) {
      if (value !== 'error' && value !== 'allow-any' && value !== 'allow-promisor') throw new UsageError(`fatal: invalid value for '--missing': '${value}'`);
      options.missing = value as MissingAction;
    } else if (name === '--filter' && value !== undefined) {
      // The last one counts: git 2.39's pack-objects sets up a new filter for each --filter
      // (po_filter_revs_init), where rev-list would combine them.
      options.filter = parseObjectFilter(value);
    } else if (a === '--no-filter') {
      delete options.filter;
    } else if (name === '--max-pack-size' && value !== undefined) {
      options.maxPackSize = magnitudeOption('max-pack-size', value, USAGE);
    } else if (ACCEPTED.has(name)) {
      // Nothing to do here (see ACCEPTED).
    } else if (!a.startsWith('-') && base === undefined) base = resolve(global.cwd, a);
    else throw new UsageError(USAGE);
  }
  if (stdout === (base !== undefined)) throw new UsageError(USAGE);
  if (options.keepUnreachable === true && unpackExpiration !== undefined) {
    throw new PackwrightError('INVALID_ARGUMENT', "options '--keep-unreachable' and '--unpack-unreachable' cannot be used together");
  }
  if (unpackExpiration !== undefined) {
    // git keeps the date only when the walk started from everything that can name an object:
    // otherwise "unreachable" says nothing, and every object is loosened.
    options.unpackUnreachable = { expiration: all && reflog && indexed ? unpackExpiration : 0 };
  }
  // --all (like git's other internal rev-list options) walks revisions, and stdin is revisions too;
  // so do --thin (git walks with --objects-edge) and the unreachable options (git's
  // use_internal_rev_list).
  if (all || reflog || indexed || options.thin === true || options.excludePromisor === true || options.keepUnreachable === true || options.packLooseUnreachable === true || unpackExpiration !== undefined) revs = true;
  if (cruftExpiration !== undefined) {
    if (revs) throw new PackwrightError('INVALID_ARGUMENT', 'cannot use internal rev list with --cruft');
    if (stdinPacks) throw new PackwrightError('INVALID_ARGUMENT', 'cannot use --stdin-packs with --cruft');
    if (options.maxPackSize !== undefined && options.maxPackSize > 0) throw new PackwrightError('INVALID_ARGUMENT', 'cannot use --max-pack-size with --cruft');
  }
  if (stdinPacks && options.filter !== undefined) throw new PackwrightError('INVALID_ARGUMENT', 'cannot use --filter with --stdin-packs');
  if (stdinPacks && revs) throw new PackwrightError('INVALID_ARGUMENT', 'cannot use internal rev list with --stdin-packs');
  const repo = open();
  repo.onWarning = (message) => void io.stderr.write(`warning: ${message}\n`);
  const objects = repo.objects;
  // git's pack settings from config, under what the command line said.
  const config = repo.config;
  const given = options as Record<string, unknown>;
  for (const [key, value] of Object.entries(packSettings(config, io.env))) if (given[key] === undefined) given[key] = value;
  if (sparse !== undefined) options.sparse = sparse;
  // git's rules (cmd_pack_objects): bitmaps by default only for a pack to stdout, never for one
  // that is to get a bitmap written, nor in a shallow repository (the walk then takes that case).
  useBitmap ??= stdout && (config.getBool('pack.useBitmaps') ?? true);
  writeBitmap ??= config.getBool('pack.writeBitmaps') === true;
  if (!stdout && writeBitmap !== false) useBitmap = false;
  // pack.packSizeLimit applies to packs written to files only; --max-pack-size wins, and git
  // raises any limit below 1 MiB to 1 MiB.
  if (!stdout && options.maxPackSize === undefined && cruftExpiration === undefined) {
    const limit = config.getInt('pack.packSizeLimit');
    if (limit !== undefined && limit > 0) options.maxPackSize = limit;
  }
  if (stdout && options.maxPackSize !== undefined) throw new PackwrightError('INVALID_ARGUMENT', '--max-pack-size cannot be used to build a pack for transfer');
  if (options.maxPackSize === 0) delete options.maxPackSize;
  if (options.maxPackSize !== undefined && options.maxPackSize < 1 << 20) {
    io.stderr.write('warning: minimum pack size limit is 1 MiB\n');
    options.maxPackSize = 1 << 20;
  }
  // The shallow boundary: `--shallow-file <file>` (upload-pack passes '' for none), else the repository's.
  const shallow: Buffer[] = global.shallowFile !== undefined ? repo.shallowCommits(global.shallowFile) : repo.shallowCommits();
  let tips: RevArgs | undefined;
  let sawNot = false;
  const ids: { id: Uint8Array; name?: string }[] = [];
  const preferredBases: Buffer[] = [];
  if (cruftExpiration !== undefined) {
    // Pack names: those to leave alone (fresh, kept), and -<name> for those about to be deleted.
    const [freshPacks, discardPacks] = readPackNames(io, '-');
    options.cruft = { freshPacks, discardPacks, expiration: cruftExpiration };
  } else if (stdinPacks) {
    const [included, excluded] = readPackNames(io, '^');
    for (const id of objectsOfPacks(objects, included, excluded, { unpacked })) ids.push({ id });
  } else if (revs) {
    tips = new RevArgs(repo);
    if (all) tips.add('--all');
    if (reflog) tips.add('--reflog');
    if (indexed) tips.add('--indexed-objects');
    const revArgs = tips;
    // git stops at an empty line (upload-pack ends its list with one).
    let ended = false;
    readLines(io.stdin, (line) => {
      if (ended) return;
      if (line === '') {
        ended = true;
        return;
      }
      if (line.startsWith('--shallow ')) {
        const id = tryFromHex(line.slice(10), objects.hashLength);
        if (id === undefined) throw new PackwrightError('INVALID_ARGUMENT', `not an object name '${line.slice(10)}'`);
        shallow.push(id);
      } else if (line === '--not' || !line.startsWith('-')) {
        // git writes no bitmap for a pack that leaves out what --not names.
        if (line === '--not') sawNot = true;
        revArgs.add(line);
      } else {
        throw new PackwrightError('INVALID_ARGUMENT', `not a rev '${line}'`);
      }
    }, () => {});
  } else {
    readLines(io.stdin, (line) => {
      // "-<id>": an object the receiver has, a base for thin deltas (git's preferred base).
      const preferred = line.startsWith('-');
      const text = preferred ? line.slice(1) : line;
      const hex = text.slice(0, 2 * objects.hashLength);
      const id = tryFromHex(hex, objects.hashLength);
      if (id === undefined || (text.length > hex.length && text[hex.length] !== ' ')) throw new PackwrightError('INVALID_ARGUMENT', `expected object ID, got garbage:\n ${line}\n`);
      if (preferred) {
        preferredBases.push(id);
        return;
      }
      const name = text.length > hex.length + 1 ? text.slice(hex.length + 1) : undefined;
      ids.push(name === undefined ? { id } : { id, name });
    }, () => {});
    if (preferredBases.length > 0) {
      options.thin = true;
      options.preferredBases = preferredBases;
    }
  }
  // git's rules: a bitmap only for a pack written to files from --all (and no --not), not in a
  // shallow repository.
  if (writeBitmap !== false && !stdout && all && !sawNot && shallow.length === 0) {
    options.writeBitmapIndex = writeBitmap;
    const hashCache = config.getBool('pack.writeBitmapHashCache');
    if (hashCache !== undefined) options.bitmapHashCache = hashCache;
    const lookupTable = config.getBool('pack.writeBitmapLookupTable');
    if (lookupTable !== undefined) options.bitmapLookupTable = lookupTable;
    // pack.preferBitmapTips: the commits of the refs under each prefix it names.
    const preferred: Buffer[] = [];
    for (const prefix of config.getAll('pack.preferBitmapTips')) {
      if (typeof prefix !== 'string') continue;
      for (const ref of repo.refs.list(prefix.endsWith('/') ? prefix : `${prefix}/`)) preferred.push(ref.peeled ?? ref.id);
    }
    if (preferred.length > 0) options.bitmapPreferredTips = preferred;
  }
  const threads = options.threads ?? defaultThreads();
  const meter = new PackProgress(io.stderr, progress, threads, !stdout || allProgress || allProgressImplied);
  const result = await createPack({
    ...options,
    objects,
    refs: repo.refs,
    threads,
    useBitmapIndex: useBitmap,
    onWarning: (message) => void io.stderr.write(`warning: ${message}\n`),
    ...(tips !== undefined ? { tips: tips.tips, shallow } : options.cruft !== undefined ? {} : { ids }),
    // The output has written or copied a chunk when write returns (CommandOutput): the writer
    // fills the same few buffers again instead of touching fresh memory for every MiB of pack.
    ...(stdout ? { sink: (chunk: Buffer) => io.stdout.write(chunk), reuseChunks: true } : {}),
    ...(base !== undefined ? { packBase: base } : {}),
    onProgress: meter.onProgress,
  });
  meter.finish();
  // --non-empty with nothing to pack: git stops before writing, and says nothing more.
  if (options.nonEmpty === true && result.packs.length === 0 && result.stats.objects === 0) return 0;
  meter.total(result.stats);
  // One line per pack written (several with a size limit), as git prints them.
  for (const p of result.packs) io.stdout.write(`${toHex(p.hash)}\n`);
  return 0;
}

/** Pack names on stdin, one a line: those without `mark` in front, then those with it (the mark taken off). */
function readPackNames(io: CommandIO, mark: string): [string[], string[]] {
  const plain: string[] = [];
  const marked: string[] = [];
  readLines(io.stdin, (line) => {
    if (line === '') return;
    if (line.startsWith(mark)) marked.push(line.slice(1));
    else plain.push(line);
  }, () => {});
  return [plain, marked];
}

/**
 * The date of --unpack-unreachable=<time>, in seconds since the epoch, as git's approxidate reads
 * it ('2.weeks.ago', 'now', a date); 'never' is 0, which keeps every object.
 */
function expirationOption(value: string): number {
  if (value === 'never') return 0;
  const t = approxidate(value);
  if (t === undefined) throw new PackwrightError('INVALID_ARGUMENT', `--unpack-unreachable: not a date: '${value}'`);
  return t;
}

