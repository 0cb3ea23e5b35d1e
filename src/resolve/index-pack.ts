import { closeSync, existsSync, fstatSync, fsync, openSync, readFileSync, readSync, renameSync, rmSync, statSync } from 'node:fs';
import { writeFully } from '../io/write-fully.js';
import { cpus, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { Readable } from 'node:stream';
import { PackwrightError } from '../errors/packwright-error.js';
import { hashLength, type ObjectFormat } from '../hash/object-format.js';
import { readExactly } from '../io/read-exactly.js';
import { openForReading } from '../io/open-for-reading.js';
import { temporaryPathBeside, writeFileAtomic, writeTemporaryFile } from '../io/write-file-atomic.js';
import { PackIndex } from '../idx/pack-index.js';
import { writeRevIndex } from '../idx/rev-index.js';
import type { WriteIndexOptions } from '../idx/write-index.js';
import { TYPE_NAMES } from '../objects/object-type.js';
import { PREFAULT_CHUNK, prefaultStates, takeChunks } from '../workers/prefault.js';
import { WorkerPool } from '../workers/worker-pool.js';
import { buildIndex, type BuiltIndex } from './build-index.js';
import { completeThinPack } from './complete-thin-pack.js';
import { REGION_BYTES, REGIONS_AHEAD, scanWithHelpers, splitScan, type SplitScan } from './parallel-scan.js';
import { defaultMaxMemory, keptDeltasRoom, planIndexPackMemory, planPackHolding, type MemoryPlan } from './memory-plan.js';
import { allocKeptData, keptUsed } from './kept-deltas.js';
import { PACK_HEADER_LENGTH, parsePackHeader } from '../pack/pack-header.js';
import { OBJ_OFS_DELTA } from '../pack/entry-header.js';
import { PackScanner, scanPack, type PackScan, type ScanOptions, type WholePack } from './pack-scan.js';
import { orderFromIndex, scanPackWithIndex } from './scan-with-index.js';
import { bufferSource, fileSource, peekPackHeader, streamSource, withPackHeader, type PackSource } from './pack-source.js';
import { StreamSpool } from './stream-spool.js';
import { resolveDeltas, type ResolveOptions } from './resolve-deltas.js';
import type { ResolveTasks } from './resolve-tasks.js';
import type { IndexPackOptions, IndexPackPhase, IndexPackResult } from './index-pack-options.js';

export type { IndexedPack, IndexPackOptions, IndexPackPhase, IndexPackResult } from './index-pack-options.js';

/** The worker script (resolve-worker.ts; in the CLI bundle, its own bundle beside it). */
const RESOLVE_WORKER = new URL('./resolve-worker.js', import.meta.url);


const DEFAULT_MEMORY_LIMIT = 1 << 30;
/** Below this, splitting pass 1 across threads costs more than it saves. */
const PARALLEL_SCAN_MIN = 8 << 20;
/**
 * Nor is pass 1 split when entries average more than this: a helper's region then mostly lies
 * inside one object, where it finds no entry to start from, and the main thread scans it anyway.
 * On the bench's ~5 GiB pack (840 objects, 16 MiB blobs) a split pass 1 took 24 s against 8 s on
 * one thread, and held 335 MiB against 110.
 */
const SPLIT_MAX_ENTRY_BYTES = 256 << 10;
/**
 * What a split pass 1 leaves resident per object after it, beyond the plan's tables: the
 * helpers' region tables and buffers, freed into their threads' malloc arenas, which glibc keeps.
 * Measured on the 10M-object pack at --threads=2: peak 788 MiB split against 645 MiB not
 * (26.0 s against 30.4 s). A pack is split only when what the plan leaves holds this.
 */
const SPLIT_RETAINED_PER_OBJECT = 16;
/**
 * What a helper of a received pack's split pass 1 holds while the kept deltas fill: its regions
 * ahead, the buffers it reads them into, and their scans waiting to be adopted (24 MiB).
 */
const HELPER_SCAN_BYTES = 3 * REGIONS_AHEAD * REGION_BYTES;
/**
 * How often pass 1 lets a received stream run ahead of it (ScanOptions.inputTurns): a turn each
 * time it has scanned this many bytes. A pipe holds 64 KiB, which a turn takes whole (the sender
 * refills it while the scan goes on), so turns must come more often than 64 KiB of scanning for
 * the input to get ahead. A push of isomorphic-git's history from git (23 MB): at a turn every
 * 1 ms (checked every 32 entries) the input was never more than one chunk ahead of the scan and
 * pass 1 ran on this thread alone (1.20-1.25 s in all); every 32 KiB it runs megabytes ahead and
 * the helper scans half the regions (0.97-1.09 s; 128 KiB: 1.03-1.24 s; none: 1.28-1.30 s).
 */
const INPUT_TURN_BYTES = 32 << 10;
/** Packs below this are indexed on one thread unless `threads` says otherwise. */
const SMALL_PACK = 4 << 20;
/**
 * Below this many objects a stream is indexed on this thread alone: a stream's size is not known
 * ahead, its object count is (from the caller that read its header, as git's --pack_header, or
 * read here first). `index-pack --stdin --fix-thin` of 67
 * objects of git.git took 0.60 s on two threads, 0.43 s on one (the main thread waited for the
 * worker to boot); 852 objects 1.17 s against 1.03-1.17; 3,268 the same on both. A 10-commit push
 * of gitoxide (~400 objects) waited 55 ms of 200 for a worker.
 */
const SMALL_STREAM_OBJECTS = 2000;

function fileSize(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    // Only sizes the plan (threads, whether to hold the pack): opening the file reports the error.
    return Infinity;
  }
}

