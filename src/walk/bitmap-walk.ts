import { Bitset } from '../bitmap/bitset.js';
import { isPackwrightError, PackwrightError, throwIfAborted } from '../errors/packwright-error.js';
import { toHex } from '../hash/hex.js';
import { parseTag } from '../objects/commit.js';
import { OBJ_BLOB, OBJ_COMMIT, OBJ_TAG, OBJ_TREE, typeNumber } from '../objects/object-type.js';
import type { StoreHandle } from '../odb/store-handle.js';
import type { StorePack } from '../odb/store-pack.js';
import { openBitmap, type BitmappedObjects } from './bitmapped-objects.js';
import type { RevTip } from './rev-args.js';
import { listObjects } from './list-objects.js';
import { Flag, ObjectTable } from './object-table.js';
import { RevWalk, type MissingAction } from './rev-walk.js';
import { locateListed, walkObjects, type WalkedObjects } from './walk-objects.js';

/**
 * Options of a walk answered from reachability bitmaps: what a missing object does, whose words a missing
 * blob is told in, warnings and cancellation.
 */
export interface BitmapWalkOptions {
  /** What to do with missing trees and blobs met outside the bitmapped pack (default 'error'). */
  missing?: MissingAction | undefined;
  /** How a missing blob is an error (see WalkObjectsOptions.blobError). */
  blobError?: 'rev-list' | 'pack-objects' | undefined;
  /** Told why a bitmap the store has cannot be used (the walk then returns undefined). */
  onWarning?: ((message: string) => void) | undefined;
  signal?: AbortSignal | undefined;
}

/**
 * What findBitmapSets finds: the bitmap, the objects wanted (and those the excluded tips reach),
 * and the walk that numbered the tips. Found once, they answer both wholePackOf and
 * walkWithBitmapSets (createPack asks the one, then the other, when the pack is not sent whole:
 * finding them twice cost ~90 ms of 129k objects). A walk takes them: they are used once.
 */
export interface BitmapSets {
  index: BitmapIndex;
  result: Bitset;
  havesSet: Bitset | undefined;
  walk: RevWalk;
}

/** The bitmap's sets for `tips`; undefined in the cases walkObjectsWithBitmap names. */
export function findBitmapSets(handle: StoreHandle, tips: readonly RevTip[], options: BitmapWalkOptions): BitmapSets | undefined {
  const objects = openBitmap(handle, options.onWarning ?? (() => {}));
  if (objects === undefined) return undefined;
  const index = new BitmapIndex(objects);
  const wants: Root[] = [];
  const haves: Root[] = [];
  for (const tip of tips) {
    if (tip.blob === true) return undefined;
    const side = tip.uninteresting ? haves : wants;
    let id: Uint8Array = tip.id;
    let name = tip.path ?? '';
    // Tags are peeled, each tag a root of its own beside what it names (as git's roots are).
    for (let depth = 0; ; depth++) {
      const location = handle.locate(id);
      if (location === undefined || depth > 64) return undefined;
      const type = handle.typeAt(location);
      side.push({ id, type: typeNumber(type), name });
      if (type !== 'tag') break;
      const tag = parseTag(handle.readAt(location).data, handle.hashLength, () => toHex(id));
      id = tag.object;
      name = '';
    }
  }
  if (wants.length === 0) return undefined;
  if (haves.length > 0 && !haves.some((r) => objects.position(r.id) >= 0)) return undefined;
  const missing = options.missing ?? 'error';
  const walk = new RevWalk(handle, { tagObjects: true });
  let result: Bitset;
  let havesSet: Bitset | undefined;
  try {
    if (haves.length > 0) {
      // git walks the excluded side ignoring missing links; a hole there is left to the usual walk.
      try {
        havesSet = findObjects(index, haves, undefined, new RevWalk(handle, { tagObjects: true }), 'allow-any');
      } catch (e) {
        if (isPackwrightError(e, 'OBJECT_NOT_FOUND')) return undefined;
        throw e;
      }
    }
    throwIfAborted(options.signal, 'the walk');
    result = findObjects(index, wants, havesSet, walk, missing);
    if (havesSet !== undefined) result.andNot(havesSet);
  } catch (e) {
    // An entry's set is decoded when first used: a damaged one is met here, and the usual walk
    // gives the answer instead.
    if (!isPackwrightError(e, 'BITMAP_CORRUPT')) throw e;
    options.onWarning?.(e.message);
    return undefined;
  }
  return { index, result, havesSet, walk };
}

/**
 * The bitmapped pack, when the included tips reach exactly its objects and the excluded ones
 * nothing (a clone of a repository repacked with a bitmap): what git sends as it is. With a
 * multi-pack bitmap, its preferred pack when that holds every object the bitmap covers. Undefined
 * otherwise, and whenever walkObjectsWithBitmap would be.
 */
