/**
 * Delta data that pass 1 inflated anyway (it must, to find where each entry's zlib stream ends),
 * kept for pass 2 instead of being inflated a second time there, as git's index-pack does. Pass 1
 * inflates a delta straight into the store while it has room (EntryScanner.kept), and the
 * resolver applies it from there. What the store may take is the memory plan's
 * (`planPackHolding`): gitoxide.pack's deltas inflate to 126 MiB, 1.24 times the pack.
 */
export interface KeptDeltas {
  /** Per entry: where its delta data starts in `data`, plus one (0: not kept). Grows with the scan. */
  at: Uint32Array;
  /** Room for the budget; pages are touched only as deltas are written. */
  data: Uint8Array;
  /** Bytes of `data` in use. */
  used: number;
  /** Deltas kept. */
  count: number;
}

/** Room for `budget` bytes of deltas of `capacity` entries, in shared memory when workers read them. */
export function allocKeptDeltas(capacity: number, budget: number, shared: boolean): KeptDeltas {
  return { at: entryTable(capacity, shared), data: new Uint8Array(shared ? new SharedArrayBuffer(budget) : new ArrayBuffer(budget)), used: 0, count: 0 };
}

function entryTable(capacity: number, shared: boolean): Uint32Array {
  return new Uint32Array(shared ? new SharedArrayBuffer(4 * capacity) : new ArrayBuffer(4 * capacity));
}

/** Records that entry `k`'s `size` bytes of delta data were inflated at `at - 1` (EntryScanner.keptAt). */
export function commitKeptDelta(kept: KeptDeltas, k: number, at: number, size: number): void {
  kept.at[k] = at;
  kept.used = at - 1 + size;
  kept.count++;
}

/** Grows the table to `capacity` entries (a stream's count is not trusted up front). */
export function growKeptDeltas(kept: KeptDeltas, capacity: number, shared: boolean): void {
  const at = entryTable(capacity, shared);
  at.set(kept.at.subarray(0, Math.min(kept.at.length, capacity)));
  kept.at = at;
}
