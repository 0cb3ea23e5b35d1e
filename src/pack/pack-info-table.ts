import { PackwrightError } from '../errors/packwright-error.js';
import { OBJ_OFS_DELTA } from './entry-header.js';
import type { PackIndex } from '../idx/pack-index.js';
import type { PackFile } from './pack-file.js';
import { deltaBaseSize, deltaResultSize } from '../delta/apply-delta.js';
import { Inflater } from '../zlib/inflater.js';
import { EntryHeader, HEADER_INCOMPLETE, parseEntryHeader } from './entry-header.js';

/**
 * Type, size and delta base of every object of a pack, by idx position, learned in
 * one sequential pass through a small reused window: what `cat-file --batch-check` over all
 * objects needs, without holding the pack or walking any delta chain twice. 10 bytes an object
 * (sizes on disk, when asked for, come from `PackIndex.entrySizes`).
 *
 * A delta's size is the second varint at the start of its data, so every delta costs an inflate
 * of its first bytes (~0.25 µs, or ~3.8 µs when its stream opens with a dynamic-Huffman block,
 * whose code tables zlib must build first). But a delta's first varint is the size of its base,
 * which git checks against the base when it applies the delta. The pass therefore runs from the
 * back of the pack to the front: children (later in the pack) come before their bases, and a
 * delta whose size a child already stated is not inflated at all. On gitoxide.pack that is 44k of
 * 140k deltas. What this gives up: the start of such a delta's own stream is not checked here
 * (git's --batch-check would report it unreadable); it is checked when the object is read.
 */
export interface PackInfoTable {
  /** Resolved object type (1-4). */
  types: Uint8Array;
  /**
   * Resolved object size, or BIG_SIZE when it needs more than 32 bits and is in `bigSizes`: half
   * the memory of doubles, and small integers read back without allocating (see `objectSize`).
   */
  sizes: Uint32Array;
  bigSizes: Map<number, number>;
  /** Idx position of the delta base, or -1. */
  basePositions: Int32Array;
  /**
   * How many deltas of the pack have this object as their base, up to MAX_CHILDREN (a count that
   * reached it means "many", and is not exact).
   */
  children: Uint8Array;
}

/** Where `PackInfoTable.children` stops counting. Below 255 by more than the threads that may count at once. */
export const MAX_CHILDREN = 248;

/** In `sizes`: the size is in `bigSizes`. */
export const BIG_SIZE = 0xffffffff;

/** The size of the object at idx position `position`. */
export function objectSize(table: PackInfoTable, position: number): number {
  const size = table.sizes[position] as number;
  return size !== BIG_SIZE ? size : (table.bigSizes.get(position) as number);
}

function setSize(table: PackInfoTable, position: number, size: number): void {
  if (size < BIG_SIZE) {
    if (table.sizes[position] === BIG_SIZE) table.bigSizes.delete(position);
    table.sizes[position] = size;
  } else {
    table.sizes[position] = BIG_SIZE;
    table.bigSizes.set(position, size);
  }
}

/**
 * The pack is read through a reused window of this size. Small enough to stay in the CPU's cache
 * between the read and the header parsing (measured on gitoxide.pack, 111 MB: 8 MiB windows
 * 270 ms, 256 KiB windows 225 ms for the whole table).
 */
const WINDOW = 256 << 10;
/**
 * Compressed bytes always enough for a delta's first 20 bytes (its size varints): a zlib header,
 * the largest dynamic-Huffman block header (~290 bytes) and 20 symbols of at most 15 bits.
 * Less could cut a valid stream at a window's end and report it corrupt.
 */
const PREFIX = 512;

/**
 * Type, size and delta base of every object of a pack, learnt in one sequential pass over its entries'
 * headers.
 */
export function buildInfoTable(pack: PackFile, index: PackIndex, windowSize = WINDOW): PackInfoTable {
  const n = index.count;
  const table = emptyInfoTable(n);
  scanInfoRange(pack, index, table, 0, n, windowSize);
  resolveInfoTypes(table, index, pack.path);
  return table;
}

/** A table of `n` entries, nothing known yet (memory from `alloc`, shared between threads when it makes SharedArrayBuffers). */
export function emptyInfoTable(n: number, alloc: (bytes: number) => ArrayBufferLike = (b) => new ArrayBuffer(b)): PackInfoTable & { sizeKnown: Uint8Array } {
  const basePositions = new Int32Array(alloc(n * 4));
  basePositions.fill(-1);
  return {
    types: new Uint8Array(alloc(n)),
    sizes: new Uint32Array(alloc(n * 4)),
    bigSizes: new Map(),
    basePositions,
    children: new Uint8Array(alloc(n)),
    sizeKnown: new Uint8Array(alloc(n)),
  };
}

/**
 * The first half of `buildInfoTable` for the entries at pack-order indexes `[from, to)`: entry
 * types of whole objects, every size, each delta's base. Ranges can be scanned by several threads
 * into one shared table: each writes its own entries, and a size a child states for a base in
 * another range is the same number whoever writes it. A delta whose children are all in later
 * ranges inflates its own first bytes (the work the back-to-front order saves within a range).
 */
