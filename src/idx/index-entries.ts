import { PackwrightError } from '../errors/packwright-error.js';
import { IDX_FANOUT_LENGTH, IDX_LARGE_INDEX_MASK, IDX_LARGE_OFFSET, IDX_V2_MAGIC } from './idx-format.js';

/** One entry of a pack index, as `git show-index` prints it. */
export interface IndexEntry {
  offset: number;
  /** The id's bytes, a view of the input. */
  id: Uint8Array;
  /** The entry's CRC32 (v2 only). */
  crc32: number | undefined;
}

/**
 * Every entry of an index given as bytes (v1 or v2), in index order, read front to back as git's
 * show-index reads its input: entries before a cut are given before the error, which has git's
 * words for what was short or inconsistent (IDX_CORRUPT). For lookups, `PackIndex` reads a file.
 */
export function forEachIndexEntry(input: Uint8Array, hashLength: number, visit: (entry: IndexEntry) => void): void {
  const H = hashLength;
  const view = new DataView(input.buffer, input.byteOffset, input.byteLength);
  let pos = 0;
  const take = (n: number, what: string): number => {
    if (pos + n > input.length) throw new PackwrightError('IDX_CORRUPT', what, { offset: pos });
    const at = pos;
    pos += n;
    return at;
  };
  const head = take(8, 'unable to read header');
  let fanout: number;
  let version = 1;
  if (view.getUint32(head) === IDX_V2_MAGIC) {
    version = view.getUint32(head + 4);
    if (version !== 2) throw new PackwrightError('IDX_CORRUPT', 'unknown index version', { offset: 4 });
    fanout = take(IDX_FANOUT_LENGTH, 'unable to read index');
  } else {
    // A v1 index starts with its fan-out: the 8 bytes read are its first two counts.
    fanout = head;
    take(IDX_FANOUT_LENGTH - 8, 'unable to read index');
  }
  let count = 0;
  for (let i = 0; i < 256; i++) {
    const n = view.getUint32(fanout + 4 * i);
    if (n < count) throw new PackwrightError('IDX_CORRUPT', 'corrupt index file', { offset: fanout + 4 * i });
    count = n;
  }
  if (version === 1) {
    for (let i = 0; i < count; i++) {
      const e = take(4 + H, `unable to read entry ${i}/${count}`);
      visit({ offset: view.getUint32(e), id: input.subarray(e + 4, e + 4 + H), crc32: undefined });
    }
    return;
  }
  const left = (size: number): number => Math.floor((input.length - pos) / size);
  const ids = take(count * H, `unable to read sha1 ${left(H)}/${count}`);
  const crcs = take(count * 4, `unable to read crc ${left(4)}/${count}`);
  const offsets = take(count * 4, `unable to read 32b offset ${left(4)}/${count}`);
  let large = 0;
  for (let i = 0; i < count; i++) {
    const word = view.getUint32(offsets + 4 * i);
    let offset = word;
    if (word & IDX_LARGE_OFFSET) {
      if ((word & IDX_LARGE_INDEX_MASK) !== large) throw new PackwrightError('IDX_CORRUPT', 'inconsistent 64b offset index', { offset: offsets + 4 * i });
      const o = take(8, `unable to read 64b offset ${large}`);
      offset = view.getUint32(o) * 2 ** 32 + view.getUint32(o + 4);
      large++;
    }
    visit({ offset, id: input.subarray(ids + i * H, ids + i * H + H), crc32: view.getUint32(crcs + 4 * i) });
  }
}