export function wholeBitmappedPack(handle: StoreHandle, tips: readonly RevTip[], options: BitmapWalkOptions = {}): StorePack | undefined {
  if (tips.some((t) => t.uninteresting)) return undefined;
  const sets = findBitmapSets(handle, tips, options);
  return sets === undefined ? undefined : wholePackOf(sets);
}

/** wholeBitmappedPack from sets already found. */
export function wholePackOf(sets: BitmapSets): StorePack | undefined {
  // Excluded tips (a fetch): never the whole pack.
  if (sets.havesSet !== undefined) return undefined;
  const { count: N, reusePack } = sets.index.objects;
  if (reusePack.index.count !== N) return undefined;
  return sets.result.count(N) === N && sets.result.count() === N ? reusePack : undefined;
}

/**
 * The objects reachable from the included tips and not from the excluded ones, from the
 * repository's reachability bitmap (git's prepare_bitmap_walk and traverse_bitmap_commit_list):
 * commits, trees, blobs and tags of the bitmapped pack, each type in pack order, then what only a
 * walk could find (objects outside that pack, in the order met). The same set as `walkObjects`,
 * in git's bitmap order and without paths, in a fraction of the time when the tips have bitmaps.
 *
 * How: each side's tips that have a bitmap are ORed together; from the others a walk goes until
 * it meets a commit with a bitmap (ORed in, its parents not walked) or an object already in the
 * set; then the excluded side's set is taken from the included side's.
 *
 * Undefined when no pack has a bitmap, when the bitmap cannot be read (`onWarning` says why), when
 * a tip is missing or an index entry, when no excluded tip is in the bitmapped pack (git's
 * in_bitmapped_pack: the bitmaps would not help), or when nothing is included: the caller then
 * walks as usual. Listed in git's bitmap order and located.
 */
export function walkObjectsWithBitmap(handle: StoreHandle, tips: readonly RevTip[], options: BitmapWalkOptions = {}): WalkedObjects | undefined {
  const sets = findBitmapSets(handle, tips, options);
  return sets === undefined ? undefined : walkWithBitmapSets(handle, sets, options);
}

/** walkObjectsWithBitmap from sets already found (with the same `missing`); it takes them. */
export function walkWithBitmapSets(handle: StoreHandle, sets: BitmapSets, options: BitmapWalkOptions = {}): WalkedObjects {
  const { index, result, havesSet, walk } = sets;
  const missing = options.missing ?? 'error';
  throwIfAborted(options.signal, 'the walk');
  // The result in git's order, numbered in the walk's table: what the walk listed but the
  // excluded side has is not sent.
  const t = walk.table;
  for (let n = 0; n < t.count; n++) t.unmark(n, Flag.LISTED);
  const listed: number[] = [];
  /** Lists the object whose id is at `ids[at..]`; ids are read in place, with no view object each. */
  const add = (ids: Uint8Array, at: number, type: number, hash: number): void => {
    const n = t.intern(ids, at);
    t.types[n] = type;
    t.nameHashes[n] = hash;
    t.mark(n, Flag.SEEN | Flag.LISTED);
    listed.push(n);
  };
  const objects = index.objects;
  const bitmap = objects.bitmap;
  t.reserve(result.count());
  const idData = objects.idData;
  for (const [type, ofType] of [[OBJ_COMMIT, bitmap.commits], [OBJ_TREE, bitmap.trees], [OBJ_BLOB, bitmap.blobs], [OBJ_TAG, bitmap.tags]] as const) {
    result.forEachAnd(ofType, (k) => add(idData, objects.idOffset(k), type, objects.nameHash(k)));
  }
  const N = index.count;
  const ext = index.ext;
  for (let e = 0; e < ext.count; e++) {
    if (result.get(N + e)) add(ext.ids, e * ext.hashLength, ext.types[e] as number, ext.nameHashes[e] as number);
  }
  const walked = locateListed(handle, walk, listed, { missing, ...(options.blobError !== undefined ? { blobError: options.blobError } : {}), ...(options.signal !== undefined ? { signal: options.signal } : {}) });
  const inHaves = havesSet === undefined ? undefined : (id: Uint8Array): boolean => {
    const pos = objects.position(id);
    return pos >= 0 && havesSet.get(pos);
  };
  return { ...walked, bitmapResult: { pack: objects.reusePack, positions: result, ...(inHaves !== undefined ? { inHaves } : {}) } };
}

/**
 * One commit's stored bitmap checked against a walk (`rev-list --test-bitmap`): bits counted and whether
 * they agree.
 */
