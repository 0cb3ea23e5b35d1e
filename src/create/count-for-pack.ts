import { trace2Data } from '../trace2/trace2.js';
import { basename } from 'node:path';
import { Bitset } from '../bitmap/bitset.js';
import { EntryHeader, OBJ_OFS_DELTA, OBJ_REF_DELTA } from '../pack/entry-header.js';
import type { StorePack } from '../odb/store-pack.js';
import { isPackwrightError, PackwrightError } from '../errors/packwright-error.js';
import { toHex } from '../hash/hex.js';
import { enumerateCruft } from './cruft-objects.js';
import { parseTag } from '../objects/commit.js';
import { OBJ_TAG } from '../objects/object-type.js';
import { filterObjects, keepsNoTrees, readSparsePatterns, type FilterContext } from '../walk/filter-objects.js';
import { markPreferredBases } from './preferred-bases.js';
import type { StoreHandle } from '../odb/store-handle.js';
import type { RefStore } from '../refs/ref-store.js';
import { locateAdded, locateObjects, type ObjectLocations } from '../walk/locate-objects.js';
import { Flag, nameHash, ObjectTable } from '../walk/object-table.js';
import type { RevWalk } from '../walk/rev-walk.js';
import { givenObjects, leaveOutMissing, walkObjectsParallel, walkObjectsSliced, type WalkedObjects } from '../walk/walk-objects.js';
import { walkWithBitmapSets, type BitmapSets } from '../walk/bitmap-walk.js';
import { addLooseObjects, addObjectsOfRepackedPacks, isLocal, loosenUnusedObjects, recentObjects } from '../walk/unreachable-objects.js';
import { WorkerPool } from '../workers/worker-pool.js';
import type { CreateTasks } from './create-tasks.js';
import type { CreatePackOptions } from './create-pack-options.js';


/** What the count stage found: the objects to pack, in order, where each is stored, and what it left out. */
export interface CountedObjects {
  table: ObjectTable;
  /** The objects to pack, by number in `table`, in the order counting met them. */
  listed: Int32Array;
  locations: ObjectLocations;
  /** Objects named or reached that the repository lacks (allowed by `missing`). */
  missing: number;
  /** What counting was asked for: the listed objects and the missing ones, before kept or packed ones were left out. */
  inputObjects: number;
  /** Objects `unpackUnreachable` wrote as loose objects. */
  loosened: number;
  /** Objects left out because a kept, local or already packed copy has them (a bitmap cannot be written then). */
  leftOut: number;
  /**
   * Objects git would send by reusing the bitmapped pack as it is (see packReuse), the deltas
   * among those not in the verbatim run, and that run: the pack's first `verbatim` entries.
   */
  packReused: { objects: number; deltas: number; verbatim: number; pack?: StorePack; positions?: Bitset };
  /**
   * For a thin pack counted from a bitmap: whether the receiver has an object (what the excluded
   * tips reach), so a stored delta on it may stay (git's bitmap_has_oid_in_uninteresting).
   */
  receiverHas?: (id: Uint8Array) => boolean;
  /** A cruft pack's objects' times, by object number. */
  mtimes: readonly number[] | undefined;
}

/**
 * The count stage (git's "Enumerating objects"): the objects of the pack, from tips or ids (or, for
 * a cruft pack, the unreachable objects with their times), then the filter, --include-tag, the
 * unreachable objects asked for, and what kept, local or already packed copies leave out; and the
 * objects --unpack-unreachable loosens. `pool` gives the worker pool when counting uses threads.
 */
