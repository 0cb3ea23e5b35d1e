import { readFileSync } from 'node:fs';
import type { Format } from './git.js';

/**
 * The object ids a version 2 .idx lists, in its (sorted) order, as hex: what `git verify-pack -v`
 * would print for it, read from the file rather than by a process per pack.
 */
export function indexIds(path: string, format: Format): string[] {
  const idx = readFileSync(path);
  if (idx.readUInt32BE(0) !== 0xff744f63 || idx.readUInt32BE(4) !== 2) throw new Error(`${path}: not a version 2 pack index`);
  const count = idx.readUInt32BE(8 + 255 * 4);
  const width = format === 'sha1' ? 20 : 32;
  const ids: string[] = [];
  for (let i = 0, at = 8 + 256 * 4; i < count; i++, at += width) ids.push(idx.toString('hex', at, at + width));
  return ids;
}
