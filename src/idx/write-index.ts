import type { ObjectFormat } from '../hash/object-format.js';
import { hashBytes } from '../hash/hash-object.js';

export interface IndexEntries {
  /** Ids of all objects, sorted, H bytes each, back to back. */
  ids: Uint8Array;
  /** Pack offsets in the same (sorted-id) order. */
  offsets: Float64Array;
  /** CRC32 of each raw entry, same order (v2 only). */
  crc32: Uint32Array;
}

export interface WriteIndexOptions {
  /** 1 or 2 (default 2). A v1 request becomes v2 when an offset needs the 64-bit table. */
  version?: 1 | 2;
  /**
   * Offsets above this go to the 64-bit table (git's `--index-version=2,<limit>`); default
   * 0x7fffffff. Lower it to test large offsets on small packs.
   */
  largeOffsetLimit?: number;
}

/**
 * Builds `.idx` bytes exactly as git's `write_idx_file` (pack-write.c) does, trailer included:
 * identical input gives byte-identical output.
 */
export function writeIndex(format: ObjectFormat, entries: IndexEntries, packHash: Uint8Array, options: WriteIndexOptions = {}): Buffer {
  const H = packHash.length;
  const n = entries.offsets.length;
  const limit = options.largeOffsetLimit ?? 0x7fffffff;
  const needsLarge = (offset: number): boolean => offset >= 2 ** 31 || offset > limit;
  let maxOffset = 0;
  let largeCount = 0;
  for (let i = 0; i < n; i++) {
    const o = entries.offsets[i] as number;
    if (o > maxOffset) maxOffset = o;
    if (needsLarge(o)) largeCount++;
  }
  // pack-write.c: "if last object's offset is >= 2^31 we should use index V2".
  const version = needsLarge(maxOffset) ? 2 : (options.version ?? 2);
  const size = version === 1
    ? 1024 + n * (H + 4) + 2 * H
    : 8 + 1024 + n * (H + 8) + largeCount * 8 + 2 * H;
  const out = Buffer.alloc(size);
  let p = 0;
  if (version === 2) {
    out.writeUInt32BE(0xff744f63, 0);
    out.writeUInt32BE(2, 4);
    p = 8;
  }
  const ids = entries.ids;
  let k = 0;
  for (let b = 0; b < 256; b++) {
    while (k < n && (ids[k * H] as number) <= b) k++;
    out.writeUInt32BE(k, p + 4 * b);
  }
  p += 1024;
  if (version === 1) {
    for (let i = 0; i < n; i++) {
      out.writeUInt32BE(entries.offsets[i] as number, p);
      out.set(ids.subarray(i * H, i * H + H), p + 4);
      p += H + 4;
    }
  } else {
    out.set(ids.subarray(0, n * H), p);
    p += n * H;
    for (let i = 0; i < n; i++) out.writeUInt32BE(entries.crc32[i] as number, p + 4 * i);
    p += 4 * n;
    const largeStart = p + 4 * n;
    let large = 0;
    for (let i = 0; i < n; i++) {
      const o = entries.offsets[i] as number;
      if (needsLarge(o)) {
        out.writeUInt32BE((0x80000000 | large) >>> 0, p + 4 * i);
        const q = largeStart + 8 * large;
        out.writeUInt32BE(Math.floor(o / 2 ** 32), q);
        out.writeUInt32BE(o >>> 0, q + 4);
        large++;
      } else {
        out.writeUInt32BE(o, p + 4 * i);
      }
    }
    p = largeStart + 8 * large;
  }
  out.set(packHash, p);
  p += H;
  hashBytes(format, out.subarray(0, p)).copy(out, p);
  return out;
}
