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
        if (recompressionMatches(m, W4 + (<usize>lane << 2), 16, STATES, 4, IHV, 4)) store<i32>(FOUND, 1);
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

/** rol4(x, 1), with an add in place of one shift (shifts have fewer ports than adds). */
// @ts-ignore: decorator
@inline function rol1(x: v128): v128 {
  return v128.or(i32x4.add(x, x), i32x4.shr_u(x, 31));
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
  // W[i] = rol(W[i-3] ^ W[i-8] ^ W[i-14] ^ W[i-16], 1), four words a turn from one base (q is
  // W[i-16]'s place), the fourth taking the first's result from its register.
  for (let q: usize = W4; q < W4 + 1024; q += 64) {
    const x0 = rol1(v128.xor(v128.xor(v128.load(q, 208), v128.load(q, 128)), v128.xor(v128.load(q, 32), v128.load(q))));
    v128.store(q, x0, 256);
    v128.store(q, rol1(v128.xor(v128.xor(v128.load(q, 224), v128.load(q, 144)), v128.xor(v128.load(q, 48), v128.load(q, 16)))), 272);
    v128.store(q, rol1(v128.xor(v128.xor(v128.load(q, 240), v128.load(q, 160)), v128.xor(v128.load(q, 64), v128.load(q, 32)))), 288);
    v128.store(q, rol1(v128.xor(v128.xor(x0, v128.load(q, 176)), v128.xor(v128.load(q, 80), v128.load(q, 48)))), 304);
  }
}

/**
 * Four messages at once, one in each 32-bit lane of the 128-bit vectors: `count` blocks from each
 * of p0..p3, chaining values at IHV4. SHA-1's steps are serial within a message, not across
 * messages, so this does four blocks' work in little more than the time of one (820 MB/s against
 * 500 for one message here; git's sha1dc in C hashes ~450 MB/s on the same machine). A lane whose block meets a vector's conditions is checked by the scalar code.
 */
export function blocks4(p0: usize, p1: usize, p2: usize, p3: usize, count: i32): void {
  for (let n = 0; n < count; n++) {
    expand4(p0, p1, p2, p3);
    compress4();
    const mask = vectorsToCheck4(W4);
    if (v128.any_true(mask)) {
      for (let lane = 0; lane < 4; lane++) {
        const m = laneOf(mask, lane);
        const o: usize = <usize>lane << 2;
        if (m != 0 && recompressionMatches(m, W4 + o, 16, STATES4 + o, 16, IHV4 + o, 16)) store<i32>(FOUND4 + o, 1);
      }
    }
    p0 += 64; p1 += 64; p2 += 64; p3 += 64;
  }
}

// @ts-ignore: decorator
@inline function laneOf(v: v128, lane: i32): i32 {
  return lane == 0 ? i32x4.extract_lane(v, 0) : lane == 1 ? i32x4.extract_lane(v, 1) : lane == 2 ? i32x4.extract_lane(v, 2) : i32x4.extract_lane(v, 3);
}

// SHA-1's three round functions on four lanes.
// @ts-ignore: decorator
@inline function ch4(b: v128, c: v128, d: v128): v128 { return v128.bitselect(c, d, b); }
// @ts-ignore: decorator
@inline function parity4(b: v128, c: v128, d: v128): v128 { return v128.xor(v128.xor(b, c), d); }
// @ts-ignore: decorator
@inline function maj4(b: v128, c: v128, d: v128): v128 { return v128.bitselect(d, c, v128.xor(b, c)); }

/**
 * The compression of the four expanded blocks in W4 into IHV4, keeping the states at 58 and 65.
 * Written five steps a turn, the variables' roles rotating instead of being moved (the step that
 * would make a new a adds into e and rotates b), and with rol(a, 5) added last: a is the one input
 * that the step before has just made, so this keeps each step's dependent path to a shift, an or and
 * an add. 1.25× as fast as a step a turn with the sum in the textbook's order.
 */
