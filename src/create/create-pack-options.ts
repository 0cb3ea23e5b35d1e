// The options and results of createPack (create-pack.ts): what to pack, how, and what was written.
import type { CruftOptions } from './cruft-objects.js';
import type { ObjectFilter } from '../walk/object-filter.js';
import type { StoreHandle } from '../odb/store-handle.js';
import type { RefStore } from '../refs/ref-store.js';
import type { RevTip } from '../walk/rev-args.js';
import type { MissingAction } from '../walk/rev-walk.js';
import type { EntryCounts } from './write-pack.js';
import type { PackSink } from './write-pack.js';

/** The phases `createPack` reports progress for, in git's order. */
export type CreatePackPhase = 'counting' | 'compressing' | 'writing';

/**
 * Options of `createPack`, as `git pack-objects` takes them: what to pack, reuse, delta search, threads,
 * bitmaps, output and progress.
 */
export interface CreatePackOptions {
  /** Where the objects come from. */
  objects: StoreHandle;
  /** Walk from these (git's `--revs` input), or… */
  tips?: readonly RevTip[] | undefined;
  /** …pack exactly these objects (git's input without `--revs`), each with the path it is known by. */
  ids?: readonly { id: Uint8Array; name?: string }[] | undefined;
  /**
   * With `ids`: objects the receiver has (git's `-<id>` lines), trees with all they reach; with
   * `thin`, stored deltas against them are kept as REF_DELTA.
   */
  preferredBases?: readonly Uint8Array[] | undefined;
  /** The pack's bytes go here, in order. */
  sink?: PackSink | undefined;
  /**
   * The sink is done with each chunk once it returns, or once the promise it returns settles (it
   * wrote or copied the bytes): the pack's buffers are then reused for the next chunks. Without
   * it every chunk is a fresh buffer the sink may keep (a stream's queue does); a long pack then
   * allocates its size again in buffers, and the allocator's heap grows with it.
   */
  reuseChunks?: boolean | undefined;
  /**
   * Also (or instead) write `<packBase>-<hash>.pack` and its `.idx` (and `.rev` with
   * writeReverseIndex), each through a temporary file renamed into place, the index last.
   */
  packBase?: string | undefined;
  /**
   * With `packBase` alone: packs of at most this many bytes, as many as it takes (git's
   * --max-pack-size and pack.packSizeLimit; git raises anything below 1 MiB to 1 MiB, and so does
   * the CLI). An object bigger than the limit gets a pack of its own.
   */
  maxPackSize?: number | undefined;
  writeReverseIndex?: boolean | undefined;
  /**
   * With `packBase`: a reachability bitmap for the pack (git's --write-bitmap-index), with git's
   * selection of commits; not for split packs, nor when something a commit reaches is not in the
   * pack (a warning says so, unless 'quiet').
   */
  writeBitmapIndex?: boolean | 'quiet' | undefined;
  /** The bitmap's path-name hash cache (git's pack.writeBitmapHashCache, default true). */
  bitmapHashCache?: boolean | undefined;
  /** The bitmap's lookup table (git's pack.writeBitmapLookupTable, default false). */
  bitmapLookupTable?: boolean | undefined;
  /** Commits to give bitmaps first (git's pack.preferBitmapTips: the commits of refs under its prefixes). */
  bitmapPreferredTips?: readonly Uint8Array[] | undefined;
  /** `.idx` version for file output (default 2; 1 becomes 2 if an offset needs 64 bits), as git's --index-version. */
  indexVersion?: 1 | 2 | undefined;
  /** Offsets above this go to the v2 index's 64-bit table (default 0x7fffffff). */
  largeOffsetLimit?: number | undefined;
  /** Deltas against objects the tips exclude may stay in the pack (the receiver has the bases). */
  thin?: boolean | undefined;
  /** OFS_DELTA references (default true; false writes REF_DELTA, for very old clients). */
  deltaBaseOffset?: boolean | undefined;
  /** Also pack annotated tags of `refs` whose object is packed (git's --include-tag). */
  includeTag?: boolean | undefined;
  refs?: RefStore | undefined;
  /** Objects tried as bases for each new delta (git's --window, default 10; 0 computes none). */
  window?: number | undefined;
  /**
   * Bytes the delta window may hold, objects and their delta indexes (git's --window-memory and
   * pack.windowMemory; default 0, no limit): the oldest leave the window first.
   */
  windowMemory?: number | undefined;
  /** Longest delta chain (git's --depth, default 50). */
  depth?: number | undefined;
  threads?: number | undefined;
  /**
   * Threads for counting (default: `threads` from 3 up, else 1). With fewer, this thread's share
   * of the tree walk is about all there is: on 2 cores, listing with one worker beside this thread
   * measured no faster than alone (gitoxide: 1.09-1.18 s against 1.04 s).
   */
  countThreads?: number | undefined;
  /**
   * Mark what the excluded tips reach with git's sparse algorithm (pack.useSparse, git's default):
   * only down the paths the included trees change (see RevWalk's `sparse`).
   */
  sparse?: boolean | undefined;
  /** Count what git's reuse of a bitmapped pack sends (pack.allowPackReuse, default true; see packReuse). */
  allowPackReuse?: boolean | undefined;
  /** Leave out objects already in a pack (git's --incremental). */
  incremental?: boolean | undefined;
  /** Leave out objects in packs of alternates (git's --local). */
  local?: boolean | undefined;
  /** With nothing to pack, write nothing (git's --non-empty): no file, no byte to `sink`, no `packs`. */
  nonEmpty?: boolean | undefined;
  /** Leave out objects in packs with a `.keep` file (git's --honor-pack-keep). */
  honorPackKeep?: boolean | undefined;
  /** Leave out objects in these local packs, by file name (`pack-<hash>.pack`), as if kept (git's --keep-pack). */
  keepPacks?: readonly string[] | undefined;
  /**
   * Also pack every object of the packs a repack replaces (local, no `.keep`, not in `keepPacks`)
   * that the walk did not reach (git's --keep-unreachable, what `git repack -k` asks for).
   */
  keepUnreachable?: boolean | undefined;
  /** Also pack every loose object of the repository's own objects directory (git's --pack-loose-unreachable). */
  packLooseUnreachable?: boolean | undefined;
  /**
   * Write each object of the packs a repack replaces that the new pack leaves out (and no kept or
   * alternate pack holds) as a loose object with its pack's time, so that deleting the old packs
   * loses nothing (git's --unpack-unreachable, what `git repack -A` and `git gc` ask for).
   * `expiration` (seconds since the epoch; 0 or absent: none): objects of packs not newer than
   * this are dropped instead, unless an object newer than it reaches them.
   */
  unpackUnreachable?: { expiration?: number } | undefined;
  /**
   * Make a cruft pack instead of walking (git's --cruft, what `git repack --cruft` and `git gc
   * --cruft` ask for): the unreachable objects of the packs a repack deletes, and the loose ones,
   * with their modification times in a `.mtimes` file beside the pack (needs `packBase`).
   */
  cruft?: CruftOptions | undefined;
  /** Keep stored deltas (default true). */
  reuseDelta?: boolean | undefined;
  /** Copy stored data at all (default true; false recompresses everything and implies no delta reuse). */
  reuseObject?: boolean | undefined;
  missing?: MissingAction | undefined;
  /**
   * Leave out what promisor packs hold (a partial clone's remote has it) and do not walk past it;
   * an object missing here that they name is no error (git's --exclude-promisor-objects, which
   * `git repack` passes in a partial clone).
   */
  excludePromisor?: boolean | undefined;
  /** Leave out blobs or trees as a partial clone asks (git's --filter). */
  filter?: ObjectFilter | undefined;
  /** A shallow boundary: commits whose parents are not sent. */
  shallow?: readonly Uint8Array[] | undefined;
  /**
   * The pack goes to a shallow client (git's --shallow, which upload-pack passes when a boundary
   * was sent): with `thin`, the tree of every excluded commit named as a tip is a base it has
   * (git's --objects-edge-aggressive), as its haves may share no history inside the boundary.
   */
  shallowClient?: boolean | undefined;
  /** zlib level for what is compressed anew (git's pack.compression; default -1, zlib's 6). */
  compression?: number | undefined;
  /** Bytes of compressed new deltas kept for writing; beyond, they are computed again (pack.deltaCacheSize, 256 MiB). */
  deltaCacheSize?: number | undefined;
  /** Objects larger than this are never delta'd (core.bigFileThreshold, default 512 MiB). */
  bigFileThreshold?: number | undefined;
  /**
   * Count from the repository's reachability bitmap when it has one (git's --use-bitmap-index and
   * pack.useBitmaps; default: when the pack goes only to `sink`, as git's default for --stdout).
   * The same objects as the walk, far sooner when the tips have bitmaps. Not with a shallow
   * boundary, a filter, promisor exclusion or the unreachable options: those walk. A thin pack
   * keeps the stored deltas on what the excluded tips reach, and (as git's) tries no new delta
   * against them.
   */
  useBitmapIndex?: boolean | undefined;
  /** Told why a bitmap the repository has could not be used. */
  onWarning?: ((message: string) => void) | undefined;
  signal?: AbortSignal | undefined;
  /** Progress: objects counted (total 0 while counting), compressed, written (with the bytes written). */
  onProgress?: ((phase: CreatePackPhase, done: number, total: number, bytes?: number) => void) | undefined;
}

