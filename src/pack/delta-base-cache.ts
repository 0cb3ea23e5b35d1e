import { BufferPool } from './buffer-pool.js';

/**
 * Resolved delta bases kept for reuse, least recently used first out, capped in bytes like git's
 * `core.deltaBaseCacheLimit` (96 MiB by default). Keys are numbers: a pack slot and an offset
 * (offsets stay below 2^40, packs below 2^13 slots).
 */
export interface CachedObject {
  type: number;
  data: Buffer;
  /** The pooled buffer `data` is a view of, handed back to the pool on eviction. */
  backing?: Buffer;
}

export const DEFAULT_DELTA_BASE_CACHE_LIMIT = 96 * 1024 * 1024;

export class DeltaBaseCache {
  private readonly map = new Map<number, CachedObject>();
  private bytes = 0;
  hits = 0;
  misses = 0;

  readonly pool: BufferPool;

  constructor(readonly limit: number = DEFAULT_DELTA_BASE_CACHE_LIMIT, pool = new BufferPool()) {
    this.pool = pool;
  }

  static key(slot: number, offset: number): number {
    return slot * 2 ** 40 + offset;
  }

  get(key: number): CachedObject | undefined {
    const hit = this.map.get(key);
    if (hit === undefined) {
      this.misses++;
      return undefined;
    }
    this.hits++;
    // Re-insert to mark as most recently used (Map keeps insertion order).
    this.map.delete(key);
    this.map.set(key, hit);
    return hit;
  }

  /** Looks without counting or reordering (for header-only walks). */
  peek(key: number): CachedObject | undefined {
    return this.map.get(key);
  }

  set(key: number, value: CachedObject): void {
    const size = value.data.length;
    if (size > this.limit) return;
    const old = this.map.get(key);
    if (old !== undefined) {
      this.bytes -= old.data.length;
      this.map.delete(key);
      if (old.backing !== undefined && old.backing !== value.backing) this.pool.release(old.backing);
    }
    this.map.set(key, value);
    this.bytes += size;
    if (this.bytes > this.limit) {
      for (const [k, v] of this.map) {
        if (this.bytes <= this.limit) break;
        this.map.delete(k);
        this.bytes -= v.data.length;
        if (v.backing !== undefined) this.pool.release(v.backing);
      }
    }
  }

  get size(): number {
    return this.bytes;
  }

  clear(): void {
    this.map.clear();
    this.pool.clear();
    this.bytes = 0;
  }
}
