import { readExactly } from '../io/read-exactly.js';
import { nodeCrypto } from './node-crypto.js';
import type { ObjectFormat } from './object-format.js';

/**
 * The hash of the first `length` bytes of the file open as `fd`, read back in 1 MiB pieces: for a
 * pack whose header changed after it was written (a thin pack completed, a pack cut short by a
 * size limit), whose trailer must cover every byte before it.
 */
export function hashFileRange(fd: number, length: number, format: ObjectFormat, file: string): Buffer {
  const hash = nodeCrypto().createHash(format);
  const buf = Buffer.allocUnsafeSlow(Math.min(1 << 20, Math.max(1, length)));
  for (let at = 0; at < length;) {
    const got = Math.min(buf.length, length - at);
    readExactly(fd, buf, 0, got, at, file, 'PACK_TRUNCATED');
    hash.update(buf.subarray(0, got));
    at += got;
  }
  return hash.digest();
}
