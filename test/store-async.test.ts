import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { git, gitObjects, tempDir, makeRepo } from './helpers/git.js';
import { Store } from '../src/odb/index.js';
import { isPackwrightError } from '../src/errors/index.js';

describe('store: reads on worker threads', () => {
  test('readMany, readAsync and headerMany answer what git answers, in order, with misses', async () => {
    using dir = tempDir();
    const repo = makeRepo(dir.path, 'sha1', 10);
    git(repo, ['repack', '-adq']);
    git(repo, ['commit', '-q', '--allow-empty', '-m', 'loose']);
    const expected = [...gitObjects(repo)].map(([id, { type, data }]) => ({ id, type, size: data.length, data }));
    const missing = Buffer.alloc(20, 0xab);
    // Every id a few times over, with a missing one in the middle, past one chunk of 512.
    const ids: Buffer[] = [];
    for (let r = 0; r < 8; r++) for (const e of expected) ids.push(Buffer.from(e.id, 'hex'));
    ids.splice(300, 0, missing);
    const store = Store.open(join(repo, '.git'), { threads: 2 });
    try {
      let k = 0;
      for await (const r of store.readMany(ids)) {
        const id = ids[k++] as Buffer;
        assert.ok(r.id.equals(id));
        if (id.equals(missing)) {
          assert.equal(r.found, false);
          continue;
        }
        const e = expected.find((x) => x.id === id.toString('hex'));
        assert.ok(r.found && e !== undefined);
        assert.equal(r.type, e.type);
        assert.deepEqual(r.data, e.data);
      }
      assert.equal(k, ids.length);
      const headers = await store.headerMany(ids);
      ids.forEach((id, i) => {
        const e = expected.find((x) => x.id === id.toString('hex'));
        assert.equal(headers.types[i], e === undefined ? 0 : ['', 'commit', 'tree', 'blob', 'tag'].indexOf(e.type));
        assert.equal(headers.sizes[i], e?.size ?? 0);
      });
      const many = await Promise.all(expected.map((e) => store.readAsync(Buffer.from(e.id, 'hex'))));
      many.forEach((o, i) => assert.deepEqual(o.data, expected[i]?.data));
      await assert.rejects(store.readAsync(missing), (e: unknown) => isPackwrightError(e, 'OBJECT_NOT_FOUND'));
    } finally {
      store.close();
    }
  });
});

describe('store: info tables over threads', () => {
  test('a table scanned in chunks by this thread and two workers equals the one-thread table', async () => {
    using dir = tempDir();
    const { makeDeepChainRepo } = await import('./helpers/git.js');
    const repo = makeDeepChainRepo(dir.path, 60);
    git(repo, ['-c', 'pack.threads=1', 'repack', '-adfq', '--depth=50']);
    const { buildInfoTable } = await import('../src/pack/pack-info-table.js');
    const store = Store.open(repo, { threads: 2 });
    try {
      const pack = store.objects.packs()[0];
      assert.ok(pack !== undefined && pack.tryOpen());
      const expected = buildInfoTable(pack.open().file, pack.index, 4096);
      await store.loadInfoTables({ parallelMin: 0, chunk: 3 });
      const got = pack.loadInfoTable();
      assert.deepEqual([...got.types], [...expected.types]);
      assert.deepEqual([...got.sizes], [...expected.sizes]);
      assert.deepEqual([...got.basePositions], [...expected.basePositions]);
      assert.deepEqual([...got.children], [...expected.children]);
    } finally {
      store.close();
    }
  });
});

describe('store: walking every object, abortably', () => {
  test('forEachObjectAsync visits what forEachObject does, and an abort stops it midway with ABORTED', async () => {
    using dir = tempDir();
    const repo = makeRepo(dir.path, 'sha1', 12);
    git(repo, ['repack', '-dq']);
    git(repo, ['commit', '-q', '--allow-empty', '-m', 'loose']);
    const { forEachObject, forEachObjectAsync } = await import('../src/odb/index.js');
    const store = Store.open(join(repo, '.git'));
    try {
      const h = store.objects;
      const sync: string[] = [];
      forEachObject(h, {}, (id) => sync.push(id.toString('hex')));
      const async: string[] = [];
      await forEachObjectAsync(h, { sliceMs: 1 }, (id) => async.push(id.toString('hex')));
      assert.deepEqual(async, sync);
      assert.deepEqual([...h.ids()].map((id) => id.toString('hex')), sync);
      assert.deepEqual(sync, git(repo, ['cat-file', '--batch-all-objects', '--batch-check=%(objectname)']).toString().trim().split('\n'));
      // Each visit takes 2 ms, so the walk would take over a second; the abort fires after 50.
      let visited = 0;
      const busy = (ms: number): void => { const end = performance.now() + ms; while (performance.now() < end) { /* work */ } };
      await assert.rejects(
        forEachObjectAsync(h, { signal: AbortSignal.timeout(50), sliceMs: 10 }, () => { visited++; busy(2); }),
        (e: unknown) => isPackwrightError(e, 'ABORTED'),
      );
      assert.ok(visited > 0 && visited < sync.length, `stopped after ${visited} of ${sync.length}`);
    } finally {
      store.close();
    }
  });
});
