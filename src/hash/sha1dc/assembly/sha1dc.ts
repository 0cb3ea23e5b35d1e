// The block function of the collision-detecting SHA-1 (../sha1dc.ts explains the method), in
// AssemblyScript: WebAssembly has 32-bit rotations and loads without a typed array's checks, which
// makes it about 3× as fast as the same loops in JavaScript. Built by scripts/build-sha1dc-wasm.mjs
// into ../sha1dc-wasm.ts, with conditions.ts, which that script writes from the derived conditions
// (../unavoidable-conditions.ts). The caller writes the vectors' message differences into memory at
// start and keeps the chaining value at IHV.

// Memory map, in bytes.
const IHV: usize = 0; //         5 words: the chaining value
const FOUND: usize = 20; //      1 word: set once a block is flagged
const STATES: usize = 32; //     10 words: the state at the start of step 58, then of step 65
const W: usize = 128; //         80 words: the expanded block
const W2: usize = 448; //        80 words: the partner block of a recompression
const STEPS: usize = 1024; //    32 words: each vector's recompression step
const DM: usize = 1152; //       32 × 80 words: each vector's message difference
export const INPUT: usize = 32768; // where the caller puts the blocks to hash

import { vectorsToCheck } from './conditions';

let vectorCount: i32 = 0;

/** Called once the message differences are in memory. */
export function setup(vectors: i32): void {
  vectorCount = vectors;
}

/** Hashes `count` 64-byte blocks from `at` into the chaining value at IHV; sets FOUND on a collision. */
export function blocks(at: usize, count: i32): void {
  for (let n = 0; n < count; n++, at += 64) block(at);
}

// @ts-ignore: decorator
@inline function rol(x: i32, n: i32): i32 {
  return rotl<i32>(x, n);
}

function block(at: usize): void {
  for (let i: usize = 0; i < 16; i++) store<i32>(W + (i << 2), bswap<i32>(load<i32>(at + (i << 2))));
  for (let i: usize = 16; i < 80; i++) {
    const p = W + (i << 2);
    store<i32>(p, rol(load<i32>(p - 12) ^ load<i32>(p - 32) ^ load<i32>(p - 56) ^ load<i32>(p - 64), 1));
  }
  compress();
  const mask = vectorsToCheck(W);
  if (mask != 0 && recompressionMatches(mask)) store<i32>(FOUND, 1);
}

function compress(): void {
  let a = load<i32>(IHV), b = load<i32>(IHV, 4), c = load<i32>(IHV, 8), d = load<i32>(IHV, 12), e = load<i32>(IHV, 16);
  let t: i32;
  let p: usize = W;
  for (let i = 0; i < 20; i++, p += 4) {
    t = rol(a, 5) + ((b & c) | (~b & d)) + e + 0x5a827999 + load<i32>(p);
    e = d; d = c; c = rol(b, 30); b = a; a = t;
  }
  for (let i = 20; i < 40; i++, p += 4) {
    t = rol(a, 5) + (b ^ c ^ d) + e + 0x6ed9eba1 + load<i32>(p);
    e = d; d = c; c = rol(b, 30); b = a; a = t;
  }
  for (let i = 40; i < 58; i++, p += 4) {
    t = rol(a, 5) + ((b & c) | (b & d) | (c & d)) + e + 0x8f1bbcdc + load<i32>(p);
    e = d; d = c; c = rol(b, 30); b = a; a = t;
  }
  store<i32>(STATES, a); store<i32>(STATES, b, 4); store<i32>(STATES, c, 8); store<i32>(STATES, d, 12); store<i32>(STATES, e, 16);
  for (let i = 58; i < 60; i++, p += 4) {
    t = rol(a, 5) + ((b & c) | (b & d) | (c & d)) + e + 0x8f1bbcdc + load<i32>(p);
    e = d; d = c; c = rol(b, 30); b = a; a = t;
  }
  for (let i = 60; i < 65; i++, p += 4) {
    t = rol(a, 5) + (b ^ c ^ d) + e + 0xca62c1d6 + load<i32>(p);
    e = d; d = c; c = rol(b, 30); b = a; a = t;
  }
  store<i32>(STATES, a, 20); store<i32>(STATES, b, 24); store<i32>(STATES, c, 28); store<i32>(STATES, d, 32); store<i32>(STATES, e, 36);
  for (let i = 65; i < 80; i++, p += 4) {
    t = rol(a, 5) + (b ^ c ^ d) + e + 0xca62c1d6 + load<i32>(p);
    e = d; d = c; c = rol(b, 30); b = a; a = t;
  }
  store<i32>(IHV, load<i32>(IHV) + a);
  store<i32>(IHV, load<i32>(IHV, 4) + b, 4);
  store<i32>(IHV, load<i32>(IHV, 8) + c, 8);
  store<i32>(IHV, load<i32>(IHV, 12) + d, 12);
  store<i32>(IHV, load<i32>(IHV, 16) + e, 16);
}

// @ts-ignore: decorator
@inline function roundF(i: i32, b: i32, c: i32, d: i32): i32 {
  return i < 20 ? (b & c) | (~b & d) : i < 40 || i >= 60 ? b ^ c ^ d : (b & c) | (b & d) | (c & d);
}

// @ts-ignore: decorator
@inline function roundK(i: i32): i32 {
  return i < 20 ? 0x5a827999 : i < 40 ? 0x6ed9eba1 : i < 60 ? 0x8f1bbcdc : 0xca62c1d6;
}

/**
 * For each vector in `mask`: the partner block (this block XOR the vector's message difference),
 * from the state the two share at the vector's step, undone back to its chaining value and done on to
 * its output. The same output as this block's means a collision. Rare: about one block in ten.
 */
function recompressionMatches(mask: i32): bool {
  for (let v = 0; v < vectorCount; v++) {
    if (((mask >>> v) & 1) == 0) continue;
    const dm: usize = DM + (<usize>v) * 320;
    for (let i: usize = 0; i < 320; i += 4) store<i32>(W2 + i, load<i32>(W + i) ^ load<i32>(dm + i));
    const step = load<i32>(STEPS + (<usize>v << 2));
    const s: usize = step == 58 ? STATES : STATES + 20;
    let a = load<i32>(s), b = load<i32>(s, 4), c = load<i32>(s, 8), d = load<i32>(s, 12), e = load<i32>(s, 16);
    let a0 = a, b0 = b, c0 = c, d0 = d, e0 = e;
    for (let i = step - 1; i >= 0; i--) {
      // step i made (a0..e0) from (pa..pe): a0 = rotl(pa,5) + f(pb,pc,pd) + pe + K + W, b0 = pa, c0 = rotl(pb,30), d0 = pc, e0 = pd
      const pa = b0, pb = rol(c0, 2), pc = d0, pd = e0;
      const pe = a0 - rol(pa, 5) - roundF(i, pb, pc, pd) - roundK(i) - load<i32>(W2 + (<usize>i << 2));
      a0 = pa; b0 = pb; c0 = pc; d0 = pd; e0 = pe;
    }
    for (let i = step; i < 80; i++) {
      const t = rol(a, 5) + roundF(i, b, c, d) + e + roundK(i) + load<i32>(W2 + (<usize>i << 2));
      e = d; d = c; c = rol(b, 30); b = a; a = t;
    }
    if (a0 + a == load<i32>(IHV) && b0 + b == load<i32>(IHV, 4) && c0 + c == load<i32>(IHV, 8)
      && d0 + d == load<i32>(IHV, 12) && e0 + e == load<i32>(IHV, 16)) return true;
  }
  return false;
}
