/**
 * A dense set of bit positions over 32-bit words, bit `i` at word `i >> 5`, bit `i & 31`: the
 * order EWAH streams use (lower bits come first), so decoded words land as they are. A reachability
 * bitmap of a pack costs N/8 bytes (28 KB for gitoxide's 226k objects); the walks that use them
 * combine a few, so dense words beat a compressed form here.
 */
export class Bitset {
  words: Uint32Array;

  constructor(bits = 0) {
    this.words = new Uint32Array(Math.max(1, Math.ceil(bits / 32)));
  }

  /** A set over these words (taken, not copied). */
  static of(words: Uint32Array): Bitset {
    const b = new Bitset(0);
    b.words = words;
    return b;
  }

  /** Whether bit `i` is set. */
  get(i: number): boolean {
    const w = i >>> 5;
    return w < this.words.length && (((this.words[w] as number) >>> (i & 31)) & 1) === 1;
  }

  /** Sets bit `i`, growing the set as needed. */
  set(i: number): void {
    const w = i >>> 5;
    if (w >= this.words.length) this.grow(w + 1);
    this.words[w] = (this.words[w] as number) | (1 << (i & 31));
  }

  /** Adds every position of `other`. */
  or(other: Bitset): void {
    const o = other.words;
    if (o.length > this.words.length) this.grow(o.length);
    const w = this.words;
    for (let i = 0; i < o.length; i++) w[i] = (w[i] as number) | (o[i] as number);
  }

  /** Flips every position of `other` (git stores most sets XORed with an earlier one). */
  xor(other: Bitset): void {
    const o = other.words;
    if (o.length > this.words.length) this.grow(o.length);
    const w = this.words;
    for (let i = 0; i < o.length; i++) w[i] = (w[i] as number) ^ (o[i] as number);
  }

  /** Removes every position of `other`. */
  andNot(other: Bitset): void {
    const w = this.words;
    const o = other.words;
    const n = Math.min(w.length, o.length);
    for (let i = 0; i < n; i++) w[i] = (w[i] as number) & ~(o[i] as number);
  }

  /** How many positions are set, below `limit` bits if given. */
  count(limit = this.words.length * 32): number {
    let total = 0;
    const full = Math.min(this.words.length, limit >>> 5);
    for (let i = 0; i < full; i++) total += popcount(this.words[i] as number);
    if (full < this.words.length && (limit & 31) !== 0) total += popcount((this.words[full] as number) & ((1 << (limit & 31)) - 1));
    return total;
  }

  /** Whether both hold the same positions below `bits`. */
  equals(other: Bitset, bits: number): boolean {
    for (let i = 0; i < bits; i += 32) {
      const keep = bits - i >= 32 ? 0xffffffff : (1 << (bits - i)) - 1;
      if ((((this.words[i >>> 5] ?? 0) ^ (other.words[i >>> 5] ?? 0)) & keep) !== 0) return false;
    }
    return true;
  }

  /** Calls `each` with every position set both here and in `mask`, in increasing order. */
  forEachAnd(mask: Bitset, each: (i: number) => void): void {
    const w = this.words;
    const m = mask.words;
    const n = Math.min(w.length, m.length);
    for (let i = 0; i < n; i++) {
      let word = ((w[i] as number) & (m[i] as number)) >>> 0;
      while (word !== 0) {
        const bit = 31 - Math.clz32(word & -word);
        each(i * 32 + bit);
        word = (word & (word - 1)) >>> 0;
      }
    }
  }

  private grow(words: number): void {
    const grown = new Uint32Array(Math.max(words, this.words.length * 2));
    grown.set(this.words);
    this.words = grown;
  }
}

function popcount(v: number): number {
  v -= (v >>> 1) & 0x55555555;
  v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
  return (((v + (v >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
}