/** git's default thread count without --threads or pack.threads (builtin/index-pack.c). */
export function defaultThreads(): number {
  const n = cpus().length;
  if (n < 4) return n;
  if (n < 6) return 3;
  if (n < 40) return Math.floor(n / 2);
  return 20;
}

/**
 * Indexes a pack as `git index-pack` does: pass 1 scans it (`scanPack`), pass 2 resolves deltas
 * (`resolveDeltas`), then the `.idx` (and `.rev`, `.keep`) are written to temporary names and
 * renamed in git's order (.keep, .pack, .rev, .idx), byte-identical to git's.
 * @param input A pack file's path, a stream (stdin, a socket, an HTTP body: read exactly to the pack's trailer) or the pack's bytes.
 * @param options Where the files go, threads, memory ceiling, checks, thin-pack bases, progress and an AbortSignal.
 * @returns The pack's checksum, the files written and the counts.
 * @throws {PackwrightError} PACK_CORRUPT, PACK_TRUNCATED, OBJECT_CORRUPT, DELTA_BASE_MISSING (a thin pack without `fixThin`), ABORTED; nothing is left half-written.
 * @example const { packHash } = await indexPack('pack-1234.pack', { threads: 2, onProgress: (phase, done, total) => console.error(phase, done, total) });
 */
