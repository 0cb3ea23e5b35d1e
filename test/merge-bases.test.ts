import { test } from 'node:test';
import assert from 'node:assert/strict';
import { git, makeHistoryRepo, tempDir } from './helpers/git.js';
import { Repository } from '../src/repo/index.js';
import { isAncestor, mergeBases } from '../src/walk/index.js';

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

test('isAncestor answers as git merge-base --is-ancestor (sampled pairs both ways, a commit dated before its parent), and a fast-forward of a few commits reads a few commits', () => {
  using dir = tempDir();
  const repo = makeHistoryRepo(dir.path, 'sha1', 120);
  const commits = git(repo, ['rev-list', '--all']).toString().trim().split('\n');
  const gitSays = (at: string, a: string, b: string): boolean => {
    try {
      git(at, ['merge-base', '--is-ancestor', a, b]);
      return true;
    } catch (e) {
      if ((e as { status?: number }).status === 1) return false;
      throw e;
    }
  };
  const r = Repository.open(repo);
  try {
    let seed = 7;
    const random = (): number => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
    let yes = 0;
    for (let i = 0; i < 60; i++) {
      const a = commits[Math.floor(random() * commits.length)] as string;
      const b = i % 10 === 0 ? a : commits[Math.floor(random() * commits.length)] as string;
      for (const [x, y] of [[a, b], [b, a]] as const) {
        const ours = isAncestor(r.objects, Buffer.from(x, 'hex'), Buffer.from(y, 'hex'));
        assert.equal(ours, gitSays(repo, x, y), `${x} ${y}`);
        if (ours) yes++;
      }
    }
    assert.ok(yes > 10 && yes < 110, `${yes} of 120 pairs are ancestors`);
    // A fast-forward of three commits: the walk reads a handful of commits, not the history.
    let reads = 0;
    const counted = new Proxy(r.objects, { get: (t, k) => (k === 'read' ? (id: Uint8Array) => { reads++; return t.read(id); } : Reflect.get(t, k)) });
    const tip = git(repo, ['rev-parse', 'HEAD']).toString().trim();
    const back = git(repo, ['rev-parse', 'HEAD~3']).toString().trim();
    assert.equal(isAncestor(counted, Buffer.from(back, 'hex'), Buffer.from(tip, 'hex')), true);
    assert.ok(reads <= 12, `${reads} commits read of ${commits.length}`);
  } finally {
    r.close();
  }
  // Clock skew: b is dated before its parent a; c (after both) is on another line from the root.
  const skew = `${dir.path}/skew.git`;
  git(dir.path, ['init', '-q', '--bare', '-b', 'main', skew]);
  const c = (mark: number, ref: string, time: number, from?: number): string =>
    `commit ${ref}\nmark :${mark}\ncommitter C <c@example.com> ${time} +0000\ndata 2\n${mark}\n` +
    (from !== undefined ? `from :${from}\n` : '') + `M 100644 inline f${mark}\ndata 2\n${mark}\n\n`;
  git(skew, ['fast-import', '--quiet'], c(1, 'refs/heads/main', 1000) + c(2, 'refs/heads/main', 5000, 1) + c(3, 'refs/heads/main', 2000, 2) +
    c(4, 'refs/heads/main', 2100, 3) + c(5, 'refs/heads/other', 9000, 1));
  const rs = Repository.open(skew);
  try {
    const ids = ['main', 'main~1', 'main~2', 'main~3', 'other'].map((n) => git(skew, ['rev-parse', n]).toString().trim());
    for (const x of ids) {
      for (const y of ids) assert.equal(isAncestor(rs.objects, Buffer.from(x, 'hex'), Buffer.from(y, 'hex')), gitSays(skew, x, y), `${x} ${y}`);
    }
  } finally {
    rs.close();
  }
});
