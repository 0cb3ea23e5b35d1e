import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, readFileSync, rmSync, truncateSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { git, makeRepo, tempDir, type Format } from './helpers/git.js';
import { PackIndex } from '../src/idx/index.js';
import { ObjectStore, forEachObject } from '../src/odb/index.js';
import { hashObject } from '../src/hash/index.js';
import { isPackwrightError } from '../src/errors/index.js';

/** A repository packed by git, with its pack indexed again by git at `indexVersion`. */
function indexedPack(dir: string, format: Format, indexVersion: string): { repo: string; idx: string; H: number } {
  const repo = makeRepo(dir, format);
  git(repo, ['-c', 'pack.threads=1', 'repack', '-adfq']);
  const packDir = join(repo, '.git', 'objects', 'pack');
  const pack = join(packDir, readdirSync(packDir).find((f) => f.endsWith('.pack')) as string);
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

test('a closed index opens its file again for what it has not read', () => {
  const dir = tempDir();
  try {
    mkdirSync(join(dir.path, 'r'));
    const { idx, H } = indexedPack(join(dir.path, 'r'), 'sha256', '2');
    const whole = new PackIndex(readFileSync(idx), H, idx);
    const lazy = PackIndex.open(idx, H, { lazyMin: 0 });
    lazy.close();
    assert.equal(lazy.find(whole.id(3)), 3);
    lazy.close();
    assert.deepEqual(lazy.data, whole.data);
  } finally {
    dir[Symbol.dispose]();
  }
});

test('a store whose indexes are read by section reads every object with the id asked for', () => {
  const dir = tempDir();
  try {
    mkdirSync(join(dir.path, 'r'));
    const { repo } = indexedPack(join(dir.path, 'r'), 'sha1', '2');
    const store = ObjectStore.open(repo, { lazyIndexMin: 0 });
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

test('an index removed after it was closed is IDX_MISSING when an unread section is needed', () => {
  const dir = tempDir();
  try {
    mkdirSync(join(dir.path, 'r'));
    const { idx, H } = indexedPack(join(dir.path, 'r'), 'sha1', '2');
    const lazy = PackIndex.open(idx, H, { lazyMin: 0 });
    lazy.close();
    rmSync(idx);
    assert.throws(() => lazy.packOrder(), (e: unknown) => isPackwrightError(e, 'IDX_MISSING') && e.message.includes(idx));
  } finally {
    dir[Symbol.dispose]();
  }
});
