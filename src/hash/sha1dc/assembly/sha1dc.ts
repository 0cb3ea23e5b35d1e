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
// The four-lane function's own, one 32-bit lane per message:
const IHV4: usize = 11392; //    5 × v128: the chaining values
const FOUND4: usize = 11472; //  4 words: set once a lane's block is flagged
const STATES4: usize = 11520; // 10 × v128: the states at the start of steps 58 and 65
const W4: usize = 11776; //      80 × v128: the expanded blocks
export const INPUT: usize = 16384; // where the caller puts the blocks to hash

import { vectorsToCheck, vectorsToCheck4 } from './conditions';

let vectorCount: i32 = 0;

/** Called once the message differences are in memory. */
export function setup(vectors: i32): void {
  vectorCount = vectors;
}

/** Hashes `count` 64-byte blocks from `at` into the chaining value at IHV; sets FOUND on a collision. */
export function blocks(at: usize, count: i32): void {
  // Four consecutive blocks are expanded and checked together in the vector lanes (neither needs the
  // chaining value); only their compressions must follow one another. Twice as fast as one by one.
  for (; count >= 4; count -= 4, at += 256) {
    expand4(at, at + 64, at + 128, at + 192);
    const mask = vectorsToCheck4(W4);
    for (let lane = 0; lane < 4; lane++) {
      compress(W4 + (<usize>lane << 2), 16);
      const m = laneOf(mask, lane);
      if (m != 0) {
        blockOfLane(lane);
        if (recompressionMatches(m)) store<i32>(FOUND, 1);
      }
    }
  }
  for (let n = 0; n < count; n++, at += 64) block(at);
}

// @ts-ignore: decorator
@inline function rol(x: i32, n: i32): i32 {
  return rotl<i32>(x, n);
}

// @ts-ignore: decorator
@inline function rol4(x: v128, n: i32): v128 {
  return v128.or(i32x4.shl(x, n), i32x4.shr_u(x, 32 - n));
}

/** The blocks at p0..p3, read big-endian and expanded into W4, a 32-bit lane each. */
// @ts-ignore: decorator
@inline function expand4(p0: usize, p1: usize, p2: usize, p3: usize): void {
  const swap = i8x16(3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12);
  for (let g: usize = 0; g < 4; g++) {
    const v0 = i8x16.swizzle(v128.load(p0 + (g << 4)), swap);
    const v1 = i8x16.swizzle(v128.load(p1 + (g << 4)), swap);
    const v2 = i8x16.swizzle(v128.load(p2 + (g << 4)), swap);
    const v3 = i8x16.swizzle(v128.load(p3 + (g << 4)), swap);
    const t0 = i8x16.shuffle(v0, v1, 0, 1, 2, 3, 16, 17, 18, 19, 4, 5, 6, 7, 20, 21, 22, 23);
    const t1 = i8x16.shuffle(v0, v1, 8, 9, 10, 11, 24, 25, 26, 27, 12, 13, 14, 15, 28, 29, 30, 31);
    const t2 = i8x16.shuffle(v2, v3, 0, 1, 2, 3, 16, 17, 18, 19, 4, 5, 6, 7, 20, 21, 22, 23);
    const t3 = i8x16.shuffle(v2, v3, 8, 9, 10, 11, 24, 25, 26, 27, 12, 13, 14, 15, 28, 29, 30, 31);
    const q = W4 + (g << 6);
    v128.store(q, i8x16.shuffle(t0, t2, 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23));
    v128.store(q, i8x16.shuffle(t0, t2, 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31), 16);
    v128.store(q, i8x16.shuffle(t1, t3, 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23), 32);
    v128.store(q, i8x16.shuffle(t1, t3, 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31), 48);
  }
  for (let p: usize = W4 + 256; p < W4 + 1280; p += 16) {
    v128.store(p, rol4(v128.xor(v128.xor(v128.load(p - 48), v128.load(p - 128)), v128.xor(v128.load(p - 224), v128.load(p - 256))), 1));
  }
}