export interface CommitBitmapCheck {
  /** Entries (bitmapped commits) in the bitmap. */
  entries: number;
  /** Objects the commit's stored set holds; undefined when the commit has none. */
  bits?: number;
  /** Whether the stored set is exactly what a walk from the commit finds. */
  same: boolean;
}

/**
 * git's `rev-list --test-bitmap`: the stored set of `commit` against a walk of everything it
 * reaches. BITMAP_CORRUPT when the repository has no bitmap that can be read.
 */
export function checkCommitBitmap(handle: StoreHandle, commit: Uint8Array, onWarning?: (message: string) => void): CommitBitmapCheck {
  const objects = openBitmap(handle, onWarning ?? (() => {}));
  if (objects === undefined) throw new PackwrightError('BITMAP_CORRUPT', 'failed to load bitmap indexes');
  const index = new BitmapIndex(objects);
  const entries = objects.bitmap.entryCount;
  const stored = index.commitSet(commit);
  if (stored === undefined) return { entries, same: false };
  const walked = walkObjects(handle, [{ id: Buffer.from(commit), uninteresting: false, name: toHex(commit) }]);
  const found = new Bitset(index.count);
  let outside = false;
  for (const n of walked.order) {
    const pos = index.position(walked.table.id(n));
    if (pos < 0 || pos >= index.count) outside = true;
    else found.set(pos);
  }
  return { entries, bits: stored.count(index.count), same: !outside && found.equals(stored, index.count) };
}

/** A tip of one side, tags peeled into roots of their own. */
interface Root {
  id: Uint8Array;
  type: number;
  name: string;
}

/**
 * The bitmapped objects with git's extended index: positions past them for what the walks meet
 * outside (numbered in `ext`, shared by both sides' walks of one request).
 */
class BitmapIndex {
  readonly count: number;
  readonly ext: ObjectTable;

  constructor(readonly objects: BitmappedObjects) {
    this.count = objects.count;
    this.ext = new ObjectTable(objects.hashLength, 64);
  }

  /** git's bitmap_position: the object's bit, or -1 if it has none yet. */
  position(id: Uint8Array): number {
    const pos = this.objects.position(id);
    if (pos >= 0) return pos;
    const e = this.ext.find(id);
    return e >= 0 ? this.count + e : -1;
  }

  /** The bit of an object outside the bitmapped ones (git's ext_index_add_object). */
  extPosition(id: Uint8Array, type: number, hash: number): number {
    const e = this.ext.intern(id);
    if (this.ext.added) {
      this.ext.types[e] = type;
      this.ext.nameHashes[e] = hash;
    }
    return this.count + e;
  }

  /** The objects commit `id` reaches, when the bitmap has an entry for it (shared: do not change it). */
  commitSet(id: Uint8Array): Bitset | undefined {
    return this.objects.commitSet(id);
  }
}

/** git's find_objects: the set `roots` reach, walking only what no bitmap (nor `seen`) covers. */
function findObjects(index: BitmapIndex, roots: readonly Root[], seen: Bitset | undefined, walk: RevWalk, missing: MissingAction): Bitset {
  const base = new Bitset(index.count);
  const unmapped: Root[] = [];
  for (const root of roots) {
    const set = root.type === OBJ_COMMIT ? index.commitSet(root.id) : undefined;
    if (set !== undefined) base.or(set);
    else unmapped.push(root);
  }
  const tips: RevTip[] = [];
  for (const root of unmapped) {
    const pos = index.position(root.id);
    if (pos < 0 || !base.get(pos)) tips.push({ id: Buffer.from(root.id), uninteresting: false, name: root.name, path: root.name });
  }
  if (tips.length === 0) return base;
  const t = walk.table;
  const covered = (pos: number): boolean => (seen !== undefined && seen.get(pos)) || base.get(pos);
  // git's should_include: a commit already covered, or with a bitmap (ORed in), stops the walk.
  walk.include = (n) => {
    const id = t.id(n);
    let pos = index.position(id);
    if (pos < 0) pos = index.extPosition(id, OBJ_COMMIT, 0);
    if (covered(pos)) return false;
    const set = index.commitSet(id);
    if (set !== undefined) {
      base.or(set);
      return false;
    }
    base.set(pos);
    return true;
  };
  walk.addTips(tips);
  walk.walk();
  listObjects(
    walk,
    (n, type) => {
      // git's show_object for bitmaps; commits were placed by `include`.
      if (type === OBJ_COMMIT) return;
      const id = t.id(n);
      let pos = index.position(id);
      if (pos < 0) pos = index.extPosition(id, type, t.nameHashes[n] as number);
      base.set(pos);
    },
    {
      missing,
      // git's should_include_obj: a tree already covered is not entered.
      includeTree: (n) => {
        const pos = index.position(t.id(n));
        return pos < 0 || !covered(pos);
      },
    },
  );
  return base;
}