export async function countForPack(options: CreatePackOptions, pool: () => WorkerPool<CreateTasks>, threads: number, bitmapSets?: BitmapSets): Promise<CountedObjects> {
  const handle = options.objects;
  // Counting (or, for a cruft pack, gathering the unreachable objects and their times).
  if (options.cruft !== undefined && (options.packBase === undefined || options.maxPackSize !== undefined)) {
    throw new PackwrightError('INVALID_ARGUMENT', 'a cruft pack is written under a base name, in one pack');
  }
  // A sparse filter's patterns are read first, as git sets its filter up before it counts.
  const sparsePatterns = options.filter !== undefined ? readSparsePatterns(handle, options.filter, options.refs) : undefined;
  const cruft = options.cruft !== undefined ? enumerateCruft(handle, options.cruft) : undefined;
  const counted = cruft !== undefined
    ? { table: cruft.table, listed: Int32Array.from(cruft.order), locations: locateObjects(handle, cruft.table), missing: 0, filterContext: { given: new Set<number>(), rootTrees: () => [] }, walk: undefined }
    : await walkForPack(options, pool, threads, bitmapSets);
  const { table } = counted;
  let { listed, locations, missing } = counted;
  // Before tags are included: git includes a tag only when what it points at is in the pack.
  if (options.filter !== undefined) {
    listed = filterObjects(handle, table, listed, locations, options.filter, { ...counted.filterContext, sparsePatterns });
    // Missing blobs the filter kept are errors (or allowed) now, as git finds them when it writes.
    if (counted.walk !== undefined) {
      const found: number[] = [];
      listed = leaveOutMissing(counted.walk, listed, { missing: options.missing ?? 'error', blobError: 'pack-objects' }, found);
      missing += found.length;
    }
  }
  if (options.includeTag) {
    const extra = includeTags(handle, table, options.refs);
    if (extra.length > 0) {
      locations = locateAdded(handle, table, locations);
      listed = Int32Array.from([...listed, ...extra]);
    }
  }
  const keepPacks = new Set(options.keepPacks ?? []);
  if (options.keepUnreachable === true || options.packLooseUnreachable === true) {
    const extra = [
      ...(options.keepUnreachable === true ? addObjectsOfRepackedPacks(handle, table, keepPacks) : []),
      ...(options.packLooseUnreachable === true ? addLooseObjects(handle, table) : []),
    ];
    if (extra.length > 0) {
      locations = locateAdded(handle, table, locations);
      listed = Int32Array.from([...listed, ...extra]);
    }
  }
  const beforeLeavingOut = listed.length;
  if (options.incremental || options.local || options.honorPackKeep || keepPacks.size > 0) listed = leaveOutPacked(handle, table, listed, locations, options);
  const leftOut = beforeLeavingOut - listed.length;
  const inputObjects = listed.length + missing;
  let loosened = 0;
  if (options.unpackUnreachable !== undefined) {
    const packed = new Uint8Array(table.count);
    for (const o of listed) packed[o] = 1;
    const inPack = (n: number): boolean => packed[n] === 1;
    const expiration = options.unpackUnreachable.expiration ?? 0;
    const recent = expiration > 0 ? recentObjects(handle, table, inPack, expiration) : undefined;
    loosened = loosenUnusedObjects(handle, table, inPack, { keepPacks, expiration, ...(recent !== undefined ? { recent } : {}) });
    trace2Data('pack-objects', 'loosen_unused_packed_objects/loosened', loosened);
  }
  const reuseAllowed = packReuseAllowed(options) && leftOut === 0;
  // The verbatim run goes out as it is only with OFS_DELTA (git's write_reused_pack_verbatim):
  // its deltas are not looked at then, and git's Total line does not count them.
  const verbatim = options.deltaBaseOffset !== false;
  const packReused = reuseAllowed && counted.bitmapResult !== undefined
    ? { ...packReuse(counted.bitmapResult.pack, counted.bitmapResult.positions, !verbatim), pack: counted.bitmapResult.pack }
    : { objects: 0, deltas: 0, verbatim: 0 };
  if (!verbatim) packReused.verbatim = 0;
  const receiverHas = options.thin === true ? counted.bitmapResult?.inHaves : undefined;
  return { table, listed, locations, missing, inputObjects, leftOut, packReused, loosened, mtimes: cruft?.mtimes, ...(receiverHas !== undefined ? { receiverHas } : {}) };
}

