import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, rmSync, truncateSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { git, makeRepo, tempDir, type Format, fileEndingIn } from './helpers/git.js';
import { Repository } from '../src/repo/index.js';
import { PackIndex, findId, readMtimes, writeIndex, writeMtimes } from '../src/idx/index.js';
import { seededRandom } from './helpers/random.js';
import { packOrderOf32, packOrderOfLarge } from '../src/idx/pack-order.js';
import { PackFile } from '../src/pack/index.js';
import { forEachObject } from '../src/odb/index.js';
import { hashObject } from '../src/hash/index.js';
import { isPackwrightError } from '../src/errors/index.js';

/** A repository packed by git, with its pack indexed again by git at `indexVersion`. */
function indexedPack(dir: string, format: Format, indexVersion: string): { repo: string; idx: string; H: number } {
  const repo = makeRepo(dir, format);
  git(repo, ['-c', 'pack.threads=1', 'repack', '-adfq']);
  const packDir = join(repo, '.git', 'objects', 'pack');
  const pack = join(packDir, fileEndingIn(packDir, '.pack'));
  const idx = pack.replace(/\.pack$/, '.idx');
  git(repo, ['index-pack', `--index-version=${indexVersion}`, '-o', idx, pack]);
  return { repo, idx, H: format === 'sha1' ? 20 : 32 };
}

for (const format of ['sha1', 'sha256'] as Format[]) {
  for (const indexVersion of ['2', '2,0x200']) {
    test(`a ${format} v${indexVersion} index read by section answers like one read whole`, () => {
      const dir = tempDir();
      try {
        mkdirSync(join(dir.path, 'r'));
        const { idx, H } = indexedPack(join(dir.path, 'r'), format, indexVersion);
        const whole = new PackIndex(readFileSync(idx), H, idx);
        // A small read counted as 1 byte: its sections load whole only after ~n×(H+8) small reads.
        const lazy = PackIndex.open(idx, H, { lazyMin: 0, smallReadBytes: 1 });
        const n = whole.count;
        assert.equal(lazy.count, n);
        assert.deepEqual(lazy.packHash, whole.packHash);
        // Lookups by small reads first; past the allowance of small reads the sections load whole.
        for (let round = 0; round * n < 40 * n; round++) {
          for (let i = 0; i < n; i++) {
            assert.equal(lazy.find(whole.id(i)), i, `find #${i}, round ${round}`);
            assert.equal(lazy.offset(i), whole.offset(i), `offset #${i}, round ${round}`);
            assert.deepEqual(lazy.id(i), whole.id(i));
          }
        }
        const missing = Buffer.from(whole.id(0));
        missing[H - 1] = (missing[H - 1] as number) ^ 1;
        assert.equal(lazy.find(missing), whole.find(missing));
        assert.deepEqual(lazy.packOrder(), whole.packOrder());
        for (let i = 0; i < n; i++) assert.equal(lazy.crc32(i), whole.crc32(i));
        assert.deepEqual(lazy.data, readFileSync(idx));
        lazy.verifyChecksum();
      } finally {
        dir[Symbol.dispose]();
      }
    });
  }
}

test('ids come in blocks from an index read whole, by section, and v1', () => {
  const dir = tempDir();
  try {
    mkdirSync(join(dir.path, 'r'));
    const { idx, H } = indexedPack(join(dir.path, 'r'), 'sha1', '1');
    const v1 = PackIndex.open(idx, H, { lazyMin: 0 });
    assert.equal(v1.version, 1);
    mkdirSync(join(dir.path, 'r2'));
    const { idx: idx2 } = indexedPack(join(dir.path, 'r2'), 'sha1', '2');
    for (const index of [v1, PackIndex.open(idx2, H, { lazyMin: 0 }), PackIndex.open(idx2, H)]) {
      const scratch = Buffer.alloc(7 * H);
      for (let first = 0; first < index.count; first += 7) {
        const count = Math.min(7, index.count - first);
        const block = index.idsBlock(first, count, scratch);
        assert.equal(block.length, count * H);
        for (let k = 0; k < count; k++) assert.deepEqual(Buffer.from(block.subarray(k * H, k * H + H)), Buffer.from(index.id(first + k)));
      }
    }
  } finally {
    dir[Symbol.dispose]();
  }
});

