import { RUNTIME_BYTES, SLACK_BYTES } from '../memory/ceiling.js';
import { ARENA_FACTOR } from '../pack/delta-base-cache.js';

/** How a store divides its memory ceiling: the delta base cache's limit and the pack windows' budget. */
export interface StoreMemoryPlan {
  /** Bytes of delta bases the cache may hold (its arena is ARENA_FACTOR times as large). */
  cacheLimit: number;
  /** Bytes of pack windows, whole packs included (WindowPool), before the tables are charged. */
  windowBudget: number;
}

/**
 * What a store's long walk adds to the runtime (RUNTIME_BYTES, measured at a small command's
 * start): V8's heap grows from ~15 to 29-37 MiB under the many short-lived views and records of a
 * walk over every object, and native memory (zlib's streams, more of the binary's pages) by ~17
 * MiB. Uncharged, `cat-file --batch-all-objects --batch` on gitoxide peaked at 267-273 MiB under
 * the default 256 MiB.
 */
const WALK_RUNTIME_BYTES = 24 << 20;

/**
 * Share of what the runtime leaves that the delta base cache's arena may take under a ceiling.
 * The rest goes to pack windows, so that a pack of about 45% of the ceiling (gitoxide.pack's
 * 111 MB under the default 256 MiB) can still be held whole: reads that jump about the pack
 * (cat-file in id order) come from memory, and a pack read front to back loses nothing to large
 * windows instead. (Walks of trees and commits read through 1 MiB windows instead: walk-objects.ts.) Holding the pack matters more than the cache's last
 * megabytes: sorted `cat-file --batch-all-objects --batch` on gitoxide took 10.0 s with a 41 MB
 * cache and the pack whole, 11.2 s with a 24 MB cache, and 13.4 s with the 41 MB cache and the pack
 * read through windows.
 */
const CACHE_SHARE = 1 / 4;

/**
 * How a store spends a ceiling: the runtime (with a walk's growth) and the slack first; then the
 * delta base cache, at most its configured limit (git's core.deltaBaseCacheLimit) and at most
 * CACHE_SHARE of what is left; then pack windows, less the tables the store builds as it goes
 * (indexes, info tables, pack orders: `Store.charge`). Tables beyond the ceiling are a floor it
 * cannot lower; windows then shrink to their minimum, one large window at a time (see PackFile).
 */
export function planStoreMemory(maxMemory: number, cacheLimit: number): StoreMemoryPlan {
  if (maxMemory === Infinity) return { cacheLimit, windowBudget: Infinity };
  const room = Math.max(0, maxMemory - RUNTIME_BYTES - WALK_RUNTIME_BYTES - SLACK_BYTES);
  const arena = Math.min(cacheLimit * ARENA_FACTOR, room * CACHE_SHARE);
  return { cacheLimit: Math.floor(arena / ARENA_FACTOR), windowBudget: Math.floor(room - arena) };
}
