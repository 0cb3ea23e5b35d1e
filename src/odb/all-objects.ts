import { compareBytes } from '../idx/sorted-ids.js';
import { join } from 'node:path';
import { throwIfAborted } from '../errors/packwright-error.js';
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
  // A pack that does not open is listed object by object (each one "missing"), as git lists it.
  const pack = packs[0] as StorePack;
  return pack.tryIndex() !== undefined && pack.tryOpen() ? pack : undefined;
}

/** One object of the store as `objects` yields it; the same object each time, refilled. */
export interface ObjectEntry {
  id: Buffer;
  location: ObjectLocation;
}

/** One sorted source of ids for the merge: a pack's index, a multi-pack-index or a loose directory. */
interface Cursor {
  pos: number;
  end: number;
  /** The id at `pos` (a view, valid until the cursor moves). */
  id(): Buffer;
  /** Sets the entry's location to the object at `pos`; false when it cannot be read (its pack failed). */
  locate(entry: ObjectEntry, id: Buffer): boolean;
}

/**
 * Every object of the store once, like `git cat-file --batch-all-objects`: sorted by id by
 * default (a merge of the already sorted indexes, multi-pack-indexes and loose directories), or
 * with `unordered` in storage order (loose objects, then each pack by offset: the order that reads
 * a pack front to back and so makes the delta base cache hit). An id stored more than once comes
 * once, at the copy a lookup would find (the multi-pack-index's choice; else the first source in
 * lookup order).
 *
 * The entry yielded is the same object each time, and its id and location are reused (no
 * allocation per object): copy them to keep them. A generator, so a caller can stop, or pause
 * between objects (see `forEachObjectAsync`).
 */
export interface ObjectsOptions {
  unordered?: boolean | undefined;
  /**
   * Also list the objects of a pack whose index loads but whose pack does not open (git's
   * --batch-all-objects lists them, and each is then "missing"); reading them fails.
   */
  withUnopenedPacks?: boolean | undefined;
}

