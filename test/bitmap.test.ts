import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { fileEndingIn, git, makeHistoryRepo, packwright, runPackwright, tempDir, type Format } from './helpers/git.js';
import { indexIds } from './helpers/index-ids.js';
import { Bitset, decodeEwah, EwahFormatError, PackBitmap } from '../src/bitmap/index.js';
import { walkObjectsWithBitmap } from '../src/walk/index.js';
import { RevArgs } from '../src/walk/index.js';
import { Repository } from '../src/repo/index.js';

const FORMATS: Format[] = ['sha1', 'sha256'];

/**
 * An EWAH stream as git writes one (test-only encoder): runs of all-0 or all-1 words, each run
 * followed by the literal words up to the next run, big-endian.
 */
function encodeEwah(words: bigint[], bitSize: number): Buffer {
  const out: bigint[] = [];
  let i = 0;
  while (i < words.length) {
    const w = words[i] as bigint;
    let run = 0;
    let bit = 0n;
    if (w === 0n || w === 0xffffffffffffffffn) {
      bit = w === 0n ? 0n : 1n;
      while (i < words.length && words[i] === w) {
        run++;
        i++;
      }
    }
    const literals: bigint[] = [];
    while (i < words.length && words[i] !== 0n && words[i] !== 0xffffffffffffffffn) literals.push(words[i++] as bigint);
    out.push(bit | (BigInt(run) << 1n) | (BigInt(literals.length) << 33n), ...literals);
  }
  const buf = Buffer.alloc(8 + 8 * out.length + 4);
  buf.writeUInt32BE(bitSize, 0);
  buf.writeUInt32BE(out.length, 4);
  out.forEach((w, k) => buf.writeBigUInt64BE(w, 8 + 8 * k));
  buf.writeUInt32BE(Math.max(0, out.length - 1), 8 + 8 * out.length);
  return buf;
}

test('EWAH streams decode to the bits they encode, and runs past their size are refused', () => {
  fc.assert(fc.property(fc.array(fc.oneof(fc.constant(0n), fc.constant(0xffffffffffffffffn), fc.bigInt({ min: 0n, max: 0xffffffffffffffffn })), { maxLength: 40 }), (words) => {
    const bitSize = words.length * 64;
    const stream = encodeEwah(words, bitSize);
    const decoded = decodeEwah(stream, 0, stream.length, bitSize);
    assert.equal(decoded.end, stream.length);
    assert.equal(decoded.bitSize, bitSize);
    for (let i = 0; i < bitSize; i++) assert.equal(decoded.bits.get(i), ((words[i >> 6] as bigint) >> BigInt(i & 63) & 1n) === 1n, `bit ${i}`);
  }));
  // A run of 3 words in a 64-bit bitmap, a stated size past what the pack has, cut data.
  const run = encodeEwah([0xffffffffffffffffn, 0xffffffffffffffffn, 0xffffffffffffffffn], 64);
  assert.throws(() => decodeEwah(run, 0, run.length, 64), (e: unknown) => e instanceof EwahFormatError && /run of 3 words/.test(e.message));
  const big = encodeEwah([1n, 1n], 128);
  assert.throws(() => decodeEwah(big, 0, big.length, 10), /more than the 10 objects/);
  assert.throws(() => decodeEwah(big, 0, big.length - 6, 128), /corrupt ewah bitmap: eof in data/);
  assert.throws(() => decodeEwah(big, 0, 3, 128), /eof before bit size/);
});

test('Bitset: or, xor, andNot, count and ordered iteration over a mask', () => {
  const a = new Bitset(10);
  for (const i of [1, 5, 31, 32, 70, 100]) a.set(i);
  const b = new Bitset(200);
  for (const i of [5, 32, 150]) b.set(i);
  const seen: number[] = [];
  a.forEachAnd(b, (i) => seen.push(i));
  assert.deepEqual(seen, [5, 32]);
  a.or(b);
  assert.equal(a.count(), 7);
  assert.equal(a.count(40), 4);
  a.andNot(b);
  assert.deepEqual([1, 5, 31, 32, 70, 100, 150].filter((i) => a.get(i)), [1, 31, 70, 100]);
  a.xor(b);
  assert.deepEqual([1, 5, 31, 32, 70, 100, 150].filter((i) => a.get(i)), [1, 5, 31, 32, 70, 100, 150]);
});

