import type { ObjectLocation, ObjectStore, StorePack } from './object-store.js';
import { join } from 'node:path';

/**
 * The pack that holds every object of the store, when the store is that one pack and no loose
 * objects: its index is then the sorted list `--batch-all-objects` prints, and callers can walk it
 * by position.
 */
export function onlyPack(store: ObjectStore): StorePack | undefined {
  const { packs, looseDirs } = store.snapshot();
  if (packs.length !== 1) return undefined;
  for (const dir of looseDirs) if (store.looseIds(dir).length > 0) return undefined;
  return packs[0];
}

/**
 * Visits every object of the store once, like `git cat-file --batch-all-objects`: sorted by id by
 * default (a k-way merge of the already sorted indices and loose directories), or with
 * `unordered` in storage order (loose objects, then each pack by offset: the order that reads a
 * pack front to back and so makes the delta base cache hit).
 *
 * The id and location passed to `visit` are reused between calls (no allocation per object):
 * copy them to keep them.
 */
export function forEachObject(store: ObjectStore, options: { unordered?: boolean }, visit: (id: Buffer, location: ObjectLocation) => void): void {
  const { packs, looseDirs } = store.snapshot();
  const packed = { kind: 'pack', pack: packs[0] as StorePack, position: 0 } as { kind: 'pack'; pack: StorePack; position: number };
  const loose = { kind: 'loose', path: '' } as { kind: 'loose'; path: string };
  const looseLists = looseDirs.map((dir) => ({ dir, ids: store.looseIds(dir) }));
  const sources = packs.length + looseLists.filter((l) => l.ids.length > 0).length;
  const visitLoose = (dir: string, id: Buffer): void => {
    const hex = id.toString('hex');
    loose.path = join(dir, hex.slice(0, 2), hex.slice(2));
    visit(id, loose);
  };
  if (options.unordered) {
    const seen = sources > 1 ? new Set<string>() : undefined;
    const fresh = (id: Buffer): boolean => {
      if (seen === undefined) return true;
      const key = id.toString('latin1');
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    };
    for (const { dir, ids } of looseLists) for (const id of ids) if (fresh(id)) visitLoose(dir, id);
    const H = store.hashLength;
    const id = Buffer.alloc(H);
    for (const pack of packs) {
      const { positions } = pack.index.packOrder();
      packed.pack = pack;
      const data = pack.index.data;
      for (let k = 0; k < positions.length; k++) {
        const position = positions[k] as number;
        const at = pack.index.idPosition(position);
        for (let b = 0; b < H; b++) id[b] = data[at + b] as number;
        if (!fresh(id)) continue;
        packed.position = position;
        visit(id, packed);
      }
    }
    return;
  }
  // Sorted: cursors over each source; emit the smallest id, skip duplicates.
  type Cursor = { pack: StorePack; pos: number; end: number } | { dir: string; ids: Buffer[]; pos: number; end: number };
  const cursors: Cursor[] = [];
  for (const pack of packs) if (pack.index.count > 0) cursors.push({ pack, pos: 0, end: pack.index.count });
  for (const l of looseLists) if (l.ids.length > 0) cursors.push({ dir: l.dir, ids: l.ids, pos: 0, end: l.ids.length });
  const current = (c: Cursor): Buffer => ('pack' in c ? c.pack.index.id(c.pos) : (c.ids[c.pos] as Buffer));
  const emit = (c: Cursor, id: Buffer): void => {
    if ('pack' in c) {
      packed.pack = c.pack;
      packed.position = c.pos;
      visit(id, packed);
    } else {
      visitLoose(c.dir, id);
    }
  };
  if (cursors.length === 1 && 'pack' in (cursors[0] as Cursor)) {
    // One pack: its index is the sorted list. The id is copied into one reused buffer, since a
    // view per object is an allocation per object.
    const pack = (cursors[0] as { pack: StorePack }).pack;
    const H = store.hashLength;
    const id = Buffer.alloc(H);
    const data = pack.index.data;
    packed.pack = pack;
    for (let position = 0; position < pack.index.count; position++) {
      const at = pack.index.idPosition(position);
      for (let k = 0; k < H; k++) id[k] = data[at + k] as number;
      packed.position = position;
      visit(id, packed);
    }
    return;
  }
  let last: Buffer | undefined;
  for (;;) {
    let best: Cursor | undefined;
    let bestId: Buffer | undefined;
    for (const c of cursors) {
      if (c.pos >= c.end) continue;
      const id = current(c);
      if (bestId === undefined || Buffer.compare(id, bestId) < 0) {
        best = c;
        bestId = id;
      }
    }
    if (best === undefined || bestId === undefined) return;
    if (last === undefined || !bestId.equals(last)) {
      last = Buffer.from(bestId);
      emit(best, bestId);
    }
    best.pos++;
  }
}
