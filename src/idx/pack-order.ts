// The pack order of an index: its entries sorted by offset, computed when there is no `.rev`.

/**
 * The entries of a pack in offset order: `offsets[k]` is the k-th entry's offset and
 * `positions[k]` the idx position of its id (an in-memory `.rev`). Offsets are 32-bit integers
 * for packs under 4 GiB, doubles beyond.
 */
export interface PackOrder {
  offsets: Uint32Array | Float64Array;
  positions: Uint32Array;
}

/**
 * Offsets below 4 GiB: a least-significant-digit radix sort over three 11-bit digits (~10× faster
 * than a numeric sort on millions of entries; up to NATIVE_SORT_MAX, a native sort of packed keys),
 * reading offsets straight from the idx (`offsetOf`). Fresh memory is what
 * costs here (the first-touch cost, memory/index.ts), so nothing is copied out first, and offsets
 * are 32-bit integers: half the size of doubles, and read back as small integers, which even
 * unoptimized code handles without allocating.
 */
export function packOrderOf32(n: number, offsetOf: (i: number) => number): PackOrder {
  if (n <= NATIVE_SORT_MAX) return nativeOrderOf32(n, offsetOf);
  // Keys (offsets) travel with their idx positions, so every pass reads both arrays in order
  // and no pass looks an offset up at random (10M objects: 0.9 s instead of 4.0 s with two
  // 16-bit passes that looked offsets up by position). Three 11-bit digits: 2048 write streams
  // a pass stay within the CPU's caches and TLB, where 65536 did not. Transiently 16 bytes an
  // object; the result keeps 8.
  let keys = new Uint32Array(n);
  let order = new Uint32Array(n);
  for (let i = 0; i < n; i++) {
    keys[i] = offsetOf(i);
    order[i] = i;
  }
  let keysOut = new Uint32Array(n);
  let orderOut = new Uint32Array(n);
  const counts = new Uint32Array(RADIX);
  for (let shift = 0; shift < 32; shift += RADIX_BITS) {
    counts.fill(0);
    for (let j = 0; j < n; j++) {
      const d = ((keys[j] as number) >>> shift) & RADIX_MASK;
      counts[d] = (counts[d] as number) + 1;
    }
    prefixSums(counts);
    for (let j = 0; j < n; j++) {
      const key = keys[j] as number;
      const d = (key >>> shift) & RADIX_MASK;
      const at = counts[d] as number;
      counts[d] = at + 1;
      keysOut[at] = key;
      orderOut[at] = order[j] as number;
    }
    [keys, keysOut] = [keysOut, keys];
    [order, orderOut] = [orderOut, order];
  }
  return { offsets: keys, positions: order };
}

/**
 * Up to this many entries, a native sort of (offset, position) packed into one double beats the
 * radix sort: a one-shot command (upload-pack of a small fetch) computes the order once, and the
 * radix passes then run mostly unoptimized. Measured cold, one process each: 130k entries 25 ms
 * against 50; 250k 55 against 57; 1M 215 against 134.
 */
const NATIVE_SORT_MAX = 200_000;

/** `packOrderOf32` by a native numeric sort, for up to NATIVE_SORT_MAX entries (exact: offset × 2^18 + position < 2^50). */
function nativeOrderOf32(n: number, offsetOf: (i: number) => number): PackOrder {
  const offsets = new Uint32Array(n);
  const positions = new Uint32Array(n);
  sortPacked(n, offsetOf, new Float64Array(n), offsets, positions);
  return { offsets, positions };
}

/** Bits of a key `sortPacked` keeps for the position: enough for `n` entries. */
function positionBits(n: number): number {
  return Math.max(1, Math.ceil(Math.log2(n + 1)));
}

/**
 * Sorts by offset through one native numeric sort: each (offset, position) packed into one double
 * in `keys`, exact while the largest offset × 2^positionBits(n) is below 2^53 (the caller's to
 * know), then unpacked into `offsets` (which may be `keys` itself) and `positions`.
 */
function sortPacked(n: number, offsetOf: (i: number) => number, keys: Float64Array, offsets: Uint32Array | Float64Array, positions: Uint32Array): void {
  const scale = 2 ** positionBits(n);
  for (let i = 0; i < n; i++) keys[i] = offsetOf(i) * scale + i;
  keys.sort();
  for (let k = 0; k < n; k++) {
    const key = keys[k] as number;
    const position = key % scale;
    positions[k] = position;
    offsets[k] = (key - position) / scale;
  }
}

/** Offsets past 4 GiB (packs with a 64-bit offset table): doubles, sorted natively. */
export function packOrderOfLarge(n: number, maxOffset: number, offsetOf: (i: number) => number): PackOrder {
  const sorted = new Float64Array(n);
  const positions = new Uint32Array(n);
  if (maxOffset * 2 ** positionBits(n) < 2 ** 53) {
    // (offset, position) in one exactly representable number, and the native numeric sort does
    // the work: ~10× faster than a comparator over 226k entries.
    sortPacked(n, offsetOf, sorted, sorted, positions);
  } else {
    // Too many entries to pack beside offsets this large (10M objects past 512 GiB, say): a
    // least-significant-digit radix sort over 16-bit digits, three of them below 2^48.
    const offsets = new Float64Array(n);
    for (let i = 0; i < n; i++) offsets[i] = offsetOf(i);
    let from = new Uint32Array(n);
    for (let i = 0; i < n; i++) from[i] = i;
    let to = positions;
    const counts = new Uint32Array(65536);
    const digits = maxOffset < 2 ** 48 ? 3 : 4;
    for (let digit = 0; digit < digits; digit++) {
      const unit = 2 ** (16 * digit);
      const digitOf = (i: number): number => Math.floor((offsets[i] as number) / unit) % 65536;
      counts.fill(0);
      for (let j = 0; j < n; j++) {
        const d = digitOf(from[j] as number);
        counts[d] = (counts[d] as number) + 1;
      }
      prefixSums(counts);
      for (let j = 0; j < n; j++) {
        const i = from[j] as number;
        const d = digitOf(i);
        const at = counts[d] as number;
        counts[d] = at + 1;
        to[at] = i;
      }
      [from, to] = [to, from];
    }
    // After the last pass's swap, the result is in `from` (which may be `positions` itself).
    for (let k = 0; k < n; k++) {
      positions[k] = from[k] as number;
      sorted[k] = offsets[positions[k] as number] as number;
    }
  }
  return { offsets: sorted, positions };
}

/** Digits of the pack order's radix sort (packOrderOf32). */
const RADIX_BITS = 11;
const RADIX = 1 << RADIX_BITS;
const RADIX_MASK = RADIX - 1;

/** Turns counts into the start index of each digit's run. */
function prefixSums(counts: Uint32Array): void {
  let sum = 0;
  for (let d = 0; d < counts.length; d++) {
    const c = counts[d] as number;
    counts[d] = sum;
    sum += c;
  }
}
