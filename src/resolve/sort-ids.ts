import { compareBytes } from '../hash/hex.js';

/**
 * Returns entry numbers ordered by id (ties by entry number, i.e. by pack offset). Packs the first
 * 32 bits of each id with the entry number into one double and lets the native numeric sort do
 * the bulk; only runs sharing those 32 bits are then compared in full. For n < 2^21 entries; a
 * comparator sort beyond that.
 */
export function sortIds(ids: Uint8Array, n: number, H: number): Uint32Array {
  const order = new Uint32Array(n);
  const cmp = (a: number, b: number): number => compareBytes(ids, a * H, ids, b * H, H) || a - b;
  const bits = Math.max(1, Math.ceil(Math.log2(n + 1)));
  if (bits > 21) {
    for (let i = 0; i < n; i++) order[i] = i;
    return order.sort(cmp);
  }
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