export function* objects(handle: StoreHandle, options: ObjectsOptions = {}): Generator<ObjectEntry, void, undefined> {
  const packs = handle.packs();
  const looseDirs = handle.looseDirs();
  const H = handle.hashLength;
  const packed = { kind: 'pack', pack: packs[0] as StorePack, position: 0 } as { kind: 'pack'; pack: StorePack; position: number };
  const loose = { kind: 'loose', path: '' } as { kind: 'loose'; path: string };
  const entry: ObjectEntry = { id: Buffer.alloc(H), location: packed };
  const looseLists = looseDirs.map((dir) => ({ dir, ids: handle.looseIds(dir) })).filter((l) => l.ids.length > 0);
  const setLoose = (dir: string, id: Buffer): void => {
    const hex = id.toString('hex');
    loose.path = join(dir, hex.slice(0, 2), hex.slice(2));
    entry.id = id;
    entry.location = loose;
  };
  const usable = packs.filter((p) => p.tryIndex() !== undefined && (p.tryOpen() || options.withUnopenedPacks === true));
  if (options.unordered) {
    // An id comes once: skipped where an earlier source (loose directories first, then the packs
    // in order) has it. That costs a lookup in each earlier index, and no set of every id seen
    // (at 10M objects, hundreds of MB of strings). Loose objects are few: their ids are a set.
    const looseSeen = new Set<string>();
    for (const { dir, ids } of looseLists) {
      for (const id of ids) {
        const key = id.toString('latin1');
        if (looseSeen.has(key)) continue;
        looseSeen.add(key);
        setLoose(dir, id);
        yield entry;
      }
    }
    const id = Buffer.alloc(H);
    entry.location = packed;
    for (let p = 0; p < usable.length; p++) {
      const pack = usable[p] as StorePack;
      const index = pack.index;
      const { positions } = index.packOrder();
      packed.pack = pack;
      const data = index.idData();
      for (let k = 0; k < positions.length; k++) {
        const position = positions[k] as number;
        const at = index.idPosition(position);
        for (let b = 0; b < H; b++) id[b] = data[at + b] as number;
        // Twice in this pack (sorted, so next to each other): the first position only.
        if (position > 0 && compareBytes(data, index.idPosition(position - 1), data, at, H) === 0) continue;
        if (looseSeen.size > 0 && looseSeen.has(id.toString('latin1'))) continue;
        let earlier = false;
        for (let q = 0; q < p && !earlier; q++) earlier = (usable[q] as StorePack).index.find(id) >= 0;
        if (earlier) continue;
        packed.position = position;
        entry.id = id;
        entry.location = packed;
        yield entry;
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
    const data = index.idData();
    packed.pack = pack;
    entry.id = id;
    entry.location = packed;
    for (let position = 0; position < index.count; position++) {
      const at = index.idPosition(position);
      for (let k = 0; k < H; k++) id[k] = data[at + k] as number;
      packed.position = position;
      yield entry;
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
        locate(e, id) {
          // The copy the multi-pack-index chose (or another it covers, if that pack is gone).
          const copy = source.copyOf(id, this.pos);
          if (copy === undefined) return false;
          packed.pack = copy.pack;
          packed.position = copy.position;
          e.id = id;
          e.location = packed;
          return true;
        },
      });
    } else if (usable.includes(source) && source.index.count > 0) {
      const index = source.index;
      cursors.push({
        pos: 0, end: index.count,
        id() { return index.id(this.pos); },
        locate(e, id) {
          packed.pack = source;
          packed.position = this.pos;
          e.id = id;
          e.location = packed;
          return true;
        },
      });
    }
  }
  for (const { dir, ids } of looseLists) {
    cursors.push({
      pos: 0, end: ids.length,
      id() { return ids[this.pos] as Buffer; },
      locate(_e, id) {
        setLoose(dir, id);
        return true;
      },
    });
  }
  yield* mergeSorted(cursors, entry);
}

/**
 * Visits every object of the store once (see `objects`): `visit` gets the reused id and location.
 */
export function forEachObject(handle: StoreHandle, options: ObjectsOptions, visit: (id: Buffer, location: ObjectLocation) => void): void {
  for (const e of objects(handle, options)) visit(e.id, e.location);
}

/**
 * `forEachObject` that lets the event loop turn every `sliceMs` (default 40) and stops with
 * ABORTED within about a slice of `signal` firing: for servers and for long walks a user may
 * interrupt (every object of a large repository takes seconds).
 */
export async function forEachObjectAsync(
  handle: StoreHandle,
  options: { unordered?: boolean; signal?: AbortSignal; sliceMs?: number },
  visit: (id: Buffer, location: ObjectLocation) => void,
): Promise<void> {
  const sliceMs = options.sliceMs ?? 40;
  const { signal } = options;
  throwIfAborted(signal, 'reading every object');
  let sliceEnd = performance.now() + sliceMs;
  let n = 0;
  for (const e of objects(handle, options)) {
    visit(e.id, e.location);
    if ((++n & 63) === 0 && performance.now() >= sliceEnd) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      throwIfAborted(signal, 'reading every object');
      sliceEnd = performance.now() + sliceMs;
    }
  }
}

/**
 * Yields the ids of sorted cursors in order, each distinct id once (from the first cursor that
 * has it): a binary heap ordered by (id, cursor number), so thousands of packs cost log(packs)
 * comparisons an object.
 */
function* mergeSorted(cursors: Cursor[], entry: ObjectEntry): Generator<ObjectEntry, void, undefined> {
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
    // An id is done once one copy is yielded; a copy whose pack cannot be read leaves the id to
    // the next cursor that has it (a multi-pack-index may choose a copy in a pack since deleted).
    if ((last === undefined || !id.equals(last)) && c.locate(entry, id)) {
      last = Buffer.from(id);
      yield entry;
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
