import type { StorePack } from '../odb/store-pack.js';
import type { StoreHandle } from '../odb/store-handle.js';
import { Flag, type ObjectTable } from './object-table.js';
import { drain, type Steps } from './sliced-steps.js';

/** Where each listed object of a table is stored. */
export interface ObjectLocations {
  /** The packs named by `pack`. */
  packs: StorePack[];
  /** By object number: the index of its pack in `packs`, LOOSE, or NOWHERE. */
  pack: Int32Array;
  /** By object number: its position in that pack's index. */
  position: Int32Array;
  /** Objects stored in more than one pack: the other copies (see choosePackCopies). */
  otherCopies: Map<number, { pack: number; position: number }[]>;
}

/** Where-code of an object found loose. */
export const LOOSE = -1;
/** Where-code of an object found nowhere. */
export const NOWHERE = -2;

/** Ids read from an index at a time when its ids are not in memory. */
const BLOCK = 4096;

/**
 * Finds every listed object of `table` in the store: each pack's index is read through once and
 * each of its ids looked up in the table (a hash probe), which is ~30× cheaper than a bisection of
 * every index for every object. An object in several packs is placed in the first pack in the
 * handle's order (newest first, as git searches), and its other copies are kept for the plan to
 * choose from (a delta is worth more than a whole copy). What no pack holds is looked up one by one
 * (loose objects, a pack added since), and what the store lacks gets Flag.MISSING and NOWHERE.
 */
export function locateObjects(handle: StoreHandle, table: ObjectTable): ObjectLocations {
  return drain(locateObjectsSteps(handle, table));
}

/** `locateObjects` as steps (a block of index ids each), for a caller on an event loop (`drainSliced`). */
export function* locateObjectsSteps(handle: StoreHandle, table: ObjectTable): Steps<ObjectLocations> {
  const H = table.hashLength;
  const n = table.count;
  const pack = new Int32Array(n).fill(NOWHERE);
  const position = new Int32Array(n);
  const packs: StorePack[] = [];
  const otherCopies = new Map<number, { pack: number; position: number }[]>();
  const scratch = Buffer.allocUnsafe(BLOCK * H);
  let unplaced = 0;
  // Objects to send, and preferred bases (their data may be read for a delta).
  const wanted = Flag.LISTED | Flag.PREFERRED;
  for (let i = 0; i < n; i++) if (table.is(i, wanted)) unplaced++;
  for (const p of handle.packs()) {
    const index = p.tryIndex();
    if (index === undefined || !p.tryOpen()) continue;
    const k = packs.length;
    let used = false;
    for (const { first, count, ids } of index.idBlocks(BLOCK, scratch)) {
      yield;
      for (let j = 0; j < count; j++) {
        const o = table.find(ids, j * H);
        if (o < 0 || !table.is(o, wanted)) continue;
        if (pack[o] !== NOWHERE) {
          let copies = otherCopies.get(o);
          if (copies === undefined) otherCopies.set(o, (copies = []));
          copies.push({ pack: k, position: first + j });
          used = true;
          continue;
        }
        pack[o] = k;
        position[o] = first + j;
        used = true;
        unplaced--;
      }
    }
    if (used) packs.push(p);
  }
  const located: ObjectLocations = { packs, pack, position, otherCopies };
  for (let o = 0; o < n && unplaced > 0; o++) {
    if (pack[o] !== NOWHERE || !table.is(o, wanted)) continue;
    unplaced--;
    placeByLookup(handle, table, located, o, true);
    // A loose object costs a file lookup or two.
    if ((unplaced & 255) === 0) yield;
  }
  return located;
}

/** Places object `o` by a lookup of its own (a loose object, a pack added since), or marks it missing. */
function placeByLookup(handle: StoreHandle, table: ObjectTable, located: ObjectLocations, o: number, refresh: boolean): void {
  const found = handle.locate(table.id(o), { refresh });
  if (found === undefined) {
    table.mark(o, Flag.MISSING);
  } else if (found.kind === 'loose') {
    located.pack[o] = LOOSE;
  } else {
    let k = located.packs.indexOf(found.pack);
    if (k < 0) k = located.packs.push(found.pack) - 1;
    located.pack[o] = k;
    located.position[o] = found.position;
  }
}

/**
 * `previous` extended to the objects the table gained or came to want since (included tags,
 * preferred bases): those are looked up one by one, without listing the directories again for a
 * miss, instead of passing over every index once more. Their other copies are not collected.
 */
export function locateAdded(handle: StoreHandle, table: ObjectTable, previous: ObjectLocations): ObjectLocations {
  const n = table.count;
  const pack = new Int32Array(n).fill(NOWHERE);
  pack.set(previous.pack);
  const position = new Int32Array(n);
  position.set(previous.position);
  const located: ObjectLocations = { packs: [...previous.packs], pack, position, otherCopies: previous.otherCopies };
  const wanted = Flag.LISTED | Flag.PREFERRED;
  for (let o = 0; o < n; o++) {
    if (pack[o] === NOWHERE && table.is(o, wanted) && !table.is(o, Flag.MISSING)) placeByLookup(handle, table, located, o, false);
  }
  return located;
}
