#!/usr/bin/env node
// Writes a synthetic pack directly, for the scale benchmarks (issue 11), without git or packwright:
//
//   node bench/make-pack.mjs OUT [--groups=N] [--chain=D] [--size=BYTES] [--random] [--level=L]
//                                [--ref-every=K] [--tail-deltas=M]
//
// The pack holds N groups of D objects: a blob of SIZE bytes, then D-1 deltas, each on the object
// before it (OFS_DELTA, or REF_DELTA for every K-th delta). Each delta replaces a few bytes in the
// middle, so every object is distinct. With --tail-deltas=M, M more deltas follow all the groups,
// each on the base of a group spread evenly over the pack: on a pack over 4 GiB their bases lie on
// both sides of the 4 GiB mark and their distances exceed 32 bits. --random makes the blobs
// incompressible (stored at --level=0 they cost their size on disk); otherwise they are lines of
// text. The output is deterministic for given options. Only the ids of REF delta bases are computed
// (the pack needs no others). Examples:
//   10M small objects:  --groups=2000000 --chain=5 --size=120 --ref-every=4 --level=1
//   ~5 GiB:             --groups=320 --chain=2 --size=16777216 --random --level=0 --tail-deltas=200
import { createHash } from 'node:crypto';
import { closeSync, openSync, renameSync, writeSync } from 'node:fs';
import { deflateSync } from 'node:zlib';

const [out, ...rest] = process.argv.slice(2);
if (out === undefined || out.startsWith('--')) {
  console.error('usage: make-pack.mjs OUT [--groups=N] [--chain=D] [--size=BYTES] [--random] [--level=L] [--ref-every=K] [--tail-deltas=M]');
  process.exit(129);
}
const opt = Object.fromEntries(rest.map((a) => {
  const m = /^--([a-z-]+)(?:=(.*))?$/.exec(a);
  if (m === null) throw new Error(`bad option ${a}`);
  return [m[1], m[2] ?? 'true'];
}));
const groups = Number(opt.groups ?? 1000);
const chain = Number(opt.chain ?? 5);
const size = Number(opt.size ?? 200);
const random = opt.random === 'true';
const level = Number(opt.level ?? 1);
const refEvery = Number(opt['ref-every'] ?? 0);
const tail = Number(opt['tail-deltas'] ?? 0);
const count = groups * chain + tail;
if (!(count > 0 && count < 2 ** 32 && size >= 64)) throw new Error('need a positive count below 2^32 and a size of at least 64');

// A small fast generator (xorshift32), so the output depends only on the options.
let seed = 0x9e3779b9;
function next() {
  seed ^= seed << 13; seed >>>= 0;
  seed ^= seed >>> 17;
  seed ^= seed << 5; seed >>>= 0;
  return seed;
}
function fillRandom(buf) {
  for (let i = 0; i + 4 <= buf.length; i += 4) buf.writeUInt32LE(next(), i);
  for (let i = buf.length & ~3; i < buf.length; i++) buf[i] = next() & 0xff;
}
function blobContent(g) {
  const buf = Buffer.allocUnsafe(size);
  if (random) fillRandom(buf);
  else {
    let p = 0;
    for (let line = 0; p < size; line++) p += buf.write(`group ${g} line ${line} value ${next().toString(36)}\n`, p);
  }
  buf.write(`group ${g}\n`, 0);
  return buf;
}

