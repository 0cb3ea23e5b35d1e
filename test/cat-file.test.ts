import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, rmSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { CLI, git, packwright, packwrightFails, tempDir, makeRepo, makeDeepChainRepo, type Format } from './helpers/git.js';
import { Repository } from '../src/repo/index.js';
import { forEachObject } from '../src/odb/index.js';
import { hashObject } from '../src/hash/index.js';
import { formatTree } from '../src/objects/index.js';
import { isPackwrightError } from '../src/errors/index.js';

const FULL = '--batch=%(objectname) %(objecttype) %(objectsize) %(objectsize:disk) %(deltabase)';
const CHECK_FULL = '--batch-check=%(objectname) %(objecttype) %(objectsize) %(objectsize:disk) %(deltabase)';

/** Each way of storing the same objects that git can produce. */
const VARIANTS: Record<string, (repo: string) => void> = {
  'loose objects only': () => {},
  'a pack without deltas': (repo) => git(repo, ['-c', 'pack.threads=1', 'repack', '-adfq', '--window=0']),
  'a pack with REF_DELTA': (repo) => git(repo, ['-c', 'pack.threads=1', '-c', 'repack.useDeltaBaseOffset=false', 'repack', '-adfq']),
  'a pack with OFS_DELTA': (repo) => git(repo, ['-c', 'pack.threads=1', 'repack', '-adfq']),
  'an idx v1': (repo) => git(repo, ['-c', 'pack.threads=1', '-c', 'pack.indexVersion=1', 'repack', '-adfq']),
  'forced 64-bit offsets': (repo) => {
    git(repo, ['-c', 'pack.threads=1', 'repack', '-adfq']);
    const dir = join(repo, '.git', 'objects', 'pack');
    for (const f of readdirSync(dir).filter((n) => n.endsWith('.pack'))) {
      const idx = join(dir, f.replace(/\.pack$/, '.idx'));
      rmSync(idx);
      git(repo, ['index-pack', '--index-version=2,0x200', '-o', idx, join(dir, f)]);
    }
  },
  'packs and loose objects mixed': (repo) => {
    git(repo, ['-c', 'pack.threads=1', 'repack', '-dq']);
    git(repo, ['commit', '-q', '--allow-empty', '-m', 'after the pack']);
    git(repo, ['-c', 'pack.threads=1', 'repack', '-q']);
    git(repo, ['commit', '-q', '--allow-empty', '-m', 'loose again']);
  },
};