/** What went into the pack and how (gitoxide reports the same counts). */
export interface CreatePackStats extends EntryCounts {
  /** Objects the walk (or the id list) gave. */
  inputObjects: number;
  /** Objects in the pack. */
  objects: number;
  /** Missing objects left out (as `missing` allowed). */
  missing: number;
  /** Objects written as loose objects (`unpackUnreachable`). */
  loosened: number;
  /**
   * Of the objects, those git would send by reusing the bitmapped pack as it is (its
   * "pack-reused"), and the deltas among them: written as copies in pack order here too.
   */
  packReused: number;
  packReusedDeltas: number;
  /** Milliseconds per phase. */
  times: { counting: number; planning: number; compressing: number; writing: number };
}

/** One pack written under `packBase`. */
export interface WrittenPackFiles {
  hash: Buffer;
  packPath: string;
  indexPath: string;
  reverseIndexPath?: string;
  /** A cruft pack's `.mtimes` (CreatePackOptions.cruft). */
  mtimesPath?: string;
  /** The reachability bitmap (CreatePackOptions.writeBitmapIndex), when one was written. */
  bitmapPath?: string;
}

/** What `createPack` wrote: the pack's checksum and files, object counts and what was reused. */
export interface CreatePackResult {
  /** The pack's trailer hash (its name); the last pack's with `maxPackSize`. */
  hash: Buffer;
  stats: CreatePackStats;
  packPath?: string;
  indexPath?: string;
  reverseIndexPath?: string;
  /** Every pack written under `packBase`, in order (several with `maxPackSize`). */
  packs: WrittenPackFiles[];
}