/**
 * Four messages at once, one in each 32-bit lane of the 128-bit vectors: `count` blocks from each
 * of p0..p3, chaining values at IHV4. SHA-1's steps are serial within a message, not across
 * messages, so this does four blocks' work in little more than the time of one (575 MB/s against
 * 380 for one message here). A lane whose block meets a vector's conditions is checked by the scalar code.
 */
export function blocks4(p0: usize, p1: usize, p2: usize, p3: usize, count: i32): void {
  for (let n = 0; n < count; n++) {
    expand4(p0, p1, p2, p3);
    compress4();
    const mask = vectorsToCheck4(W4);
    if (v128.any_true(mask)) {
      for (let lane = 0; lane < 4; lane++) {
        const m = laneOf(mask, lane);
        if (m != 0 && laneMatches(lane, m)) store<i32>(FOUND4 + (<usize>lane << 2), 1);
      }
    }
    p0 += 64; p1 += 64; p2 += 64; p3 += 64;
  }
}

// @ts-ignore: decorator
@inline function laneOf(v: v128, lane: i32): i32 {
  return lane == 0 ? i32x4.extract_lane(v, 0) : lane == 1 ? i32x4.extract_lane(v, 1) : lane == 2 ? i32x4.extract_lane(v, 2) : i32x4.extract_lane(v, 3);
}

function compress4(): void {
  let a = v128.load(IHV4), b = v128.load(IHV4, 16), c = v128.load(IHV4, 32), d = v128.load(IHV4, 48), e = v128.load(IHV4, 64);
  let t: v128;
  let p: usize = W4;
  const k0 = i32x4.splat(0x5a827999), k1 = i32x4.splat(0x6ed9eba1), k2 = i32x4.splat(0x8f1bbcdc), k3 = i32x4.splat(0xca62c1d6);
  for (let i = 0; i < 20; i++, p += 16) {
    t = i32x4.add(i32x4.add(rol4(a, 5), v128.bitselect(c, d, b)), i32x4.add(i32x4.add(e, k0), v128.load(p)));
    e = d; d = c; c = rol4(b, 30); b = a; a = t;
  }
  for (let i = 20; i < 40; i++, p += 16) {
    t = i32x4.add(i32x4.add(rol4(a, 5), v128.xor(v128.xor(b, c), d)), i32x4.add(i32x4.add(e, k1), v128.load(p)));
    e = d; d = c; c = rol4(b, 30); b = a; a = t;
  }
  for (let i = 40; i < 58; i++, p += 16) {
    t = i32x4.add(i32x4.add(rol4(a, 5), v128.bitselect(d, c, v128.xor(b, c))), i32x4.add(i32x4.add(e, k2), v128.load(p)));
    e = d; d = c; c = rol4(b, 30); b = a; a = t;
  }
  v128.store(STATES4, a); v128.store(STATES4, b, 16); v128.store(STATES4, c, 32); v128.store(STATES4, d, 48); v128.store(STATES4, e, 64);
  for (let i = 58; i < 60; i++, p += 16) {
    t = i32x4.add(i32x4.add(rol4(a, 5), v128.bitselect(d, c, v128.xor(b, c))), i32x4.add(i32x4.add(e, k2), v128.load(p)));
    e = d; d = c; c = rol4(b, 30); b = a; a = t;
  }
  for (let i = 60; i < 65; i++, p += 16) {
    t = i32x4.add(i32x4.add(rol4(a, 5), v128.xor(v128.xor(b, c), d)), i32x4.add(i32x4.add(e, k3), v128.load(p)));
    e = d; d = c; c = rol4(b, 30); b = a; a = t;
  }
  v128.store(STATES4, a, 80); v128.store(STATES4, b, 96); v128.store(STATES4, c, 112); v128.store(STATES4, d, 128); v128.store(STATES4, e, 144);
  for (let i = 65; i < 80; i++, p += 16) {
    t = i32x4.add(i32x4.add(rol4(a, 5), v128.xor(v128.xor(b, c), d)), i32x4.add(i32x4.add(e, k3), v128.load(p)));
    e = d; d = c; c = rol4(b, 30); b = a; a = t;
  }
  v128.store(IHV4, i32x4.add(v128.load(IHV4), a));
  v128.store(IHV4, i32x4.add(v128.load(IHV4, 16), b), 16);
  v128.store(IHV4, i32x4.add(v128.load(IHV4, 32), c), 32);
  v128.store(IHV4, i32x4.add(v128.load(IHV4, 48), d), 48);
  v128.store(IHV4, i32x4.add(v128.load(IHV4, 64), e), 64);
}