test('an index cut after it was opened is IDX_CORRUPT when an unread section is needed', () => {
  const dir = tempDir();
  try {
    mkdirSync(join(dir.path, 'r'));
    const { idx, H } = indexedPack(join(dir.path, 'r'), 'sha1', '2');
    const lazy = PackIndex.open(idx, H, { lazyMin: 0 });
    truncateSync(idx, statSync(idx).size - 100);
    assert.throws(() => lazy.packOrder(), (e: unknown) => isPackwrightError(e, 'IDX_CORRUPT') && e.message.includes(idx));
  } finally {
    dir[Symbol.dispose]();
  }
});

test('an index removed while open (git gc) answers everything through the file it holds', () => {
  const dir = tempDir();
  try {
    mkdirSync(join(dir.path, 'r'));
    const { idx, H } = indexedPack(join(dir.path, 'r'), 'sha256', '2');
    const whole = new PackIndex(readFileSync(idx), H, idx);
    const lazy = PackIndex.open(idx, H, { lazyMin: 0 });
    rmSync(idx);
    assert.equal(lazy.find(whole.id(3)), 3);
    assert.deepEqual(lazy.packOrder(), whole.packOrder());
    assert.deepEqual(lazy.data, whole.data);
    lazy.close();
  } finally {
    dir[Symbol.dispose]();
  }
});

test('a store whose indexes are read by section reads every object with the id asked for', () => {
  const dir = tempDir();
  try {
    mkdirSync(join(dir.path, 'r'));
    const { repo } = indexedPack(join(dir.path, 'r'), 'sha1', '2');
    const store = Repository.open(repo, { lazyIndexMin: 0 }).objects;
    let count = 0;
    forEachObject(store, {}, (id) => {
      const copy = Buffer.from(id);
      const obj = store.read(copy);
      assert.deepEqual(hashObject(store.format, obj.type, obj.data), copy);
      count++;
    });
    assert.equal(count, Number(git(repo, ['count-objects', '-v']).toString().match(/in-pack: (\d+)/)?.[1]));
    store.close();
  } finally {
    dir[Symbol.dispose]();
  }
});

test('a closed index never opens its file again by path (it may be another file by then)', () => {
  const dir = tempDir();
  try {
    mkdirSync(join(dir.path, 'r'));
    const { idx, H } = indexedPack(join(dir.path, 'r'), 'sha1', '2');
    const lazy = PackIndex.open(idx, H, { lazyMin: 0 });
    lazy.close();
    assert.throws(() => lazy.packOrder(), (e: unknown) => isPackwrightError(e, 'INVALID_ARGUMENT') && /closed/.test(e.message) && e.message.includes(idx));
  } finally {
    dir[Symbol.dispose]();
  }
});

test('a missing index is IDX_MISSING and a missing pack PACK_MISSING, never OBJECT_NOT_FOUND', () => {
  const dir = tempDir();
  try {
    const missing = join(dir.path, 'pack-0.idx');
    assert.throws(() => PackIndex.open(missing, 20), (e: unknown) => isPackwrightError(e, 'IDX_MISSING') && e.file === missing);
    assert.throws(() => PackFile.open(join(dir.path, 'pack-0.pack'), { hashLength: 20 }), (e: unknown) => isPackwrightError(e, 'PACK_MISSING'));
  } finally {
    dir[Symbol.dispose]();
  }
});

