/**
 * Every object a pack is being made of (and every excluded one the walk marked), numbered densely
 * in the order first met: ids back to back in one buffer, found by open addressing, and per-object
 * fields in typed arrays indexed by that number.
 *
 * Counting meets each tree entry once per tree that holds it, tens of millions of times on a large
 * repository, and most meetings are with objects already seen; the question "seen?" must cost a
 * hash probe and a 20-byte compare read straight from the tree's bytes, not a string key or an
 * index bisection (gitoxide's first counter was 3× slower than git for want of this).
 */
export class ObjectTable {
  /** Ids of objects 0..count-1, H bytes each. */
  ids: Uint8Array;
  /** Object type (1-4; 0 while unknown). */
  types: Uint8Array;
  /** Walk flags (see `Flag`). */
  flags: Uint8Array;
  /** git's pack_name_hash of the path the object was first met at (0 for commits and tags). */
  nameHashes: Uint32Array;
  count = 0;
  /** Slot → object number + 1 (0: empty); a power of two, at most half full. */
  private slots: Int32Array;
  private mask: number;

  constructor(readonly hashLength: number, expected = 1024) {
    let size = 1024;
    while (size < expected * 2) size *= 2;
    this.slots = new Int32Array(size);
    this.mask = size - 1;
    this.ids = new Uint8Array(expected * hashLength);
    this.types = new Uint8Array(expected);
    this.flags = new Uint8Array(expected);
    this.nameHashes = new Uint32Array(expected);
  }

  /**
   * A table with its ids and slots in shared memory, room for `capacity` objects: filled by this
   * thread, then searched by workers through `fromShared(table.sharedParts)` while nothing is added.
   * Interning past `capacity` moves it to private memory.
   */
  static shared(hashLength: number, capacity: number): ObjectTable {
    const t = new ObjectTable(hashLength, capacity);
    t.slots = new Int32Array(new SharedArrayBuffer(t.slots.length * 4));
    t.ids = new Uint8Array(new SharedArrayBuffer(Math.max(1, capacity) * hashLength));
    return t;
  }

  /** What another thread needs to `find` in this table (see `shared`). */
  get sharedParts(): SharedTableParts {
    return { hashLength: this.hashLength, ids: this.ids, slots: this.slots, count: this.count };
  }

  /** A read-only view of a shared table in another thread: `find` and `id` only. */
  static fromShared(parts: SharedTableParts): ObjectTable {
    const t = new ObjectTable(parts.hashLength, 1);
    t.ids = parts.ids;
    t.slots = parts.slots;
    t.mask = parts.slots.length - 1;
    t.count = parts.count;
    return t;
  }

  /**
   * The slot to start probing at for the id at `src[at..]`. Ids are hashes, so eight of their bytes
   * are already uniform; mixing two words keeps ids crafted to share a 4-byte prefix (cheap to make)
   * from piling into one run of slots.
   */
  private slotOf(src: Uint8Array, at: number): number {
    const a = ((src[at] as number) << 24) | ((src[at + 1] as number) << 16) | ((src[at + 2] as number) << 8) | (src[at + 3] as number);
    const b = ((src[at + 4] as number) << 24) | ((src[at + 5] as number) << 16) | ((src[at + 6] as number) << 8) | (src[at + 7] as number);
    return (Math.imul(a ^ Math.imul(b, 0x9e3779b1), 0x85ebca6b) >>> 7) & this.mask;
  }

  private same(n: number, src: Uint8Array, at: number): boolean {
    const H = this.hashLength;
    const ids = this.ids;
    const p = n * H;
    for (let i = 0; i < H; i++) if (ids[p + i] !== src[at + i]) return false;
    return true;
  }

  /** The number of the id at `src[at..at+H)`, or -1. */
  find(src: Uint8Array, at = 0): number {
    const slots = this.slots;
    for (let s = this.slotOf(src, at); ; s = (s + 1) & this.mask) {
      const v = slots[s] as number;
      if (v === 0) return -1;
      if (this.same(v - 1, src, at)) return v - 1;
    }
  }

  /** Whether the last `intern` added its id. */
  added = false;

  /** The number of the id at `src[at..at+H)`, adding it (type 0, no flags) when new. */
  intern(src: Uint8Array, at = 0): number {
    const slots = this.slots;
    let s = this.slotOf(src, at);
    for (; ; s = (s + 1) & this.mask) {
      const v = slots[s] as number;
      if (v === 0) break;
      if (this.same(v - 1, src, at)) {
        this.added = false;
        return v - 1;
      }
    }
    const n = this.count++;
    const H = this.hashLength;
    if (n * H + H > this.ids.length) this.growArrays();
    // Byte by byte: `set(src.subarray(…))` makes a view object per new id, garbage for the
    // collector on every object a walk meets for the first time.
    const ids = this.ids;
    for (let i = 0, p = n * H; i < H; i++) ids[p + i] = src[at + i] as number;
    slots[s] = n + 1;
    if (this.count * 2 > slots.length) this.rehash();
    this.added = true;
    return n;
  }