/**
 * How many of the wanted objects git's pack-objects sends by reusing the bitmapped pack (or a
 * multi-pack bitmap's preferred pack, whose objects are its first bits) as it is
 * (pack-bitmap.c, reuse_partial_packfile_from_bitmap): every object of each leading 64-bit word
 * of the result that is all wanted, then each further wanted object in pack order that is whole,
 * or a delta on a base before it already reused; an entry that cannot be read ends it. packwright
 * writes those objects as copies in pack order too (pack-plan.ts), so this counts what git's
 * "pack-reused" counts. The whole words are the verbatim run (`verbatim` entries from the pack's
 * first); without `wholeDeltas` the deltas among them are not counted (not read: they go out as
 * they are, and git's Total line leaves them out). `positions`: the reused entries, by pack order.
 */
export function packReuse(pack: StorePack, positions: Bitset, wholeDeltas = true): { objects: number; deltas: number; verbatim: number; positions: Bitset } {
  const index = pack.index;
  const N = index.count;
  const { offsets } = index.packOrder();
  const rankOf = index.packRanks();
  const file = pack.open().file;
  const words = positions.words;
  let whole = 0;
  while (2 * whole + 1 < words.length && words[2 * whole] === 0xffffffff && words[2 * whole + 1] === 0xffffffff) whole++;
  whole = Math.min(whole, Math.floor(N / 64));
  const reuse = new Bitset(N);
  let objects = 0;
  let deltas = 0;
  const header = new EntryHeader();
  const isDelta = (pos: number): boolean => {
    file.readEntryHeader(offsets[pos] as number, header);
    return header.type === OBJ_OFS_DELTA || header.type === OBJ_REF_DELTA;
  };
  for (let pos = 0; pos < whole * 64; pos++) {
    reuse.set(pos);
    objects++;
    if (wholeDeltas && isDelta(pos)) deltas++;
  }
  try {
    for (let pos = whole * 64; pos < N; pos++) {
      if (!positions.get(pos)) continue;
      file.readEntryHeader(offsets[pos] as number, header);
      if (header.type === OBJ_OFS_DELTA || header.type === OBJ_REF_DELTA) {
        let basePosition = -1;
        if (header.type === OBJ_OFS_DELTA) {
          const at = index.positionOfOffset(header.baseOffset);
          if (at >= 0) basePosition = rankOf[at] as number;
        } else if (header.baseId !== undefined) {
          const at = index.find(header.baseId);
          if (at >= 0) basePosition = rankOf[at] as number;
        }
        if (basePosition < 0 || basePosition >= pos || !reuse.get(basePosition)) continue;
        deltas++;
      }
      reuse.set(pos);
      objects++;
    }
  } catch (e) {
    // A broken entry: git stops trying there, and the usual path deals with the rest.
    if (!isPackwrightError(e)) throw e;
  }
  return { objects, deltas, verbatim: whole * 64, positions: reuse };
}