for (const format of ['sha1', 'sha256'] as Format[]) {
  test(`a ${format} .rev that git wrote gives the pack order; one that does not fit is REV_CORRUPT`, () => {
    const dir = tempDir();
    try {
      mkdirSync(join(dir.path, 'r'));
      const repo = makeRepo(join(dir.path, 'r'), format);
      git(repo, ['-c', 'pack.threads=1', '-c', 'pack.writeReverseIndex=true', 'repack', '-adfq']);
      const packDir = join(repo, '.git', 'objects', 'pack');
      const idx = join(packDir, fileEndingIn(packDir, '.idx'));
      const rev = idx.replace(/\.idx$/, '.rev');
      const H = format === 'sha1' ? 20 : 32;
      const sorted = new PackIndex(readFileSync(idx), H, idx).packOrder();
      assert.deepEqual(PackIndex.open(idx, H, { revPath: rev }).packOrder(), sorted);
      // The store reads it: every object read through the pack order is the one asked for.
      const store = Repository.open(repo).objects;
      forEachObject(store, { unordered: true }, (id) => {
        const copy = Buffer.from(id);
        const obj = store.read(copy);
        assert.deepEqual(hashObject(store.format, obj.type, obj.data), copy);
      });
      store.close();
      // Two entries swapped: offsets no longer increase.
      const bytes = readFileSync(rev);
      const a = Buffer.from(bytes.subarray(12, 16));
      bytes.copy(bytes, 12, 16, 20);
      a.copy(bytes, 16);
      writeFileSync(rev, bytes);
      assert.throws(() => PackIndex.open(idx, H, { revPath: rev }).packOrder(), (e: unknown) => isPackwrightError(e, 'REV_CORRUPT') && e.file === rev);
      // Another pack's .rev (its pack hash differs).
      bytes[bytes.length - 2 * H] = (bytes[bytes.length - 2 * H] as number) ^ 1;
      writeFileSync(rev, bytes);
      assert.throws(() => PackIndex.open(idx, H, { revPath: rev }).packOrder(), (e: unknown) => isPackwrightError(e, 'REV_CORRUPT') && /another pack/.test(e.message));
      // No .rev: sorted from the offsets.
      rmSync(rev);
      assert.deepEqual(PackIndex.open(idx, H, { revPath: rev }).packOrder(), sorted);
    } finally {
      dir[Symbol.dispose]();
    }
  });
}

test('findPrefix before the ids are read finds what git rev-parse --disambiguate lists, and what the whole index finds', () => {
  using dir = tempDir();
  mkdirSync(join(dir.path, 'r'));
  const { repo, idx, H } = indexedPack(join(dir.path, 'r'), 'sha1', '2');
  const whole = new PackIndex(readFileSync(idx), H, idx);
  const random = seededRandom(11);
  const prefixes = ['00', 'ff', '7', 'abc'];
  for (let k = 0; k < 40; k++) prefixes.push(whole.id(Math.floor(random() * whole.count)).toString('hex').slice(0, 2 + Math.floor(random() * 5)));
  for (const prefix of prefixes) {
    const lazy = PackIndex.open(idx, H, { lazyMin: 0 });
    const got = lazy.findPrefix(prefix, 1000);
    assert.deepEqual(got, whole.findPrefix(prefix, 1000), prefix);
    const ids = Array.from({ length: got.count }, (_, i) => whole.id(got.first + i).toString('hex'));
    if (prefix.length >= 4) {
      const listed = git(repo, ['rev-parse', `--disambiguate=${prefix}`]).toString().trim().split('\n').filter((l) => l !== '');
      assert.deepEqual(ids, listed.sort(), prefix);
    }
  }
});

