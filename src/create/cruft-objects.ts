import { basename } from 'node:path';
import { PackwrightError } from '../errors/packwright-error.js';
import { readMtimes } from '../idx/mtimes.js';
import type { StoreHandle } from '../odb/store-handle.js';
import type { StorePack } from '../odb/store-pack.js';
import { Flag, ObjectTable } from '../walk/object-table.js';
import { isLocal, looseSeconds, packSeconds, storedType, walkReachable } from '../walk/unreachable-objects.js';
import { typeNumber } from '../objects/object-type.js';

/**
 * What a cruft pack is made of (git's --cruft, builtin/pack-objects.c read_cruft_objects): the
 * objects a repack is about to delete and did not pack again, each with a modification time
 * (its pack's, the one a cruft pack recorded for it, or its loose file's), so that `git prune`
 * can later expire them by age, as it would loose objects.
 */
export interface CruftOptions {
  /**
   * Packs whose objects are kept elsewhere (the packs the repack just wrote, and kept ones), by
   * file name (`pack-<hash>.pack`): the cruft pack repeats none of their objects. Packs named in
   * neither list are treated the same way.
   */
  freshPacks: readonly string[];
  /** Packs about to be deleted, by file name: their objects not found in a fresh pack are cruft. */
  discardPacks: readonly string[];
  /**
   * git's --cruft-expiration (seconds since the epoch; 0 or absent: none): only objects newer than
   * this, and what they reach, are kept; older ones are left out, to be deleted with their packs.
   */
  expiration?: number | undefined;
}

export interface CruftObjects {
  table: ObjectTable;
  /** Object numbers in the order met (git's to_pack order). */
  order: number[];
  /** By object number: its modification time, seconds. */
  mtimes: number[];
}

export function enumerateCruft(handle: StoreHandle, options: CruftOptions): CruftObjects {
  const packs = handle.packs();
  const byName = new Map(packs.map((p) => [basename(p.packPath), p]));
  for (const name of [...options.freshPacks, ...options.discardPacks]) {
    if (!byName.has(name)) throw new PackwrightError('INVALID_ARGUMENT', `could not find pack '${name}'`);
  }
  const discard = new Set(options.discardPacks);
  const fresh = new Set(options.freshPacks);
  // git marks every pack but the discarded ones kept in core while it enumerates; for the walk
  // of recent objects only the fresh ones (so that unknown packs do not stop it early).
  let keptInCore = packs.filter((p) => !discard.has(basename(p.packPath)));
  const inKept = (id: Uint8Array): boolean => keptInCore.some((p) => (p.tryIndex()?.find(id) ?? -1) >= 0);

  const H = handle.hashLength;
  const table = new ObjectTable(H, 1024);
  const order: number[] = [];
  const mtimes: number[] = [];
  // git's add_cruft_object_entry: a new object unless a kept pack has it (want_object_in_pack), a
  // later sighting only raising its time. (A blob that no pack and no loose file holds, which git
  // also leaves out, is never shown: the walk passes over what it cannot find.)
  const add = (id: Uint8Array, type: number, mtime: number): void => {
    const known = table.find(id);
    if (known >= 0) {
      if (mtime > (mtimes[known] as number)) mtimes[known] = mtime;
      return;
    }
    if (inKept(id)) return;
    const n = table.intern(id);
    table.types[n] = type;
    table.mark(n, Flag.LISTED);
    mtimes[n] = mtime;
    order.push(n);
  };
  const mtimeTables = new Map<StorePack, Uint32Array | undefined>();
  const packedTime = (pack: StorePack, position: number): number => {
    if (!pack.markers.mtimes) return packSeconds(pack);
    if (!mtimeTables.has(pack)) {
      const index = pack.index;
      mtimeTables.set(pack, readMtimes(pack.packPath.replace(/\.pack$/, '.mtimes'), handle.format, index.count));
    }
    return (mtimeTables.get(pack) as Uint32Array)[position] as number;
  };
  const looseDir = handle.store.objectsDir;
  const expiration = options.expiration ?? 0;

  if (expiration === 0) {
    // enumerate_cruft_objects: the objects of the discarded local packs, then every loose object.
    for (const pack of packs) {
      if (!isLocal(handle, pack) || pack.markers.keep || keptInCore.includes(pack)) continue;
      const index = pack.tryIndex();
      if (index === undefined) continue;
      for (const position of index.packOrder().positions) add(index.id(position), typeNumber(pack.typeAt(position)), packedTime(pack, position));
    }
    for (const id of handle.looseIds(looseDir)) {
      const mtime = looseSeconds(looseDir, id);
      const type = storedType(handle, id);
      if (mtime !== undefined && type > 0) add(id, type, mtime);
    }
    return { table, order, mtimes };
  }

  // enumerate_and_traverse_cruft_objects: what is newer than the date, then all it reaches.
  const tips: Uint8Array[] = [];
  for (const id of handle.looseIds(looseDir)) {
    const mtime = looseSeconds(looseDir, id);
    const type = storedType(handle, id);
    if (mtime === undefined || type <= 0 || mtime <= expiration || inKept(id)) continue;
    add(id, type, mtime);
    tips.push(id);
  }
  for (const pack of packs) {
    if (!isLocal(handle, pack) || keptInCore.includes(pack)) continue;
    const index = pack.tryIndex();
    if (index === undefined) continue;
    for (const position of index.packOrder().positions) {
      const mtime = packedTime(pack, position);
      const id = index.id(position);
      if (mtime <= expiration || inKept(id)) continue;
      add(id, typeNumber(pack.typeAt(position)), mtime);
      tips.push(id);
    }
  }
  keptInCore = packs.filter((p) => fresh.has(basename(p.packPath)));
  walkReachable(handle, tips, inKept, (id, type) => add(id, type, expiration));
  return { table, order, mtimes };
}
