/**
 * EWAH-compressed bitmaps as git and JGit store them (gitformat-bitmap, Appendix A): a 32-bit
 * count of bits, a 32-bit count of 64-bit words, the words, and the position of the last
 * run-length word, all big-endian. The words are chunks of a run-length word (bit 0: the repeated
 * bit; bits 1-32: how many 64-bit words of it; bits 33-63: how many literal words follow) and its
 * literal words, whose lower bits come first in the stream.
 */
import { Bitset } from './bitset.js';

/** An EWAH bitmap that cannot be decoded; `offset` says where. */
export class EwahFormatError extends Error {
  override readonly name = 'EwahFormatError';
  /** Byte offset, from the start of the data given, where the problem was found. */
  readonly position: number;
  constructor(message: string, position: number) {
    super(message);
    this.position = position;
  }
}

/** A decoded EWAH bitmap and the bytes it took. */
export interface DecodedEwah {
  bits: Bitset;
  /** The number of bits the stream says it holds. */
  bitSize: number;
  /** Where the next thing after this bitmap starts. */
  end: number;
}

/** Where an EWAH bitmap's parts lie: its stated bit count, its words, and where it ends. */
export interface EwahExtent {
  bitSize: number;
  wordCount: number;
  wordsAt: number;
  end: number;
}

/**
 * The extent of the EWAH bitmap at `data[at..]`, its sizes checked against `end` (what a reader
 * that skips over a bitmap needs, and the start of decoding one).
 */
export function ewahExtent(data: Uint8Array, at: number, end: number): EwahExtent {
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  // Messages in git's words (ewah_read_mmap): its tests look for "corrupt ewah bitmap".
  if (end - at < 4) throw new EwahFormatError('corrupt ewah bitmap: eof before bit size', at);
  if (end - at < 8) throw new EwahFormatError('corrupt ewah bitmap: eof before length', at + 4);
  const bitSize = view.getUint32(at);
  const wordCount = view.getUint32(at + 4);
  const wordsAt = at + 8;
  if (wordCount * 8 > end - wordsAt) throw new EwahFormatError(`corrupt ewah bitmap: eof in data (${wordCount * 8 - (end - wordsAt)} bytes short)`, at + 4);
  if (wordCount * 8 + 4 > end - wordsAt) throw new EwahFormatError('corrupt ewah bitmap: eof before rlw', wordsAt + wordCount * 8);
  // The position of the last run-length word follows (for appending; a reader has no use for it).
  return { bitSize, wordCount, wordsAt, end: wordsAt + 8 * wordCount + 4 };
}

/**
 * Decodes the EWAH bitmap at `data[at..]`, which must end by `end`, into a dense set. `maxBits`
 * bounds what it may hold (the objects of the pack): a larger stated size or a run past it is an
 * error, so nothing is allocated from a size the file claims.
 */
export function decodeEwah(data: Uint8Array, at: number, end: number, maxBits: number): DecodedEwah {
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const { bitSize, wordCount, wordsAt, end: next } = ewahExtent(data, at, end);
  // git's writer states whole words (its sets' bit counts are multiples of 64).
  if (bitSize > Math.ceil(maxBits / 64) * 64) throw new EwahFormatError(`corrupt ewah bitmap: ${bitSize} bits, more than the ${maxBits} objects it covers`, at);
  // Whole 64-bit words the bits fill: runs and literals must stay inside them.
  const limit = Math.ceil(bitSize / 64);
  const bits = new Bitset(limit * 64);
  const out = bits.words;
  let word = 0;
  let p = 0;
  while (p < wordCount) {
    const rlwAt = wordsAt + 8 * p;
    const hi = view.getUint32(rlwAt);
    const lo = view.getUint32(rlwAt + 4);
    const runBit = lo & 1;
    const run = (lo >>> 1) + (hi & 1) * 0x80000000;
    const literals = hi >>> 1;
    if (run > limit - word) throw new EwahFormatError(`corrupt ewah bitmap: a run of ${run} words goes past its ${bitSize} bits`, rlwAt);
    if (runBit === 1) out.fill(0xffffffff, 2 * word, 2 * (word + run));
    word += run;
    p++;
    if (literals > wordCount - p) throw new EwahFormatError(`corrupt ewah bitmap: ${literals} literal words go past its ${wordCount} words`, rlwAt);
    if (literals > limit - word) throw new EwahFormatError(`corrupt ewah bitmap: literal words go past its ${bitSize} bits`, rlwAt);
    for (let i = 0; i < literals; i++, p++, word++) {
      const w = wordsAt + 8 * p;
      out[2 * word + 1] = view.getUint32(w);
      out[2 * word] = view.getUint32(w + 4);
    }
  }
  return { bits, bitSize, end: next };
}