/** The objects the walk (or the list of ids) gives: walked from tips or interned from ids, located, missing ones dealt with. */
async function walkForPack(options: CreatePackOptions, pool: () => WorkerPool<CreateTasks>, threads: number, bitmapSets: BitmapSets | undefined): Promise<{ table: ObjectTable; listed: Int32Array; locations: ObjectLocations; missing: number; filterContext: FilterContext; walk: RevWalk | undefined; bitmapResult?: WalkedObjects['bitmapResult'] }> {
  const handle = options.objects;
  const H = handle.hashLength;
  const progress = options.onProgress;
  const missingAction = options.missing ?? 'error';
  let table: ObjectTable;
  let listed: Int32Array;
  let locations: ObjectLocations;
  let missing = 0;
  // Objects asked for by name: a filter does not leave them out.
  const tips = new Set<number>();
  let rootTrees = (): Iterable<number> => [];
  let tipTrees = (): Iterable<{ n: number; name: string }> => [];
  let walk: RevWalk | undefined;
  let bitmapResult: WalkedObjects['bitmapResult'];
  if (options.ids !== undefined) {
    table = new ObjectTable(H, options.ids.length);
    const order: number[] = [];
    for (const { id, name } of options.ids) {
      const n = table.intern(id);
      if (!table.added) continue;
      table.mark(n, Flag.LISTED);
      table.nameHashes[n] = name === undefined ? 0 : nameHash(Buffer.from(name, 'utf8'));
      order.push(n);
      tips.add(n);
    }
    if (options.preferredBases !== undefined) markPreferredBases(handle, table, options.preferredBases.map((id) => table.intern(id)));
    locations = locateObjects(handle, table);
    const kept = order.filter((n) => {
      if (!table.is(n, Flag.MISSING)) return true;
      if (missingAction === 'error') throw new PackwrightError('OBJECT_NOT_FOUND', `object ${toHex(table.id(n))} is not in the repository`);
      missing++;
      return false;
    });
    listed = Int32Array.from(kept);
  } else {
    const walkOptions = {
      missing: missingAction,
      shallow: options.shallow ?? [],
      ...(options.excludePromisor === true ? { excludePromisor: true } : {}),
      ...(options.sparse === true ? { sparse: true } : {}),
      // git's --thin --shallow: --objects-edge-aggressive.
      ...(options.thin === true && options.shallowClient === true ? { aggressiveEdges: true } : {}),
      blobError: 'pack-objects' as const,
      ...(options.filter !== undefined ? { deferMissingBlobs: true } : {}),
      ...(options.filter !== undefined && keepsNoTrees(options.filter) ? { trees: 'tips' as const } : {}),
      ...(progress === undefined ? {} : { onProgress: (n: number) => progress('counting', n, 0) }),
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    };
    // A walk that lists no trees (`trees: 'tips'`) has nothing to share out among threads.
    const countThreads = walkOptions.trees === 'tips' ? 1 : Math.min(threads, options.countThreads ?? (threads > 2 ? threads : 1));
    // The bitmap's sets, when the caller found them for these tips (bitmapAllowed, missing as here).
    const walked = (bitmapSets !== undefined ? walkWithBitmapSets(handle, bitmapSets, walkOptions) : undefined)
      ?? (countThreads > 1
        ? await walkObjectsParallel(handle, options.tips ?? [], pool(), countThreads, walkOptions)
        : await walkObjectsSliced(handle, options.tips ?? [], walkOptions));
    table = walked.table;
    listed = walked.order;
    missing = walked.missing.length;
    bitmapResult = walked.bitmapResult;
    const revWalk = walked.walk;
    walk = revWalk;
    rootTrees = () => revWalk.commits.map((c) => revWalk.treeOf(c));
    tipTrees = () => revWalk.pending;
    if (options.filter !== undefined) for (const n of givenObjects(revWalk)) tips.add(n);
    // git's thin packs delta against the trees of excluded boundary commits (at most `window` of them).
    if (options.thin && (options.window ?? 10) > 0 && walked.walk.edges.length > 0) {
      const packedRoots = revWalk.commits.filter((c) => !table.is(c, Flag.UNINTERESTING)).map((c) => revWalk.treeOf(c));
      markPreferredBases(handle, table, walked.walk.edges.slice(0, options.window ?? 10).map((c) => walked.walk.treeOf(c)), packedRoots);
      locations = locateAdded(handle, table, walked.locations);
    } else {
      locations = walked.locations;
    }
  }
  return { table, listed, locations, missing, filterContext: { given: tips, rootTrees, tipTrees }, walk, ...(bitmapResult !== undefined ? { bitmapResult } : {}) };
}

/**
 * Whether git would reuse a bitmapped pack as it is for this pack (pack_options_allow_reuse): to a
 * sink only, pack.allowPackReuse, no kept, local or incremental packs left out.
 */