export async function indexPack(input: string | Readable | Uint8Array, options: IndexPackOptions = {}): Promise<IndexPackResult> {
  if (options.packHeader !== undefined) {
    if (typeof input === 'string') throw new PackwrightError('INVALID_ARGUMENT', 'packHeader is for a stream or buffer whose header was read already, not a file');
    input = withPackHeader(input, options.packHeader);
  }
  const level = options.fixThinCompression;
  if (level !== undefined && !(Number.isInteger(level) && level >= -1 && level <= 9)) {
    throw new PackwrightError('INVALID_ARGUMENT', `bad zlib compression level ${level}`);
  }
  const format = options.objectFormat ?? 'sha1';
  const name = typeof input === 'string' ? input : '<stdin>';
  // Starting a worker costs ~45 ms: below a few MiB one thread finishes first (unless asked). A
  // stream's size is not known; the header its reader took (git's --pack_header, a push, a
  // fetch) tells how many objects it holds.
  const packSize = typeof input === 'string' ? fileSize(input) : input instanceof Uint8Array ? input.length : undefined;
  let streamObjects = options.packHeader?.count;
  if (packSize === undefined && streamObjects === undefined && options.threads === undefined) {
    // A stream whose header nobody read: its count is read here, for the thread count.
    const peeked = await peekPackHeader(input as Readable, options.signal);
    input = peeked.input;
    streamObjects = peeked.count;
  }
  const small = packSize !== undefined ? packSize < SMALL_PACK : streamObjects !== undefined && streamObjects < SMALL_STREAM_OBJECTS;
  const objects = declaredObjects(input);
  const ceiling = (count: number): number => options.maxMemory ?? defaultMaxMemory(count);
  const depths = options.depths === true;
  const detectCollisions = options.detectCollisions === true;
  const visitorBytes = options.visitor !== undefined && options.visitorBytes !== undefined ? { visitorBytes: options.visitorBytes } : {};
  const sized = packSize !== undefined ? { packSize } : {};
  const { threads } = planIndexPackMemory({ maxMemory: ceiling(objects), format, threads: Math.max(1, options.threads ?? (small ? 1 : defaultThreads())), objects, depths, detectCollisions, ...visitorBytes, ...sized });
  // Planned again once a stream's count is known (its header is read by pass 1), and pass 2 once
  // pass 1 has counted the deltas (planMemory).
  const planMemory = (count: number, counted?: PassOneCounts): MemoryPlan => planIndexPackMemory({ maxMemory: ceiling(count), format, threads, objects: count, depths, detectCollisions, ...visitorBytes, ...sized, ...counted });
  // `threads` counts this thread, like git's. Workers boot while the pack is read and scanned
  // (~45 ms each).
  const pool = threads > 1 ? new WorkerPool<ResolveTasks>(options.workerScript ?? RESOLVE_WORKER, threads - 1) : undefined;
  const job = new IndexPackJob(input, options, format, name, pool, objects, planMemory);
  try {
    return await job.run();
  } finally {
    // A failed run may leave the pack's fsync running: its descriptor is closed after it.
    await job.packSynced().catch(() => undefined);
    job.close();
    // A run that ends well has closed its pool already. One that fails or is aborted tells the
    // threads to stop and reports at once, without waiting for them to exit (a scheduler turn
    // or two, 20-60 ms on a loaded machine): they write no file and hold nothing the caller sees.
    pool?.close().catch(() => undefined);
  }
}

/**
 * The object count a pack's header declares, to plan memory before the run (0 when it cannot be
 * read here, or from a stream: pass 1 reports a bad header in its own words).
 */
function declaredObjects(input: string | Readable | Uint8Array): number {
  try {
    if (input instanceof Uint8Array) return parsePackHeader(input.subarray(0, PACK_HEADER_LENGTH)).objectCount;
    if (typeof input !== 'string') return 0;
    const header = new Uint8Array(PACK_HEADER_LENGTH);
    const fd = openSync(input, 'r');
    try {
      return parsePackHeader(header.subarray(0, readSync(fd, header, 0, PACK_HEADER_LENGTH, 0))).objectCount;
    } finally {
      closeSync(fd);
    }
  } catch {
    // Only sizes the tables ahead: reading the pack itself reports what is wrong with it.
    return 0;
  }
}

/** What pass 1 counted that pass 2's memory depends on. */
interface PassOneCounts {
  deltas: number;
  refDeltas: number;
}

function countDeltas(scan: PackScan): PassOneCounts {
  const types = scan.types;
  let deltas = 0;
  for (let k = 0; k < scan.count; k++) if ((types[k] as number) >= OBJ_OFS_DELTA) deltas++;
  return { deltas, refDeltas: scan.refs.count };
}

/** What the deltas pass 1 kept take: the data used and the table. */
function keptBytes(scan: PackScan): number {
  return scan.kept === undefined ? 0 : keptUsed(scan.kept) + scan.kept.at.byteLength;
}

/** Room for a whole pack: in shared memory when worker threads read it too. */
function packBuffer(size: number, shared: boolean): Buffer {
  return shared ? Buffer.from(new SharedArrayBuffer(Math.max(1, size)), 0, size) : Buffer.allocUnsafeSlow(size);
}

/**
 * A `.keep` or `.promisor` file: the message and a newline (nothing for none); one already there
 * stays, as in git. Writable by its owner (git's odb_pack_keep: 0600): git's fetch-pack rewrites
 * the `.promisor` an index-pack it ran wrote, with the refs it fetched, and a read-only one
 * stopped it ("could not open … for writing", seen only as a user other than root).
 */
