import { readFileSync } from 'node:fs';
import { PackwrightError } from '../errors/packwright-error.js';
import { hashBytes } from '../hash/hash-object.js';
import { formatId, type ObjectFormat } from '../hash/object-format.js';

const MTIMES_MAGIC = 0x4d544d45; // "MTME"
const HEADER = 12;

/**
 * `.mtimes` bytes of a cruft pack (gitformat-pack, "pack-*.mtimes"): MTME, version 1, hash id,
 * then each object's modification time (seconds, 32 bits) in index order, then the pack hash and
 * the file's own hash.
 */
export function writeMtimes(format: ObjectFormat, mtimesInIndexOrder: Uint32Array, packHash: Uint8Array): Buffer {
  const H = packHash.length;
  const n = mtimesInIndexOrder.length;
  const out = Buffer.alloc(HEADER + 4 * n + 2 * H);
  out.writeUInt32BE(MTIMES_MAGIC, 0);
  out.writeUInt32BE(1, 4);
  out.writeUInt32BE(formatId(format), 8);
  for (let i = 0; i < n; i++) out.writeUInt32BE(mtimesInIndexOrder[i] as number, HEADER + 4 * i);
  out.set(packHash, HEADER + 4 * n);
  hashBytes(format, out.subarray(0, HEADER + 4 * n + H)).copy(out, HEADER + 4 * n + H);
  return out;
}

/**
 * Reads a cruft pack's `.mtimes`: each object's time by index position, after checking its shape
 * (as git's load_pack_mtimes_file: size, signature, version, hash id) and that it belongs to the
 * pack of `packHash`.
 */
export function readMtimes(path: string, format: ObjectFormat, objectCount: number, packHash?: Uint8Array): Uint32Array {
  const data = readFileSync(path);
  const H = format === 'sha1' ? 20 : 32;
  const fail = (message: string, offset: number): never => {
    throw new PackwrightError('MTIMES_CORRUPT', `${path}: ${message}`, { file: path, offset });
  };
  if (data.length !== HEADER + 4 * objectCount + 2 * H) fail(`mtimes file has ${data.length} bytes, expected ${HEADER + 4 * objectCount + 2 * H}`, 0);
  if (data.readUInt32BE(0) !== MTIMES_MAGIC) fail('mtimes file has unknown signature', 0);
  if (data.readUInt32BE(4) !== 1) fail(`mtimes file has unsupported version ${data.readUInt32BE(4)}`, 4);
  if (data.readUInt32BE(8) !== formatId(format)) fail(`mtimes file has unsupported hash id ${data.readUInt32BE(8)}`, 8);
  const trailer = HEADER + 4 * objectCount;
  if (packHash !== undefined && !data.subarray(trailer, trailer + H).equals(packHash)) fail('mtimes file is for another pack (its pack hash differs)', trailer);
  const mtimes = new Uint32Array(objectCount);
  for (let i = 0; i < objectCount; i++) mtimes[i] = data.readUInt32BE(HEADER + 4 * i);
  return mtimes;
}
