/**
 * Changed-path Bloom filters as git 2.39 writes them into a commit-graph (bloom.c; BIDX and BDAT
 * chunks, gitformat-commit-graph): per commit, a filter of the paths it changes, hashed with
 * seeded murmur3 and double hashing.
 */
export interface BloomSettings {
  /** 1: git 2.39's murmur3 (see murmur3Seeded). */
  hashVersion: number;
  numHashes: number;
  bitsPerEntry: number;
  /** A commit changing more paths than this gets the "everything" filter. */
  maxChangedPaths: number;
}

/** git's DEFAULT_BLOOM_FILTER_SETTINGS. */
export const DEFAULT_BLOOM_SETTINGS: BloomSettings = { hashVersion: 1, numHashes: 7, bitsPerEntry: 10, maxChangedPaths: 512 };

/** The BDAT chunk's header: hash version, number of hashes, bits per entry (three big-endian words). */
export const BLOOM_DATA_HEADER = 12;

const SEED0 = 0x293ae76f;
const SEED1 = 0x7e646e2c;

const rotl = (x: number, r: number): number => ((x << r) | (x >>> (32 - r))) >>> 0;

/**
 * git 2.39's murmur3_seeded: 32-bit murmur3 over `data`, except that it reads bytes through a
 * signed `char`, so a byte from 0x80 up is sign-extended before it is shifted into place. Paths
 * with such bytes hash differently from true murmur3, and git's filters (version 1) have them so:
 * this copies the quirk to give the same bytes.
 */
export function murmur3Seeded(seed: number, data: Uint8Array): number {
  const c1 = 0xcc9e2d51;
  const c2 = 0x1b873593;
  const signed = (i: number): number => ((data[i] as number) << 24) >> 24;
  let h = seed >>> 0;
  const len4 = data.length >>> 2;
  for (let i = 0; i < len4; i++) {
    const p = 4 * i;
    let k = (signed(p) | (signed(p + 1) << 8) | (signed(p + 2) << 16) | (signed(p + 3) << 24)) >>> 0;
    k = Math.imul(k, c1) >>> 0;
    k = rotl(k, 15);
    k = Math.imul(k, c2) >>> 0;
    h ^= k;
    h = (Math.imul(rotl(h >>> 0, 13), 5) + 0xe6546b64) >>> 0;
  }
  const tail = len4 * 4;
  const rest = data.length & 3;
  if (rest > 0) {
    let k1 = 0;
    if (rest === 3) k1 ^= signed(tail + 2) << 16;
    if (rest >= 2) k1 ^= signed(tail + 1) << 8;
    k1 ^= signed(tail);
    k1 = Math.imul(k1 >>> 0, c1) >>> 0;
    k1 = rotl(k1, 15);
    k1 = Math.imul(k1, c2) >>> 0;
    h ^= k1;
  }
  h = (h ^ data.length) >>> 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b) >>> 0;
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35) >>> 0;
  h ^= h >>> 16;
  return h >>> 0;
}

/** The filter git's "too many paths changed" commits get: one byte, all ones. */
export const TRUNCATED_LARGE_FILTER = Uint8Array.of(0xff);

/**
 * The filter of `paths` (raw path bytes as latin1 strings), or of a commit that changed more than
 * the settings allow (undefined): `ceil(n * bitsPerEntry / 8)` bytes, at least one, each path
 * setting `numHashes` bits.
 */
export function bloomFilter(paths: ReadonlySet<string> | undefined, settings: BloomSettings): Uint8Array {
  if (paths === undefined || paths.size > settings.maxChangedPaths) return TRUNCATED_LARGE_FILTER;
  const length = Math.max(1, Math.ceil((paths.size * settings.bitsPerEntry) / 8));
  const filter = new Uint8Array(length);
  const bits = length * 8;
  for (const path of paths) {
    const bytes = Buffer.from(path, 'latin1');
    const h0 = murmur3Seeded(SEED0, bytes);
    const h1 = murmur3Seeded(SEED1, bytes);
    for (let i = 0; i < settings.numHashes; i++) {
      const bit = ((h0 + Math.imul(i, h1)) >>> 0) % bits;
      filter[bit >>> 3] = (filter[bit >>> 3] as number) | (1 << (bit & 7));
    }
  }
  return filter;
}
