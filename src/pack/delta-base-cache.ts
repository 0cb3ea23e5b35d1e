import { BuddyAllocator } from '../memory/buddy-allocator.js';

/**
 * Resolved delta bases kept for reuse, least recently used first out, capped in bytes like git's
 * `core.deltaBaseCacheLimit` (96 MiB by default). Entries are keyed by the pack's identity (a
 * slot and a generation, see PackIdentity) and the entry's offset. The map's keys are numbers,
 * `slot * 2^40 + offset` (offsets below 2^40, slots below 2^13), and the cache remembers which
 * generation of each slot its entries belong to: a slot that is reused for another pack (a higher
 * generation) drops the old pack's entries before it is served, so a base can never come from a
 * pack that has since left the slot.
 *
 * The limit counts object bytes, as git's does. The objects live in blocks of one buffer (see
 * BuddyAllocator) half as large again as the limit: blocks are powers of two, and with less room
 * than that the cache held ~25 % fewer objects than git's and missed more (cat-file --batch over
 * gitoxide: 38.8k hits instead of 52.8k with one Buffer per object; 50.8k with this room). The
 * memory behind the cache is that buffer; nothing waits for the garbage collector. Objects larger
 * than a block (8 MiB) get buffers of their own, counted against the same limit.
 */
export interface CachedObject {
  type: number;
  data: Buffer;
  /** The buffer `data` is a view of: a block from `allocate`, freed on eviction. */
  backing?: Buffer;
}

/** Bytes the delta base cache holds by default (git's core.deltaBaseCacheLimit is 96 MiB). */
export const DEFAULT_DELTA_BASE_CACHE_LIMIT = 96 * 1024 * 1024;

/**
 * Who a pack is, for caches that outlive a catalog's changes: the slot it occupies in its store
 * and how many packs held that slot before it. Two packs are the same pack exactly when both match.
 */
export interface PackIdentity {
  readonly slot: number;
  readonly generation: number;
}

/** Slots a cache can tell apart (see the class comment); a store reuses slots of packs it retired. */
export const MAX_PACK_SLOTS = 2 ** 13;
/** Offsets the cache can key: 1 TiB. */
const MAX_OFFSET = 2 ** 40;
/** How long a closed cache's arena waits for the next cache of its limit (see DeltaBaseCache.close). */
const SPARE_ARENA_MS = 1000;
/** Closed caches' arenas, by limit, at most one each (see DeltaBaseCache.close). */
const spareArenas = new Map<number, { space: { arena: BuddyAllocator; owners: Float64Array }; timer: NodeJS.Timeout }>();

/** Arena bytes per byte of limit (see above): what a memory plan charges for the cache. */
export const ARENA_FACTOR = 1.5;

/** An entry, linked into the cache's recency list. */
interface Slot {
  key: number;
  value: CachedObject;
  older: Slot | undefined;
  newer: Slot | undefined;
}

/**
 * Objects recently made from delta chains, kept by pack and offset so that the next delta on the same base
 * is one application away (git's delta base cache).
 */
export class DeltaBaseCache {
  /**
   * Entries by key, and a list of them from least to most recently used. A Map's own order served
   * once (re-inserting on each hit), but finding its oldest entry walks the holes its deletions
   * leave at the front until the next rehash: with small objects (800k of them in 96 MiB) each
   * eviction walked hundreds of thousands, and cat-file --batch over 10M objects never finished.
   */
  private readonly map = new Map<number, Slot>();
  private oldest: Slot | undefined;
  private newest: Slot | undefined;
  private bytes = 0;
  /**
   * The arena, and the cache key of the entry in each of its blocks (by block index; NaN when
   * not cached). Made on first use: its bookkeeping is ~12 MB for the default limit, which a
   * store that only looks up headers never needs.
   */
  private space: { arena: BuddyAllocator; owners: Float64Array } | undefined;
  /**
   * Blocks handed out by `allocate` and neither cached nor released yet: a reader's scratch
   * buffer, a level being decoded. `close` frees them with the cached ones.
   */
  private readonly out = new Set<number>();
  hits = 0;
  misses = 0;

  constructor(readonly limit: number = DEFAULT_DELTA_BASE_CACHE_LIMIT) {}

  private blocks(): { arena: BuddyAllocator; owners: Float64Array } {
    if (this.space === undefined) {
      const spare = spareArenas.get(this.limit);
      if (spare !== undefined) {
        spareArenas.delete(this.limit);
        clearTimeout(spare.timer);
        this.space = spare.space;
      } else {
        const arena = DeltaBaseCache.arenaFor(this.limit);
        this.space = { arena, owners: new Float64Array(arena.units).fill(NaN) };
      }
    }
    return this.space;
  }