for (const indexVersion of ['2', '2,0x200']) {
  test(`entriesAt finds a few entries, the next entry after each, and what is no entry, as git show-index lists them (v${indexVersion})`, () => {
    using dir = tempDir();
    mkdirSync(join(dir.path, 'r'));
    const { idx, H } = indexedPack(join(dir.path, 'r'), 'sha1', indexVersion);
    // git's own listing: `<offset> <id> (<crc>)` a line, in index order.
    const listed = git(dir.path, ['show-index'], readFileSync(idx)).toString().trim().split('\n').map((l) => Number(l.split(' ')[0]));
    const offsets = [...listed].sort((a, b) => a - b);
    const positionOf = new Map(listed.map((o, i) => [o, i]));
    const nextOf = (o: number): number => offsets.find((x) => x > o) ?? -1;
    const random = seededRandom(5);
    for (let round = 0; round < 20; round++) {
      // Entries only (one pass over the offsets), then with an offset that starts no entry (the
      // pack order decides), each on a fresh lazy index and on one whose pack order is made.
      const picked = [...new Set(Array.from({ length: 1 + Math.floor(random() * 12) }, () => offsets[Math.floor(random() * offsets.length)] as number))];
      const withStray = round % 2 === 1 ? [...picked, (offsets[1] as number) + 1] : picked;
      for (const ordered of [false, true]) {
        const index = PackIndex.open(idx, H, { lazyMin: 0 });
        if (ordered) index.packOrder();
        // Unsorted and with a repeat, as a caller may give them.
        const found = index.entriesAt([...withStray].reverse().concat(withStray[0] as number));
        assert.equal(found.size, new Set(withStray).size);
        for (const o of withStray) {
          assert.equal(found.get(o)?.position, positionOf.get(o) ?? -1, `position at ${o}`);
          if (positionOf.has(o)) assert.equal(found.get(o)?.next, nextOf(o), `entry after ${o}`);
        }
      }
    }
  });
}

test('packOrder sorts offsets of any size: 32-bit, 64-bit packed beside positions, and past what a double can pack', async () => {
  const { writeIndex } = await import('../src/idx/write-index.js');
  let seed = 17;
  const random = (): number => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return seed / 2 ** 32;
  };
  for (const [n, top] of [[3000, 2 ** 31], [3000, 2 ** 40], [3000, 2 ** 47], [500, 2 ** 52]] as const) {
    const ids = new Uint8Array(n * 20);
    for (let i = 0; i < ids.length; i++) ids[i] = Math.floor(random() * 256);
    // Sorted, distinct ids (the index's order); distinct offsets in random order.
    const sortedIds = Array.from({ length: n }, (_, i) => Buffer.from(ids.subarray(i * 20, i * 20 + 20))).sort(Buffer.compare);
    // One entry at 12, as in every pack (an index holds at most n - 1 large offsets).
    const used = new Set<number>([12]);
    const offsets = new Float64Array(n);
    const first = Math.floor(random() * n);
    for (let i = 0; i < n; i++) {
      let o = 12;
      if (i !== first) {
        do o = 12 + Math.floor(random() * top); while (used.has(o));
      }
      used.add(o);
      offsets[i] = o;
    }
    const bytes = writeIndex('sha1', { ids: Buffer.concat(sortedIds), offsets, crc32: new Uint32Array(n) }, Buffer.alloc(20));
    const index = new PackIndex(bytes, 20);
    const order = index.packOrder();
    const want = Array.from({ length: n }, (_, i) => i).sort((a, b) => (offsets[a] as number) - (offsets[b] as number));
    assert.deepEqual(Array.from(order.positions), want, `positions, offsets below ${top}`);
    assert.deepEqual(Array.from(order.offsets), want.map((i) => offsets[i]), `offsets below ${top}`);
  }
});

