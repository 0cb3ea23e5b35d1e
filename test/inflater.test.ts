import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir, makeRepo, git, fileEndingIn } from './helpers/git.js';
import { crc32, Deflater, deflateBound, Inflater, INFLATE_CORRUPT, INFLATE_INPUT_ENDED, INFLATE_TOO_LONG, INFLATE_TOO_SHORT } from '../src/zlib/index.js';
import { PackIndex } from '../src/idx/index.js';
import { EntryHeader, parseEntryHeader } from '../src/pack/index.js';
import { constants as zlibConstants, crc32 as zlibCrc32, deflateSync, inflateSync } from 'node:zlib';
import { Z_BEST_SPEED, Z_BUF_ERROR, Z_DEFAULT_COMPRESSION, Z_FINISH, Z_SYNC_FLUSH } from '../src/zlib/node-zlib.js';
import fc from 'fast-check';
import { loadReferenceDeflate } from '../src/zlib/reference-deflate.js';
import { seededRandom } from './helpers/random.js';

test('the reused native handle and the documented inflateSync path agree on every entry of a git pack', () => {
  const dir = tempDir();
  try {
    mkdirSync(join(dir.path, 'r'));
    const repo = makeRepo(join(dir.path, 'r'), 'sha1', 8);
    git(repo, ['repack', '-adq']);
    const packDir = join(repo, '.git', 'objects', 'pack');
    const base = fileEndingIn(packDir, '.pack').slice(0, -5);
    const pack = readFileSync(join(packDir, base + '.pack'));
    const index = new PackIndex(readFileSync(join(packDir, base + '.idx')), 20);
    const { offsets } = index.packOrder();
    const native = new Inflater();
    const documented = new Inflater({ native: false });
    assert.ok(native.native, 'zlib internals are available on this Node');
    const h = new EntryHeader();
    for (let k = 0; k < offsets.length; k++) {
      const offset = offsets[k] as number;
      parseEntryHeader(pack, offset, pack.length - 20, offset, 20, h);
      const end = k + 1 < offsets.length ? (offsets[k + 1] as number) : pack.length - 20;
      const a = Buffer.alloc(h.size + 1);
      const b = Buffer.alloc(h.size + 1);
      const start = offset + h.headerLength;
      const used = native.inflateExact(pack, start, pack.length, a, 0, h.size);
      assert.equal(used, end - start, `native consumed length at ${offset}`);
      assert.equal(documented.inflateExact(pack, start, pack.length, b, 0, h.size), end - start, `documented consumed length at ${offset}`);
      assert.deepEqual(a.subarray(0, h.size), b.subarray(0, h.size));
    }
  } finally {
    dir[Symbol.dispose]();
  }
});

test('the zlib.h values named without loading node:zlib are the ones Node\'s zlib has', () => {
  assert.deepEqual(
    { Z_BEST_SPEED, Z_BUF_ERROR, Z_DEFAULT_COMPRESSION, Z_FINISH, Z_SYNC_FLUSH },
    { Z_BEST_SPEED: zlibConstants.Z_BEST_SPEED, Z_BUF_ERROR: zlibConstants.Z_BUF_ERROR, Z_DEFAULT_COMPRESSION: zlibConstants.Z_DEFAULT_COMPRESSION, Z_FINISH: zlibConstants.Z_FINISH, Z_SYNC_FLUSH: zlibConstants.Z_SYNC_FLUSH },
  );
});

test('both paths report truncation, short and long streams the same way', () => {
  const data = Buffer.from('some text to compress '.repeat(50));
  const z = deflateSync(data);
  for (const inflater of [new Inflater(), new Inflater({ native: false })]) {
    const out = Buffer.alloc(data.length + 100);
    assert.equal(inflater.inflateExact(z, 0, z.length - 5, out, 0, data.length), INFLATE_INPUT_ENDED);
    assert.equal(inflater.inflateExact(z, 0, z.length, out, 0, data.length - 1), INFLATE_TOO_LONG);
    assert.equal(inflater.inflateExact(z, 0, z.length, out, 0, data.length + 1), INFLATE_TOO_SHORT);
    // And it recovers after an error.
    assert.equal(inflater.inflateExact(z, 0, z.length, out, 0, data.length), z.length);
    assert.deepEqual(out.subarray(0, data.length), data);
  }
});