  /**
   * Empties the cache for good (its store is closed: no reader will use a block again). The
   * arena, all free again, is kept for a second for the next cache of the same limit in this
   * thread: a program that opens and closes stores in turn (a server, a test suite running
   * commands in-process) would otherwise make and index a new arena each time, and V8, which
   * counts that memory against its heap, would collect the more often for it (in-process
   * commands spent 37 % of their time in the collector). Unused, it is let go.
   */
  close(): void {
    const space = this.space;
    if (space === undefined || spareArenas.has(this.limit)) {
      this.clear();
      return;
    }
    // Free what the cache holds rather than resetting the whole arena: its bookkeeping is ~7 MB
    // for the default limit, and filling all of it on every close is paid by every store opened
    // for one command or one request (a tenth of an in-process rev-list's time). Should any block
    // still be in use after that (a bug), the arena is reset whole.
    for (let slot = this.oldest; slot !== undefined; slot = slot.newer) {
      const backing = slot.value.backing;
      if (backing !== undefined && space.arena.owns(backing) && space.owners[space.arena.indexOf(backing)] === slot.key) this.release(backing);
    }
    for (const index of this.out) space.arena.freeAt(index);
    this.clear();
    if (space.arena.allocated !== 0) {
      space.arena.reset();
      space.owners.fill(NaN);
    }
    const timer = setTimeout(() => spareArenas.delete(this.limit), SPARE_ARENA_MS);
    timer.unref();
    spareArenas.set(this.limit, { space, timer });
  }

  /** Blocks no larger than the limit, so any object in a block can be cached. */
  private static arenaFor(limit: number): BuddyAllocator {
    const maxShift = Math.min(23, Math.max(8, Math.floor(Math.log2(Math.max(1, limit)))));
    return new BuddyAllocator(limit * ARENA_FACTOR, 8, maxShift);
  }

  /** Generation of the pack whose entries each slot holds (-1: none yet). */
  private readonly generations: number[] = [];

  /**
   * The map key of the entry at `offset` of `pack`, after making sure the cache holds no entry of
   * an earlier pack in the same slot.
   */
  key(pack: PackIdentity, offset: number): number {
    const slot = pack.slot;
    if (slot >= MAX_PACK_SLOTS || offset >= MAX_OFFSET) {
      throw new RangeError(`delta base cache: slot ${slot} or offset ${offset} is out of range`);
    }
    const held = this.generations[slot];
    if (held !== pack.generation) {
      // -1: the slot's entries are already gone (forgetSlot); undefined: it never had any.
      if (held !== undefined && held >= 0) this.forgetSlot(slot);
      this.generations[slot] = pack.generation;
    }
    return slot * MAX_OFFSET + offset;
  }

  /** Drops every entry of the pack in `slot` (its pack left the store). */
  forgetSlot(slot: number): void {
    const from = slot * MAX_OFFSET;
    const to = from + MAX_OFFSET;
    for (const k of [...this.map.keys()]) if (k >= from && k < to) this.evict(this.map.get(k) as Slot);
    this.generations[slot] = -1;
  }

  /**
   * Room for an object of `size` bytes that may be cached: a block of the cache's memory, made
   * free by evicting least recently used entries (never `keep`, the base being read from), or a
   * buffer of its own when no block can hold it. Give it back with `release` if it is not cached.
   */
  allocate(size: number, keep?: CachedObject): Buffer {
    const block = this.takeBlock(size, keep);
    if (block !== undefined) this.out.add(this.blocks().arena.indexOf(block));
    return block ?? Buffer.allocUnsafeSlow(size);
  }

  private takeBlock(size: number, keep: CachedObject | undefined): Buffer | undefined {
    const { arena, owners } = this.blocks();
    if (arena.blockSize(size) < 0) return undefined;
    const block = arena.alloc(size);
    if (block !== undefined) return block;
    // Evicting the oldest entries one by one rarely frees a large enough block (their blocks are
    // scattered), so free a whole region around one of the oldest, if all of it is evictable.
    let tries = 0;
    for (let slot = this.oldest; slot !== undefined && ++tries <= 16; slot = slot.newer) {
      const v = slot.value;
      if (v === keep || v.backing === undefined || !arena.owns(v.backing)) continue;
      const around = arena.blocksAround(v.backing, size);
      if (!around.every((i) => !Number.isNaN(owners[i] as number) && this.map.get(owners[i] as number)?.value !== keep)) continue;
      for (const i of around) this.evict(this.map.get(owners[i] as number) as Slot);
      const freed = arena.alloc(size);
      if (freed !== undefined) return freed;
    }
    // Then from the oldest on until a block forms, at worst everything but `keep` (rare: a few
    // times in cat-file --batch-all-objects over gitoxide). A buffer of its own would be memory
    // beyond the arena that the memory plans charge, garbage until the collector runs.
    for (let slot = this.oldest; slot !== undefined;) {
      const newer = slot.newer;
      if (slot.value !== keep) {
        this.evict(slot);
        const freed = arena.alloc(size);
        if (freed !== undefined) return freed;
      }
      slot = newer;
    }
    return undefined;
  }

