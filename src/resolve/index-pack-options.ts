// The options and results of index-pack (index-pack.ts), for its callers: the CLI, verify-pack,
// unpack-objects, fsck and a fetch or push that receives a pack.
import type { ObjectFormat } from '../hash/object-format.js';
import type { PackIndex } from '../idx/pack-index.js';
import type { PackScan } from './pack-scan.js';
import type { ConsumedPackHeader } from './pack-source.js';
import type { ExternalBaseLookup } from './resolve-deltas.js';
import type { PackVisitorSpec } from './pack-visitor.js';

/**
 * The phases `indexPack` reports progress for, in order: receiving a stream (or indexing a file), resolving
 * deltas, writing the files.
 */
export type IndexPackPhase = 'receiving' | 'indexing' | 'resolving' | 'writing';

/**
 * Options of `indexPack`: where the pack comes from and goes, threads, memory, checks, thin packs, progress
 * and cancellation.
 */
export interface IndexPackOptions {
  objectFormat?: ObjectFormat | undefined;
  /**
   * Threads for both passes, this one included, as git's --threads counts them (default: git's
   * rule, and one thread for packs under 4 MiB, where starting a worker costs more than it saves).
   */
  threads?: number | undefined;
  idxVersion?: 1 | 2 | undefined;
  /** Offsets above this go to the 64-bit table (`--index-version=2,<limit>`). */
  largeOffsetLimit?: number | undefined;
  /** Also write a `.rev` file. */
  revIndex?: boolean | undefined;
  /** Write a `.keep` file with this message ('' for an empty one). */
  keep?: string | undefined;
  /** Write a `.promisor` file with this message ('' for an empty one): `--promisor[=<msg>]`. */
  promisor?: string | undefined;
  /**
   * Called once every object is resolved and the index is built, before any file is written or
   * renamed into place, so a check that throws here (index-pack's `--strict`, the collision
   * check) leaves nothing behind. See fsck/index-pack-checks.ts.
   */
  beforeWrite?: ((pack: IndexedPack) => void | Promise<void>) | undefined;
  /** Where to write the `.idx` (default: the pack path with `.idx`). */
  indexPath?: string | undefined;
  /** For stream or buffer input: where to write the pack (its `.idx`, `.rev`, `.keep` go beside it). */
  packPath?: string | undefined;
  /** For stream or buffer input: write `pack-<hash>.pack` (and its companions) in this directory. */
  packDir?: string | undefined;
  /**
   * For stream input with neither `packPath` nor `packDir`: the directory the received pack is
   * written to while it is indexed, and removed from afterwards (default: the OS temp directory).
   * unpack-objects gives its pack directory, so a file a killed run leaves is git prune's to clean.
   */
  spoolDir?: string | undefined;
  /** Record each entry's delta depth (`IndexPackResult.depths`, for verify-pack -v): 4 bytes an object. */
  depths?: boolean | undefined;
  /** Reject duplicate objects (git's `--strict` does that among its checks). */
  strict?: boolean | undefined;
  /** Complete a thin pack with bases from this lookup (git's `--fix-thin`). */
  fixThin?: ExternalBaseLookup | undefined;
  /**
   * zlib level, -1 to 9, of the bases `fixThin` appends: git's core.loosecompression, else
   * core.compression, else 1 (Z_BEST_SPEED), which this defaults to.
   */
  fixThinCompression?: number | undefined;
  /**
   * Deflate the appended bases as reference zlib does, so the completed pack (and its name) are
   * the bytes git's index-pack writes (default true); false: with Node's zlib, several times
   * faster on many small bases, a pack as valid with other bytes (a server receiving a push).
   */
  fixThinGitBytes?: boolean | undefined;
  /** Resolve a thin pack's deltas against bases from this lookup without adding them to the pack (unpack-objects). */
  thinBases?: ExternalBaseLookup | undefined;
  /** Do not write anything: build the index and compare it with the existing `.idx`. */
  verify?: boolean | undefined;
  /**
   * With `verify`, for a pack file that fits `memoryLimit`: take the entries' extents from the
   * existing index rather than inflating every entry in pass 1 to find where it ends, as git's
   * fsck does (scan-with-index.ts). The same bytes are checked; errors name what the index says.
   */
  extentsFromIndex?: boolean | undefined;
  /**
   * With `verify`: the index on disk, already open (a store's): compared with the one rebuilt, and
   * with `extentsFromIndex` the one the extents come from, instead of reading the file again. It
   * stays open.
   */
  existingIndex?: PackIndex | undefined;
  /**
   * The ceiling on what the run holds, in bytes (Infinity for none; default `defaultMaxMemory` of
   * the pack's object count: 256 MiB up to a million objects, 48 bytes more for each one past
   * that): see memory-plan.ts. Threads are dropped when their working sets would not fit, and what
   * is left holds the deltas pass 1 keeps, then the pack itself if it still fits (`memoryLimit`).
   */
  maxMemory?: number | undefined;
  /**
   * What pass 1 may hold for pass 2 beside the tables, within what `maxMemory` leaves (default 1
   * GiB): the deltas' data as pass 1 inflates them, when one thread scans the whole file or resolves
   * a stream (pass 2 then does not inflate them again), then the pack itself if it still fits (pass 2 then reads
   * entries without a system call each); otherwise entries are read back from the file through
   * block caches (memory-plan.ts `planPackHolding`).
   */
  memoryLimit?: number | undefined;
  /**
   * Packs from this size up (default 8 MiB) have pass 1 split across threads, unless their entries
   * average over 256 KiB or the memory plan has no room for what a split leaves behind.
   */
  parallelScanMinSize?: number | undefined;
  /** Refuse packs larger than this many bytes (`--max-input-size`). */
  maxInputSize?: number | undefined;
  /**
   * For a stream or buffer: the caller read the pack's 12-byte header already and says what it
   * held (git's `--pack_header=<version>,<count>`, which fetch-pack passes); the input starts
   * after it.
   */
  packHeader?: ConsumedPackHeader | undefined;
  /**
   * Compute SHA-1 ids with collision detection, as git always does (its sha1dc): half of a
   * collision attack fails the run with COLLISION_ATTACK. About 2.4× the hashing time, so off by
   * default here; the CLI turns it on for data from outside (`--stdin`, `--fix-thin`). The pack's
   * trailer is a checksum, hashed plainly either way (as git's csum-file since 2.47).
   */
  detectCollisions?: boolean | undefined;
  signal?: AbortSignal | undefined;
  /**
   * How long (ms) this thread works between turns of its event loop (default 40, see slices.ts):
   * an abort from a timer, and a server's other work, wait at most about this long.
   */
  sliceMs?: number | undefined;
  /** Objects done of total in the current phase; `bytes` read so far while scanning. */
  onProgress?: ((phase: IndexPackPhase, done: number, total: number, bytes?: number) => void) | undefined;
  /**
   * Show objects to a visitor as they resolve (fsck does its checks so); `workerScript` is then a
   * worker script that hosts the resolve tasks and registers the visitor.
   */
  visitor?: PackVisitorSpec | undefined;
  workerScript?: URL | undefined;
  /** Bytes the visitor holds on each resolving thread (a store of its own, say): charged by the memory plan. */
  visitorBytes?: number | undefined;
}

