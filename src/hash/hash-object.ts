import { nodeCrypto } from './node-crypto.js';
import { collisionAttack } from './collision-attack.js';
import { Sha1dc, sha1dcInto } from './sha1dc/sha1dc.js';
import { detectsCollisions, type ObjectFormat } from './object-format.js';
import { TYPE_NAMES, type ObjectType } from '../objects/object-type.js';

/** `"<type> <size>\0"` as bytes (the type by name, or by its pack number 1-4); at most 7 + 1 + 20 + 1 bytes. */
export function objectHeader(type: ObjectType | number, size: number): Buffer {
  return Buffer.from(`${typeof type === 'number' ? TYPE_NAMES[type] : type} ${size}\0`, 'latin1');
}

/**
 * Writes `"<type> <size>\0"` ending exactly at `end` in `buf` and returns where it starts. Callers
 * that keep a few spare bytes in front of an object's data can then hash header + data as one
 * contiguous range, which is what makes `crypto.hash` the fastest path (docs/ARCHITECTURE.md, measured facts).
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

/**
 * Longest `"<type> <size>\0"`: git's MAX_HEADER_LEN (object-file.c), which it also refuses to
 * exceed in loose objects ("commit " + 16 digits + NUL fits with room to spare).
 */
export const MAX_HEADER_LENGTH = 32;

/**
 * The digest of `data`. It is asked of `crypto.hash` as a 'binary' (latin1) string, a char per
 * byte, not as a Buffer: Node 20 spends ~550 ns making a Buffer from C++, while the whole hash of
 * a 64-byte input takes ~250 ns the other way. For small objects that is most of hashing's cost.
 */
export function hashBytes(format: ObjectFormat, data: Uint8Array): Buffer {
  return Buffer.from(digestString(format, data), 'latin1');
}

/**
 * Writes the digest of `data` into `out` at `at`, for callers filling an id table. With
 * `detectCollisions` a SHA-1 digest comes from sha1dc (hash/sha1dc), and the result says whether
 * `data` holds half of a collision attack; otherwise it is false.
 */
export function hashInto(format: ObjectFormat, data: Uint8Array, out: Uint8Array, at: number, detectCollisions = false): boolean {
  if (detectsCollisions(format, detectCollisions)) return sha1dcInto(data, out, at);
  const digest = digestString(format, data);
  for (let i = 0; i < digest.length; i++) out[at + i] = digest.charCodeAt(i);
  return false;
}

function digestString(format: ObjectFormat, data: Uint8Array): string {
  return nodeCrypto().hash(format, data, 'binary');
}

/**
 * The object id of `data` as an object of `type` (by name, or by its pack number 1-4), as
 * `git hash-object` computes it. With `detectCollisions`, a SHA-1 id comes from sha1dc, and an
 * object that holds half of a collision attack fails with COLLISION_ATTACK.
 *
 * @example hashObject('sha1', 'blob', Buffer.from('hello\n')).toString('hex') // 'ce0136…'
 */
export function hashObject(format: ObjectFormat, type: ObjectType | number, data: Uint8Array, detectCollisions = false): Buffer {
  const header = objectHeader(type, data.length);
  if (detectsCollisions(format, detectCollisions)) {
    const h = new Sha1dc().update(header).update(data);
    const id = h.digest();
    if (h.collision) throw collisionAttack(id);
    return id;
  }
  if (data.length < 1 << 16) {
    const joined = Buffer.allocUnsafe(header.length + data.length);
    header.copy(joined, 0);
    joined.set(data, header.length);
    return hashBytes(format, joined);
  }
  return nodeCrypto().createHash(format).update(header).update(data).digest();
}

/** The id of `data` under a header with any type name (git's hash_object_file_literally). */
export function hashLiterally(format: ObjectFormat, typeName: string, data: Uint8Array): Buffer {
  return nodeCrypto().createHash(format).update(Buffer.from(`${typeName} ${data.length}\0`, 'latin1')).update(data).digest();
}
