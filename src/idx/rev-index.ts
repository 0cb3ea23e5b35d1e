import { readFileSync } from 'node:fs';
import { PackwrightError } from '../errors/packwright-error.js';
import { hashBytes } from '../hash/hash-object.js';
import { formatId, type ObjectFormat } from '../hash/object-format.js';

const RIDX_MAGIC = 0x52494458; // "RIDX"
const HEADER = 12;

/**
 * `.rev` bytes (gitformat-pack, "pack-*.rev"): RIDX, version 1, hash id, then for each object in
 * pack order its position in the index, then the pack hash and the file's own hash.
 * `positionsInPackOrder[k]` is the idx position of the k-th entry by offset.
 */
export function writeRevIndex(format: ObjectFormat, positionsInPackOrder: Uint32Array, packHash: Uint8Array): Buffer {
  const H = packHash.length;
  const n = positionsInPackOrder.length;
  const out = Buffer.alloc(HEADER + 4 * n + 2 * H);
  out.writeUInt32BE(RIDX_MAGIC, 0);
  out.writeUInt32BE(1, 4);
  out.writeUInt32BE(formatId(format), 8);
  for (let i = 0; i < n; i++) out.writeUInt32BE(positionsInPackOrder[i] as number, HEADER + 4 * i);
  out.set(packHash, HEADER + 4 * n);
  hashBytes(format, out.subarray(0, HEADER + 4 * n + H)).copy(out, HEADER + 4 * n + H);
  return out;
}

/**
 * Reads a `.rev` file and returns the idx positions in pack order, after checking its shape and,
 * when `packHash` is given, that it belongs to that pack (a `.rev` left from another pack of the
 * same name would give wrong offsets).
 */
export function readRevIndex(path: string, format: ObjectFormat, objectCount: number, packHash?: Uint8Array): Uint32Array {
  const data = readFileSync(path);
  const H = format === 'sha1' ? 20 : 32;
  const fail = (message: string, offset: number): never => {
    throw new PackwrightError('REV_CORRUPT', `${path}: ${message}`, { file: path, offset });
  };
  if (data.length !== HEADER + 4 * objectCount + 2 * H) fail(`reverse index has ${data.length} bytes, expected ${HEADER + 4 * objectCount + 2 * H}`, 0);
  if (data.readUInt32BE(0) !== RIDX_MAGIC) fail('reverse-index file has a bad signature', 0);
  if (data.readUInt32BE(4) !== 1) fail(`reverse-index version ${data.readUInt32BE(4)} is unsupported`, 4);
  if (data.readUInt32BE(8) !== formatId(format)) fail(`reverse-index hash id ${data.readUInt32BE(8)} does not match ${format}`, 8);
  const trailer = HEADER + 4 * objectCount;
  if (packHash !== undefined && !data.subarray(trailer, trailer + H).equals(packHash)) fail('reverse index is for another pack (its pack hash differs)', trailer);
  const positions = new Uint32Array(objectCount);
  for (let i = 0; i < objectCount; i++) {
    const v = data.readUInt32BE(HEADER + 4 * i);
    if (v >= objectCount) fail(`position ${v} is out of range`, HEADER + 4 * i);
    positions[i] = v;
  }
  return positions;
}