function writeSpecialFile(path: string, message: string): void {
  if (existsSync(path)) return;
  writeFileAtomic(path, Buffer.from(message === '' ? '' : `${message}\n`), 0o600);
}

/** The files of one index-pack run, and its steps in order (`run`). */
class IndexPackJob {
  private readonly H: number;
  private readonly phases: Record<string, number> = {};
  private lapStart = performance.now();
  /** A file given as input, open for reading. */
  private readFd: number | undefined;
  /** A stream or buffer is written to this temporary pack as pass 1 reads it, renamed at the end. */
  private tmpPack: string | undefined;
  private writeFd: number | undefined;
  /** The pack file pass 2 reads entries back from: the input, or the temporary pack. */
  private packPath = '';
  /** The existing index pass 1 took the entries from (`extentsFromIndex`). */
  private indexGuide: PackIndex | undefined;
  /** A stream being written to `tmpPack` ahead of pass 1 (a parallel pass 1). */
  private spool: StreamSpool | undefined;
  /**
   * The temporary pack's fsync, started when pass 1 has written all of it and run on libuv's
   * threads while pass 2 resolves (50 ms of a 73 MB clone's on disk, on no one's path now); the
   * pack is renamed into place only once it has settled (`packSynced`).
   */
  private syncing: Promise<void> | undefined;

  constructor(
    private readonly input: string | Readable | Uint8Array,
    private readonly options: IndexPackOptions,
    private readonly format: ObjectFormat,
    private readonly name: string,
    private readonly pool: WorkerPool<ResolveTasks> | undefined,
    /** Objects the pack's header declares (0 for a stream: pass 1 reads its header). */
    private readonly declared: number,
    /** The memory plan for this many objects (and its deltas, once counted): memory-plan.ts. */
    private readonly planMemory: (objects: number, counted?: PassOneCounts) => MemoryPlan,
  ) {
    this.H = hashLength(format);
  }

  async run(): Promise<IndexPackResult> {
    const { options, name } = this;
    let scan = await this.scan();
    this.lap('scan');
    const usedExternal: Buffer[] = [];
    const stats = await this.resolve(scan, usedExternal);
    const keptDeltas = scan.kept?.count ?? 0;
    // Pass 2 was their only reader.
    delete scan.kept;
    // The threads are done: let their memory go before the index is built.
    await this.pool?.close();
    this.lap('resolve');
    await this.packSynced();
    if (usedExternal.length > 0 && options.fixThin !== undefined) {
      if (this.writeFd === undefined) throw new PackwrightError('INVALID_ARGUMENT', `${name}: a thin pack can only be completed from a stream (--stdin)`);
      scan = await completeThinPack(this.writeFd, this.packPath, scan, usedExternal, options.fixThin, this.format, options.fixThinCompression ?? 1, options.fixThinGitBytes !== false);
    }
    const writeOptions: WriteIndexOptions = {};
    if (options.idxVersion !== undefined) writeOptions.version = options.idxVersion;
    if (options.largeOffsetLimit !== undefined) writeOptions.largeOffsetLimit = options.largeOffsetLimit;
    const sorted = this.indexGuide !== undefined ? orderFromIndex(scan, this.indexGuide, name) : undefined;
    const built = buildIndex(scan, this.format, name, options.strict === true, writeOptions, sorted);
    await options.beforeWrite?.({ scan, visits: stats.visits, packPath: this.packPath, findEntry: (id) => built.findEntry(id) });
    const { inMemory, ...paths } = this.writeFiles(scan, built);
    let indexBytes = inMemory;
    this.lap('write');
    const countsByType: Record<string, number> = { commit: 0, tree: 0, blob: 0, tag: 0 };
    for (let k = 0; k < scan.count; k++) {
      const key = TYPE_NAMES[scan.resolvedTypes[k] as number] as string;
      countsByType[key] = (countsByType[key] ?? 0) + 1;
    }
    return {
      packHash: scan.packHash, ...paths, objectCount: scan.count, localObjects: usedExternal.length,
      trailing: scan.trailing, scan, depths: stats.depths, visits: stats.visits,
      get index(): Buffer {
        return (indexBytes ??= readFileSync(paths.indexPath as string));
      },
      stats: {
        countsByType, deltas: stats.deltas, chainHistogram: stats.chainHistogram, peakLiveBytes: stats.peakLiveBytes, threads: stats.perThread.length, resident: scan.data !== undefined, keptDeltas,
        perThread: stats.perThread, stolen: stats.stolen, phases: this.phases,
      },
    };
  }