export function scanInfoRange(pack: PackFile, index: PackIndex, table: PackInfoTable & { sizeKnown?: Uint8Array }, from: number, to: number, windowSize = WINDOW): void {
  const path = pack.path;
  const n = index.count;
  const H = index.hashLength;
  const { offsets, positions } = index.packOrder();
  const inflater = new Inflater();
  const h = new EntryHeader();
  const prefix = Buffer.allocUnsafe(32);
  try {
    const dataEnd = pack.dataEnd;
    let buf = Buffer.allocUnsafeSlow(windowSize);
    let start = 0;
    let end = 0;
    // The window is filled backwards: it ends where the wanted range ends. Refilling is rare (once
    // per window), so it stays out of the loop's optimized code, which then compiles faster.
    const refill = (lo: number, hi: number): void => {
      if (hi - lo > buf.length) buf = Buffer.allocUnsafeSlow(hi - lo);
      start = Math.min(lo, Math.max(0, hi - buf.length));
      end = 0;
      end = Math.min(buf.length, dataEnd - start);
      pack.readInto(buf, start, end);
    };
    // Back to front, so a delta's children come before it: the first varint of a child's delta
    // states its base's size, and a delta whose size a child stated needs no inflating of its own.
    const sizeKnown = table.sizeKnown ?? new Uint8Array(n);
    for (let k = to - 1; k >= from; k--) {
      const off = offsets[k] as number;
      const next = k + 1 < n ? (offsets[k + 1] as number) : dataEnd;
      const pos = positions[k] as number;
      const want = Math.min(next, off + 10 + H + PREFIX);
      if (off < start || want > start + end) refill(off, want);
      const at = off - start;
      const hl = parseEntryHeader(buf, at, end, off, H, h, path);
      if (hl === HEADER_INCOMPLETE) throw new PackwrightError('PACK_TRUNCATED', `${path}: entry header at offset ${off} is cut`, { file: path, offset: off });
      if (h.type < OBJ_OFS_DELTA) {
        table.types[pos] = h.type;
        setSize(table, pos, h.size);
        // A REF child later in this pass must not replace the size the header gives.
        sizeKnown[pos] = 1;
        continue;
      }
      let base: number;
      if (h.type === OBJ_OFS_DELTA) {
        base = index.positionOfOffset(h.baseOffset, k);
        if (base < 0) throw new PackwrightError('PACK_CORRUPT', `${path}: OFS_DELTA at offset ${off} points into the middle of an entry (${h.baseOffset})`, { file: path, offset: off });
      } else {
        base = index.find(buf, h.baseIdPosition);
        if (base < 0) throw new PackwrightError('PACK_CORRUPT', `${path}: REF_DELTA at offset ${off} has its base outside the pack`, { file: path, offset: off });
      }
      table.basePositions[pos] = base;
      // Atomics: threads scanning ranges of one shared table may count children of one base.
      if ((table.children[base] as number) < MAX_CHILDREN) Atomics.add(table.children, base, 1);
      if (sizeKnown[pos] === 1) continue;
      const got = inflater.inflatePrefix(buf, at + hl, Math.min(end, next - start), prefix, 0, Math.min(h.size, 20));
      if (got < 0) throw new PackwrightError('PACK_CORRUPT', `${path}: cannot inflate the delta at offset ${off}: ${inflater.lastError}`, { file: path, offset: off });
      const resultSize = deltaResultSize(prefix, 0, got);
      if (resultSize < 0) throw new PackwrightError('DELTA_CORRUPT', `${path}: bad delta header at offset ${off}: the size varints are cut`, { file: path, offset: off });
      setSize(table, pos, resultSize);
      sizeKnown[pos] = 1;
      if (sizeKnown[base] === 0) {
        setSize(table, base, deltaBaseSize(prefix, 0, got));
        sizeKnown[base] = 1;
      }
    }
  } finally {
    inflater.close();
  }
}

/** Entries a thread claims at once in `scanInfoChunks`. */
export const INFO_CHUNK = 4096;

/**
 * Scans ranges of `INFO_CHUNK` entries claimed one at a time through `next` (an atomic counter
 * several threads share) until none are left: from the back of the pack to the front, the order
 * of one thread's scan, so most children still state their bases' sizes before the bases are
 * reached. Threads that claim by cost instead of by count end together: the front of a pack
 * (commits and trees, many small deltas) costs twice what its count says.
 */
export function scanInfoChunks(pack: PackFile, index: PackIndex, table: PackInfoTable & { sizeKnown?: Uint8Array }, next: Int32Array, chunk = INFO_CHUNK, windowSize = WINDOW): void {
  const n = index.count;
  for (;;) {
    const c = Atomics.add(next, 0, 1);
    const to = n - c * chunk;
    if (to <= 0) return;
    scanInfoRange(pack, index, table, Math.max(0, to - chunk), to, windowSize);
  }
}

/** The second half of `buildInfoTable`: each delta's type, from its base's. */
export function resolveInfoTypes(table: PackInfoTable, index: PackIndex, path: string): void {
  const n = index.count;
  const { positions } = index.packOrder();
  const pendingRef: number[] = [];
  // Types front to back: an OFS base comes earlier, so its type is known; a REF base may come later.
  for (let k = 0; k < n; k++) {
    const pos = positions[k] as number;
    const base = table.basePositions[pos] as number;
    if (base < 0) continue;
    const type = table.types[base] as number;
    if (type !== 0) table.types[pos] = type;
    else pendingRef.push(pos);
  }
  // Deltas whose base came later: follow base links (a cycle cannot resolve and is an error).
  for (const pos of pendingRef) {
    let p = pos;
    let steps = 0;
    while (table.types[p] === 0) {
      p = table.basePositions[p] as number;
      if (p < 0 || ++steps > n) throw new PackwrightError('PACK_CORRUPT', `${path}: delta chain of the object at idx position ${pos} loops`, { file: path });
    }
    const type = table.types[p] as number;
    for (let q = pos; table.types[q] === 0; q = table.basePositions[q] as number) table.types[q] = type;
  }
}