function compress4(): void {
  let a = v128.load(IHV4), b = v128.load(IHV4, 16), c = v128.load(IHV4, 32), d = v128.load(IHV4, 48), e = v128.load(IHV4, 64);
  let p: usize = W4;
  let k = i32x4.splat(0x5a827999);
  for (let i = 0; i < 20; i += 5, p += 80) {
    e = i32x4.add(i32x4.add(i32x4.add(e, i32x4.add(k, v128.load(p))), ch4(b, c, d)), rol4(a, 5)); b = rol4(b, 30);
    d = i32x4.add(i32x4.add(i32x4.add(d, i32x4.add(k, v128.load(p, 16))), ch4(a, b, c)), rol4(e, 5)); a = rol4(a, 30);
    c = i32x4.add(i32x4.add(i32x4.add(c, i32x4.add(k, v128.load(p, 32))), ch4(e, a, b)), rol4(d, 5)); e = rol4(e, 30);
    b = i32x4.add(i32x4.add(i32x4.add(b, i32x4.add(k, v128.load(p, 48))), ch4(d, e, a)), rol4(c, 5)); d = rol4(d, 30);
    a = i32x4.add(i32x4.add(i32x4.add(a, i32x4.add(k, v128.load(p, 64))), ch4(c, d, e)), rol4(b, 5)); c = rol4(c, 30);
  }
  k = i32x4.splat(0x6ed9eba1);
  for (let i = 20; i < 40; i += 5, p += 80) {
    e = i32x4.add(i32x4.add(i32x4.add(e, i32x4.add(k, v128.load(p))), parity4(b, c, d)), rol4(a, 5)); b = rol4(b, 30);
    d = i32x4.add(i32x4.add(i32x4.add(d, i32x4.add(k, v128.load(p, 16))), parity4(a, b, c)), rol4(e, 5)); a = rol4(a, 30);
    c = i32x4.add(i32x4.add(i32x4.add(c, i32x4.add(k, v128.load(p, 32))), parity4(e, a, b)), rol4(d, 5)); e = rol4(e, 30);
    b = i32x4.add(i32x4.add(i32x4.add(b, i32x4.add(k, v128.load(p, 48))), parity4(d, e, a)), rol4(c, 5)); d = rol4(d, 30);
    a = i32x4.add(i32x4.add(i32x4.add(a, i32x4.add(k, v128.load(p, 64))), parity4(c, d, e)), rol4(b, 5)); c = rol4(c, 30);
  }
  k = i32x4.splat(0x8f1bbcdc);
  for (let i = 40; i < 55; i += 5, p += 80) {
    e = i32x4.add(i32x4.add(i32x4.add(e, i32x4.add(k, v128.load(p))), maj4(b, c, d)), rol4(a, 5)); b = rol4(b, 30);
    d = i32x4.add(i32x4.add(i32x4.add(d, i32x4.add(k, v128.load(p, 16))), maj4(a, b, c)), rol4(e, 5)); a = rol4(a, 30);
    c = i32x4.add(i32x4.add(i32x4.add(c, i32x4.add(k, v128.load(p, 32))), maj4(e, a, b)), rol4(d, 5)); e = rol4(e, 30);
    b = i32x4.add(i32x4.add(i32x4.add(b, i32x4.add(k, v128.load(p, 48))), maj4(d, e, a)), rol4(c, 5)); d = rol4(d, 30);
    a = i32x4.add(i32x4.add(i32x4.add(a, i32x4.add(k, v128.load(p, 64))), maj4(c, d, e)), rol4(b, 5)); c = rol4(c, 30);
  }
  // Steps 55 to 59, with the state at the start of step 58 kept (three steps in, a is in c).
  e = i32x4.add(i32x4.add(i32x4.add(e, i32x4.add(k, v128.load(p))), maj4(b, c, d)), rol4(a, 5)); b = rol4(b, 30);
  d = i32x4.add(i32x4.add(i32x4.add(d, i32x4.add(k, v128.load(p, 16))), maj4(a, b, c)), rol4(e, 5)); a = rol4(a, 30);
  c = i32x4.add(i32x4.add(i32x4.add(c, i32x4.add(k, v128.load(p, 32))), maj4(e, a, b)), rol4(d, 5)); e = rol4(e, 30);
  v128.store(STATES4, c); v128.store(STATES4, d, 16); v128.store(STATES4, e, 32); v128.store(STATES4, a, 48); v128.store(STATES4, b, 64);
  b = i32x4.add(i32x4.add(i32x4.add(b, i32x4.add(k, v128.load(p, 48))), maj4(d, e, a)), rol4(c, 5)); d = rol4(d, 30);
  a = i32x4.add(i32x4.add(i32x4.add(a, i32x4.add(k, v128.load(p, 64))), maj4(c, d, e)), rol4(b, 5)); c = rol4(c, 30);
  p += 80;
  k = i32x4.splat(0xca62c1d6);
  e = i32x4.add(i32x4.add(i32x4.add(e, i32x4.add(k, v128.load(p))), parity4(b, c, d)), rol4(a, 5)); b = rol4(b, 30);
  d = i32x4.add(i32x4.add(i32x4.add(d, i32x4.add(k, v128.load(p, 16))), parity4(a, b, c)), rol4(e, 5)); a = rol4(a, 30);
  c = i32x4.add(i32x4.add(i32x4.add(c, i32x4.add(k, v128.load(p, 32))), parity4(e, a, b)), rol4(d, 5)); e = rol4(e, 30);
  b = i32x4.add(i32x4.add(i32x4.add(b, i32x4.add(k, v128.load(p, 48))), parity4(d, e, a)), rol4(c, 5)); d = rol4(d, 30);
  a = i32x4.add(i32x4.add(i32x4.add(a, i32x4.add(k, v128.load(p, 64))), parity4(c, d, e)), rol4(b, 5)); c = rol4(c, 30);
  p += 80;
  v128.store(STATES4, a, 80); v128.store(STATES4, b, 96); v128.store(STATES4, c, 112); v128.store(STATES4, d, 128); v128.store(STATES4, e, 144);
  for (let i = 65; i < 80; i += 5, p += 80) {
    e = i32x4.add(i32x4.add(i32x4.add(e, i32x4.add(k, v128.load(p))), parity4(b, c, d)), rol4(a, 5)); b = rol4(b, 30);
    d = i32x4.add(i32x4.add(i32x4.add(d, i32x4.add(k, v128.load(p, 16))), parity4(a, b, c)), rol4(e, 5)); a = rol4(a, 30);
    c = i32x4.add(i32x4.add(i32x4.add(c, i32x4.add(k, v128.load(p, 32))), parity4(e, a, b)), rol4(d, 5)); e = rol4(e, 30);
    b = i32x4.add(i32x4.add(i32x4.add(b, i32x4.add(k, v128.load(p, 48))), parity4(d, e, a)), rol4(c, 5)); d = rol4(d, 30);
    a = i32x4.add(i32x4.add(i32x4.add(a, i32x4.add(k, v128.load(p, 64))), parity4(c, d, e)), rol4(b, 5)); c = rol4(c, 30);
  }
  v128.store(IHV4, i32x4.add(v128.load(IHV4), a));
  v128.store(IHV4, i32x4.add(v128.load(IHV4, 16), b), 16);
  v128.store(IHV4, i32x4.add(v128.load(IHV4, 32), c), 32);
  v128.store(IHV4, i32x4.add(v128.load(IHV4, 48), d), 48);
  v128.store(IHV4, i32x4.add(v128.load(IHV4, 64), e), 64);
}