  /** Waits for the temporary pack's fsync (its error is the run's). */
  async packSynced(): Promise<void> {
    const syncing = this.syncing;
    this.syncing = undefined;
    await syncing;
  }

  /** Lets go of the files; a temporary pack that was not renamed into place is removed. */
  close(): void {
    this.spool?.stop();
    if (this.readFd !== undefined) closeSync(this.readFd);
    if (this.writeFd !== undefined) closeSync(this.writeFd);
    if (this.tmpPack !== undefined) rmSync(this.tmpPack, { force: true });
    if (this.indexGuide !== this.options.existingIndex) this.indexGuide?.close();
    this.readFd = this.writeFd = this.tmpPack = this.indexGuide = undefined;
  }

  private lap(phase: string): void {
    const now = performance.now();
    this.phases[phase] = now - this.lapStart;
    this.lapStart = now;
  }

  /**
   * Pass 1. A file up to `memoryLimit` is read whole into (shared) memory, so pass 2 reads entries
   * without a system call each; with helper threads, a large one is scanned in parallel regions,
   * a smaller one has a helper touch its pages ahead of the reader. A stream is copied to a
   * temporary pack as it is scanned, and read back whole afterwards when it fits.
   */
  private async scan(): Promise<PackScan> {
    const { input, options, name, pool, format } = this;
    const memoryLimit = this.residentLimit(this.declared);
    const detect = options.detectCollisions === true ? { detectCollisions: true } : {};
    const scanOptions: ScanOptions = { format, name, shared: pool !== undefined, ...detect };
    let source: PackSource;
    let split: SplitScan | undefined;
    // Helpers only while the tables they leave behind fit the plan (a stream's count is known
    // once pass 1 has read its header).
    const helpWith = (declared: number): boolean => declared * SPLIT_RETAINED_PER_OBJECT <= this.planMemory(declared).residentLimit;
    if (typeof input === 'string') {
      this.packPath = input;
      this.readFd = openForReading(input, 'PACK_MISSING');
      const size = fstatSync(this.readFd).size;
      if (options.maxInputSize !== undefined && size > options.maxInputSize) {
        throw new PackwrightError('PACK_TOO_LARGE', `${name}: pack exceeds maximum allowed size (${options.maxInputSize} bytes)`, { file: name });
      }
      scanOptions.size = size;
      source = fileSource(this.readFd);
      if (options.verify === true && options.extentsFromIndex === true && size <= memoryLimit) return this.scanWithIndex(size);
      // Pass 1 split across threads: helpers scan regions into the shared copy, or, for a pack not
      // held in memory, into buffers of their own.
      const parallel = pool !== undefined && size >= (options.parallelScanMinSize ?? PARALLEL_SCAN_MIN) && size <= this.declared * SPLIT_MAX_ENTRY_BYTES
        && helpWith(this.declared);
      const holding = planPackHolding(memoryLimit, this.declared, size, this.threads, !parallel);
      scanOptions.keepDeltas = () => holding.keepDeltas;
      if (holding.holdPack) {
        const buffer = packBuffer(size, pool !== undefined);
        const whole: WholePack = { buffer };
        if (parallel) {
          split = splitScan(pool, { format, ...detect, path: input, buffer, dataEnd: size - this.H });
        } else if (pool !== undefined && size > 2 * PREFAULT_CHUNK) {
          const states = prefaultStates(size);
          // Help only: if it fails, pass 1 touches the pages itself.
          pool.run(0, 'prefault', { buffer, states }).catch(() => undefined);
          whole.claim = (from, to) => takeChunks(states, from, to);
        }
        scanOptions.whole = whole;
      } else if (parallel) {
        split = splitScan(pool, { format, ...detect, path: input, dataEnd: size - this.H });
      }
    } else {
      const dir = options.packPath !== undefined ? dirname(options.packPath) : options.packDir ?? options.spoolDir ?? tmpdir();
      this.tmpPack = temporaryPathBeside(join(dir, 'incoming.pack'));
      const fd = (this.writeFd = openSync(this.tmpPack, 'wx+', 0o444));
      this.packPath = this.tmpPack;
      if (input instanceof Uint8Array) {
        source = bufferSource(input);
        // A buffer's size is known, as a file's is: its tables are sized once, as the plan counts them.
        scanOptions.size = input.length;
      } else if (pool !== undefined) {
        // Pass 1 split across threads as for a file: the stream goes to the temporary pack as it
        // arrives, helpers scan regions of it from there while this thread scans earlier ones.
        // The helpers keep the deltas they inflate as this thread does, in one store made now
        // (they start before the header is read; the budget is set once it is): pass 2 then
        // inflates them again only past the budget (--stdin of a clone of gitoxide at two threads:
        // 27% of the deltas kept within the default ceiling, 3.6-3.75 → 3.45-3.6 CPU-s).
        const most = Math.floor(keptDeltasRoom(this.residentLimit(0), 0, this.threads));
        if (most >= 1 << 20) scanOptions.keptData = allocKeptData(most, true);
        split = splitScan(pool, { format, ...detect, path: this.tmpPack, dataEnd: Infinity, ...(scanOptions.keptData !== undefined ? { kept: scanOptions.keptData } : {}) });
        source = this.spool = new StreamSpool(input, fd, this.tmpPack, { signal: options.signal, maxInputSize: options.maxInputSize, name, onReceived: split.received });
        // Without turns, the input would wait for this thread's scan to need it, and helpers would
        // never see a region ahead (INPUT_TURN_BYTES).
        const spool = this.spool;
        scanOptions.inputTurns = { everyBytes: INPUT_TURN_BYTES, pending: () => spool.takingInput };
      } else {
        source = streamSource(input, options.signal);
      }
      // The pack is read back whole after pass 1 if it fits beside the deltas kept (below).
      // With helpers filling the store too, their regions ahead (read into buffers of their own)
      // are resident while it fills: without room for them a clone of gitoxide peaked at 257 MiB
      // of a 256 MiB ceiling. With 16 MiB a helper git.git's history (318 MB) peaked at 237-249
      // (227-237 keeping none); with 24 (HELPER_SCAN_BYTES) at 229-243, gitoxide at 220-224.
      const helpers = split !== undefined && pool !== undefined ? pool.size * HELPER_SCAN_BYTES : 0;
      scanOptions.keepDeltas = (count) => Math.max(0, planPackHolding(this.residentLimit(count), count, undefined, this.threads, true).keepDeltas - helpers);
      if (this.spool === undefined) {
        scanOptions.sink = (bytes) => {
          writeFully(fd, bytes, this.tmpPack as string);
        };
      }
    }
    if (options.maxInputSize !== undefined) scanOptions.maxInputSize = options.maxInputSize;
    if (options.signal !== undefined) scanOptions.signal = options.signal;
    if (options.sliceMs !== undefined) scanOptions.sliceMs = options.sliceMs;
    if (options.onProgress !== undefined) {
      const p = options.onProgress;
      const phase: IndexPackPhase = typeof input === 'string' ? 'indexing' : 'receiving';
      scanOptions.onProgress = (d, n, bytes) => p(phase, d, n, bytes);
    }
    const scan = split === undefined ? await scanPack(source, scanOptions) : await scanWithHelpers(new PackScanner(source, scanOptions), split, helpWith);
    // What arrived after the trailer is not part of the pack: the file is cut back to it.
    if (this.spool !== undefined) scan.trailing = this.spool.stop(scan.end);
    if (typeof input === 'string' && scan.trailing.length > 0) {
      throw new PackwrightError('PACK_JUNK', `${name}: pack has junk at the end (${scan.trailing.length} bytes after offset ${scan.end})`, { file: name, offset: scan.end });
    }
    if (this.writeFd !== undefined) {
      const fd = this.writeFd;
      this.syncing = new Promise((resolve, reject) => fsync(fd, (e) => (e === null ? resolve() : reject(e))));
      // Awaited before the pack is used as a file (packSynced); until then a failure waits there.
      this.syncing.catch(() => undefined);
      if (scan.data === undefined && scan.end <= this.residentLimit(scan.count) - keptBytes(scan)) {
        // A received pack that fits is read back whole for pass 2, as a pack file would have
        // been: one read here instead of a pread per entry (~6 µs each) while resolving
        // (gitoxide.pack from stdin at --threads=1: 6.5 s -> 4.9 s).
        const shared = pool !== undefined;
        const data = packBuffer(scan.end, shared);
        // Written by this process: ending early means it shrank while being indexed.
        readExactly(this.writeFd, data, 0, scan.end, 0, this.packPath, 'PACK_TRUNCATED');
        scan.data = data;
      }
    }
    return scan;
  }

