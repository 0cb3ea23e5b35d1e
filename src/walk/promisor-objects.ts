import { OBJ_COMMIT, OBJ_TAG, OBJ_TREE, typeNumber } from '../objects/object-type.js';
import { TreeCursor } from '../objects/tree.js';
import type { StoreHandle } from '../odb/store-handle.js';
import { Flag, type ObjectTable } from './object-table.js';
import { forEachLink } from './unreachable-objects.js';

/**
 * git's --exclude-promisor-objects, before the walk (prepare_revision_walk): every object of a
 * promisor pack (one with a `.promisor` file, fetched from a partial clone's remote) is marked seen
 * and excluded, so the walk neither lists it nor goes past it.
 */
export function markPromisorPacks(handle: StoreHandle, table: ObjectTable): void {
  for (const pack of handle.packs()) {
    if (!pack.markers.promisor) continue;
    const index = pack.tryIndex();
    if (index === undefined) continue;
    for (let i = 0; i < index.count; i++) table.mark(table.intern(index.id(i)), Flag.SEEN | Flag.UNINTERESTING);
  }
}

/**
 * git's is_promisor_object set: the objects of the promisor packs and every object they name (a
 * commit's tree and parents, a tree's entries but gitlinks, a tag's object). The remote has all
 * of these, so one missing here is no error. Built on first need: it reads every commit, tree and
 * tag of those packs.
 */
export function promisorObjects(handle: StoreHandle, into: ObjectTable): void {
  const cursor = new TreeCursor(handle.hashLength);
  const link = (src: Uint8Array, at: number): void => void into.intern(src, at);
  for (const pack of handle.packs()) {
    if (!pack.markers.promisor) continue;
    const index = pack.tryIndex();
    if (index === undefined) continue;
    for (let i = 0; i < index.count; i++) {
      const id = index.id(i);
      into.intern(id);
      const type = typeNumber(pack.typeAt(i));
      if (type === OBJ_COMMIT || type === OBJ_TREE || type === OBJ_TAG) forEachLink(id, type, pack.read(i).data, cursor, link);
    }
  }
}