/** Lane `lane`'s expanded block, copied from W4 to W for the one-message check. */
// @ts-ignore: decorator
@inline function blockOfLane(lane: i32): void {
  const o: usize = <usize>lane << 2;
  for (let i: usize = 0; i < 80; i++) store<i32>(W + (i << 2), load<i32>(W4 + (i << 4) + o));
}

/** Lane `lane`'s block, state and output copied out, then the one-message check (recompressionMatches). */
function laneMatches(lane: i32, mask: i32): bool {
  const o: usize = <usize>lane << 2;
  blockOfLane(lane);
  for (let i: usize = 0; i < 10; i++) store<i32>(STATES + (i << 2), load<i32>(STATES4 + (i << 4) + o));
  for (let i: usize = 0; i < 5; i++) store<i32>(IHV + (i << 2), load<i32>(IHV4 + (i << 4) + o));
  return recompressionMatches(mask);
}

function block(at: usize): void {
  for (let i: usize = 0; i < 16; i++) store<i32>(W + (i << 2), bswap<i32>(load<i32>(at + (i << 2))));
  for (let i: usize = 16; i < 80; i++) {
    const p = W + (i << 2);
    store<i32>(p, rol(load<i32>(p - 12) ^ load<i32>(p - 32) ^ load<i32>(p - 56) ^ load<i32>(p - 64), 1));
  }
  compress(W, 4);
  const mask = vectorsToCheck(W);
  if (mask != 0 && recompressionMatches(mask)) store<i32>(FOUND, 1);
}

/** The compression of the expanded block whose word i is at w + i * stride into IHV, keeping the states at 58 and 65. */
function compress(w: usize, stride: usize): void {
  let a = load<i32>(IHV), b = load<i32>(IHV, 4), c = load<i32>(IHV, 8), d = load<i32>(IHV, 12), e = load<i32>(IHV, 16);
  let t: i32;
  let p: usize = w;
  for (let i = 0; i < 20; i++, p += stride) {
    t = rol(a, 5) + ((b & c) | (~b & d)) + e + 0x5a827999 + load<i32>(p);
    e = d; d = c; c = rol(b, 30); b = a; a = t;
  }
  for (let i = 20; i < 40; i++, p += stride) {
    t = rol(a, 5) + (b ^ c ^ d) + e + 0x6ed9eba1 + load<i32>(p);
    e = d; d = c; c = rol(b, 30); b = a; a = t;
  }
  for (let i = 40; i < 58; i++, p += stride) {
    t = rol(a, 5) + ((b & c) | (b & d) | (c & d)) + e + 0x8f1bbcdc + load<i32>(p);
    e = d; d = c; c = rol(b, 30); b = a; a = t;
  }
  store<i32>(STATES, a); store<i32>(STATES, b, 4); store<i32>(STATES, c, 8); store<i32>(STATES, d, 12); store<i32>(STATES, e, 16);
  for (let i = 58; i < 60; i++, p += stride) {
    t = rol(a, 5) + ((b & c) | (b & d) | (c & d)) + e + 0x8f1bbcdc + load<i32>(p);
    e = d; d = c; c = rol(b, 30); b = a; a = t;
  }
  for (let i = 60; i < 65; i++, p += stride) {
    t = rol(a, 5) + (b ^ c ^ d) + e + 0xca62c1d6 + load<i32>(p);
    e = d; d = c; c = rol(b, 30); b = a; a = t;
  }
  store<i32>(STATES, a, 20); store<i32>(STATES, b, 24); store<i32>(STATES, c, 28); store<i32>(STATES, d, 32); store<i32>(STATES, e, 36);
  for (let i = 65; i < 80; i++, p += stride) {
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