export function packReuseAllowed(options: CreatePackOptions): boolean {
  return options.packBase === undefined && options.allowPackReuse !== false && !options.honorPackKeep && (options.keepPacks ?? []).length === 0 && !options.local && !options.incremental;
}

/** Whether counting may take the bitmap walk (see CreatePackOptions.useBitmapIndex). */
export function bitmapAllowed(options: CreatePackOptions): boolean {
  if (!(options.useBitmapIndex ?? options.packBase === undefined)) return false;
  // A thin pack too, as git's: its stored deltas on what the excluded side reaches stay
  // (receiverHas), and no new delta is tried against that side (git's bitmap path marks no edges).
  return (options.shallow ?? []).length === 0 && options.filter === undefined && options.excludePromisor !== true
    && options.keepUnreachable !== true && options.packLooseUnreachable !== true && options.unpackUnreachable === undefined;
}

/**
 * git's --incremental, --local, --honor-pack-keep and --keep-pack: an object with a copy in a pack
 * (any pack; one of an alternate, or a loose file there; one with a `.keep` file; a local one
 * named) is not packed again.
 */
function leaveOutPacked(handle: StoreHandle, table: ObjectTable, listed: Int32Array, locations: ObjectLocations, options: CreatePackOptions): Int32Array {
  const named = new Set(options.keepPacks ?? []);
  // As in git, --honor-pack-keep counts only when a local pack has a .keep file; then every kept
  // pack counts, an alternate's too.
  const honorKeep = options.honorPackKeep === true && handle.packs().some((p) => isLocal(handle, p) && p.markers.keep);
  const excludes = (k: number): boolean => {
    if (k < 0) return false;
    const pack = locations.packs[k] as StorePack;
    const local = isLocal(handle, pack);
    return options.incremental === true || (options.local === true && !local) || (honorKeep && pack.markers.keep) || (local && named.has(basename(pack.packPath)));
  };
  // --local also leaves out what an alternate holds as a loose object (git's want_object_in_pack:
  // has_loose_object_nonlocal), wherever else it is stored.
  let alternateLoose: ObjectTable | undefined;
  if (options.local === true) {
    for (const dir of handle.looseDirs().slice(1)) {
      for (const id of handle.looseIds(dir)) (alternateLoose ??= new ObjectTable(handle.hashLength)).intern(id);
    }
  }
  return listed.filter((o) => {
    if (excludes(locations.pack[o] as number)) return false;
    for (const c of locations.otherCopies.get(o) ?? []) if (excludes(c.pack)) return false;
    return alternateLoose === undefined || alternateLoose.find(table.id(o)) < 0;
  });
}

/**
 * git's --include-tag: every annotated tag under refs/tags whose chain ends at a packed object is
 * packed too, with the tags in between. Returns the object numbers added.
 */
function includeTags(handle: StoreHandle, table: ObjectTable, refs: RefStore | undefined): number[] {
  if (refs === undefined) throw new PackwrightError('INVALID_ARGUMENT', 'includeTag needs the refs');
  const added: number[] = [];
  for (const ref of refs.list('refs/tags/')) {
    const chain: Buffer[] = [];
    let id: Buffer = ref.id;
    let target = -1;
    for (let depth = 0; depth < 64; depth++) {
      const n = table.find(id);
      if (n >= 0 && table.is(n, Flag.LISTED) && table.types[n] !== OBJ_TAG) {
        target = n;
        break;
      }
      const location = handle.locate(id);
      if (location === undefined) break;
      const obj = handle.readAt(location);
      if (obj.type !== 'tag') break;
      chain.push(id);
      id = parseTag(obj.data, handle.hashLength).object;
    }
    if (target < 0) continue;
    for (const tagId of chain) {
      const n = table.intern(tagId);
      if (table.is(n, Flag.LISTED)) continue;
      table.types[n] = OBJ_TAG;
      table.mark(n, Flag.LISTED);
      added.push(n);
    }
  }
  return added;
}
