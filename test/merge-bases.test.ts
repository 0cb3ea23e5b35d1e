import { test } from 'node:test';
import assert from 'node:assert/strict';
import { git, makeHistoryRepo, tempDir } from './helpers/git.js';
import { Repository } from '../src/repo/index.js';
import { mergeBases } from '../src/walk/index.js';

const fastImport = (repo: string, stream: string): void => void git(repo, ['fast-import', '--quiet'], stream);

test('mergeBases gives the commits git merge-base --all gives: sampled pairs of a merged history, and a criss-cross with two bases', () => {
  using dir = tempDir();
  const repo = makeHistoryRepo(dir.path, 'sha1', 120);
  const commits = git(repo, ['rev-list', '--all']).toString().trim().split('\n');
  const r = Repository.open(repo);
  try {
    let seed = 11;
    const random = (): number => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
    for (let i = 0; i < 60; i++) {
      const a = commits[Math.floor(random() * commits.length)] as string;
      const b = commits[Math.floor(random() * commits.length)] as string;
      const ours = mergeBases(r.objects, Buffer.from(a, 'hex'), Buffer.from(b, 'hex')).map((id) => id.toString('hex')).sort();
      assert.deepEqual(ours, git(repo, ['merge-base', '--all', a, b]).toString().trim().split('\n').sort(), `${a} ${b}`);
    }
  } finally {
    r.close();
  }
  // x and y each merge the other's first commit: two merge bases, neither reaching the other.
  const cross = `${dir.path}/cross.git`;
  git(dir.path, ['init', '-q', '--bare', '-b', 'main', cross]);
  const c = (mark: number, ref: string, time: number, from?: number, merge?: number): string =>
    `commit ${ref}\nmark :${mark}\ncommitter C <c@example.com> ${time} +0000\ndata 2\n${mark}\n` +
    (from !== undefined ? `from :${from}\n` : '') + (merge !== undefined ? `merge :${merge}\n` : '') + `M 100644 inline f${mark}\ndata 2\n${mark}\n\n`;
  fastImport(cross, c(1, 'refs/heads/main', 1000) + c(2, 'refs/heads/x', 1001, 1) + c(3, 'refs/heads/y', 1002, 1) +
    c(4, 'refs/heads/x', 1003, 2, 3) + c(5, 'refs/heads/y', 1004, 3, 2));
  const rc = Repository.open(cross);
  try {
    const [x, y] = ['x', 'y'].map((b) => git(cross, ['rev-parse', b]).toString().trim()) as [string, string];
    const ours = mergeBases(rc.objects, Buffer.from(x, 'hex'), Buffer.from(y, 'hex')).map((id) => id.toString('hex'));
    assert.equal(ours.length, 2);
    assert.deepEqual([...ours].sort(), git(cross, ['merge-base', '--all', x, y]).toString().trim().split('\n').sort());
  } finally {
    rc.close();
  }
});
