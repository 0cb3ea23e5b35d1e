import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { git, packwright, tempDir, makeRepo, type Format } from './helpers/git.js';
import { humaniseBytes } from '../src/odb/index.js';

/** Per type, the count and total size git reports for every object. */
function gitTypeCounts(repo: string): { byType: Record<string, number>; bytes: number; objects: number } {
  const lines = git(repo, ['cat-file', '--batch-all-objects', '--batch-check=%(objecttype) %(objectsize)']).toString().trim().split('\n');
  const byType: Record<string, number> = { commit: 0, tree: 0, blob: 0, tag: 0 };
  let bytes = 0;
  for (const l of lines) {
    const [type, size] = l.split(' ') as [string, string];
    byType[type] = (byType[type] ?? 0) + 1;
    bytes += Number(size);
  }
  return { byType, bytes, objects: lines.length };
}

describe('count-objects and odb stats against git', () => {
  for (const format of ['sha1', 'sha256'] as Format[]) {
    test(`${format}: count-objects -v, -H and plain print what git prints`, async () => {
      using dir = tempDir();
      const repo = makeRepo(dir.path, format, 8);
      git(repo, ['repack', '-dq']);
      git(repo, ['commit', '-q', '--allow-empty', '-m', 'loose']);
      // A loose object that is also packed, garbage in the pack and object directories, an alternate.
      const packed = git(repo, ['rev-parse', 'HEAD~1']).toString().trim();
      const alt = join(dir.path, 'alt');
      git(dir.path, ['init', '-q', '--bare', `--object-format=${format}`, alt]);
      writeFileSync(join(repo, '.git', 'objects', 'info', 'alternates'), `${join(alt, 'objects')}\n`);
      git(repo, ['cat-file', 'commit', packed]);
      writeFileSync(join(repo, '.git', 'objects', 'pack', 'stray'), 'x');
      writeFileSync(join(repo, '.git', 'objects', 'pack', 'pack-1234.keep'), '');
      mkdirSync(join(repo, '.git', 'objects', 'ab'), { recursive: true });
      writeFileSync(join(repo, '.git', 'objects', 'ab', 'not-an-object'), 'yyy');
      for (const args of [['count-objects', '-v'], ['count-objects'], ['count-objects', '-vH'], ['count-objects', '-H']]) {
        assert.equal((await packwright(repo, args)).toString(), git(repo, args).toString(), args.join(' '));
      }
    });

    test(`${format}: odb stats counts what git's cat-file --batch-all-objects lists`, async () => {
      using dir = tempDir();
      const repo = makeRepo(dir.path, format, 10);
      git(repo, ['repack', '-dq']);
      git(repo, ['commit', '-q', '--allow-empty', '-m', 'second pack']);
      git(repo, ['repack', '-q']);
      git(repo, ['commit', '-q', '--allow-empty', '-m', 'loose']);
      const expected = gitTypeCounts(repo);
      const s = JSON.parse((await packwright(repo, ['odb', 'stats', '--json', '--extra-header-lookup'])).toString()) as {
        objects: number; byType: Record<string, number>; bytes: number; loose: number; packed: number; deltas: number; chainLengths: number[]; missing: string[]; lookedUp: number;
      };
      assert.equal(s.objects, expected.objects);
      assert.deepEqual(s.byType, expected.byType);
      assert.equal(s.bytes, expected.bytes);
      assert.equal(s.loose + s.packed, s.objects);
      assert.equal(s.chainLengths.reduce((a, b) => a + b, 0), s.objects);
      assert.equal(s.objects - (s.chainLengths[0] ?? 0), s.deltas);
      assert.deepEqual(s.missing, []);
      assert.equal(s.lookedUp, s.objects);
      // verify-pack -v's histogram of the same packs agrees on the deltas.
      const text = (await packwright(repo, ['odb', 'stats'])).toString();
      assert.match(text, new RegExp(`^objects: ${expected.objects} `));
    });
  }

  test('humaniseBytes rounds as git does', () => {
    assert.equal(humaniseBytes(0), '0 bytes');
    assert.equal(humaniseBytes(1), '1 byte');
    assert.equal(humaniseBytes(1024), '1024 bytes');
    assert.equal(humaniseBytes(1536), '1.50 KiB');
    assert.equal(humaniseBytes(12 * 2 ** 20 + 1), '12.00 MiB');
    // git truncates GiB (no rounding term, unlike MiB and KiB).
    assert.equal(humaniseBytes(3 * 2 ** 30 + 2 ** 29), '3.49 GiB');
  });
});
