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
  const ids = scan.ids;
  if (strict) {
    for (let i = 1; i < n; i++) {
      const a = (order[i - 1] as number) * H;
      const b = (order[i] as number) * H;
      if (compareBytes(ids, a, ids, b, H) === 0) {
        throw new PackwrightError('PACK_DUPLICATE_OBJECT', `${name}: the same object ${toHex(ids.subarray(b, b + H))} appears twice in the pack`, { file: name, offset: scan.offsets[order[i] as number] as number });
      }
    }
  }
  // Gathered in sorted order straight from the scan's tables (in pack order): no sorted copies.
  const index = writeIndex(format, { ids, offsets: scan.offsets.subarray(0, n), crc32: scan.crc32, order }, scan.packHash, writeOptions);
  return { index, order };
}