const fd = openSync(`${out}.tmp`, 'w');
const hash = createHash('sha1');
const pending = [];
let pendingBytes = 0;
let offset = 0;
function emit(bytes) {
  pending.push(bytes);
  pendingBytes += bytes.length;
  offset += bytes.length;
  if (pendingBytes >= 1 << 22) flush();
}
function flush() {
  const chunk = Buffer.concat(pending);
  hash.update(chunk);
  for (let at = 0; at < chunk.length;) at += writeSync(fd, chunk, at);
  pending.length = 0;
  pendingBytes = 0;
}
function sizeHeader(type, n) {
  const bytes = [];
  let c = (type << 4) | (n % 16);
  n = Math.floor(n / 16);
  while (n > 0) {
    bytes.push(c | 0x80);
    c = n % 128;
    n = Math.floor(n / 128);
  }
  bytes.push(c);
  return bytes;
}
function ofsDistance(d) {
  // git's encoding: 7 bits a byte, most significant first, each continuation adding one.
  const bytes = [d % 128];
  d = Math.floor(d / 128);
  while (d > 0) {
    d -= 1;
    bytes.unshift(0x80 | (d % 128));
    d = Math.floor(d / 128);
  }
  return bytes;
}
function varint(n) {
  const bytes = [];
  do {
    let c = n % 128;
    n = Math.floor(n / 128);
    if (n > 0) c |= 0x80;
    bytes.push(c);
  } while (n > 0);
  return bytes;
}
function copyOps(from, length, ops) {
  for (let at = from; at < from + length;) {
    const n = Math.min(0xffffff, from + length - at);
    let flags = 0x80;
    const tail = [];
    for (let i = 0; i < 4; i++) if ((at / 2 ** (8 * i)) & 0xff) { flags |= 1 << i; tail.push(Math.floor(at / 2 ** (8 * i)) & 0xff); }
    for (let i = 0; i < 3; i++) if ((n >> (8 * i)) & 0xff) { flags |= 0x10 << i; tail.push((n >> (8 * i)) & 0xff); }
    ops.push(flags, ...tail);
    at += n;
  }
}
/** A delta that writes `marker` over the base's bytes at `at` (same size as the base). */
function patchDelta(baseSize, at, marker) {
  const ops = [...varint(baseSize), ...varint(baseSize)];
  copyOps(0, at, ops);
  ops.push(marker.length, ...marker);
  copyOps(at + marker.length, baseSize - at - marker.length, ops);
  return Buffer.from(ops);
}
function entry(type, data, prefix = []) {
  emit(Buffer.from([...sizeHeader(type, data.length), ...prefix]));
  emit(deflateSync(data, { level }));
}
function blobId(content) {
  return createHash('sha1').update(`blob ${content.length}\0`).update(content).digest();
}

const header = Buffer.alloc(12);
header.write('PACK', 0);
header.writeUInt32BE(2, 4);
header.writeUInt32BE(count, 8);
emit(header);
const groupBases = [];
const markerAt = Math.floor(size / 2);
for (let g = 0; g < groups; g++) {
  let content = blobContent(g);
  let previousOffset = offset;
  if (tail > 0) groupBases.push({ offset, id: refEvery > 0 ? blobId(content) : undefined });
  entry(3, content);
  for (let j = 1; j < chain; j++) {
    const marker = Buffer.from(`g${g}r${j}`);
    const delta = patchDelta(size, markerAt, marker);
    const here = offset;
    if (refEvery > 0 && j % refEvery === 0) entry(7, delta, [...blobId(content)]);
    else entry(6, delta, ofsDistance(here - previousOffset));
    // The result, for the next delta's REF base id (only then is it needed).
    if (refEvery > 0) {
      content = Buffer.from(content);
      marker.copy(content, markerAt);
    }
    previousOffset = here;
  }
  if (g % 100000 === 0 && g > 0) process.stderr.write(`${g} groups, ${(offset / 2 ** 20).toFixed(0)} MiB\r`);
}
for (let t = 0; t < tail; t++) {
  const base = groupBases[Math.floor((t * groupBases.length) / tail)];
  const delta = patchDelta(size, markerAt + 16, Buffer.from(`tail${t}`));
  if (refEvery > 0 && t % 2 === 1) entry(7, delta, [...base.id]);
  else entry(6, delta, ofsDistance(offset - base.offset));
}
flush();
const trailer = hash.digest();
writeSync(fd, trailer);
closeSync(fd);
renameSync(`${out}.tmp`, out);
console.error(`${out}: ${count} objects, ${offset + 20} bytes`);