function block(at: usize): void {
  for (let i: usize = 0; i < 16; i++) store<i32>(W + (i << 2), bswap<i32>(load<i32>(at + (i << 2))));
  for (let i: usize = 16; i < 80; i++) {
    const p = W + (i << 2);
    store<i32>(p, rol(load<i32>(p - 12) ^ load<i32>(p - 32) ^ load<i32>(p - 56) ^ load<i32>(p - 64), 1));
  }
  compress(W, 4);
  const mask = vectorsToCheck(W);
  if (mask != 0 && recompressionMatches(mask, W, 4, STATES, 4, IHV, 4)) store<i32>(FOUND, 1);
}

/**
 * The compression of the expanded block whose word i is at w + i * stride into IHV, keeping the states
 * at 58 and 65; written as compress4 is, five steps a turn with rol(a, 5) added last.
 */
function compress(w: usize, stride: usize): void {
  let a = load<i32>(IHV), b = load<i32>(IHV, 4), c = load<i32>(IHV, 8), d = load<i32>(IHV, 12), e = load<i32>(IHV, 16);
  let p: usize = w;
  for (let i = 0; i < 20; i += 5, p += 5 * stride) {
    e += 0x5a827999 + load<i32>(p) + ((b & c) | (~b & d)) + rol(a, 5); b = rol(b, 30);
    d += 0x5a827999 + load<i32>(p + <usize>1 * stride) + ((a & b) | (~a & c)) + rol(e, 5); a = rol(a, 30);
    c += 0x5a827999 + load<i32>(p + <usize>2 * stride) + ((e & a) | (~e & b)) + rol(d, 5); e = rol(e, 30);
    b += 0x5a827999 + load<i32>(p + <usize>3 * stride) + ((d & e) | (~d & a)) + rol(c, 5); d = rol(d, 30);
    a += 0x5a827999 + load<i32>(p + <usize>4 * stride) + ((c & d) | (~c & e)) + rol(b, 5); c = rol(c, 30);
  }
  for (let i = 20; i < 40; i += 5, p += 5 * stride) {
    e += 0x6ed9eba1 + load<i32>(p) + (b ^ c ^ d) + rol(a, 5); b = rol(b, 30);
    d += 0x6ed9eba1 + load<i32>(p + <usize>1 * stride) + (a ^ b ^ c) + rol(e, 5); a = rol(a, 30);
    c += 0x6ed9eba1 + load<i32>(p + <usize>2 * stride) + (e ^ a ^ b) + rol(d, 5); e = rol(e, 30);
    b += 0x6ed9eba1 + load<i32>(p + <usize>3 * stride) + (d ^ e ^ a) + rol(c, 5); d = rol(d, 30);
    a += 0x6ed9eba1 + load<i32>(p + <usize>4 * stride) + (c ^ d ^ e) + rol(b, 5); c = rol(c, 30);
  }
  for (let i = 40; i < 55; i += 5, p += 5 * stride) {
    e += 0x8f1bbcdc + load<i32>(p) + ((b & c) | (b & d) | (c & d)) + rol(a, 5); b = rol(b, 30);
    d += 0x8f1bbcdc + load<i32>(p + <usize>1 * stride) + ((a & b) | (a & c) | (b & c)) + rol(e, 5); a = rol(a, 30);
    c += 0x8f1bbcdc + load<i32>(p + <usize>2 * stride) + ((e & a) | (e & b) | (a & b)) + rol(d, 5); e = rol(e, 30);
    b += 0x8f1bbcdc + load<i32>(p + <usize>3 * stride) + ((d & e) | (d & a) | (e & a)) + rol(c, 5); d = rol(d, 30);
    a += 0x8f1bbcdc + load<i32>(p + <usize>4 * stride) + ((c & d) | (c & e) | (d & e)) + rol(b, 5); c = rol(c, 30);
  }
  // Steps 55 to 59, with the state at the start of step 58 kept (three steps in, a is in c).
  e += 0x8f1bbcdc + load<i32>(p) + ((b & c) | (b & d) | (c & d)) + rol(a, 5); b = rol(b, 30);
  d += 0x8f1bbcdc + load<i32>(p + <usize>1 * stride) + ((a & b) | (a & c) | (b & c)) + rol(e, 5); a = rol(a, 30);
  c += 0x8f1bbcdc + load<i32>(p + <usize>2 * stride) + ((e & a) | (e & b) | (a & b)) + rol(d, 5); e = rol(e, 30);
  store<i32>(STATES, c); store<i32>(STATES, d, 4); store<i32>(STATES, e, 8); store<i32>(STATES, a, 12); store<i32>(STATES, b, 16);
  b += 0x8f1bbcdc + load<i32>(p + <usize>3 * stride) + ((d & e) | (d & a) | (e & a)) + rol(c, 5); d = rol(d, 30);
  a += 0x8f1bbcdc + load<i32>(p + <usize>4 * stride) + ((c & d) | (c & e) | (d & e)) + rol(b, 5); c = rol(c, 30);
  p += 5 * stride;
  e += 0xca62c1d6 + load<i32>(p) + (b ^ c ^ d) + rol(a, 5); b = rol(b, 30);
  d += 0xca62c1d6 + load<i32>(p + <usize>1 * stride) + (a ^ b ^ c) + rol(e, 5); a = rol(a, 30);
  c += 0xca62c1d6 + load<i32>(p + <usize>2 * stride) + (e ^ a ^ b) + rol(d, 5); e = rol(e, 30);
  b += 0xca62c1d6 + load<i32>(p + <usize>3 * stride) + (d ^ e ^ a) + rol(c, 5); d = rol(d, 30);
  a += 0xca62c1d6 + load<i32>(p + <usize>4 * stride) + (c ^ d ^ e) + rol(b, 5); c = rol(c, 30);
  p += 5 * stride;
  store<i32>(STATES, a, 20); store<i32>(STATES, b, 24); store<i32>(STATES, c, 28); store<i32>(STATES, d, 32); store<i32>(STATES, e, 36);
  for (let i = 65; i < 80; i += 5, p += 5 * stride) {
    e += 0xca62c1d6 + load<i32>(p) + (b ^ c ^ d) + rol(a, 5); b = rol(b, 30);
    d += 0xca62c1d6 + load<i32>(p + <usize>1 * stride) + (a ^ b ^ c) + rol(e, 5); a = rol(a, 30);
    c += 0xca62c1d6 + load<i32>(p + <usize>2 * stride) + (e ^ a ^ b) + rol(d, 5); e = rol(e, 30);
    b += 0xca62c1d6 + load<i32>(p + <usize>3 * stride) + (d ^ e ^ a) + rol(c, 5); d = rol(d, 30);
    a += 0xca62c1d6 + load<i32>(p + <usize>4 * stride) + (c ^ d ^ e) + rol(b, 5); c = rol(c, 30);
  }
  store<i32>(IHV, load<i32>(IHV) + a);
  store<i32>(IHV, load<i32>(IHV, 4) + b, 4);
  store<i32>(IHV, load<i32>(IHV, 8) + c, 8);
  store<i32>(IHV, load<i32>(IHV, 12) + d, 12);
  store<i32>(IHV, load<i32>(IHV, 16) + e, 16);
}

