import { toHex } from '../hash/hex.js';
import { OBJ_BLOB, OBJ_COMMIT, OBJ_TAG, OBJ_TREE } from '../objects/object-type.js';
import { TreeCursor } from '../objects/tree.js';
import type { StoreHandle } from '../odb/store-handle.js';
import type { StorePack } from '../odb/store-pack.js';
import type { ObjectLocations } from './locate-objects.js';
import type { ObjectFilter } from './object-filter.js';
import { Flag, type ObjectTable } from './object-table.js';

/** What the walk knew that a filter needs besides the objects. */
export interface FilterContext {
  /** Objects named by the caller (tips, and the commits tags peel to): no filter leaves them out (git's USER_GIVEN). */
  given: ReadonlySet<number>;
  /** The root trees of the commits walked (depth 0 for `tree:<depth>`). */
  rootTrees: () => Iterable<number>;
}

/**
 * git's `--filter` on the counted objects (list-objects-filter.c): the listed objects a filter
 * keeps, in their order. What it leaves out loses its LISTED mark, so that nothing later (a reused
 * delta, an included tag) takes it for part of the pack.
 */
export function filterObjects(handle: StoreHandle, table: ObjectTable, listed: Int32Array, locations: ObjectLocations, filter: ObjectFilter, context: FilterContext): Int32Array {
  const inListed = new Uint8Array(table.count);
  for (const o of listed) inListed[o] = 1;
  const depthKept = new Map<number, Uint8Array>();
  const keeps = (f: ObjectFilter, o: number, type: number): boolean => {
    switch (f.kind) {
      case 'blob:none':
        return type !== OBJ_BLOB;
      case 'blob:limit': {
        // A blob this repository lacks is kept, its size unknown (git: "be conservative").
        if (type !== OBJ_BLOB || table.is(o, Flag.MISSING)) return true;
        const k = locations.pack[o] as number;
        const size = k >= 0 ? (locations.packs[k] as StorePack).info(locations.position[o] as number).size : handle.info(table.id(o)).size;
        return size < f.bytes;
      }
      case 'tree': {
        if (type !== OBJ_TREE && type !== OBJ_BLOB) return true;
        let kept = depthKept.get(f.depth);
        if (kept === undefined) {
          kept = withinDepth(handle, table, inListed, f.depth, context);
          depthKept.set(f.depth, kept);
        }
        return kept[o] === 1;
      }
      case 'object:type':
        return type === f.type;
      case 'combine':
        return f.filters.every((sub) => keeps(sub, o, type));
    }
  };
  return listed.filter((o) => {
    if (context.given.has(o) || keeps(filter, o, table.types[o] as number)) return true;
    table.unmark(o, Flag.LISTED);
    return false;
  });
}

/** Whether `filter` keeps no tree that was not named as a tip (so the walk need not read them). */
export function keepsNoTrees(filter: ObjectFilter): boolean {
  switch (filter.kind) {
    case 'tree':
      return filter.depth === 0;
    case 'object:type':
      return filter.type === OBJ_COMMIT || filter.type === OBJ_TAG;
    case 'combine':
      return filter.filters.some(keepsNoTrees);
    default:
      return false;
  }
}

/**
 * The trees and blobs `tree:<depth>` keeps: those met at a depth below `depth` on some path from
 * a walked commit's root tree (depth 0), through trees the walk listed (git does not enter
 * uninteresting trees, and re-enters a tree met again nearer the root: filter_trees_depth). A tree
 * named as a tip counts as depth -1: git does not filter it, nor count it, so its entries are at
 * depth 0. Levels are taken in order, so each tree is read once, at its least depth, and only if
 * it is kept.
 */
function withinDepth(handle: StoreHandle, table: ObjectTable, inListed: Uint8Array, depth: number, context: FilterContext): Uint8Array {
  const kept = new Uint8Array(table.count);
  const least = new Int32Array(table.count).fill(0x7fffffff);
  const cursor = new TreeCursor(table.hashLength);
  // Level -1: the trees named as tips; the walked commits' root trees join at level 0.
  let level: number[] = [];
  for (const n of context.given) {
    if (table.types[n] === OBJ_TREE && inListed[n] === 1) {
      least[n] = -1;
      level.push(n);
    }
  }
  for (let d = -1; d < depth; d++) {
    if (d === 0) {
      for (const n of context.rootTrees()) {
        if (inListed[n] === 1 && (least[n] as number) > 0) {
          least[n] = 0;
          level.push(n);
        }
      }
    }
    if (level.length === 0 && d >= 0) break;
    const next: number[] = [];
    for (const t of level) {
      kept[t] = 1;
      if (table.is(t, Flag.MISSING)) continue;
      const data = handle.read(table.id(t)).data;
      cursor.reset(data, () => toHex(table.id(t)));
      while (cursor.next()) {
        const type = cursor.objectType;
        if (type === OBJ_COMMIT) continue; // a submodule's commit
        const n = table.find(data, cursor.idStart);
        if (n < 0 || inListed[n] !== 1) continue;
        if (type === OBJ_TREE) {
          if ((least[n] as number) > d + 1) {
            least[n] = d + 1;
            next.push(n);
          }
        } else if (d + 1 < depth) {
          kept[n] = 1;
        }
      }
    }
    level = next;
  }
  return kept;
}
