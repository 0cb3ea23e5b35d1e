import type { ObjectLocation, ObjectStore, StorePack } from './object-store.js';
import { join } from 'node:path';

export interface ObjectEntry {
  /** The id; a view that is valid only during the callback. */
  id: Buffer;
  location: ObjectLocation;
}

/**
 * Every object of the store once, like `git cat-file --batch-all-objects`: sorted by id by default
 * (a k-way merge of the already sorted indices and loose directories), or with `unordered` in
 * storage order (loose objects, then each pack by offset: the order that reads a pack front to
 * back and so makes the delta base cache hit).
 */
export function* allObjects(store: ObjectStore, options: { unordered?: boolean } = {}): Generator<ObjectEntry> {
  const looseLists = store.looseDirs.map((dir) => ({ dir, ids: store.looseIds(dir) }));
  const sources = store.packs.length + looseLists.filter((l) => l.ids.length > 0).length;
  if (options.unordered) {
    const seen = sources > 1 ? new Set<string>() : undefined;
    const fresh = (id: Buffer): boolean => {
      if (seen === undefined) return true;
      const key = id.toString('latin1');
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    };
    for (const { dir, ids } of looseLists) {
      for (const id of ids) {
        if (fresh(id)) yield { id, location: { kind: 'loose', path: loosePath(dir, id) } };
      }
    }
    for (const pack of store.packs) {
      const { positions } = pack.index.packOrder();
      for (let k = 0; k < positions.length; k++) {
        const position = positions[k] as number;
        const id = pack.index.id(position);
        if (fresh(id)) yield { id, location: { kind: 'pack', pack, position } };
      }
    }
    return;
  }
  // Sorted: merge cursors over each source, emitting the smallest id and skipping duplicates.
  type Cursor = { pack: StorePack; pos: number; end: number } | { dir: string; ids: Buffer[]; pos: number; end: number };
  const cursors: Cursor[] = [];
  for (const pack of store.packs) if (pack.index.count > 0) cursors.push({ pack, pos: 0, end: pack.index.count });
  for (const l of looseLists) if (l.ids.length > 0) cursors.push({ dir: l.dir, ids: l.ids, pos: 0, end: l.ids.length });
  const current = (c: Cursor): Buffer => ('pack' in c ? c.pack.index.id(c.pos) : (c.ids[c.pos] as Buffer));
  if (cursors.length === 1) {
    const c = cursors[0] as Cursor;
    for (; c.pos < c.end; c.pos++) yield { id: current(c), location: locationOf(c) };
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
      yield { id: bestId, location: locationOf(best) };
    }
    best.pos++;
  }

  function locationOf(c: Cursor): ObjectLocation {
    return 'pack' in c ? { kind: 'pack', pack: c.pack, position: c.pos } : { kind: 'loose', path: loosePath(c.dir, c.ids[c.pos] as Buffer) };
  }

  function loosePath(dir: string, id: Buffer): string {
    const hex = id.toString('hex');
    return join(dir, hex.slice(0, 2), hex.slice(2));
  }
}