test('findId (interpolation with a bisection fallback) finds what a linear scan finds, for even, clustered and adversarial ids', () => {
  const H = 20;
  const shapes: Record<string, (i: number, random: () => number) => Buffer> = {
    // Hashes: even over every bucket.
    even: (_i, random) => Buffer.from(Array.from({ length: H }, () => Math.floor(random() * 256))),
    // One bucket, ids that share 17 bytes and differ in the last three: every guess from bytes 1..3 is wrong.
    clustered: (_i, random) => Buffer.concat([Buffer.alloc(17, 0xab), Buffer.from([Math.floor(random() * 256), Math.floor(random() * 256), Math.floor(random() * 256)])]),
    // Half the ids packed at the bottom of a bucket, half spread: guesses land far from the key.
    skewed: (i, random) => { const b = Buffer.from(Array.from({ length: H }, () => Math.floor(random() * 256))); b[0] = 7; if (i % 2) b[1] = 0; return b; },
  };
  for (const [shape, make] of Object.entries(shapes)) {
    const random = seededRandom(99);
    const set = new Map<string, Buffer>();
    for (let i = 0; i < 20000; i++) { const id = make(i, random); set.set(id.toString('hex'), id); }
    const sorted = [...set.values()].sort(Buffer.compare);
    const ids = Buffer.concat(sorted);
    const fan = Buffer.alloc(1024);
    for (let b = 0, k = 0; b < 256; b++) {
      while (k < sorted.length && (sorted[k] as Buffer)[0] === b) k++;
      fan.writeUInt32BE(k, 4 * b);
    }
    const view = new DataView(fan.buffer, fan.byteOffset, fan.byteLength);
    const idAt = (i: number): number => i * H;
    // The linear scan's answer for every id, looked up by its hex (a scan per query took 24 s).
    const position = new Map(sorted.map((id, i) => [id.toString('hex'), i]));
    for (let q = 0; q < 4000; q++) {
      const present = q % 2 === 0;
      const key = present ? (sorted[Math.floor(random() * sorted.length)] as Buffer) : make(q, random);
      const expected = position.get(key.toString('hex')) ?? -1;
      assert.equal(findId(ids, idAt, view, 0, key, 0, H), expected, `${shape}: ${key.toString('hex')}`);
    }
  }
});

test('an index read by small reads (ids fetched a block at a time) finds and names ids as one read whole, across blocks', () => {
  using dir = tempDir();
  const H = 20;
  const random = seededRandom(7);
  // Most ids in one bucket sharing 17 bytes (guesses from bytes 1..3 miss), the rest spread: a
  // lookup's probes land in several blocks.
  const set = new Map<string, Buffer>();
  for (let i = 0; i < 6000; i++) {
    const id = Buffer.from(Array.from({ length: H }, () => Math.floor(random() * 256)));
    if (i % 3 !== 0) id.fill(0x5c, 0, 17);
    set.set(id.toString('hex'), id);
  }
  const sorted = [...set.values()].sort(Buffer.compare);
  const n = sorted.length;
  const offsets = Float64Array.from(sorted, (_, i) => 12 + 100 * i);
  const path = join(dir.path, 'pack-x.idx');
  writeFileSync(path, writeIndex('sha1', { ids: Buffer.concat(sorted), offsets, crc32: new Uint32Array(n) }, Buffer.alloc(20)));
  const whole = new PackIndex(readFileSync(path), H, path);
  // Small reads cost nothing here: the ids are never loaded whole, every answer comes from blocks.
  const lazy = PackIndex.open(path, H, { lazyMin: 0, smallReadBytes: 0 });
  for (let q = 0; q < 3000; q++) {
    const i = Math.floor(random() * n);
    assert.equal(lazy.find(sorted[i] as Buffer), i);
    const absent = Buffer.from(sorted[i] as Buffer);
    absent[H - 1] = (absent[H - 1] as number) ^ 0x80;
    assert.equal(lazy.find(absent), whole.find(absent));
    // Ids named out of order, block edges included.
    const j = q % 2 === 0 ? Math.floor(random() * n) : (q * 256) % n;
    assert.deepEqual(lazy.id(j), sorted[j]);
  }
  assert.equal(lazy.find(sorted[0] as Buffer), 0);
  assert.equal(lazy.find(sorted[n - 1] as Buffer), n - 1);
  assert.equal(lazy.find(Buffer.alloc(H, 0xff)), -1);
  lazy.close();
});

