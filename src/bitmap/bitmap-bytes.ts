/**
 * A `.bitmap` file (gitformat-bitmap v1) for a pack, as git's bitmap_writer_finish lays it out:
 * the header naming the pack, the four type sets, the entries (each commit's pack-index position,
 * an XOR offset, flags and its set, stored XORed with the earlier set among the ten before it that
 * makes it smallest, as git's compute_xor_offsets chooses), the lookup table when asked, the
 * path-name hash cache, the checksum.
 */
import { trace2Region } from '../trace2/trace2.js';
import { hashBytes } from '../hash/hash-object.js';
import { hashLength, type ObjectFormat } from '../hash/object-format.js';
import { Bitset } from './bitset.js';
import { encodeEwah } from './ewah-encode.js';

const SIGNATURE = 0x4249544d; // "BITM"
const OPT_FULL_DAG = 0x1;
const OPT_HASH_CACHE = 0x4;
const OPT_LOOKUP_TABLE = 0x10;
/** How far back git looks for a set to XOR against. */
const MAX_XOR_OFFSET_SEARCH = 10;

/**
 * What a `.bitmap` file is written from: the format, the pack's checksum and object count, the type
 * bitmaps, the selected commits' bitmaps, and the optional hash cache and lookup table.
 */
export interface BitmapFileInput {
  format: ObjectFormat;
  /** The pack's checksum (its name). */
  packHash: Uint8Array;
  /** Objects in the pack: the bits every set covers, in pack order. */
  objectCount: number;
  types: { commits: Bitset; trees: Bitset; blobs: Bitset; tags: Bitset };
  /** In the order written: each commit's position in the pack index and what it reaches. */
  entries: readonly { indexPosition: number; bits: Bitset }[];
  /** Path-name hashes in index order (git's pack.writeBitmapHashCache, on by default). */
  hashCache?: Uint32Array;
  /** The lookup table (git's pack.writeBitmapLookupTable): each entry's place, by commit position. */
  lookupTable?: boolean;
}

/**
 * The bytes of a `.bitmap` file, as git's pack-bitmap-write.c lays them out (v1, with the hash cache and
 * lookup table options).
 */
export function bitmapFileBytes(input: BitmapFileInput): Buffer {
  const H = hashLength(input.format);
  const N = input.objectCount;
  const parts: Buffer[] = [];
  const header = Buffer.alloc(12 + H);
  header.writeUInt32BE(SIGNATURE, 0);
  header.writeUInt16BE(1, 4);
  header.writeUInt16BE(OPT_FULL_DAG | (input.hashCache !== undefined ? OPT_HASH_CACHE : 0) | (input.lookupTable === true ? OPT_LOOKUP_TABLE : 0), 6);
  header.writeUInt32BE(input.entries.length, 8);
  Buffer.from(input.packHash).copy(header, 12);
  parts.push(header);
  for (const set of [input.types.commits, input.types.trees, input.types.blobs, input.types.tags]) parts.push(encodeEwah(set, N));
  const entries = input.entries;
  let size = parts.reduce((sum, p) => sum + p.length, 0);
  const entryOffsets: number[] = [];
  const xorOffsets: number[] = [];
  for (let i = 0; i < entries.length; i++) {
    const own = (entries[i] as { bits: Bitset }).bits;
    let best = encodeEwah(own, N);
    let offset = 0;
    for (let k = 1; k <= MAX_XOR_OFFSET_SEARCH && i - k >= 0; k++) {
      const xored = Bitset.of(own.words.slice());
      xored.xor((entries[i - k] as { bits: Bitset }).bits);
      const candidate = encodeEwah(xored, N);
      if (candidate.length < best.length) {
        best = candidate;
        offset = k;
      }
    }
    const head = Buffer.alloc(6);
    head.writeUInt32BE((entries[i] as { indexPosition: number }).indexPosition, 0);
    head[4] = offset;
    head[5] = 0;
    parts.push(head, best);
    entryOffsets.push(size);
    xorOffsets.push(offset);
    size += head.length + best.length;
  }
  if (input.lookupTable === true) {
    trace2Region('pack-bitmap-write', 'writing_lookup_table', () => {
      // git's write_lookup_table: rows by commit position, each with its entry's offset in the file
      // and the row of the entry it is XORed with (0xffffffff: none).
      const rows = entries.map((_, i) => i).sort((a, b) => (entries[a] as { indexPosition: number }).indexPosition - (entries[b] as { indexPosition: number }).indexPosition);
      const rowOf = new Int32Array(entries.length);
      rows.forEach((e, r) => (rowOf[e] = r));
      const table = Buffer.alloc(16 * rows.length);
      rows.forEach((e, r) => {
        table.writeUInt32BE((entries[e] as { indexPosition: number }).indexPosition, 16 * r);
        table.writeBigUInt64BE(BigInt(entryOffsets[e] as number), 16 * r + 4);
        const xor = xorOffsets[e] as number;
        table.writeUInt32BE(xor === 0 ? 0xffffffff : (rowOf[e - xor] as number), 16 * r + 12);
      });
      parts.push(table);
    });
  }
  if (input.hashCache !== undefined) {
    const cache = Buffer.alloc(4 * N);
    for (let i = 0; i < N; i++) cache.writeUInt32BE((input.hashCache[i] as number) >>> 0, 4 * i);
    parts.push(cache);
  }
  const body = Buffer.concat(parts);
  return Buffer.concat([body, hashBytes(input.format, body)]);
}
