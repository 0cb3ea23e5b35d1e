import { readFileSync } from 'node:fs';
import { PackwrightError, type ErrorCode } from '../errors/packwright-error.js';
import { hashBytes } from '../hash/hash-object.js';
import { formatId, hashLength, type ObjectFormat } from '../hash/object-format.js';

/** The header: a 4-byte signature, version 1, the hash function's id. */
const HEADER = 12;

/**
 * The shape git gives the files that add one 32-bit number per object to a pack (`.rev`,
 * `.mtimes`; gitformat-pack): a signature, version 1, the hash function's id, the numbers, then
 * the pack's hash and the file's own.
 */
export function writePackTableFile(magic: number, format: ObjectFormat, values: Uint32Array, packHash: Uint8Array): Buffer {
  const H = packHash.length;
  const n = values.length;
  const out = Buffer.alloc(HEADER + 4 * n + 2 * H);
  out.writeUInt32BE(magic, 0);
  out.writeUInt32BE(1, 4);
  out.writeUInt32BE(formatId(format), 8);
  for (let i = 0; i < n; i++) out.writeUInt32BE(values[i] as number, HEADER + 4 * i);
  out.set(packHash, HEADER + 4 * n);
  hashBytes(format, out.subarray(0, HEADER + 4 * n + H)).copy(out, HEADER + 4 * n + H);
  return out;
}

export interface PackTableFile {
  path: string;
  magic: number;
  format: ObjectFormat;
  /** Objects of the pack: the number of values. */
  count: number;
  /** The pack it must belong to, when known. */
  packHash?: Uint8Array;
  /** The error code, and what the file is called in messages ('reverse-index', 'mtimes'). */
  code: ErrorCode;
  what: string;
}

/** Reads a file of `writePackTableFile`'s shape after checking it (size, signature, version, hash id, pack); throws `code`. */
export function readPackTableFile(file: PackTableFile): Uint32Array {
  const { path, format, count, what } = file;
  const data = readFileSync(path);
  const H = hashLength(format);
  const fail = (message: string, offset: number): never => {
    throw new PackwrightError(file.code, `${path}: ${message}`, { file: path, offset });
  };
  if (data.length !== HEADER + 4 * count + 2 * H) fail(`${what} file has ${data.length} bytes, expected ${HEADER + 4 * count + 2 * H}`, 0);
  if (data.readUInt32BE(0) !== file.magic) fail(`${what} file has a bad signature`, 0);
  if (data.readUInt32BE(4) !== 1) fail(`${what} file has unsupported version ${data.readUInt32BE(4)}`, 4);
  if (data.readUInt32BE(8) !== formatId(format)) fail(`${what} file has unsupported hash id ${data.readUInt32BE(8)} (${format} expected)`, 8);
  const trailer = HEADER + 4 * count;
  if (file.packHash !== undefined && !data.subarray(trailer, trailer + H).equals(file.packHash)) fail(`${what} file is for another pack (its pack hash differs)`, trailer);
  const values = new Uint32Array(count);
  for (let i = 0; i < count; i++) values[i] = data.readUInt32BE(HEADER + 4 * i);
  return values;
}

/** Where value `i` of such a file starts (for errors about one value). */
export function packTableValueOffset(i: number): number {
  return HEADER + 4 * i;
}
