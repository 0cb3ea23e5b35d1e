import { PackwrightError } from '../errors/packwright-error.js';
import { toHex } from '../hash/hex.js';
import { hashLength, type ObjectFormat } from '../hash/object-format.js';
import { compareBytes, lowerBound } from '../idx/sorted-ids.js';
import { streamIndex, type IndexSink, type WriteIndexOptions } from '../idx/write-index.js';
import type { PackScan } from './pack-scan.js';
import { sortIds } from '../idx/sort-ids.js';

export interface BuiltIndex {
  /** `order[i]`: the entry (pack order) whose id is i-th in sorted order. */
  order: Uint32Array;
  /** Hands the `.idx` bytes to `sink` a chunk at a time (see streamIndex): no copy of it all is made. */
  stream(sink: IndexSink): void;
  /** The entry number of the object `id`, or -1 (binary search through `order`). */
  findEntry(id: Uint8Array): number;
}

/**
 * Sorts the scanned ids for the `.idx` (ids, CRCs, offsets) git's `write_idx_file` writes. With
 * `strict`, a duplicate object is PACK_DUPLICATE_OBJECT (git's --strict). `sorted` is the order
 * when it is known already (checked against an existing index: orderFromIndex).
 */
export function buildIndex(scan: PackScan, format: ObjectFormat, name: string, strict: boolean, writeOptions: WriteIndexOptions, sorted?: Uint32Array): BuiltIndex {
  const H = hashLength(format);
  const n = scan.count;
  const order = sorted ?? sortIds(scan.ids, n, H, scan.spare !== undefined && scan.spare.length >= n ? { into: scan.spare } : {});
  // Now the order's own: the scan must not hand it out again.
  delete scan.spare;
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
  const entries = { ids, offsets: scan.offsets.subarray(0, n), crc32: scan.crc32, order };
  const idAt = (i: number): number => (order[i] as number) * H;
  return {
    order,
    stream: (sink) => streamIndex(format, entries, scan.packHash, writeOptions, sink),
    findEntry(id) {
      const i = lowerBound(ids, idAt, 0, n, id, 0, 0, H);
      return i < n && compareBytes(ids, idAt(i), id, 0, H) === 0 ? (order[i] as number) : -1;
    },
  };
}
