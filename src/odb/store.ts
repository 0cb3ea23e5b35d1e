import { existsSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { isPackwrightError, PackwrightError, throwIfAborted } from '../errors/packwright-error.js';
import { hashLength, type ObjectFormat } from '../hash/object-format.js';
import { hashLiterally, hashObject } from '../hash/hash-object.js';
import { toHex } from '../hash/hex.js';
import type { PackIndexOpenOptions } from '../idx/pack-index.js';
import { DeltaBaseCache, DEFAULT_DELTA_BASE_CACHE_LIMIT } from '../pack/delta-base-cache.js';
import { WindowPool } from '../pack/window-pool.js';
import { DEFAULT_MAX_MEMORY } from '../memory/ceiling.js';
import { planStoreMemory } from './store-memory-plan.js';
import { writeLoose } from '../loose/write-loose.js';
import { Inflater } from '../zlib/inflater.js';
import { GitConfig } from '../config/git-config.js';
import { Catalog, type CatalogView } from './catalog.js';
import { CommitGraphChain } from '../commit-graph/commit-graph-chain.js';
import { fileStamp } from '../io/file-stamp.js';
import { DEFAULT_REFRESH, mayRescan, type RefreshPolicy } from './refresh-policy.js';
import { StoreHandle } from './store-handle.js';
import type { PackContext, StorePack, StoredObject } from './store-pack.js';
import { ReadBatcher, StoreWorkers, type ManyOptions, type ReadManyResult } from './store-workers.js';
import type { HeadersReply, StoreKey } from './store-tasks.js';
import { availableParallelism } from 'node:os';
import type { ObjectType } from '../objects/object-type.js';

/**
 * Objects below which a pack's info table is built on this thread. Measured on gitoxide.pack
 * (226k objects, 2 cores): one thread 100-137 ms, split over this thread and one warm worker
 * 108-114 ms, with the worker started by the command 160-175 ms; a worker's cold JIT and start
 * eat what the split saves at this size. Above it (linux-sized packs, where the table takes
 * seconds) the split is worth trying; that is unmeasured so far (issue 11's 10M-object pack).
 */
const PARALLEL_TABLE_MIN = 1_000_000;

/** Options of `Store.open` (and of `Repository.open`, which passes them on). */
export interface OpenStoreOptions {
  /** SHA-1 or SHA-256; by default what the git directory's config says (extensions.objectformat). */
  objectFormat?: ObjectFormat | undefined;
  /** Bytes of resolved delta bases to keep (git's core.deltaBaseCacheLimit, 96 MiB), at most (see maxMemory). */
  deltaBaseCacheLimit?: number | undefined;
  /**
   * The ceiling on what the store holds, in bytes (default DEFAULT_MAX_MEMORY, 256 MiB; Infinity
   * for none): it sizes the delta base cache and the pack windows, whole packs included, and the
   * tables the store builds are charged against it (see planStoreMemory).
   */
  maxMemory?: number | undefined;
  /** Bytes of pack windows, in place of what maxMemory gives them (a worker thread's share). */
  windowBudget?: number | undefined;
  /** Window size for pack reads (see PackFile); tests lower it to exercise windowed reads. */
  windowSize?: number | undefined;
  /** Reads through small windows before a pack is read in big ones (see PackFileOptions). */
  denseAfter?: number | undefined;
  /** Indexes of at least this many bytes are read by section, on demand (see PackIndex). */
  lazyIndexMin?: number | undefined;
  /** When a miss lists the pack directories again (see RefreshPolicy; default `{ afterMs: 1000 }`). */
  refresh?: RefreshPolicy | undefined;
  /** The clock of the refresh window, in milliseconds (tests pass a fake one). */
  now?: (() => number) | undefined;
  /** Look objects up through multi-pack-indexes (git's core.multiPackIndex; default true). */
  multiPackIndex?: boolean | undefined;
  /** Let walks read commits from the commit-graph (git's core.commitGraph; default true). */
  commitGraph?: boolean | undefined;
  /** zlib level of loose objects written (git's core.looseCompression; default 1). */
  looseCompression?: number | undefined;
  /** fsync loose objects before they become visible (git's core.fsync loose-object; default false, as git). */
  fsyncLooseObjects?: boolean | undefined;
  /** Worker threads of the async reads (`readMany`, `readAsync`, `headerMany`); default: the CPUs, at most 4. */
  threads?: number | undefined;
  /**
   * Object directories searched as alternates before those `objects/info/alternates` names (git's
   * GIT_ALTERNATE_OBJECT_DIRECTORIES, which Repository passes: receive-pack's quarantine names the
   * repository's own objects so). Relative ones are taken from the working directory.
   */
  alternates?: readonly string[] | undefined;
}

/** Counters of a store's work since it opened (`odb stats`, the refresh benches). */
export interface StoreCounters {
  /** Listings of the pack directories. */
  scans: number;
  /** Lookups that found nothing after every source was searched (and, as allowed, a rescan). */
  misses: number;
  /** Catalog versions made (each rescan that found a change, each pack added). */
  version: number;
}

/**
 * The objects of one repository, for as long as a process likes: its packs (through their
 * indexes or a multi-pack-index), its loose objects and its alternates', in git's lookup order,
 * while `git gc`, `git repack` and `git multi-pack-index` change files underneath.
 *
 * The store holds what is shared: the catalog of sources (see Catalog), the delta base cache and
 * the refresh policy. Lookups go through handles (`handle()`), each with its own view of the
 * catalog: a handle sees new packs when one of its lookups misses and the policy allows a rescan
 * (or another handle's rescan already made a newer view), and a pack it found stays readable
 * through it even after the pack's files are deleted. `store.objects` is a handle for callers
 * that need just one. Nothing is listed or opened before the first lookup.
 */
export class Store {
  readonly objectsDir: string;
  readonly format: ObjectFormat;
  readonly hashLength: number;
  readonly cache: DeltaBaseCache;
  /** The budget of every pack's large windows (see WindowPool). */
  readonly windows: WindowPool;
  /** Bytes of windows the plan gave, before tables were charged. */
  private readonly plannedWindows: number;
  /** Bytes of tables charged so far (see `charge`). */
  private charged = 0;
  readonly inflater = new Inflater();
  readonly policy: RefreshPolicy;
  private readonly catalog: Catalog;
  private readonly now: () => number;
  private lastScanAt = -Infinity;
  /** A rescan is due regardless of the window: refresh() was called, a pack vanished, a listing failed. */
  private retryNow = false;
  /** The pack directories' modification times at the last listing (see packDirStamp), and when a miss last looked. */
  private dirStamp = '';
  private lastStatAt = -Infinity;
  private missCount = 0;
  /** How loose objects are written (core.looseCompression, core.fsync). */
  readonly looseOptions: { compression?: number; fsync?: boolean };
  private mainHandle: StoreHandle | undefined;
  private closed = false;
  private pool: StoreWorkers | undefined;
  private batcher: ReadBatcher | undefined;
  /** What a worker thread needs to open its own store on these files. */
  readonly key: StoreKey;
  private readonly threads: number;
  private readonly useCommitGraph: boolean;
  /** The commit-graph as last read: for which listing, from which files, and its bytes charged. */
  private graph: { version: number; stamp: string; chain: CommitGraphChain | undefined; bytes: number } | undefined;

  private constructor(objectsDir: string, format: ObjectFormat, options: OpenStoreOptions) {
    this.objectsDir = objectsDir;
    this.format = format;
    this.hashLength = hashLength(format);
    const plan = planStoreMemory(options.maxMemory ?? DEFAULT_MAX_MEMORY, options.deltaBaseCacheLimit ?? DEFAULT_DELTA_BASE_CACHE_LIMIT);
    this.cache = new DeltaBaseCache(plan.cacheLimit);
    this.plannedWindows = options.windowBudget ?? plan.windowBudget;
    this.windows = new WindowPool(this.plannedWindows);
    this.policy = options.refresh ?? DEFAULT_REFRESH;
    this.now = options.now ?? monotonicMs;
    const packFileOptions: PackContext['packFileOptions'] = { pool: this.windows };
    if (options.windowSize !== undefined) packFileOptions.windowSize = options.windowSize;
    if (options.denseAfter !== undefined) packFileOptions.denseAfter = options.denseAfter;
    const indexOptions: PackIndexOpenOptions = options.lazyIndexMin !== undefined ? { lazyMin: options.lazyIndexMin } : {};
    const context: PackContext = { hashLength: this.hashLength, cache: this.cache, packFileOptions, indexOptions, charge: (bytes) => this.charge(bytes) };
    context.otherCopy = (id, except) => {
      const handle = this.handle();
      try {
        return handle.readCopyOutside(id, except);
      } finally {
        handle.close();
      }
    };
    const multiPackIndex = options.multiPackIndex ?? true;
    this.useCommitGraph = options.commitGraph ?? true;
    const alternates = (options.alternates ?? []).map((p) => resolve(p));
    this.catalog = new Catalog(objectsDir, context, { multiPackIndex, alternates }, (slot) => this.cache.forgetSlot(slot));
    // What a worker thread needs to open its own store on the same files with the same options.
    this.threads = Math.max(1, options.threads ?? Math.min(4, availableParallelism()));
    // Each worker's store gets its share of the cache and of the windows.
    this.key = {
      objectsDir, format, refresh: this.policy, multiPackIndex,
      deltaBaseCacheLimit: Math.floor(this.cache.limit / this.threads),
      windowBudget: this.plannedWindows / this.threads,
      alternates,
    };
    this.looseOptions = {};
    if (options.looseCompression !== undefined) this.looseOptions.compression = options.looseCompression;
    if (options.fsyncLooseObjects !== undefined) this.looseOptions.fsync = options.fsyncLooseObjects;
  }

  /**
   * Opens the objects of a git directory, or of an objects directory given directly. Nothing is
   * searched for and nothing listed: finding the repository from a work tree is
   * `Repository.open`'s work, and the pack directories are listed on the first lookup.
   * @param path A git directory, or an objects directory.
   * @returns The store; `objects` (or `handle()`) reads from it.
   * @throws {PackwrightError} REPO_NOT_FOUND when `path` is neither.
   * @example const store = Store.open('.git'); const { type, data } = store.objects.read(fromHex(id));
   */
  static open(path: string, options: OpenStoreOptions = {}): Store {
    const dir = resolve(path);
    const isGitDir = existsSync(join(dir, 'objects')) && existsSync(join(dir, 'HEAD'));
    const objectsDir = isGitDir ? join(dir, 'objects') : dir;
    if (!existsSync(objectsDir)) throw new PackwrightError('REPO_NOT_FOUND', `not a git directory or objects directory: ${dir}`, { file: dir });
    // An objects directory inside a git directory takes the format from that git directory's config.
    const formatDir = isGitDir ? dir : dirname(dir);
    const format = options.objectFormat ?? (existsSync(join(formatDir, 'config')) ? objectFormatOf(formatDir) : 'sha1');
    return new Store(objectsDir, format, options);
  }

  /**
   * Counts `bytes` of tables the store built (an index read, an info table) against its ceiling:
   * the pack windows get that much less.
   */
  charge(bytes: number): void {
    this.charged += bytes;
    this.windows.budget = Math.max(0, this.plannedWindows - this.charged);
  }

  /** A new handle, with the catalog's current view. Close it (or let it go) when done. */
  handle(): StoreHandle {
    if (this.closed) throw new PackwrightError('INVALID_ARGUMENT', `store ${this.objectsDir} is closed`);
    return new StoreHandle(this);
  }

  /** The store's own handle, for callers that need only one. */
  get objects(): StoreHandle {
    this.mainHandle ??= this.handle();
    return this.mainHandle;
  }

  /**
   * The commit-graph walks read commits from: the first of the store's directories (its own, then
   * its alternates) that has one, as git loads it; undefined when none has one, or with
   * `commitGraph: false`. Read whole on first use and charged against the ceiling; read again
   * when a listing of the directories (a miss, `refresh()`) finds its files changed. A graph
   * older than the newest commits is still right about those it has (a commit never changes):
   * the walk reads the others.
   */
  commitGraph(): CommitGraphChain | undefined {
    if (!this.useCommitGraph) return undefined;
    const view = this.listedView();
    if (this.graph?.version === view.version) return this.graph.chain;
    const dirs = view.looseDirs;
    const stamp = dirs.map((d) => `${fileStamp(join(d, 'info', 'commit-graph'))}/${fileStamp(join(d, 'info', 'commit-graphs', 'commit-graph-chain'))}`).join(' ');
    if (this.graph?.stamp === stamp) {
      this.graph.version = view.version;
      return this.graph.chain;
    }
    if (this.graph !== undefined) this.charge(-this.graph.bytes);
    const chain = CommitGraphChain.readFirst(dirs, this.hashLength);
    const bytes = chain?.layers.reduce((n, l) => n + l.data.length, 0) ?? 0;
    this.charge(bytes);
    this.graph = { version: view.version, stamp, chain, bytes };
    return chain;
  }

  /** Lists the pack directories now (new packs, removed ones); handles see the result at their next miss or `refresh()`. */
  refresh(): void {
    this.scan();
  }

  /** Makes a pack written into the store (by index-pack) visible at once, without a rescan. */
  addPack(idxPath: string): StorePack {
    return this.catalog.addPack(resolve(idxPath));
  }

  /**
   * Writes an object as a loose file unless the store already has it (git's rule: an existing
   * object is never rewritten), and returns its id. With `detectCollisions`, the id comes from
   * sha1dc (hashObject), and half of a collision attack is refused. The type is named, or given by
   * its pack number (1-4).
   */
  writeLoose(type: ObjectType | number, data: Uint8Array, detectCollisions = false): Buffer {
    const id = hashObject(this.format, type, data, detectCollisions);
    if (this.objects.has(id, { refresh: false })) return id;
    writeLoose(this.objectsDir, toHex(id), type, data, this.looseOptions);
    return id;
  }

  /**
   * Writes an object with any type name, as `git hash-object --literally` does (an object git
   * cannot parse, for tests of what reads it), unless it is already there; returns its id.
   */
  writeLooseLiterally(typeName: string, data: Uint8Array): Buffer {
    const id = hashLiterally(this.format, typeName, data);
    if (this.objects.has(id, { refresh: false })) return id;
    writeLoose(this.objectsDir, toHex(id), typeName, data, this.looseOptions);
    return id;
  }

  /** The worker threads of the async reads, started on first use. */
  private workers(): StoreWorkers {
    if (this.closed) throw new PackwrightError('INVALID_ARGUMENT', `store ${this.objectsDir} is closed`);
    this.pool ??= new StoreWorkers(this.key, this.threads);
    return this.pool;
  }

  /**
   * Reads many objects on worker threads (each with its own store on these files), yielding them
   * in the order asked, `found: false` for a missing one: inflating and applying deltas happen
   * off this thread, which stays free for its event loop. For servers; batch tools on one thread
   * read through a handle.
   */
  readMany(ids: readonly Uint8Array[], options: ManyOptions = {}): AsyncGenerator<ReadManyResult> {
    return this.workers().readMany(ids, this.hashLength, options);
  }

  /** Type and size (type 0: missing) of many objects, looked up on all worker threads at once. */
  headerMany(ids: readonly Uint8Array[], options: ManyOptions = {}): Promise<HeadersReply> {
    return this.workers().headerMany(ids, this.hashLength, options);
  }

  /**
   * Builds the info table of every pack the store's handle sees that has none yet (type, size
   * and delta base of each object; see buildInfoTable), large packs split over the worker
   * threads. Later header questions answer from the tables.
   */
  async loadInfoTables(options: { signal?: AbortSignal; parallelMin?: number; chunk?: number } = {}): Promise<void> {
    for (const pack of this.objects.packs()) {
      throwIfAborted(options.signal, 'loading info tables');
      if (pack.hasInfoTable || pack.tryIndex() === undefined || !pack.tryOpen()) continue;
      if (this.threads < 2 || pack.index.count < (options.parallelMin ?? PARALLEL_TABLE_MIN)) pack.loadInfoTable();
      else pack.setInfoTable(await this.workers().infoTable(pack.open().file, pack.idxPath, pack.index, options.chunk));
    }
  }

  /**
   * One object, read on a worker thread. Calls made in the same turn of the event loop (many
   * concurrent requests) go to the workers together.
   */
  readAsync(id: Uint8Array): Promise<StoredObject> {
    this.batcher ??= new ReadBatcher(() => this.workers(), this.hashLength);
    return this.batcher.read(id);
  }

  get counters(): StoreCounters {
    return { scans: this.catalog.scans, misses: this.missCount, version: this.catalog.current.version };
  }

  /** Warnings of the last listing (an ignored alternate, a multi-pack-index that could not be used). */
  get warnings(): readonly string[] {
    return this.catalog.warnings;
  }

  /** @internal The view a new handle starts from. */
  currentView(): CatalogView {
    return this.catalog.current;
  }

  /** @internal */
  hold(view: CatalogView): void {
    this.catalog.hold(view);
  }

  /** @internal */
  release(view: CatalogView): void {
    if (!this.closed) this.catalog.release(view);
  }

  /** @internal The first lookup of any handle lists the directories, whatever the policy. */
  listedView(): CatalogView {
    const view = this.catalog.current;
    return view.listed ? view : this.scan();
  }

  /**
   * @internal A handle missed with every source of the current view searched: lists the
   * directories again if the policy allows, and returns the view to retry with, or undefined.
   */
  afterMiss(sawVanished: boolean): CatalogView | undefined {
    const before = this.catalog.current;
    if (sawVanished) this.retryNow = true;
    // Within the window, a pack directory that changed since the listing (git gc, repack, a push)
    // is listed again all the same: the object may have moved into a new pack. One stat a pack
    // directory, at most every STAT_EVERY_MS: a burst of misses (a push's new objects) stays cheap.
    let allowed = mayRescan(this.policy, before.listed, this.retryNow, this.now() - this.lastScanAt);
    if (!allowed && this.policy !== 'never' && before.listed) {
      const now = monotonicMs();
      if (now - this.lastStatAt >= STAT_EVERY_MS) {
        this.lastStatAt = now;
        allowed = packDirStamp(before.looseDirs) !== this.dirStamp;
      }
    }
    if (!allowed) return undefined;
    let after: CatalogView;
    try {
      after = this.scan();
    } catch (e) {
      // The handle keeps the view it has (a half-done maintenance step, an unreadable directory).
      if (!isPackwrightError(e)) throw e;
      this.catalog.warnings = [...this.catalog.warnings, e.message];
      return undefined;
    }
    return after === before ? undefined : after;
  }

  /** @internal */
  countMiss(): void {
    this.missCount++;
  }

  private scan(): CatalogView {
    this.lastScanAt = this.now();
    try {
      const stamp = packDirStamp(this.catalog.current.looseDirs);
      const view = this.catalog.scan();
      // Taken before the listing: a change during it shows as a change at the next miss.
      this.dirStamp = view.looseDirs === this.catalog.current.looseDirs ? stamp : packDirStamp(view.looseDirs);
      this.retryNow = false;
      return view;
    } catch (e) {
      // A failed listing is retried at the next miss; handles keep the views they have.
      this.retryNow = true;
      throw e;
    }
  }

  /**
   * Closes the store: its pack files and indexes, and its worker threads if any were started. Handles made
   * from it must not be used after.
   */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    void this.pool?.close();
    this.pool = undefined;
    this.catalog.closeAll();
    this.inflater.close();
    this.cache.close();
  }
}

