import { nodeCrypto } from './node-crypto.js';
import type { ObjectFormat } from './object-format.js';

export type ObjectType = 'commit' | 'tree' | 'blob' | 'tag';

/** Pack type numbers (gitformat-pack): 1 commit, 2 tree, 3 blob, 4 tag, 6 OFS_DELTA, 7 REF_DELTA. */
export const OBJ_COMMIT = 1;
export const OBJ_TREE = 2;
export const OBJ_BLOB = 3;
export const OBJ_TAG = 4;
export const OBJ_OFS_DELTA = 6;
export const OBJ_REF_DELTA = 7;

const TYPE_NAMES = ['', 'commit', 'tree', 'blob', 'tag'] as const;

export function typeName(type: number): ObjectType {
  const name = TYPE_NAMES[type];
  if (name === undefined || name === '') throw new RangeError(`Not a base object type: ${type}`);
  return name;
}

export function typeNumber(name: string): number {
  const n = TYPE_NAMES.indexOf(name as ObjectType);
  return n > 0 ? n : -1;
}

/** `"<type> <size>\0"` as bytes; at most 7 + 1 + 20 + 1 bytes. */
export function objectHeader(type: number, size: number): Buffer {
  return Buffer.from(`${TYPE_NAMES[type]} ${size}\0`, 'latin1');
}

/**
 * Writes `"<type> <size>\0"` ending exactly at `end` in `buf` and returns where it starts. Callers
 * that keep a few spare bytes in front of an object's data can then hash header + data as one
 * contiguous range, which is what makes `crypto.hash` the fastest path (DESIGN.md).
 */
export function writeHeaderBefore(buf: Uint8Array, end: number, type: number, size: number): number {
  const name = TYPE_NAMES[type] as string;
  const digits = String(size);
  let p = end - 1;
  buf[p] = 0;
  for (let i = digits.length - 1; i >= 0; i--) buf[--p] = digits.charCodeAt(i);
  buf[--p] = 0x20;
  for (let i = name.length - 1; i >= 0; i--) buf[--p] = name.charCodeAt(i);
  return p;
}

/** Longest header: "commit " + 16 digits + NUL, rounded up. */
export const MAX_HEADER_LENGTH = 32;

export function hashBytes(format: ObjectFormat, data: Uint8Array): Buffer {
  return nodeCrypto().hash(format, data, 'buffer') as unknown as Buffer;
}

/** The object id of `data` as an object of `type`. */
export function hashObject(format: ObjectFormat, type: number, data: Uint8Array): Buffer {
  const header = objectHeader(type, data.length);
  if (data.length < 1 << 16) {
    const joined = Buffer.allocUnsafe(header.length + data.length);
    header.copy(joined, 0);
    joined.set(data, header.length);
    return hashBytes(format, joined);
  }
  return nodeCrypto().createHash(format).update(header).update(data).digest();
}
