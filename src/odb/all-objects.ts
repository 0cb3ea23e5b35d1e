import { join } from 'node:path';
import { MidxSource } from './catalog.js';
import type { ObjectLocation, StoreHandle } from './store-handle.js';
import type { StorePack } from './store-pack.js';

/**
 * The pack that holds every object of the store, when the store is that one pack and no loose
 * objects: its index is then the sorted list `--batch-all-objects` prints, and callers can walk it
 * by position.
 */
export function onlyPack(handle: StoreHandle): StorePack | undefined {
  const packs = handle.packs();
  if (packs.length !== 1) return undefined;
  for (const dir of handle.looseDirs()) if (handle.looseIds(dir).length > 0) return undefined;
  return packs[0];
}

/** One sorted source of ids for the merge: a pack's index, a multi-pack-index or a loose directory. */
interface Cursor {
  pos: number;
  end: number;
  /** The id at `pos` (a view, valid until the cursor moves). */
  id(): Buffer;
  /** Passes the object at `pos` to `visit` with its location. */
  emit(id: Buffer): void;
}

/**
 * Visits every object of the store once, like `git cat-file --batch-all-objects`: sorted by id by
 * default (a merge of the already sorted indexes, multi-pack-indexes and loose directories), or
 * with `unordered` in storage order (loose objects, then each pack by offset: the order that reads
 * a pack front to back and so makes the delta base cache hit). An id stored more than once is
 * visited once, at the copy a lookup would find (the multi-pack-index's choice; else the first
 * source in lookup order).
 *
 * The id and location passed to `visit` are reused between calls (no allocation per object):
 * copy them to keep them.
 */
export function forEachObject(handle: StoreHandle, options: { unordered?: boolean }, visit: (id: Buffer, location: ObjectLocation) => void): void {
  const packs = handle.packs();
  const looseDirs = handle.looseDirs();
  const H = handle.hashLength;
  const packed = { kind: 'pack', pack: packs[0] as StorePack, position: 0 } as { kind: 'pack'; pack: StorePack; position: number };
  const loose = { kind: 'loose', path: '' } as { kind: 'loose'; path: string };
  const looseLists = looseDirs.map((dir) => ({ dir, ids: handle.looseIds(dir) })).filter((l) => l.ids.length > 0);
  const visitLoose = (dir: string, id: Buffer): void => {
    const hex = id.toString('hex');
    loose.path = join(dir, hex.slice(0, 2), hex.slice(2));
    visit(id, loose);
  };
  const usable = packs.filter((p) => p.tryIndex() !== undefined && p.tryOpen());
  if (options.unordered) {
    const seen = usable.length + looseLists.length > 1 ? new Set<string>() : undefined;
    const fresh = (id: Buffer): boolean => {
      if (seen === undefined) return true;
      const key = id.toString('latin1');
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    };
    for (const { dir, ids } of looseLists) for (const id of ids) if (fresh(id)) visitLoose(dir, id);
    const id = Buffer.alloc(H);
    for (const pack of usable) {
      const index = pack.index;
      const { positions } = index.packOrder();
      packed.pack = pack;
      const data = index.data;
      for (let k = 0; k < positions.length; k++) {
        const position = positions[k] as number;
        const at = index.idPosition(position);
        for (let b = 0; b < H; b++) id[b] = data[at + b] as number;
        if (!fresh(id)) continue;
        packed.position = position;
        visit(id, packed);
      }
    }
    return;
  }
  const sources = handle.sources();
  if (sources.length === 1 && looseLists.length === 0 && !(sources[0] instanceof MidxSource) && usable.length === 1) {
    // One pack: its index is the sorted list. The id is copied into one reused buffer, since a
    // view per object is an allocation per object.
    const pack = usable[0] as StorePack;
    const index = pack.index;
    const id = Buffer.alloc(H);
    const data = index.data;
    packed.pack = pack;
    for (let position = 0; position < index.count; position++) {
      const at = index.idPosition(position);
      for (let k = 0; k < H; k++) id[k] = data[at + k] as number;
      packed.position = position;
      visit(id, packed);
    }
    return;
  }
  const cursors: Cursor[] = [];
  for (const source of sources) {
    if (source instanceof MidxSource) {
      const midx = source.index;
      if (midx.count === 0) continue;
      cursors.push({
        pos: 0, end: midx.count,
        id() { return midx.id(this.pos); },
        emit(id) {
          // The copy the multi-pack-index chose, at its position in that pack's own index.
          const pack = source.packs[midx.packOf(this.pos)] as StorePack;
          const index = pack.tryIndex();
          const position = index?.find(id) ?? -1;
          if (position < 0 || !pack.tryOpen()) return;
          packed.pack = pack;
          packed.position = position;
          visit(id, packed);
        },
      });
    } else if (usable.includes(source) && source.index.count > 0) {
      const index = source.index;
      cursors.push({
        pos: 0, end: index.count,
        id() { return index.id(this.pos); },
        emit(id) {
          packed.pack = source;
          packed.position = this.pos;
          visit(id, packed);
        },
      });
    }
  }
  for (const { dir, ids } of looseLists) {
    cursors.push({
      pos: 0, end: ids.length,
      id() { return ids[this.pos] as Buffer; },
      emit(id) { visitLoose(dir, id); },
    });
  }
  mergeSorted(cursors);
}

/**
 * Emits the ids of sorted cursors in order, each distinct id once (from the first cursor that
 * has it): a binary heap ordered by (id, cursor number), so thousands of packs cost log(packs)
 * comparisons an object.
 */
function mergeSorted(cursors: Cursor[]): void {
  const heap: number[] = [];
  const heads: Buffer[] = cursors.map((c) => c.id());
  const less = (a: number, b: number): boolean => {
    const c = Buffer.compare(heads[a] as Buffer, heads[b] as Buffer);
    return c < 0 || (c === 0 && a < b);
  };
  const down = (i: number): void => {
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < heap.length && less(heap[l] as number, heap[m] as number)) m = l;
      if (r < heap.length && less(heap[r] as number, heap[m] as number)) m = r;
      if (m === i) return;
      [heap[i], heap[m]] = [heap[m] as number, heap[i] as number];
      i = m;
    }
  };
  for (let k = 0; k < cursors.length; k++) heap.push(k);
  for (let i = (heap.length >> 1) - 1; i >= 0; i--) down(i);
  let last: Buffer | undefined;
  while (heap.length > 0) {
    const k = heap[0] as number;
    const c = cursors[k] as Cursor;
    const id = heads[k] as Buffer;
    if (last === undefined || !id.equals(last)) {
      last = Buffer.from(id);
      c.emit(id);
    }
    if (++c.pos < c.end) {
      heads[k] = c.id();
    } else {
      heap[0] = heap[heap.length - 1] as number;
      heap.pop();
    }
    if (heap.length > 0) down(0);
  }
}
