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
 * With `along` (the root trees of the commits being packed), a subtree of the roots is entered
 * only where one of those trees has another tree at the same path: the old versions of what is
 * sent sit on the paths that changed, as git finds its bases by looking up each packed object's
 * path in the boundary trees (add_preferred_base_object). Without it, everything the roots reach
 * is marked (a fetch of 10 commits of gitoxide read its ~1,500 boundary trees to use a few).
 */
export function markPreferredBases(handle: StoreHandle, table: ObjectTable, roots: readonly number[], along?: readonly number[]): void {
  const cursor = new TreeCursor(handle.hashLength);
  /** Trees at one path: those of the roots' side, those of `along`'s, and the hash of "<path>/" (0 at the top). */
  interface PathTrees { base: number[]; packed: number[]; prefix: number }
  const start: PathTrees = { base: [], packed: along !== undefined ? [...new Set(along)] : [], prefix: 0 };
  for (const n of roots) {
    if (table.is(n, Flag.PREFERRED | Flag.LISTED)) continue;
    table.mark(n, Flag.UNINTERESTING | Flag.PREFERRED);
    start.base.push(n);
  }
  const stack: PathTrees[] = [start];
  while (stack.length > 0) {
    const { base, packed, prefix } = stack.pop() as PathTrees;
    // The subtrees the packed side has here, by name, unless it has none to compare with.
    let packedSubtrees: Map<string, number[]> | undefined;
    if (along !== undefined) {
      packedSubtrees = new Map();
      for (const n of packed) {
        const obj = readTree(handle, table, n);
        if (obj === undefined) continue;
        cursor.reset(obj);
        while (cursor.next()) {
          if (cursor.objectType !== OBJ_TREE) continue;
          const name = obj.toString('latin1', cursor.nameStart, cursor.nameEnd);
          const c = table.intern(obj, cursor.idStart);
          const list = packedSubtrees.get(name);
          if (list === undefined) packedSubtrees.set(name, [c]);
          else if (!list.includes(c)) list.push(c);
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
        const name = obj.toString('latin1', cursor.nameStart, cursor.nameEnd);
        let packedHere: number[] = [];
        if (packedSubtrees !== undefined) {
          packedHere = packedSubtrees.get(name) ?? [];
          // Nothing new under this path: nothing there needs a base.
          if (packedHere.every((p) => p === c)) continue;
        } else if (known) {
          // Entered already, from where it was first met.
          continue;
        }
        let at = next.get(name);
        if (at === undefined) next.set(name, (at = { base: [], packed: packedHere, prefix: foldNameHash(hash, SLASH) }));
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
