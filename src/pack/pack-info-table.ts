import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { PackwrightError } from '../errors/packwright-error.js';
import { OBJ_OFS_DELTA, OBJ_REF_DELTA } from '../hash/hash-object.js';
import type { PackIndex } from '../idx/pack-index.js';
import { deltaResultSize } from '../delta/apply-delta.js';
import { Inflater } from '../zlib/inflater.js';
import { EntryHeader, HEADER_INCOMPLETE, parseEntryHeader } from './entry-header.js';

/**
 * Type, size, size on disk and delta base of every object of a pack, by idx position, learned in
 * one sequential pass through a small reused window: what `cat-file --batch-check` over all
 * objects needs, without holding the pack or walking any delta chain twice. 21 bytes an object.
 */
export interface PackInfoTable {
  /** Resolved object type (1-4). */
  types: Uint8Array;
  /** Resolved object size. */
  sizes: Float64Array;
  /** Bytes of the entry in the pack. */
  diskSizes: Float64Array;
  /** Idx position of the delta base, or -1. */
  basePositions: Int32Array;
  /** 1 for objects that are the base of some delta in the pack. */
  isBase: Uint8Array;
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

export function buildInfoTable(path: string, index: PackIndex, windowSize = WINDOW): PackInfoTable {
  const n = index.count;
  const H = index.hashLength;
  const { offsets, positions } = index.packOrder();
  const table: PackInfoTable = {
    types: new Uint8Array(n),
    sizes: new Float64Array(n),
    diskSizes: new Float64Array(n),
    basePositions: new Int32Array(n).fill(-1),
    isBase: new Uint8Array(n),
  };
  const fd = openSync(path, 'r');
  const inflater = new Inflater();
  const h = new EntryHeader();
  const prefix = Buffer.allocUnsafe(32);
  const pendingRef: number[] = [];
  try {
    const dataEnd = fstatSync(fd).size - H;
    let buf = Buffer.allocUnsafeSlow(windowSize);
    let start = 0;
    let end = 0;
    const ensure = (from: number, to: number): void => {
      if (from >= start && to <= start + end) return;
      if (to - from > buf.length) buf = Buffer.allocUnsafeSlow(to - from);
      start = from;
      end = 0;
      const want = Math.min(buf.length, dataEnd - from);
      while (end < want) {
        const got = readSync(fd, buf, end, want - end, start + end);
        if (got === 0) break;
        end += got;
      }
    };
    for (let k = 0; k < n; k++) {
      const off = offsets[k] as number;
      const next = k + 1 < n ? (offsets[k + 1] as number) : dataEnd;
      const pos = positions[k] as number;
      ensure(off, Math.min(next, off + 10 + H + PREFIX));
      const at = off - start;
      const hl = parseEntryHeader(buf, at, end, off, H, h, path);
      if (hl === HEADER_INCOMPLETE) throw new PackwrightError('PACK_TRUNCATED', `${path}: entry header at offset ${off} is cut`, { file: path, offset: off });
      table.diskSizes[pos] = next - off;
      if (h.type < OBJ_OFS_DELTA) {
        table.types[pos] = h.type;
        table.sizes[pos] = h.size;
        continue;
      }
      const got = inflater.inflatePrefix(buf, at + hl, Math.min(end, next - start), prefix, 0, Math.min(h.size, 20));
      if (got < 0) throw new PackwrightError('PACK_CORRUPT', `${path}: cannot inflate the delta at offset ${off}: ${inflater.lastError}`, { file: path, offset: off });
      const resultSize = deltaResultSize(prefix, 0, got);
      if (resultSize < 0) throw new PackwrightError('DELTA_CORRUPT', `${path}: bad delta header at offset ${off}: the size varints are cut`, { file: path, offset: off });
      table.sizes[pos] = resultSize;
      let base: number;
      if (h.type === OBJ_OFS_DELTA) {
        base = index.positionOfOffset(h.baseOffset);
        if (base < 0) throw new PackwrightError('PACK_CORRUPT', `${path}: OFS_DELTA at offset ${off} points into the middle of an entry (${h.baseOffset})`, { file: path, offset: off });
      } else {
        base = index.find(buf, h.baseIdPosition);
        if (base < 0) throw new PackwrightError('PACK_CORRUPT', `${path}: REF_DELTA at offset ${off} has its base outside the pack`, { file: path, offset: off });
      }
      table.basePositions[pos] = base;
      table.isBase[base] = 1;
      // An OFS base comes earlier, so its type is known; a REF base may come later.
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
  } finally {
    inflater.close();
    closeSync(fd);
  }
  return table;
}
