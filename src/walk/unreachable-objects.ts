import { objectLinks } from '../objects/object-links.js';
import { isNotFound } from '../io/read-dir-if-present.js';
import { existsSync, statSync } from 'node:fs';
import { basename, join, sep } from 'node:path';
import { toHex } from '../hash/hex.js';
import { writeLoose } from '../loose/write-loose.js';
import { PackwrightError } from '../errors/packwright-error.js';
import { OBJ_COMMIT, OBJ_TAG, OBJ_TREE, TYPE_NAMES, typeNumber } from '../objects/object-type.js';
import { TreeCursor } from '../objects/tree.js';
import type { StoreHandle } from '../odb/store-handle.js';
import type { StorePack } from '../odb/store-pack.js';
import { Flag, ObjectTable } from './object-table.js';

/**
 * What `git repack -A` and `-k` ask of pack-objects beyond the objects reachable from the refs
 * (builtin/pack-objects.c: add_objects_in_unpacked_packs, add_unreachable_loose_objects,
 * loosen_unused_packed_objects): the unreachable objects of the packs about to be deleted are
 * either packed too (--keep-unreachable, --pack-loose-unreachable) or written out as loose
 * objects (--unpack-unreachable), so that `repack -d` loses nothing `git prune` would not.
 */

/** The packs git's FOR_EACH_OBJECT_LOCAL_ONLY with both SKIP_*_KEPT_PACKS flags walks: local, no `.keep`, not named by --keep-pack. */
function isRepacked(handle: StoreHandle, pack: StorePack, keepPacks: ReadonlySet<string>): boolean {
  return isLocal(handle, pack) && !pack.markers.keep && !keepPacks.has(basename(pack.packPath));
}

/** A pack of the store's own objects directory, not an alternate's (git's pack_local). */
export function isLocal(handle: StoreHandle, pack: StorePack): boolean {
  return pack.packPath.startsWith(handle.store.objectsDir + sep);
}

/** A pack's modification time in whole seconds, as git's `p->mtime`. */
export function packSeconds(pack: StorePack): number {
  return Math.floor(pack.mtime / 1000);
}

/**
 * git's --keep-unreachable: every object of the packs being repacked that the table does not list
 * yet, in pack order (packs in the store's order). Each is interned and marked LISTED with its
 * type; the new object numbers are returned.
 */
export function addObjectsOfRepackedPacks(handle: StoreHandle, table: ObjectTable, keepPacks: ReadonlySet<string>): number[] {
  const added: number[] = [];
  for (const pack of handle.packs()) {
    if (!isRepacked(handle, pack, keepPacks)) continue;
    const index = pack.tryIndex();
    if (index === undefined) continue;
    for (const position of index.packOrder().positions) add(table, index.id(position), () => typeNumber(pack.typeAt(position)), added);
  }
  return added;
}

/** git's --pack-loose-unreachable: every loose object of the repository's own objects directory the table does not list yet. */
export function addLooseObjects(handle: StoreHandle, table: ObjectTable): number[] {
  const added: number[] = [];
  const dir = handle.looseDirs()[0];
  if (dir === undefined) return added;
  for (const id of handle.looseIds(dir)) {
    add(table, id, () => storedType(handle, id), added);
  }
  return added;
}

/** The type of the stored object `id` (found without listing the directories again), or -1. */
export function storedType(handle: StoreHandle, id: Uint8Array): number {
  const at = handle.locate(id, { refresh: false });
  return at === undefined ? -1 : typeNumber(handle.typeAt(at));
}

function add(table: ObjectTable, id: Uint8Array, typeOf: () => number, added: number[]): void {
  const n = table.intern(id);
  if (table.is(n, Flag.LISTED)) return;
  const type = typeOf();
  // Gone since it was listed (a concurrent prune): nothing to pack.
  if (type < 0) return;
  table.types[n] = type;
  table.unmark(n, Flag.MISSING);
  table.mark(n, Flag.LISTED);
  added.push(n);
}

/**
 * The objects git's add_unseen_recent_objects_to_traversal and the walk after it record as recent:
 * every local object not in the pack whose file (loose) or pack is newer than `expiration`
 * (seconds), and everything it reaches that is not in the pack either. Objects the pack holds are
 * not followed: all they reach is in it too.
 */
export function recentObjects(handle: StoreHandle, table: ObjectTable, inPack: (n: number) => boolean, expiration: number): ObjectTable {
  const recent = new ObjectTable(handle.hashLength, 1024);
  const packed = (id: Uint8Array): boolean => {
    const n = table.find(id);
    return n >= 0 && inPack(n);
  };
  const tips: Uint8Array[] = [];
  const dir = handle.looseDirs()[0];
  if (dir !== undefined) {
    for (const id of handle.looseIds(dir)) {
      const mtime = looseSeconds(dir, id);
      if (mtime !== undefined && mtime > expiration && !packed(id)) tips.push(id);
    }
  }
  for (const pack of handle.packs()) {
    if (!isLocal(handle, pack) || packSeconds(pack) <= expiration) continue;
    const index = pack.tryIndex();
    if (index === undefined) continue;
    for (let i = 0; i < index.count; i++) {
      const id = index.id(i);
      if (!packed(id)) tips.push(id);
    }
  }
  walkReachable(handle, tips, packed, (id) => void recent.intern(id));
  return recent;
}