for (const format of ['sha1', 'sha256'] as Format[]) {
  for (const [variant, prepare] of Object.entries(VARIANTS)) {
    describe(`cat-file on ${format} with ${variant}`, () => {
      const dir = tempDir();
      let repo = '';
      before(() => {
        repo = makeRepo(dir.path, format);
        prepare(repo);
      });
      after(() => dir[Symbol.dispose]());

      test('--batch-all-objects --batch prints exactly what git prints', async () => {
        assert.deepEqual(await packwright(repo, ['cat-file', '--batch-all-objects', '--batch']), git(repo, ['cat-file', '--batch-all-objects', '--batch']));
      });
      test('--batch-all-objects --batch-check prints exactly what git prints', async () => {
        assert.deepEqual(await packwright(repo, ['cat-file', '--batch-all-objects', '--batch-check']), git(repo, ['cat-file', '--batch-all-objects', '--batch-check']));
      });
      test('disk sizes and delta bases match git', async () => {
        assert.equal((await packwright(repo, ['cat-file', '--batch-all-objects', FULL])).toString('latin1'), git(repo, ['cat-file', '--batch-all-objects', FULL]).toString('latin1'));
        assert.equal((await packwright(repo, ['cat-file', '--batch-all-objects', CHECK_FULL])).toString(), git(repo, ['cat-file', '--batch-all-objects', CHECK_FULL]).toString());
      });
      test('--unordered prints the same records as git', async () => {
        const lines = (b: Buffer): string[] => b.toString().trim().split('\n').sort();
        assert.deepEqual(lines(await packwright(repo, ['cat-file', '--batch-all-objects', '--batch-check', '--unordered'])), lines(git(repo, ['cat-file', '--batch-all-objects', '--batch-check', '--unordered'])));
      });
      test('every object read through the library has the id it was asked for', () => {
        const store = Repository.open(repo).objects;
        let n = 0;
        try {
          forEachObject(store, {}, (id) => {
            const obj = store.read(id);
            assert.deepEqual(hashObject(format, obj.type, obj.data), id);
            n++;
          });
        } finally {
          store.close();
        }
        assert.ok(n > 40, `only ${n} objects`);
      });
      test('revisions resolve through the library to what git rev-parse says, with git\'s types, sizes and contents', () => {
        const revs = ['HEAD', 'main', 'v1.0', 'light', 'HEAD^{tree}', 'HEAD:dir/sub/other.txt', 'HEAD~3', 'v1.0^{}', 'HEAD:dir', 'HEAD:link', 'HEAD^', 'HEAD~2^{tree}', 'v1.0^{commit}'];
        const r = Repository.open(repo);
        try {
          const ids = revs.map((rev) => r.resolve(rev).toString('hex'));
          assert.deepEqual(ids, git(repo, ['rev-parse', ...revs]).toString().trim().split('\n'));
          const head = ids[0] as string;
          assert.equal(r.resolve(head.slice(0, 8)).toString('hex'), head, 'an abbreviated id');
          // The submodule entry exists in the second revision only (later ones 'add -A' it away).
          const second = git(repo, ['log', '--format=%H', '--grep=^revision 1$']).toString().trim();
          assert.equal(r.resolve(`${second}:vendor/lib`).toString('hex'), git(repo, ['rev-parse', `${second}:vendor/lib`]).toString().trim(), 'a submodule entry');
          // Types, sizes and contents of each, against one git cat-file --batch.
          const batch = ids.map((id) => {
            const obj = r.objects.read(Buffer.from(id, 'hex'));
            return Buffer.concat([Buffer.from(`${id} ${obj.type} ${obj.data.length}\n`), obj.data, Buffer.from('\n')]);
          });
          assert.deepEqual(Buffer.concat(batch), git(repo, ['cat-file', '--batch'], ids.join('\n') + '\n'));
          assert.equal(formatTree(r.objects.read(r.resolve('HEAD^{tree}')).data, r.objects.hashLength).toString(), git(repo, ['cat-file', '-p', 'HEAD^{tree}']).toString());
          assert.throws(() => r.resolve('no-such-ref'), (e: unknown) => isPackwrightError(e, 'REF_NOT_FOUND'));
          assert.throws(() => r.resolve('HEAD:no/such/path'), (e: unknown) => isPackwrightError(e, 'PATH_NOT_FOUND') && e.message === "path 'no/such/path' does not exist in 'HEAD'");
        } finally {
          r.close();
        }
      });
      if (variant === 'a pack with OFS_DELTA' || variant === 'loose objects only') {
        test('the CLI\'s -t, -s, -e, -p and <type> <object> behave like git (smoke test)', async () => {
          for (const [mode, rev] of [['-p', 'HEAD'], ['-t', 'v1.0'], ['-s', 'HEAD:file.txt'], ['-p', 'HEAD^{tree}'], ['tree', 'HEAD'], ['commit', 'v1.0']] as const) {
            assert.deepEqual(await packwright(repo, ['cat-file', mode, rev]), git(repo, ['cat-file', mode, rev]), `${mode} ${rev}`);
          }
          const head = git(repo, ['rev-parse', 'HEAD']).toString().trim();
          assert.deepEqual(await packwright(repo, ['cat-file', '-p', head.slice(0, 8)]), git(repo, ['cat-file', '-p', head]));
          assert.equal((await packwrightFails(repo, ['cat-file', '-e', 'f'.repeat(format === 'sha1' ? 40 : 64)])).status, 1);
          await packwright(repo, ['cat-file', '-e', 'HEAD']);
          assert.equal((await packwrightFails(repo, ['cat-file', '-p', 'no-such-ref'])).status, 128);
        });
      }
      test('--batch reads names from stdin, with missing ones reported like git', async () => {
        const input = 'HEAD\nv1.0 rest of line\nHEAD:file.txt\nnope\nHEAD~1^{tree}\n';
        assert.deepEqual(await packwright(repo, ['cat-file', '--batch'], input), git(repo, ['cat-file', '--batch'], input));
        const fmt = '--batch-check=%(objecttype) %(rest)';
        assert.deepEqual(await packwright(repo, ['cat-file', fmt], input), git(repo, ['cat-file', fmt], input));
      });
    });
  }
}

