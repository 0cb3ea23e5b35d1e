import type { ObjectFormat } from '../hash/object-format.js';
import { readPackTableFile, writePackTableFile } from './pack-table-file.js';

const MTIMES_MAGIC = 0x4d544d45; // "MTME"

/**
 * `.mtimes` bytes of a cruft pack (gitformat-pack, "pack-*.mtimes"): each object's modification
 * time (seconds, 32 bits) in index order, in the shape of pack-table-file.ts.
 */
export function writeMtimes(format: ObjectFormat, mtimesInIndexOrder: Uint32Array, packHash: Uint8Array): Buffer {
  return writePackTableFile(MTIMES_MAGIC, format, mtimesInIndexOrder, packHash);
}

/**
 * Reads a cruft pack's `.mtimes`: each object's time by index position, after checking it as
 * git's load_pack_mtimes_file does, and that it belongs to the pack of `packHash`.
 */
export function readMtimes(path: string, format: ObjectFormat, objectCount: number, packHash?: Uint8Array): Uint32Array {
  return readPackTableFile({ path, magic: MTIMES_MAGIC, format, count: objectCount, ...(packHash !== undefined ? { packHash } : {}), code: 'MTIMES_CORRUPT', what: 'mtimes' });
}
