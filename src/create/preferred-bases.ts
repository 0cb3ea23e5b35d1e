import { OBJ_COMMIT, OBJ_TREE, typeNumber } from '../objects/object-type.js';
import { TreeCursor } from '../objects/tree.js';
import type { StoreHandle } from '../odb/store-handle.js';
import { Flag, foldNameHash, type ObjectTable } from '../walk/object-table.js';

const SLASH = 0x2f;

/**
 * Marks what the trees `roots` hold (and the roots) as known to the receiver and usable as thin
 * delta bases (Flag.UNINTERESTING | Flag.PREFERRED), each with the path-name hash of where it sits,
 * so the delta window sorts it next to the objects of the same path (git's preferred bases: the
 * trees of excluded boundary commits, or the `-<id>` lines of pack-objects' input). Objects being
 * packed are left alone; a root the store lacks is passed over.
 *
 * With `along` (the root trees of the commits being packed), an entry of the roots' trees is
 * marked (and a subtree entered) only where one of those trees has another object at the same
 * path: the old versions of what is sent sit on the paths that changed, as git finds its bases by
 * looking up each packed object's path in the boundary trees (add_preferred_base_object). Without
 * it, everything the roots reach is marked (a fetch of 10 commits of gitoxide read its ~1,500
 * boundary trees to use a few; one of git.git marked the ~470 entries of each boundary root tree,
 * and looking them all up read the 6 MB of the idx's ids).
 */
export function markPreferredBases(handle: StoreHandle, table: ObjectTable, roots: readonly number[], along?: readonly number[]): void {
  const cursor = new TreeCursor(handle.hashLength);
  /** Trees at one path: those of the roots' side, those of `along`'s, and the hash of "<path>/" (0 at the top). */
  interface PathTrees { base: number[]; packed: number[]; prefix: number }
  const H = handle.hashLength;
  const start: PathTrees = { base: [], packed: along !== undefined ? [...new Set(along)] : [], prefix: 0 };
  for (const n of roots) {
    if (table.is(n, Flag.PREFERRED | Flag.LISTED)) continue;
    table.mark(n, Flag.UNINTERESTING | Flag.PREFERRED);
    start.base.push(n);
  }
  const stack: PathTrees[] = [start];
  while (stack.length > 0) {
    const { base, packed, prefix } = stack.pop() as PathTrees;
    // What the packed side has here, by name: the ids (as latin1 text) and the subtrees (numbered),
    // unless it has nothing to compare with.
    let packedHere: Map<string, { ids: string[]; trees: number[] }> | undefined;
    if (along !== undefined) {
      packedHere = new Map();
      for (const n of packed) {
        const obj = readTree(handle, table, n);
        if (obj === undefined) continue;
        cursor.reset(obj);
        while (cursor.next()) {
          const name = obj.toString('latin1', cursor.nameStart, cursor.nameEnd);
          const id = obj.toString('latin1', cursor.idStart, cursor.idStart + H);
          let at = packedHere.get(name);
          if (at === undefined) packedHere.set(name, (at = { ids: [], trees: [] }));
          if (!at.ids.includes(id)) at.ids.push(id);
          if (cursor.objectType === OBJ_TREE) {
            const c = table.intern(obj, cursor.idStart);
            if (!at.trees.includes(c)) at.trees.push(c);
          }
        }
      }
    }
    const next = new Map<string, PathTrees>();
    for (const n of base) {
      const obj = readTree(handle, table, n);
      if (obj === undefined) continue;
      cursor.reset(obj);
      while (cursor.next()) {
        const type = cursor.objectType;
        if (type === OBJ_COMMIT) continue;
        let packedTrees: number[] = [];
        if (packedHere !== undefined) {
          // Nothing new at this path (the packed side has only this object here, or nothing):
          // no base is wanted here, nor under it.
          const at = packedHere.get(obj.toString('latin1', cursor.nameStart, cursor.nameEnd));
          if (at === undefined) continue;
          const id = obj.toString('latin1', cursor.idStart, cursor.idStart + H);
          if (at.ids.every((p) => p === id)) continue;
          packedTrees = at.trees;
        }
        const c = table.intern(obj, cursor.idStart);
        if (table.types[c] === 0) table.types[c] = type;
        let hash = prefix;
        for (let i = cursor.nameStart; i < cursor.nameEnd; i++) hash = foldNameHash(hash, obj[i] as number);
        const known = table.is(c, Flag.PREFERRED | Flag.LISTED);
        if (!known) {
          table.mark(c, Flag.UNINTERESTING | Flag.PREFERRED);
          table.nameHashes[c] = hash;
        }
        if (type !== OBJ_TREE) continue;
        // Without a packed side to follow, a tree met before was entered where it was first met.
        if (packedHere === undefined && known) continue;
        const name = obj.toString('latin1', cursor.nameStart, cursor.nameEnd);
        let at = next.get(name);
        if (at === undefined) next.set(name, (at = { base: [], packed: packedTrees, prefix: foldNameHash(hash, SLASH) }));
        if (!at.base.includes(c)) at.base.push(c);
      }
    }
    for (const at of next.values()) stack.push(at);
  }
}

/** The bytes of tree `n` (typed in `table` as the store has it); undefined when it is not a tree or not there. */
function readTree(handle: StoreHandle, table: ObjectTable, n: number): Buffer | undefined {
  const location = handle.locate(table.id(n));
  if (location === undefined) return undefined;
  const obj = handle.readAt(location);
  if (table.types[n] === 0) table.types[n] = typeNumber(obj.type);
  return obj.type === 'tree' ? obj.data : undefined;
}