describe('cat-file on a delta chain deeper than 1000', () => {
  const dir = tempDir();
  let repo = '';
  before(() => {
    repo = makeDeepChainRepo(dir.path, 1100);
  });
  after(() => dir[Symbol.dispose]());

  test('git really made a chain deeper than 1000', () => {
    const stats = git(repo, ['verify-pack', '-s', ...readdirSync(join(repo, 'objects', 'pack')).filter((n) => n.endsWith('.idx')).map((n) => join(repo, 'objects', 'pack', n))]).toString();
    const depths = [...stats.matchAll(/chain length = (\d+)/g)].map((m) => Number(m[1]));
    assert.ok(Math.max(...depths) > 1000, stats);
  });
  test('--batch and --batch-check match git, sorted and in pack order', async () => {
    assert.deepEqual(await packwright(repo, ['cat-file', '--batch-all-objects', '--batch']), git(repo, ['cat-file', '--batch-all-objects', '--batch']));
    assert.deepEqual(await packwright(repo, ['cat-file', '--batch-all-objects', CHECK_FULL]), git(repo, ['cat-file', '--batch-all-objects', CHECK_FULL]));
    const lines = (b: Buffer): string[] => b.toString().trim().split('\n').sort();
    assert.deepEqual(lines(await packwright(repo, ['cat-file', '--batch-all-objects', '--batch-check', '--unordered'])), lines(git(repo, ['cat-file', '--batch-all-objects', '--batch-check'])));
  });
  test('reads through tiny windows, small windows only, and a tiny base cache give the same objects', () => {
    // Big windows of 4 KiB once reads are dense; or never dense: 64 KiB windows and one-off
    // reads for longer spans, as a single lookup in a large pack does.
    for (const options of [{ windowSize: 4096 }, { denseAfter: Infinity }]) {
      const store = Repository.open(repo, { ...options, deltaBaseCacheLimit: 64 * 1024 }).objects;
      try {
        // Every eighth object, spread over the chain: each read alone rebuilds its chain
        // through the tiny cache, so reading all 3,000 took 12 s of the suite for no more coverage.
        let n = 0;
        let checked = 0;
        forEachObject(store, {}, (id) => {
          if (n++ % 8 !== 0) return;
          const obj = store.read(id);
          assert.deepEqual(hashObject('sha1', obj.type, obj.data), id);
          checked++;
        });
        assert.ok(n > 3000 && checked > 375);
      } finally {
        store.close();
      }
    }
  });
});

describe('cat-file --batch as a long-running process', () => {
  const dir = tempDir();
  after(() => dir[Symbol.dispose]());
  test('answers each name as soon as it is written, like git (no --buffer)', async () => {
    const repo = makeRepo(dir.path, 'sha1', 3);
    const child = spawn(process.execPath, [CLI, 'cat-file', '--batch-check'], { cwd: repo });
    let received = '';
    const waitFor = (lines: number): Promise<void> => new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no answer, got: ${received}`)), 10_000);
      const check = (): void => {
        if (received.split('\n').length > lines) {
          clearTimeout(timer);
          child.stdout.off('data', onData);
          resolve();
        }
      };
      const onData = (d: Buffer): void => { received += d.toString(); check(); };
      child.stdout.on('data', onData);
      check();
    });
    child.stdin.write('HEAD\n');
    await waitFor(1);
    child.stdin.write('HEAD:file.txt\n');
    await waitFor(2);
    child.stdin.end();
    await new Promise((resolve) => child.on('close', resolve));
    assert.equal(received, git(repo, ['cat-file', '--batch-check'], 'HEAD\nHEAD:file.txt\n').toString());
  });
});

test('--batch-all-objects --unordered lists an object once wherever it is stored: loose, in two packs, twice in one', async () => {
  const { buildPack } = await import('./helpers/pack-builder.js');
  const { writeFileSync } = await import('node:fs');
  using dir = tempDir();
  const repo = makeRepo(dir.path, 'sha1', 3);
  git(repo, ['repack', '-adq']);
  const blob = Buffer.from('stored four times\n');
  const packDir = join(repo, '.git', 'objects', 'pack');
  for (const [name, entries] of [['twice', [blob, Buffer.from('only here\n'), blob]], ['again', [blob]]] as const) {
    writeFileSync(join(packDir, `${name}.pack`), buildPack(entries.map((data) => ({ type: 3, data }))).pack);
    git(repo, ['index-pack', join(packDir, `${name}.pack`)]);
  }
  const lines = (b: Buffer): string[] => b.toString().trim().split('\n').sort();
  for (const loose of [false, true]) {
    if (loose) git(repo, ['hash-object', '-w', '--stdin'], blob);
    const ours = lines(await packwright(repo, ['cat-file', '--batch-all-objects', '--batch-check', '--unordered']));
    assert.deepEqual(ours, lines(git(repo, ['cat-file', '--batch-all-objects', '--batch-check', '--unordered'])));
    assert.equal(new Set(ours).size, ours.length, 'each id once');
  }
});