test('inflateStreaming takes a stream in pieces, each byte once, and ends where inflateExact does', () => {
  const random = seededRandom(41);
  // Part text, part noise: stored and compressed blocks both.
  const data = Buffer.concat([Buffer.from('a line of text that compresses\n'.repeat(20000)), Buffer.from(Array.from({ length: 300_000 }, () => Math.floor(random() * 256)))]);
  const z = Buffer.concat([deflateSync(data), Buffer.from('the next entry')]);
  const streamEnd = z.length - 'the next entry'.length;
  const inflater = new Inflater();
  for (const piece of [1 << 10, 64 << 10, 1 << 20]) {
    const out = Buffer.alloc(data.length + 1);
    // The input grows a piece at a time, in a buffer that moves (a window sliding to the entry).
    let end = Math.min(piece, z.length);
    let used = inflater.inflateStreaming(Buffer.from(z.subarray(0, end)), 0, end, out, 0, data.length, false);
    while (used === INFLATE_INPUT_ENDED) {
      assert.ok(end < z.length, 'more is asked for only while there is more');
      end = Math.min(end + piece, z.length);
      const moved = Buffer.concat([Buffer.alloc(7), z.subarray(0, end)]);
      used = inflater.inflateStreaming(moved, 7, 7 + end, out, 0, data.length, true);
    }
    assert.equal(used, streamEnd, `pieces of ${piece}`);
    assert.deepEqual(out.subarray(0, data.length), data);
  }
  // A stream that ends exactly where the input does is finished once input follows it.
  const out = Buffer.alloc(data.length + 1);
  assert.equal(inflater.inflateStreaming(z, 0, streamEnd, out, 0, data.length, false), INFLATE_INPUT_ENDED);
  assert.equal(inflater.inflateStreaming(z, 0, streamEnd + 1, out, 0, data.length, true), streamEnd);
  // Long, short and corrupt streams, in pieces or not; then it works again.
  assert.equal(inflater.inflateStreaming(z, 0, z.length, out, 0, data.length - 1, false), INFLATE_TOO_LONG);
  assert.equal(inflater.inflateStreaming(z, 0, z.length, Buffer.alloc(data.length + 2), 0, data.length + 1, false), INFLATE_TOO_SHORT);
  const bad = Buffer.from(z);
  bad.fill(0xff, 1000, 1100);
  let r = inflater.inflateStreaming(bad, 0, 900, out, 0, data.length, false);
  assert.equal(r, INFLATE_INPUT_ENDED);
  r = inflater.inflateStreaming(bad, 0, bad.length, out, 0, data.length, true);
  assert.equal(r, INFLATE_CORRUPT);
  assert.equal(inflater.inflateStreaming(z, 0, z.length, out, 0, data.length, false), streamEnd);
});

test('Deflater: one reused native handle makes zlib streams that inflate back, at any size and level', () => {
  for (const level of [0, 1, 6, 9]) {
    const d = new Deflater(level);
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 70_000 }), fc.boolean(), (data, repetitive) => {
        // Random bytes barely compress; a repeated 7-byte pattern compresses a lot.
        const input = repetitive && data.length > 0 ? Buffer.alloc(data.length, Buffer.from(data.subarray(0, 7))) : Buffer.from(data);
        const z = Buffer.from(d.deflate(input));
        assert.ok(inflateSync(z).equals(input));
        assert.ok(z.length <= deflateBound(input.length));
      }),
      { numRuns: 60 },
    );
    d.close();
  }
});

test('crc32: the table loop (short ranges) and zlib (long ones) give zlib\'s CRC-32 for any range of any bytes', () => {
  fc.assert(fc.property(fc.uint8Array({ maxLength: 700 }), fc.nat(), fc.nat(), (bytes, a, b) => {
    const from = bytes.length === 0 ? 0 : a % (bytes.length + 1);
    const to = from + (b % (bytes.length - from + 1));
    assert.equal(crc32(bytes, from, to), zlibCrc32(bytes.subarray(from, to)));
    assert.equal(crc32(bytes), zlibCrc32(bytes));
  }), { numRuns: 2000 });
  assert.equal(crc32(new Uint8Array(0)), 0);
  assert.equal(crc32(Buffer.from('123456789')), 0xcbf43926);
});

test('the reference deflate, one stream reset between objects, writes the bytes git writes (its loose objects) at every level', async () => {
  using dir = tempDir();
  git(dir.path, ['init', '-q', '--bare', 'r.git']);
  const repo = join(dir.path, 'r.git');
  const deflate = await loadReferenceDeflate();
  const random = (n: number, seed: number): Buffer => {
    const next = seededRandom(seed);
    return Buffer.from(Array.from({ length: n }, () => Math.floor(next() * 256)));
  };
  const text = (n: number): Buffer => Buffer.from(Array.from({ length: n }, (_, i) => `line ${i} ${i % 7 === 0 ? 'again' : 'of text'}\n`).join(''));
  // Small and empty objects, text past the 32 KiB window (the window slides), incompressible bytes
  // (stored blocks), mixed: levels interleaved, so each level's stream is reused after others ran.
  const contents = [Buffer.alloc(0), Buffer.from('x'), text(20), random(300, 1), text(9000), random(70_000, 2), Buffer.concat([text(3000), random(40_000, 3), text(3000)]), text(40)];
  for (const data of contents) {
    for (const level of [1, -1, 6, 9, 0]) {
      const id = git(repo, ['-c', `core.loosecompression=${level}`, 'hash-object', '-w', '--stdin'], data).toString().trim();
      const path = join(repo, 'objects', id.slice(0, 2), id.slice(2));
      const ours = deflate(Buffer.concat([Buffer.from(`blob ${data.length}\0`), data]), level);
      assert.ok(ours.equals(readFileSync(path)), `${data.length} bytes at level ${level}`);
      rmSync(path);
    }
  }
});