test('a .mtimes round-trips, and one that does not fit is MTIMES_CORRUPT, saying where', () => {
  using dir = tempDir();
  const packHash = Buffer.alloc(20, 7);
  const times = Uint32Array.from([1700000000, 0, 0xffffffff]);
  const path = join(dir.path, 'p.mtimes');
  const bytes = writeMtimes('sha1', times, packHash);
  writeFileSync(path, bytes);
  assert.deepEqual(readMtimes(path, 'sha1', 3, packHash), times);
  const corrupt = (mutate: (b: Buffer) => Buffer, count: number, pattern: RegExp, format: 'sha1' | 'sha256' = 'sha1'): void => {
    writeFileSync(path, mutate(Buffer.from(bytes)));
    assert.throws(() => readMtimes(path, format, count, packHash), (e: unknown) => isPackwrightError(e, 'MTIMES_CORRUPT') && e.file === path && pattern.test(e.message));
  };
  corrupt((b) => b.subarray(0, b.length - 1), 3, /bytes, expected/);
  corrupt((b) => b, 4, /bytes, expected/);
  corrupt((b) => { b[0] = 0x58; return b; }, 3, /bad signature/);
  corrupt((b) => { b.writeUInt32BE(2, 4); return b; }, 3, /unsupported version 2/);
  corrupt((b) => { b.writeUInt32BE(2, 8); return b; }, 3, /unsupported hash id 2/);
  corrupt((b) => { b[12 + 12] = (b[12 + 12] as number) ^ 1; return b; }, 3, /another pack/);
});

test('the pack order of 32-bit offsets is a sort by offset, by the native sort (small packs) and by the radix sort (large ones)', () => {
  const random = seededRandom(42);
  for (const n of [1, 2, 1000, 200_000, 250_000]) {
    // Distinct offsets in a random idx order, spread over the whole 32-bit range.
    const offsets = new Uint32Array(n);
    const step = Math.floor((2 ** 32 - 12) / n);
    for (let i = 0; i < n; i++) offsets[i] = 12 + i * step + Math.floor(random() * step);
    for (let i = n - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [offsets[i], offsets[j]] = [offsets[j] as number, offsets[i] as number];
    }
    const order = packOrderOf32(n, (i) => offsets[i] as number);
    const expected = Array.from({ length: n }, (_, i) => i).sort((a, b) => (offsets[a] as number) - (offsets[b] as number));
    assert.deepEqual(Array.from(order.positions), expected, `${n} entries: positions`);
    assert.deepEqual(Array.from(order.offsets), expected.map((i) => offsets[i] as number), `${n} entries: offsets`);
  }
});

test('the pack order of offsets past 4 GiB is a sort by offset: packed into doubles, or by the radix sort where they do not fit', () => {
  const random = seededRandom(7);
  // 2^40: offset and position fit one double; 2^52: they do not, the radix sort over 16-bit digits.
  for (const [n, top] of [[1000, 2 ** 40], [1000, 2 ** 52], [3, 2 ** 52]] as const) {
    const offsets = Array.from({ length: n }, (_, i) => 12 + Math.floor((i + random()) * (top / n)));
    for (let i = n - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [offsets[i], offsets[j]] = [offsets[j] as number, offsets[i] as number];
    }
    const order = packOrderOfLarge(n, Math.max(...offsets), (i) => offsets[i] as number);
    const expected = Array.from({ length: n }, (_, i) => i).sort((a, b) => (offsets[a] as number) - (offsets[b] as number));
    assert.deepEqual(Array.from(order.positions), expected, `${n} entries below ${top}: positions`);
    assert.deepEqual(Array.from(order.offsets), expected.map((i) => offsets[i] as number), `${n} entries below ${top}: offsets`);
  }
});
