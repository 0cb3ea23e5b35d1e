import { OBJ_COMMIT, OBJ_TREE, typeNumber } from '../objects/object-type.js';
import { TreeCursor } from '../objects/tree.js';
import type { StoreHandle } from '../odb/store-handle.js';
import { Flag, foldNameHash, type ObjectTable } from '../walk/object-table.js';

const SLASH = 0x2f;

/**
 * Marks what the trees `roots` reach (and the roots) as known to the receiver and usable as thin
 * delta bases (Flag.UNINTERESTING | Flag.PREFERRED), each with the path-name hash of where it sits,
 * so the delta window sorts it next to the objects of the same path (git's preferred bases: the
 * trees of excluded boundary commits, or the `-<id>` lines of pack-objects' input). Objects being
 * packed are left alone; a root the store lacks is passed over.
 */
export function markPreferredBases(handle: StoreHandle, table: ObjectTable, roots: readonly number[]): void {
  const cursor = new TreeCursor(handle.hashLength);
  // Each stacked tree with the hash of "<its path>/" (0 for a root: its entries' paths are their names).
  const stack: { n: number; prefix: number }[] = [];
  for (const n of roots) {
    if (table.is(n, Flag.PREFERRED | Flag.LISTED)) continue;
    table.mark(n, Flag.UNINTERESTING | Flag.PREFERRED);
    stack.push({ n, prefix: 0 });
  }
  while (stack.length > 0) {
    const { n, prefix } = stack.pop() as { n: number; prefix: number };
    const location = handle.locate(table.id(n));
    if (location === undefined) continue;
    const obj = handle.readAt(location);
    if (table.types[n] === 0) table.types[n] = typeNumber(obj.type);
    if (obj.type !== 'tree') continue;
    cursor.reset(obj.data);
    while (cursor.next()) {
      const type = cursor.objectType;
      if (type === OBJ_COMMIT) continue;
      const c = table.intern(obj.data, cursor.idStart);
      if (table.types[c] === 0) table.types[c] = type;
      if (table.is(c, Flag.PREFERRED | Flag.LISTED)) continue;
      let hash = prefix;
      for (let i = cursor.nameStart; i < cursor.nameEnd; i++) hash = foldNameHash(hash, obj.data[i] as number);
      table.mark(c, Flag.UNINTERESTING | Flag.PREFERRED);
      table.nameHashes[c] = hash;
      if (type === OBJ_TREE) stack.push({ n: c, prefix: foldNameHash(hash, SLASH) });
    }
  }
}