/** How often misses inside the refresh window may look whether a pack directory changed. */
const STAT_EVERY_MS = 10;

/** The modification time and inode of each objects directory's `pack/`: what adding or removing a pack changes. */
function packDirStamp(dirs: readonly string[]): string {
  return dirs.map((d) => {
    try {
      const st = statSync(join(d, 'pack'));
      return `${st.mtimeMs}:${st.ino}`;
    } catch {
      return '-';
    }
  }).join('|');
}

/** extensions.objectformat of a git directory's own config (git reads it nowhere else). */
export function objectFormatOf(gitDir: string): ObjectFormat {
  const file = join(gitDir, 'config');
  const v = GitConfig.read(file).get('extensions.objectformat')?.toLowerCase();
  if (v === undefined || v === null || v === 'sha1') return 'sha1';
  if (v === 'sha256') return 'sha256';
  throw new PackwrightError('CONFIG_INVALID', `${file}: unknown object format "${v}"`, { file });
}

/** The OBJECT_NOT_FOUND error for `id`, in git's words. */
export function notFound(id: Uint8Array): PackwrightError {
  const hex = toHex(id);
  return new PackwrightError('OBJECT_NOT_FOUND', `object ${hex} not found`, { id: hex });
}

/**
 * Milliseconds on a monotonic clock. `performance.now()` would do, but the global loads
 * perf_hooks on first use (~1 ms of every command's start); process.hrtime is there already.
 */
function monotonicMs(): number {
  const [seconds, nanoseconds] = process.hrtime();
  return seconds * 1e3 + nanoseconds / 1e6;
}