/**
 * The history repository repacked by git with a bitmap (and, with `lookupTable`, the commit
 * lookup table git 2.39 can write), then two commits made after it (loose objects: what only a
 * walk finds, git's extended index).
 */
function bitmapRepo(dir: string, format: Format, lookupTable: boolean, kind: 'pack' | 'midx' = 'pack'): string {
  const repo = makeHistoryRepo(dir, format, 80);
  if (kind === 'pack') git(repo, ['-c', `pack.writeBitmapLookupTable=${lookupTable}`, 'repack', '-adbq']);
  else {
    // Three packs under a multi-pack bitmap: everything (with a pack bitmap of its own), then a copy of v0.5's objects (the
    // preferred pack, so it wins every duplicate), then the tags and commits of a new branch.
    git(repo, ['repack', '-adq']);
    const old = git(repo, ['rev-list', '--objects', 'v0.5']).toString().split('\n').filter(Boolean).map((l) => l.slice(0, format === 'sha1' ? 40 : 64)).join('\n');
    const copy = git(repo, ['pack-objects', '-q', join(repo, 'objects', 'pack', 'pack')], `${old}\n`).toString().trim();
    const blob = git(repo, ['hash-object', '-w', '--stdin'], 'in the third pack\n').toString().trim();
    const tree = git(repo, ['mktree'], `100644 blob ${blob}\tthird.txt\n`).toString().trim();
    const third = git(repo, ['commit-tree', tree, '-p', 'main', '-m', 'third pack']).toString().trim();
    git(repo, ['update-ref', 'refs/heads/third', third]);
    git(repo, ['repack', '-dq']);
    git(repo, ['-c', `pack.writeBitmapLookupTable=${lookupTable}`, 'multi-pack-index', 'write', '--bitmap', `--preferred-pack=pack-${copy}.pack`]);
  }
  let parent = git(repo, ['rev-parse', 'main']).toString().trim();
  for (let i = 0; i < 2; i++) {
    const blob = git(repo, ['hash-object', '-w', '--stdin'], `after the repack ${i}\n`).toString().trim();
    const tree = git(repo, ['mktree'], `100644 blob ${blob}\tafter-${i}.txt\n`).toString().trim();
    parent = git(repo, ['commit-tree', tree, '-p', parent, '-m', `after ${i}`]).toString().trim();
  }
  git(repo, ['update-ref', 'refs/heads/after', parent]);
  git(repo, ['tag', '-a', '-m', 'on a loose commit', 'after-tag', parent]);
  return repo;
}

const REVISIONS = [
  ['--all'],
  ['main'],
  ['after'],
  ['after', '^main'],
  ['main', '^topic'],
  ['v0.5..main'],
  ['--tags'],
  ['nested', 'tree-tag', 'blob-tag'],
  ['after-tag', '^v1.0'],
  ['main', '--not', 'v0.5', 'oct-a'],
];