/** What `beforeWrite` is shown: the pack's entries (ids included) and what the visitor found. */
export interface IndexedPack {
  scan: PackScan;
  /** What each thread's visitor found (`visitor`). */
  visits: unknown[];
  /** Where the pack's bytes are until they are renamed into place (its objects can be read there). */
  packPath: string;
  /** The entry number (pack order) of the object `id`, or -1: a search of the sorted ids. */
  findEntry(id: Uint8Array): number;
}

/** What `indexPack` did: the pack's checksum, the files written, object counts and the phases' times. */
export interface IndexPackResult {
  packHash: Buffer;
  packPath: string | undefined;
  indexPath: string | undefined;
  revPath: string | undefined;
  keepPath: string | undefined;
  objectCount: number;
  /** Objects appended by `fixThin`. */
  localObjects: number;
  /** Bytes that followed the pack's trailer in the input (git echoes them for `--stdin`). */
  trailing: Buffer;
  /**
   * The `.idx` bytes: read back from `indexPath` when first asked for (the run streams the index to
   * its file and holds no copy: 280 MB at 10M objects), or the bytes themselves when there is no
   * file to write (a stream with neither `packPath` nor `packDir`).
   */
  readonly index: Buffer;
  /** Per-entry facts in pack order (for `verify-pack -v`). */
  scan: PackScan;
  /** With `depths`: the delta depth of each entry in pack order. */
  depths: Uint32Array | undefined;
  /** What each thread's visitor found (`visitor`). */
  visits: unknown[];
  stats: {
    countsByType: Record<string, number>;
    deltas: number;
    chainHistogram: number[];
    peakLiveBytes: number;
    /** Threads that resolved (fewer than asked when `maxMemory` could not hold them all). */
    threads: number;
    /** The pack was held whole in memory (`maxMemory`, `memoryLimit`). */
    resident: boolean;
    /** Deltas whose data pass 1 kept for pass 2, which did not inflate them again (kept-deltas.ts). */
    keptDeltas: number;
    /** Deltas each thread resolved. */
    perThread: number[];
    /** Children resolved from branches offered by another thread. */
    stolen: number;
    phases: Record<string, number>;
  };
}