/**
 * For each vector in `mask`: the partner block (this block XOR the vector's message difference),
 * from the state the two share at the vector's step, undone back to its chaining value and done on to
 * its output. The same output as this block's means a collision. The block's word i is at
 * w + i * stride, the states at step 58 and 65 at s (word k at s + k * sStride), and the block's
 * output at out (word k at out + k * outStride): one layout serves a lane of the four-message
 * function and the one-message function alike, without copies. The partner's words are made as the
 * steps take them. About one random block in 21 meets a vector's conditions, as with git's own
 * check (most of those the weak I(46..48,2) and II(46,2), with seven conditions each).
 */
function recompressionMatches(mask: i32, w: usize, stride: usize, s: usize, sStride: usize, out: usize, outStride: usize): bool {
  for (let v = 0; v < vectorCount; v++) {
    if (((mask >>> v) & 1) == 0) continue;
    const dm: usize = DM + (<usize>v) * 320;
    const step = load<i32>(STEPS + (<usize>v << 2));
    const at: usize = step == 58 ? s : s + 5 * sStride;
    let a = load<i32>(at), b = load<i32>(at + sStride), c = load<i32>(at + 2 * sStride), d = load<i32>(at + 3 * sStride), e = load<i32>(at + 4 * sStride);
    let a0 = a, b0 = b, c0 = c, d0 = d, e0 = e;
    // Backward: step i made (a0..e0) from (b0, rol(c0, 2), d0, e0, x): solve for x.
    let i = step - 1;
    for (; i >= 60; i--) {
      const pb = rol(c0, 2);
      const pe = a0 - rol(b0, 5) - (pb ^ d0 ^ e0) - 0xca62c1d6 - (load<i32>(w + <usize>i * stride) ^ load<i32>(dm + (<usize>i << 2)));
      a0 = b0; b0 = pb; c0 = d0; d0 = e0; e0 = pe;
    }
    for (; i >= 40; i--) {
      const pb = rol(c0, 2);
      const pe = a0 - rol(b0, 5) - ((pb & d0) | (pb & e0) | (d0 & e0)) - 0x8f1bbcdc - (load<i32>(w + <usize>i * stride) ^ load<i32>(dm + (<usize>i << 2)));
      a0 = b0; b0 = pb; c0 = d0; d0 = e0; e0 = pe;
    }
    for (; i >= 20; i--) {
      const pb = rol(c0, 2);
      const pe = a0 - rol(b0, 5) - (pb ^ d0 ^ e0) - 0x6ed9eba1 - (load<i32>(w + <usize>i * stride) ^ load<i32>(dm + (<usize>i << 2)));
      a0 = b0; b0 = pb; c0 = d0; d0 = e0; e0 = pe;
    }
    for (; i >= 0; i--) {
      const pb = rol(c0, 2);
      const pe = a0 - rol(b0, 5) - ((pb & d0) | (~pb & e0)) - 0x5a827999 - (load<i32>(w + <usize>i * stride) ^ load<i32>(dm + (<usize>i << 2)));
      a0 = b0; b0 = pb; c0 = d0; d0 = e0; e0 = pe;
    }
    // Forward from the step to the end.
    let j = step;
    for (; j < 60; j++) {
      const t = rol(a, 5) + ((b & c) | (b & d) | (c & d)) + e + 0x8f1bbcdc + (load<i32>(w + <usize>j * stride) ^ load<i32>(dm + (<usize>j << 2)));
      e = d; d = c; c = rol(b, 30); b = a; a = t;
    }
    for (; j < 80; j++) {
      const t = rol(a, 5) + (b ^ c ^ d) + e + 0xca62c1d6 + (load<i32>(w + <usize>j * stride) ^ load<i32>(dm + (<usize>j << 2)));
      e = d; d = c; c = rol(b, 30); b = a; a = t;
    }
    if (a0 + a == load<i32>(out) && b0 + b == load<i32>(out + outStride) && c0 + c == load<i32>(out + 2 * outStride)
      && d0 + d == load<i32>(out + 3 * outStride) && e0 + e == load<i32>(out + 4 * outStride)) return true;
  }
  return false;
}