for (const format of FORMATS) {
  for (const [lookupTable, kind] of [[false, 'pack'], [true, 'pack'], [false, 'midx']] as const) {
    test(`rev-list --use-bitmap-index prints what git's does, in its order (${format}${lookupTable ? ', lookup table' : ''}${kind === 'midx' ? ', a multi-pack bitmap' : ''})`, async () => {
      using tmp = tempDir();
      const repo = bitmapRepo(tmp.path, format, lookupTable, kind);
      if (kind === 'midx') {
        const packs = readdirSync(join(repo, 'objects', 'pack'));
        assert.equal(packs.filter((f) => f.endsWith('.pack')).length, 3);
        assert.ok(packs.some((f) => /^multi-pack-index-[0-9a-f]+\.bitmap$/.test(f)));
        // git's repack -a of a bare repository wrote the first pack a bitmap too: the multi-pack
        // one comes first, as in git.
        assert.ok(packs.some((f) => f.endsWith('.bitmap') && f.startsWith('pack-')));
      }
      for (const revs of [...REVISIONS, ...(kind === 'midx' ? [['third'], ['third', '^v0.5'], ['--all', '^third']] : [])]) {
        const args = ['rev-list', '--use-bitmap-index', ...revs];
        assert.equal((await packwright(repo, [...args, '--objects'])).toString(), git(repo, [...args, '--objects']).toString(), `--objects ${revs.join(' ')}`);
        assert.equal((await packwright(repo, args)).toString(), git(repo, args).toString(), `commits of ${revs.join(' ')}`);
        assert.equal((await packwright(repo, [...args, '--count'])).toString(), git(repo, [...args, '--count']).toString(), `--count ${revs.join(' ')}`);
        assert.equal((await packwright(repo, [...args, '--count', '--objects'])).toString(), git(repo, [...args, '--count', '--objects']).toString(), `--count --objects ${revs.join(' ')}`);
      }
      // --test-bitmap: a bitmapped commit's set is what the walk finds; a commit made after the
      // repack has no bitmap, which is git's error.
      const tested = await runPackwright(repo, ['rev-list', '--test-bitmap', 'main']);
      assert.equal(tested.status, 0, tested.stderr);
      assert.match(tested.stderr, /OK!/);
      const none = await runPackwright(repo, ['rev-list', '--test-bitmap', 'after']);
      assert.equal(none.status, 128);
      assert.match(none.stderr, /doesn't have an indexed bitmap/);
      // Bitmap order is not the walk's: the listing above came through the bitmap.
      assert.notEqual(git(repo, ['rev-list', '--objects', '--all']).toString(), git(repo, ['rev-list', '--objects', '--all', '--use-bitmap-index']).toString());
    });
  }

  test(`pack-objects --stdout counts from the bitmap: the objects git's rev-list gives, in a pack git accepts (${format})`, async () => {
    using tmp = tempDir();
    const repo = bitmapRepo(tmp.path, format, false);
    const repository = Repository.open(repo);
    try {
      for (const revs of [['--all'], ['after', '^v0.5'], ['main', '^topic']]) {
        const tips = new RevArgs(repository);
        for (const r of revs) tips.add(r);
        const walked = walkObjectsWithBitmap(repository.objects, tips.tips);
        assert.ok(walked !== undefined, `the bitmap is used for ${revs.join(' ')}`);
        const expected = git(repo, ['rev-list', '--objects', ...revs]).toString().split('\n').filter(Boolean).map((l) => l.slice(0, 2 * (format === 'sha1' ? 20 : 32))).sort();
        assert.deepEqual(Array.from(walked.order, (n) => Buffer.from(walked.table.id(n)).toString('hex')).sort(), expected, revs.join(' '));
        const input = revs.map((r) => (r.startsWith('^') ? `--not\n${r.slice(1)}\n` : `${r}\n`)).join('').replace(/^--all\n/, '');
        const pack = await packwright(repo, ['pack-objects', '--revs', '--stdout', '-q', ...(revs[0] === '--all' ? ['--all'] : [])], input);
        const check = join(tmp.path, `check-${format}-${revs.join('').replace(/[^a-z0-9]/g, '')}.git`);
        git(tmp.path, ['init', '-q', '--bare', `--object-format=${format}`, check]);
        const path = join(check, 'objects', 'pack', 'in.pack');
        writeFileSync(path, pack);
        git(check, ['index-pack', path]);
        const got = indexIds(path.replace(/\.pack$/, '.idx'), format);
        assert.deepEqual(got, expected, `pack of ${revs.join(' ')}`);
      }
    } finally {
      repository.close();
    }
  });
}

test('a damaged bitmap is reported and passed over: the walk gives git\'s objects', async () => {
  using tmp = tempDir();
  const repo = bitmapRepo(tmp.path, 'sha1', false);
  const path = join(repo, 'objects', 'pack', fileEndingIn(join(repo, 'objects', 'pack'), '.bitmap'));
  const good = readFileSync(path);
  const expected = git(repo, ['rev-list', '--objects', '--all']).toString();
  const objectCount = Number(/in-pack: (\d+)/.exec(git(repo, ['count-objects', '-v']).toString())?.[1]);
  const flipped = Buffer.from(good);
  flipped[flipped.length - 100] = (flipped[flipped.length - 100] as number) ^ 0x10;
  const version = Buffer.from(good);
  version.writeUInt16BE(2, 4);
  const damaged: [string, Buffer, RegExp][] = [
    ['cut short in a set', good.subarray(0, 256), /corrupted bitmap index|corrupt ewah bitmap/],
    ['cut short in the hash cache', good.subarray(0, 512), /corrupted bitmap index|corrupt ewah bitmap/],
    ['a flipped bit', flipped, /checksum mismatch/],
    ['a wrong signature', Buffer.concat([Buffer.from('BITX'), good.subarray(4)]), /wrong header/],
    ['an unknown version', version, /unsupported version '2'/],
    ['empty', Buffer.alloc(0), /too small/],
  ];
  for (const [what, bytes, message] of damaged) {
    writeFileSync(path, bytes);
    const run = await runPackwright(repo, ['rev-list', '--objects', '--all', '--use-bitmap-index']);
    assert.equal(run.status, 0, what);
    assert.match(run.stderr, message, what);
    // The walk's order, since the bitmap was not used.
    assert.equal(run.stdout.toString(), expected, what);
    assert.throws(() => PackBitmap.open(path, { objectCount, hashLength: 20 }), (e: unknown) => (e as { code?: string }).code === 'BITMAP_CORRUPT', what);
  }
});

test('a multi-pack bitmap that does not fit its multi-pack-index is reported and passed over for the pack\'s bitmap', async () => {
  using tmp = tempDir();
  const repo = bitmapRepo(tmp.path, 'sha1', false, 'midx');
  const packDir = join(repo, 'objects', 'pack');
  const bitmapPath = join(packDir, readdirSync(packDir).find((f) => f.startsWith('multi-pack-index-') && f.endsWith('.bitmap')) as string);
  const midxPath = join(packDir, 'multi-pack-index');
  const good = { bitmap: readFileSync(bitmapPath), midx: readFileSync(midxPath) };
  const args = ['rev-list', '--objects', '--all', '--use-bitmap-index'];
  // What the pack's own bitmap gives (git's answer once the multi-pack one cannot be used).
  writeFileSync(bitmapPath, Buffer.alloc(0));
  const fromPack = git(repo, args).toString();
  assert.notEqual(fromPack, git(repo, ['rev-list', '--objects', '--all']).toString());
  // The RIDX chunk: its first two entries swapped.
  const ridx = findChunk(good.midx, 'RIDX');
  const swapped = Buffer.from(good.midx);
  good.midx.copy(swapped, ridx, ridx + 4, ridx + 8);
  good.midx.copy(swapped, ridx + 4, ridx, ridx + 4);
  const otherMidx = Buffer.from(good.bitmap);
  otherMidx[12] = (otherMidx[12] as number) ^ 0xff;
  createHash('sha1').update(otherMidx.subarray(0, otherMidx.length - 20)).digest().copy(otherMidx, otherMidx.length - 20);
  const damaged: [string, Buffer, Buffer, RegExp][] = [
    ['a bitmap naming another multi-pack-index', otherMidx, good.midx, /checksum doesn't match in MIDX and bitmap/],
    ['a reverse index out of order', good.bitmap, swapped, /not the pseudo-pack order/],
    ['a damaged bitmap', good.bitmap.subarray(0, 200), good.midx, /corrupted bitmap index|corrupt ewah bitmap/],
  ];
  for (const [what, bitmap, midx, message] of damaged) {
    writeFileSync(bitmapPath, bitmap);
    writeFileSync(midxPath, midx);
    const run = await runPackwright(repo, args);
    assert.equal(run.status, 0, what);
    assert.match(run.stderr, message, what);
    assert.equal(run.stdout.toString(), fromPack, what);
  }
});

/** Where the chunk `id` of a chunked file (multi-pack-index, commit-graph) starts. */
function findChunk(file: Buffer, id: string): number {
  for (let at = 12; ; at += 12) {
    const name = file.toString('latin1', at, at + 4);
    if (name === id) return Number(file.readBigUInt64BE(at + 4));
    if (file.readUInt32BE(at) === 0) throw new Error(`no ${id} chunk`);
  }
}