  /** Threads this run has (this one and the pool's). */
  private get threads(): number {
    return (this.pool?.size ?? 0) + 1;
  }

  /** The largest pack held whole in memory: memoryLimit, within what the memory plan leaves. */
  private residentLimit(objects: number): number {
    return Math.min(this.options.memoryLimit ?? DEFAULT_MEMORY_LIMIT, this.planMemory(objects).residentLimit);
  }

  /** Pass 1 from the existing index (`extentsFromIndex`): the pack is read whole, nothing inflated. */
  private scanWithIndex(size: number): PackScan {
    const { options, name, pool } = this;
    const indexPath = options.indexPath ?? this.packPath.replace(/\.pack$/, '.idx');
    const buffer = packBuffer(size, pool !== undefined);
    readExactly(this.readFd as number, buffer, 0, size, 0, name, 'PACK_TRUNCATED');
    // Kept (and closed with the job unless it is the caller's): the ids are checked against it after pass 2.
    this.indexGuide = options.existingIndex ?? PackIndex.open(indexPath, this.H, { lazyMin: Infinity });
    return scanPackWithIndex(buffer, this.indexGuide, this.format, name, pool !== undefined);
  }

  /** Pass 2, with thin-pack bases from `fixThin` (their ids are pushed to `usedExternal`). */
  private resolve(scan: PackScan, usedExternal: Buffer[]): ReturnType<typeof resolveDeltas> {
    const { options } = this;
    const resolveOptions: ResolveOptions = { name: this.name, usedExternal };
    if (options.detectCollisions === true) resolveOptions.detectCollisions = true;
    if (this.pool !== undefined) {
      resolveOptions.pool = this.pool;
      resolveOptions.threads = this.planMemory(scan.count, countDeltas(scan)).threads;
    }
    if (options.signal !== undefined) resolveOptions.signal = options.signal;
    if (options.sliceMs !== undefined) resolveOptions.sliceMs = options.sliceMs;
    const external = options.fixThin ?? options.thinBases;
    if (external !== undefined) resolveOptions.externalBase = external;
    if (options.visitor !== undefined) resolveOptions.visitor = options.visitor;
    if (options.depths === true) resolveOptions.depths = true;
    if (options.onProgress !== undefined) {
      const p = options.onProgress;
      resolveOptions.onProgress = (d, n) => p('resolving', d, n);
    }
    return resolveDeltas(this.packPath, scan, resolveOptions);
  }

