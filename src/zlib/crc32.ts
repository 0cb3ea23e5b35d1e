import { nodeZlib } from './node-zlib.js';

/**
 * Below this many bytes the table-driven loop here beats a call into zlib's crc32: a native call
 * and the subarray it needs cost ~220 ns whatever the length, and the loop takes ~70 ns for 100
 * bytes, ~220 ns for 300 (measured on Node 20's zlib). Most pack entries are small deltas, and
 * pass 1 takes one CRC an entry (76k of them, ~100 bytes each, in a 7 MB pack of source files).
 */
const NATIVE_FROM = 256;

/** Slicing-by-8 tables of the CRC-32 of zlib and git (reflected polynomial 0xedb88320). */
const TABLES = ((): Int32Array => {
  const t = new Int32Array(8 * 256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c;
  }
  for (let n = 0; n < 256; n++) {
    let c = t[n] as number;
    for (let s = 1; s < 8; s++) {
      c = (t[c & 255] as number) ^ (c >>> 8);
      t[s * 256 + n] = c;
    }
  }
  return t;
})();

/** The CRC-32 of `data[from..to)`, as zlib's crc32 gives it. */
export function crc32(data: Uint8Array, from = 0, to = data.length): number {
  if (to - from >= NATIVE_FROM) return nodeZlib().crc32(data.subarray(from, to));
  const t = TABLES;
  let c = -1;
  let i = from;
  for (; i + 8 <= to; i += 8) {
    const a = c ^ ((data[i] as number) | ((data[i + 1] as number) << 8) | ((data[i + 2] as number) << 16) | ((data[i + 3] as number) << 24));
    c = (t[1792 + (a & 255)] as number) ^ (t[1536 + ((a >>> 8) & 255)] as number) ^ (t[1280 + ((a >>> 16) & 255)] as number) ^ (t[1024 + (a >>> 24)] as number)
      ^ (t[768 + (data[i + 4] as number)] as number) ^ (t[512 + (data[i + 5] as number)] as number) ^ (t[256 + (data[i + 6] as number)] as number) ^ (t[data[i + 7] as number] as number);
  }
  for (; i < to; i++) c = (t[(c ^ (data[i] as number)) & 255] as number) ^ (c >>> 8);
  return (c ^ -1) >>> 0;
}