/** A loose object's modification time in whole seconds, or undefined when it is gone. */
export function looseSeconds(dir: string, id: Uint8Array): number | undefined {
  const hex = toHex(id);
  try {
    return Math.floor(statSync(join(dir, hex.slice(0, 2), hex.slice(2))).mtimeMs / 1000);
  } catch (e) {
    if (isNotFound(e)) return undefined; // removed meanwhile (git: ENOENT is fine)
    throw e;
  }
}

/**
 * Every object reachable from `tips` (them included), each shown once with its type, without
 * going into those `stop` says (git's include_check) and passing over what the store lacks (git's
 * ignore_missing_links). Submodule commits (gitlinks) are another repository's.
 */
export function walkReachable(handle: StoreHandle, tips: readonly Uint8Array[], stop: (id: Uint8Array) => boolean, show: (id: Uint8Array, type: number) => void): void {
  const H = handle.hashLength;
  const seen = new ObjectTable(H, 1024);
  const queue: Uint8Array[] = [];
  const cursor = new TreeCursor(H);
  const push = (src: Uint8Array, at = 0): void => {
    const id = src.subarray(at, at + H);
    if (stop(id)) return;
    seen.intern(id);
    if (seen.added) queue.push(Buffer.from(id));
  };
  for (const id of tips) push(id);
  while (queue.length > 0) {
    const id = queue.pop() as Uint8Array;
    const at = handle.locate(id, { refresh: false });
    if (at === undefined) continue;
    const type = typeNumber(handle.typeAt(at));
    show(id, type);
    if (type === OBJ_COMMIT || type === OBJ_TREE || type === OBJ_TAG) forEachLink(id, type, handle.readAt(at).data, cursor, push);
  }
}

/**
 * Calls `link(src, at)` for each object the commit, tree or tag `id` names, its id at
 * `src[at..at+H)`: a commit's tree and parents, a tag's object, a tree's entries but submodule
 * commits (gitlinks), which are another repository's (objects/object-links.ts, as fsck reads
 * them). An object whose links cannot be read is OBJECT_CORRUPT: a walk that needs them stops.
 */
export function forEachLink(id: Uint8Array, type: number, data: Uint8Array, cursor: TreeCursor, link: (src: Uint8Array, at: number) => void): void {
  const error = objectLinks(type, data, cursor.hashLength, (src, at) => link(src, at), cursor);
  if (error !== undefined) throw new PackwrightError('OBJECT_CORRUPT', `${TYPE_NAMES[type] ?? 'object'} ${toHex(id)}: ${error}`);
}

export interface LoosenOptions {
  /** Local packs named as kept (--keep-pack), besides those with a `.keep` file. */
  keepPacks: ReadonlySet<string>;
  /**
   * git's --unpack-unreachable=<time>, in seconds: an object of a pack not newer than this, and
   * not reachable from a recent object, is not worth keeping (git prune would remove it anyway).
   * 0: every object is loosened.
   */
  expiration: number;
  /** The recent objects (`recentObjects`), with an expiration. */
  recent?: ObjectTable | undefined;
}

/**
 * git's --unpack-unreachable (loosen_unused_packed_objects): each object of the packs being
 * repacked that the new pack does not hold, nor a kept or non-local pack, is written as a loose
 * object with its pack's modification time, unless it is too old to keep (`expiration`) or a loose
 * copy exists. Returns how many were written.
 */
export function loosenUnusedObjects(handle: StoreHandle, table: ObjectTable, inPack: (n: number) => boolean, options: LoosenOptions): number {
  const packs = handle.packs();
  const keepers = packs.filter((p) => !isLocal(handle, p) || p.markers.keep || options.keepPacks.has(basename(p.packPath)));
  const dirs = handle.looseDirs();
  const objectsDir = handle.store.objectsDir;
  let loosened = 0;
  for (const pack of packs) {
    if (!isRepacked(handle, pack, options.keepPacks)) continue;
    const index = pack.tryIndex();
    if (index === undefined) continue;
    const mtime = packSeconds(pack);
    for (let i = 0; i < index.count; i++) {
      const id = index.id(i);
      const n = table.find(id);
      if (n >= 0 && inPack(n)) continue;
      if (keepers.some((k) => (k.tryIndex()?.find(id) ?? -1) >= 0)) continue;
      if (options.expiration !== 0 && mtime <= options.expiration && (options.recent?.find(id) ?? -1) < 0) continue;
      const hex = toHex(id);
      if (dirs.some((d) => existsSync(join(d, hex.slice(0, 2), hex.slice(2))))) continue;
      const { type, data } = pack.read(i);
      if (writeLoose(objectsDir, hex, type, data, { mtime })) loosened++;
    }
  }
  return loosened;
}
