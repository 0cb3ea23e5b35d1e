/**
 * Delta data that pass 1 inflated anyway (it must, to find where each entry's zlib stream ends),
 * kept for pass 2 instead of being inflated a second time there. Pass 1 inflates a delta straight
 * into the store while it has room (EntryScanner.kept), and the resolver applies it from there.
 * What the store may take is the memory plan's (`planPackHolding`): gitoxide.pack's deltas
 * inflate to 126 MiB, 1.24 times the pack.
 *
 * The data is one buffer that pass 1's helpers fill too (scan-region.ts), each entry reserving
 * its room by a compare-and-swap on `room[0]`, so a split pass 1 keeps the deltas of every region
 * and not only of those this thread scans.
 */
export interface KeptData {
  /** Room for the budget; pages are touched only as deltas are written. */
  data: Uint8Array;
  /**
   * `[0]`: bytes of `data` reserved so far (by this thread and helpers); `[1]`: how many may be,
   * at most `data.length` (0 until the pack's count is known, when the store is made before it).
   */
  room: Int32Array;
}

export interface KeptDeltas extends KeptData {
  /** Per entry: where its delta data starts in `data`, plus one (0: not kept). Grows with the scan. */
  at: Uint32Array;
  /** Deltas kept. */
  count: number;
}

/** Room for up to `bytes` of delta data (the budget set later, by `setKeptBudget`), in shared memory for helpers. */
export function allocKeptData(bytes: number, shared: boolean): KeptData {
  return {
    data: new Uint8Array(shared ? new SharedArrayBuffer(bytes) : new ArrayBuffer(bytes)),
    room: new Int32Array(shared ? new SharedArrayBuffer(8) : new ArrayBuffer(8)),
  };
}

/** The budget: at most `bytes` of `kept.data` may be reserved (Int32: a budget is below 2 GiB). */
export function setKeptBudget(kept: KeptData, bytes: number): void {
  Atomics.store(kept.room, 1, Math.min(bytes, kept.data.length));
}

/** Bytes of the data reserved so far. */
export function keptUsed(kept: KeptData): number {
  return Atomics.load(kept.room, 0);
}

/**
 * Reserves `size` bytes and the spare one inflateExact needs to see the end; returns where they
 * start, plus one, or 0 when the budget has no room for them.
 */
export function reserveKept(kept: KeptData, size: number): number {
  const need = size + 1;
  const room = kept.room;
  for (;;) {
    const used = Atomics.load(room, 0);
    if (used + need > Atomics.load(room, 1)) return 0;
    if (Atomics.compareExchange(room, 0, used, used + need) === used) return used + 1;
  }
}

/** The store for `capacity` entries over `data` (helpers may be filling it already). */
export function keptDeltasOver(data: KeptData, capacity: number, shared: boolean): KeptDeltas {
  return { data: data.data, room: data.room, at: entryTable(capacity, shared), count: 0 };
}

function entryTable(capacity: number, shared: boolean): Uint32Array {
  return new Uint32Array(shared ? new SharedArrayBuffer(4 * capacity) : new ArrayBuffer(4 * capacity));
}

/** Records that entry `k`'s delta data is at `at - 1` (EntryScanner.keptAt, or a helper's). */
export function commitKeptDelta(kept: KeptDeltas, k: number, at: number): void {
  kept.at[k] = at;
  kept.count++;
}

/** Grows the table to `capacity` entries (a stream's count is not trusted up front). */
export function growKeptDeltas(kept: KeptDeltas, capacity: number, shared: boolean): void {
  const at = entryTable(capacity, shared);
  at.set(kept.at.subarray(0, Math.min(kept.at.length, capacity)));
  kept.at = at;
}
