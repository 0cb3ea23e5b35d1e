import { compareBytes } from '../hash/hex.js';

/**
 * Entries from this many up are sorted by buckets of their first two bytes (`sortIdsBucketed`),
 * which needs 4 bytes an entry where the packed keys take 12, and was faster at every size tried
 * (random ids: 50k 4.2 ms against 5.1, 226k 20 against 26, 1M 122 against 134).
 */
const BUCKETED_FROM = 2 ** 16;

export interface SortIdsOptions {
  /**
   * Write the order into this table (its first n entries) instead of a new one: a caller with a
   * table it no longer needs spares the collector a copy (at 10M entries, 38 MiB).
   */
  into?: Uint32Array | undefined;
  /** Sort by buckets from this many entries (default 2^16; tests lower it). */
  bucketedFrom?: number | undefined;
}

/**
 * Returns entry numbers ordered by id (ties by entry number, i.e. by pack offset). Packs the first
 * 32 bits of each id with the entry number into one double and lets the native numeric sort do
 * the bulk; only runs sharing those 32 bits are then compared in full. The entry number must fit
 * beside the 32 bits in a double's 53 (2^21 entries); from 2^16 on, `sortIdsBucketed` does the work.
 */
export function sortIds(ids: Uint8Array, n: number, H: number, options: SortIdsOptions = {}): Uint32Array {
  const order = options.into?.subarray(0, n) ?? new Uint32Array(n);
  if (order.length < n) throw new RangeError(`sortIds: room for ${order.length} entries, not ${n}`);
  if (n >= (options.bucketedFrom ?? BUCKETED_FROM)) return sortIdsBucketed(ids, n, H, order);
  const cmp = (a: number, b: number): number => compareBytes(ids, a * H, ids, b * H, H) || a - b;
  const bits = Math.max(1, Math.ceil(Math.log2(n + 1)));
  const scale = 2 ** bits;
  const keys = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const p = i * H;
    const top = (((ids[p] as number) << 24) | ((ids[p + 1] as number) << 16) | ((ids[p + 2] as number) << 8) | (ids[p + 3] as number)) >>> 0;
    keys[i] = top * scale + i;
  }
  keys.sort();
  for (let i = 0; i < n; i++) order[i] = (keys[i] as number) % scale;
  // Fix up runs whose first four bytes are equal.
  let i = 0;
  while (i < n) {
    const top = Math.floor((keys[i] as number) / scale);
    let j = i + 1;
    while (j < n && Math.floor((keys[j] as number) / scale) === top) j++;
    if (j - i > 1) {
      const run = Array.from(order.subarray(i, j)).sort(cmp);
      order.set(run, i);
    }
    i = j;
  }
  return order;
}

/**
 * The same order for any number of entries, in linear time for hashes: a counting sort by the
 * first two bytes (stable, so entry order holds within a bucket), then each bucket (~n/65536
 * entries) sorted as above by its next four bytes packed with the position in the bucket, and
 * only runs equal in all six bytes compared in full. At 10M ids: buckets of ~150, no comparator
 * over the whole (which would take ~10 s).
 */
function sortIdsBucketed(ids: Uint8Array, n: number, H: number, order: Uint32Array): Uint32Array {
  const starts = new Uint32Array(65537);
  for (let i = 0; i < n; i++) {
    const b = ((ids[i * H] as number) << 8) | (ids[i * H + 1] as number);
    starts[b + 1] = (starts[b + 1] as number) + 1;
  }
  let largest = 0;
  for (let b = 0; b < 65536; b++) {
    largest = Math.max(largest, starts[b + 1] as number);
    starts[b + 1] = (starts[b + 1] as number) + (starts[b] as number);
  }
  const fill = starts.slice(0, 65536);
  for (let i = 0; i < n; i++) {
    const b = ((ids[i * H] as number) << 8) | (ids[i * H + 1] as number);
    order[fill[b] as number] = i;
    fill[b] = (fill[b] as number) + 1;
  }
  const cmp = (a: number, b: number): number => compareBytes(ids, a * H, ids, b * H, H) || a - b;
  const scale = 2 ** 21;
  const keys = new Float64Array(Math.min(largest, scale));
  const bucket = new Uint32Array(Math.min(largest, scale));
  for (let b = 0; b < 65536; b++) {
    const from = starts[b] as number;
    const m = (starts[b + 1] as number) - from;
    if (m < 2) continue;
    if (m > scale) {
      // Only ids made to share two bytes could fill a bucket this much: compare them in full.
      order.set(Array.from(order.subarray(from, from + m)).sort(cmp), from);
      continue;
    }
    for (let j = 0; j < m; j++) {
      const k = order[from + j] as number;
      const p = k * H + 2;
      const next = (((ids[p] as number) << 24) | ((ids[p + 1] as number) << 16) | ((ids[p + 2] as number) << 8) | (ids[p + 3] as number)) >>> 0;
      keys[j] = next * scale + j;
      bucket[j] = k;
    }
    const sorted = keys.subarray(0, m).sort();
    for (let j = 0; j < m; j++) order[from + j] = bucket[(sorted[j] as number) % scale] as number;
    // Runs equal in all six bytes: in full.
    for (let j = 0; j < m;) {
      const top = Math.floor((sorted[j] as number) / scale);
      let e = j + 1;
      while (e < m && Math.floor((sorted[e] as number) / scale) === top) e++;
      if (e - j > 1) order.set(Array.from(order.subarray(from + j, from + e)).sort(cmp), from + j);
      j = e;
    }
  }
  return order;
}
