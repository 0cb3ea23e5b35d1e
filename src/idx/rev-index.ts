import { PackwrightError } from '../errors/packwright-error.js';
import type { ObjectFormat } from '../hash/object-format.js';
import { packTableValueOffset, readPackTableFile, writePackTableFile } from './pack-table-file.js';

const RIDX_MAGIC = 0x52494458; // "RIDX"

/**
 * `.rev` bytes (gitformat-pack, "pack-*.rev"): for each object in pack order its position in the
 * index, in the shape of pack-table-file.ts. `positionsInPackOrder[k]` is the idx position of the
 * k-th entry by offset.
 */
export function writeRevIndex(format: ObjectFormat, positionsInPackOrder: Uint32Array, packHash: Uint8Array): Buffer {
  return writePackTableFile(RIDX_MAGIC, format, positionsInPackOrder, packHash);
}

/**
 * Reads a `.rev` file and returns the idx positions in pack order, after checking its shape and,
 * when `packHash` is given, that it belongs to that pack (a `.rev` left from another pack of the
 * same name would give wrong offsets).
 */
export function readRevIndex(path: string, format: ObjectFormat, objectCount: number, packHash?: Uint8Array): Uint32Array {
  const positions = readPackTableFile({ path, magic: RIDX_MAGIC, format, count: objectCount, ...(packHash !== undefined ? { packHash } : {}), code: 'REV_CORRUPT', what: 'reverse-index' });
  for (let i = 0; i < objectCount; i++) {
    const v = positions[i] as number;
    if (v >= objectCount) throw new PackwrightError('REV_CORRUPT', `${path}: position ${v} is out of range`, { file: path, offset: packTableValueOffset(i) });
  }
  return positions;
}