  /**
   * Writes (or, with `verify`, compares) the files, in git's order: .keep, .pack, .rev, .idx (the
   * index last: a pack is visible once it is complete). Each is written to a temporary name and
   * renamed, so a failure leaves nothing half-written.
   */
  private writeFiles(scan: PackScan, built: BuiltIndex): Pick<IndexPackResult, 'packPath' | 'indexPath' | 'revPath' | 'keepPath'> & { inMemory?: Buffer } {
    const { input, options, name } = this;
    const { order } = built;
    const basePath = typeof input === 'string'
      ? input.replace(/\.pack$/, '')
      : options.packPath?.replace(/\.pack$/, '') ?? (options.packDir !== undefined ? join(options.packDir, `pack-${scan.packHash.toString('hex')}`) : undefined);
    const indexPath = options.indexPath ?? (basePath !== undefined ? `${basePath}.idx` : undefined);
    let packPath: string | undefined = typeof input === 'string' ? input : undefined;
    let revPath: string | undefined;
    let keepPath: string | undefined;
    if (options.verify) {
      if (indexPath === undefined || !existsSync(indexPath)) throw new PackwrightError('INVALID_ARGUMENT', `${name}: no index to verify against`);
      if (!this.sameIndex(indexPath, built)) {
        // git's words for a file that differs from the one it would write (csum-file.c).
        throw new PackwrightError('IDX_MISMATCH', `sha1 file '${indexPath}' validation error: the index does not match the one built from ${name}`, { file: indexPath });
      }
      if (options.revIndex) {
        revPath = indexPath.replace(/\.idx$/, '') + '.rev';
        if (!existsSync(revPath)) throw new PackwrightError('REV_CORRUPT', `unable to open '${revPath}': No such file or directory`, { file: revPath });
        if (!readFileSync(revPath).equals(this.revBytes(scan, order))) {
          throw new PackwrightError('REV_CORRUPT', `sha1 file '${revPath}' validation error: the reverse index does not match the one built from ${name}`, { file: revPath });
        }
      }
      return { packPath, indexPath, revPath, keepPath };
    }
    if (indexPath === undefined) {
      // Nowhere to write it: the caller gets the bytes.
      const parts: Buffer[] = [];
      built.stream((chunk) => parts.push(Buffer.from(chunk)));
      return { packPath, indexPath, revPath, keepPath, inMemory: Buffer.concat(parts) };
    }
    // The index goes to its temporary file first (nothing is visible yet), renamed last.
    const tmpIndex = temporaryPathBeside(indexPath);
    writeTemporaryFile(tmpIndex, (fd) => built.stream((chunk) => writeFully(fd, chunk, tmpIndex)));
    try {
      if (options.keep !== undefined && basePath !== undefined) {
        keepPath = `${basePath}.keep`;
        writeSpecialFile(keepPath, options.keep);
      }
      if (options.promisor !== undefined && basePath !== undefined) writeSpecialFile(`${basePath}.promisor`, options.promisor);
      if (this.tmpPack !== undefined && basePath !== undefined) {
        closeSync(this.writeFd as number);
        this.writeFd = undefined;
        packPath = `${basePath}.pack`;
        renameSync(this.tmpPack, packPath);
        this.tmpPack = undefined;
      }
      if (options.revIndex) {
        revPath = indexPath.replace(/\.idx$/, '') + '.rev';
        writeFileAtomic(revPath, this.revBytes(scan, order));
      }
      renameSync(tmpIndex, indexPath);
    } catch (e) {
      rmSync(tmpIndex, { force: true });
      throw e;
    }
    return { packPath, indexPath, revPath, keepPath };
  }