  /** Returns a buffer from `allocate` that was not handed to `set`. */
  release(buf: Buffer): void {
    const space = this.space;
    if (space === undefined || !space.arena.owns(buf)) return;
    const index = space.arena.indexOf(buf);
    space.owners[index] = NaN;
    this.out.delete(index);
    space.arena.free(buf);
  }

  /** Whether `set` would keep an object of `size` bytes decoded into a block from `allocate`. */
  keeps(size: number): boolean {
    return size <= this.limit && this.blocks().arena.blockSize(size + 1) >= 0;
  }

  /** The object cached under `key` (a pack's identity and an offset in it), or undefined. */
  get(key: number): CachedObject | undefined {
    const hit = this.map.get(key);
    if (hit === undefined) {
      this.misses++;
      return undefined;
    }
    this.hits++;
    // Now the most recently used.
    this.unlink(hit);
    this.link(hit);
    return hit.value;
  }

  /** Drops the entry under `key`, if any: its object is not needed again (PackReader.forget). */
  drop(key: number): void {
    const slot = this.map.get(key);
    if (slot !== undefined) this.evict(slot);
  }

  /** Looks without counting or reordering (for header-only walks). */
  peek(key: number): CachedObject | undefined {
    return this.map.get(key)?.value;
  }

  /** Caches an object, evicting the least recently used ones beyond the limit. */
  set(key: number, value: CachedObject): void {
    const cost = DeltaBaseCache.cost(value);
    // Only the arena's blocks are kept: the cache's memory is the arena, which is what the memory
    // plans charge (a buffer of its own, larger than any block or made when `keep` pinned the
    // arena, is the garbage collector's).
    const space = this.space;
    if (cost > this.limit || value.backing === undefined || space === undefined || !space.arena.owns(value.backing)) return;
    const old = this.map.get(key);
    if (old !== undefined) {
      this.map.delete(key);
      this.unlink(old);
      this.bytes -= DeltaBaseCache.cost(old.value);
      if (old.value.backing !== undefined && old.value.backing !== value.backing) this.release(old.value.backing);
    }
    const slot: Slot = { key, value, older: undefined, newer: undefined };
    this.map.set(key, slot);
    this.link(slot);
    this.bytes += cost;
    const index = space.arena.indexOf(value.backing);
    space.owners[index] = key;
    this.out.delete(index);
    while (this.bytes > this.limit && this.evictOldest(value)) {
      // evictOldest did the work.
    }
  }

  get size(): number {
    return this.bytes;
  }

  /** Drops every cached object. */
  clear(): void {
    this.map.clear();
    this.out.clear();
    this.oldest = this.newest = undefined;
    this.space = undefined;
    this.bytes = 0;
  }

  /** What an entry counts against the limit: its object's bytes, as in git. */
  private static cost(value: CachedObject): number {
    return value.data.length;
  }

  /** Evicts the least recently used entry other than `keep`; false when there is none. */
  private evictOldest(keep: CachedObject | undefined): boolean {
    let slot = this.oldest;
    if (slot !== undefined && slot.value === keep) slot = slot.newer;
    if (slot === undefined) return false;
    this.evict(slot);
    return true;
  }

  private evict(slot: Slot): void {
    this.map.delete(slot.key);
    this.unlink(slot);
    this.bytes -= DeltaBaseCache.cost(slot.value);
    if (slot.value.backing !== undefined) this.release(slot.value.backing);
  }

  /** Appends `slot` as the most recently used. */
  private link(slot: Slot): void {
    slot.older = this.newest;
    slot.newer = undefined;
    if (this.newest !== undefined) this.newest.newer = slot;
    else this.oldest = slot;
    this.newest = slot;
  }

  private unlink(slot: Slot): void {
    if (slot.older !== undefined) slot.older.newer = slot.newer;
    else this.oldest = slot.newer;
    if (slot.newer !== undefined) slot.newer.older = slot.older;
    else this.newest = slot.older;
    slot.older = slot.newer = undefined;
  }
}