  /** Whether object `n` has any of the `flag` bits. */
  is(n: number, flag: number): boolean {
    return ((this.flags[n] as number) & flag) !== 0;
  }

  /** Sets `flag` on object `n`. */
  mark(n: number, flag: number): void {
    this.flags[n] = (this.flags[n] as number) | flag;
  }

  /** Clears `flag` on object `n`. */
  unmark(n: number, flag: number): void {
    this.flags[n] = (this.flags[n] as number) & ~flag;
  }

  /** The ids of `objects`, back to back (what a worker or an index is given). */
  idsOf(objects: ArrayLike<number>): Uint8Array {
    const H = this.hashLength;
    const out = new Uint8Array(objects.length * H);
    for (let k = 0; k < objects.length; k++) out.set(this.id(objects[k] as number), k * H);
    return out;
  }

  /** The id of object `n` (a view: copy it to keep it past the table). */
  id(n: number): Uint8Array {
    return this.ids.subarray(n * this.hashLength, (n + 1) * this.hashLength);
  }

  /**
   * Makes room for `more` objects at once, for a caller that knows how many it will add (the
   * bitmap walk: every object of a pack), instead of growing and rehashing by doubling.
   */
  reserve(more: number): void {
    const want = this.count + more;
    if (want > this.types.length) this.growArrays(want);
    if (want * 2 > this.slots.length) {
      let size = this.slots.length;
      while (size < want * 2) size *= 2;
      this.rehash(size);
    }
  }

  private growArrays(atLeast = 0): void {
    const capacity = Math.max(1024, this.types.length * 2, atLeast);
    const grow = <T extends Uint8Array | Uint32Array>(a: T, make: (n: number) => T, width = 1): T => {
      const b = make(capacity * width);
      b.set(a);
      return b;
    };
    this.ids = grow(this.ids, (n) => new Uint8Array(n), this.hashLength);
    this.types = grow(this.types, (n) => new Uint8Array(n));
    this.flags = grow(this.flags, (n) => new Uint8Array(n));
    this.nameHashes = grow(this.nameHashes, (n) => new Uint32Array(n));
  }

  private rehash(size = this.slots.length * 2): void {
    const slots = new Int32Array(size);
    this.mask = size - 1;
    for (let n = 0; n < this.count; n++) {
      let s = this.slotOf(this.ids, n * this.hashLength);
      while (slots[s] !== 0) s = (s + 1) & this.mask;
      slots[s] = n + 1;
    }
    this.slots = slots;
  }
}

/** The shared memory of an object table, for a worker thread to open the same table. */
export interface SharedTableParts {
  hashLength: number;
  ids: Uint8Array;
  slots: Int32Array;
  count: number;
}

/** Bits of `ObjectTable.flags`, named after git's object flags (revision.h). */
export const Flag = {
  /** Commits: queued in the walk. Trees and blobs: listed (or passed over as missing). */
  SEEN: 1,
  /** Reachable from an excluded tip: not sent, but known to the receiver (a thin pack's bases). */
  UNINTERESTING: 2,
  /** Commits: in the walk's queue now. */
  QUEUED: 4,
  /** Commits: an excluded commit whose tree was offered as a base (git's SHOWN for edges). */
  EDGE: 8,
  /** In the pack's object list. */
  LISTED: 16,
  /** Looked for and not in the store. */
  MISSING: 32,
  /** Named by an object of a promisor pack: may be missing (--missing=allow-promisor). */
  PROMISOR: 64,
  /**
   * Not sent, but the receiver has it and it may be a delta base of a thin pack (git's preferred
   * base): the objects of excluded boundary trees, or of `-<id>` input lines, with their path hashes.
   */
  PREFERRED: 128,
} as const;

/**
 * git's pack_name_hash (pack-objects.h), one byte at a time: a number that sorts objects by the last
 * sixteen non-space characters of their path, so that files with the same name, or the same
 * extension, meet in the delta window. `fold(fold(0, 'a'), 'b')` is the hash of "ab".
 */
export function foldNameHash(hash: number, c: number): number {
  // isspace() in the C locale: space, \t, \n, \v, \f, \r.
  if (c === 0x20 || (c >= 0x09 && c <= 0x0d)) return hash;
  return ((hash >>> 2) + (c << 24)) >>> 0;
}

/** pack_name_hash of `bytes[start..end)` folded onto `hash`. */
export function nameHash(bytes: Uint8Array, start = 0, end = bytes.length, hash = 0): number {
  for (let i = start; i < end; i++) hash = foldNameHash(hash, bytes[i] as number);
  return hash;
}