  /**
   * Whether the index rebuilt is byte for byte the one at `indexPath` (or `existingIndex`, already
   * in memory), compared a chunk at a time as it is produced.
   */
  private sameIndex(indexPath: string, built: BuiltIndex): boolean {
    const existing = this.options.existingIndex?.data;
    const fd = existing === undefined ? openForReading(indexPath, 'IDX_CORRUPT') : -1;
    const size = existing?.length ?? fstatSync(fd).size;
    let theirs = Buffer.allocUnsafe(0);
    let at = 0;
    let same = true;
    try {
      built.stream((chunk) => {
        if (!same) return;
        if (at + chunk.length > size) {
          same = false;
          return;
        }
        let other: Uint8Array;
        if (existing !== undefined) other = existing.subarray(at, at + chunk.length);
        else {
          if (theirs.length < chunk.length) theirs = Buffer.allocUnsafe(chunk.length);
          readExactly(fd, theirs, 0, chunk.length, at, indexPath, 'IDX_CORRUPT');
          other = theirs.subarray(0, chunk.length);
        }
        same = Buffer.compare(chunk, other) === 0;
        at += chunk.length;
      });
    } finally {
      if (fd >= 0) closeSync(fd);
    }
    return same && at === size;
  }

  /** The `.rev` of the pack: in pack order, each entry's idx position (the inverse of `order`). */
  private revBytes(scan: PackScan, order: Uint32Array): Buffer {
    const n = scan.count;
    const inPackOrder = new Uint32Array(n);
    for (let i = 0; i < n; i++) inPackOrder[order[i] as number] = i;
    return writeRevIndex(this.format, inPackOrder, scan.packHash);
  }
}
