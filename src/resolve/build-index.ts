import { PackwrightError } from '../errors/packwright-error.js';
import { toHex } from '../hash/hex.js';
import { hashLength, type ObjectFormat } from '../hash/object-format.js';
import { compareBytes } from '../idx/sorted-ids.js';
import { writeIndex, type WriteIndexOptions } from '../idx/write-index.js';
import type { PackScan } from './pack-scan.js';
import { sortIds } from './sort-ids.js';

export interface BuiltIndex {
  /** The `.idx` bytes. */
  index: Buffer;
  /** `order[i]`: the entry (pack order) whose id is i-th in sorted order. */
  order: Uint32Array;
}

/**
 * Sorts the scanned ids and lays out the `.idx` (ids, CRCs, offsets) as git's `write_idx_file`
 * does. With `strict`, a duplicate object is PACK_DUPLICATE_OBJECT (git's --strict). `sorted` is
 * the order when it is known already (checked against an existing index: orderFromIndex).
 */
export function buildIndex(scan: PackScan, format: ObjectFormat, name: string, strict: boolean, writeOptions: WriteIndexOptions, sorted?: Uint32Array): BuiltIndex {
  const H = hashLength(format);
  const n = scan.count;
  const order = sorted ?? sortIds(scan.ids, n, H);
  const sortedIds = new Uint8Array(n * H);
  const sortedOffsets = new Float64Array(n);
  const sortedCrc = new Uint32Array(n);
  const ids = scan.ids;
  for (let i = 0; i < n; i++) {
    const k = order[i] as number;
    // A byte loop: a subarray and a set per id cost ~150 ns (11 ms of 76k ids).
    for (let j = 0, from = k * H, to = i * H; j < H; j++) sortedIds[to + j] = ids[from + j] as number;
    sortedOffsets[i] = scan.offsets[k] as number;
    sortedCrc[i] = scan.crc32[k] as number;
  }
  if (strict) {
    for (let i = 1; i < n; i++) {
      if (compareBytes(sortedIds, (i - 1) * H, sortedIds, i * H, H) === 0) {
        throw new PackwrightError('PACK_DUPLICATE_OBJECT', `${name}: the same object ${toHex(sortedIds.subarray(i * H, i * H + H))} appears twice in the pack`, { file: name, offset: sortedOffsets[i] as number });
      }
    }
  }
  const index = writeIndex(format, { ids: sortedIds, offsets: sortedOffsets, crc32: sortedCrc }, scan.packHash, writeOptions);
  return { index, order };
}
