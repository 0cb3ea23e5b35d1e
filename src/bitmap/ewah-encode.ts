/**
 * EWAH encoding of a dense set (the inverse of ewah.ts's decodeEwah), as git's bitmap_to_ewah
 * writes it: 64-bit words; runs of empty words become the run of a run-length word, other words
 * its literals; the stated size counts whole words, as git's does.
 */
import type { Bitset } from './bitset.js';

/** A run-length word holds at most this many literal words (31 bits) and this long a run (32 bits). */
const MAX_LITERALS = 0x7fffffff;
const MAX_RUN = 0xffffffff;

/** The EWAH stream of the first `bitCount` bits of `bits`: bit size, word count, words, last run-length word's index. */
export function encodeEwah(bits: Bitset, bitCount: number): Buffer {
  const words64 = Math.ceil(bitCount / 64);
  const src = bits.words;
  // Each 64-bit word as two 32-bit halves: low (bits 0-31), high (bits 32-63).
  const lo = (w: number): number => (src[2 * w] ?? 0) >>> 0;
  const hi = (w: number): number => (src[2 * w + 1] ?? 0) >>> 0;
  // Words, written as [hi, lo] pairs of 32-bit numbers.
  const out: number[] = [];
  let rlw = -1;
  const newRlw = (): void => {
    rlw = out.length / 2;
    out.push(0, 0);
  };
  let run = 0;
  let literals = 0;
  const setRlw = (): void => {
    // bit 0: the run's bit (always 0 here); bits 1-32: run length; bits 33-63: literal count.
    const low = ((run & 0x7fffffff) << 1) >>> 0;
    const high = (Math.floor(run / 0x80000000) | (literals << 1)) >>> 0;
    out[2 * rlw] = high;
    out[2 * rlw + 1] = low;
  };
  newRlw();
  for (let w = 0; w < words64; w++) {
    const h = hi(w);
    const l = lo(w);
    if (h === 0 && l === 0) {
      if (literals > 0 || run === MAX_RUN) {
        setRlw();
        newRlw();
        run = 0;
        literals = 0;
      }
      run++;
      continue;
    }
    if (literals === MAX_LITERALS) {
      setRlw();
      newRlw();
      run = 0;
      literals = 0;
    }
    out.push(h, l);
    literals++;
  }
  setRlw();
  const count = out.length / 2;
  const buf = Buffer.alloc(8 + 8 * count + 4);
  buf.writeUInt32BE(words64 * 64, 0);
  buf.writeUInt32BE(count, 4);
  for (let i = 0; i < out.length; i++) buf.writeUInt32BE(out[i] as number, 8 + 4 * i);
  buf.writeUInt32BE(rlw, 8 + 8 * count);
  return buf;
}
