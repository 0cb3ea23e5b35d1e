import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { git, makeHistoryRepo, makeRepo, packwright, packwrightFails, runPackwright, tempDir } from './helpers/git.js';

const gitFails = (cwd: string, args: string[]): boolean => {
  try {
    git(cwd, args);
    return false;
  } catch {
    return true;
  }
};

/** The listings compared with git's: history, counts, limits, exclusions, paths, objects. */
const LISTINGS: string[][] = [
  ['rev-list', '--all'],
  ['rev-list', '--count', '--all'],
  ['rev-list', '--first-parent', 'main'],
  ['rev-list', '-n', '7', '--all'],
  ['rev-list', 'main', '^main~6'],
  ['rev-list', '--all', '--', 'src'],
  ['rev-list', '--objects', '--all'],
  ['rev-list', '--objects', 'main', '^main~4'],
];

async function sameListings(repo: string, what: string): Promise<void> {
  for (const args of LISTINGS) {
    assert.equal((await packwright(repo, args)).toString(), git(repo, args).toString(), `${what}: ${args.join(' ')}`);
  }
}

for (const format of ['sha1', 'sha256'] as const) {
  test(`walks read commits from the commit-graph as git does, ${format}: one file, a split chain, and a graph older than the newest commits`, async () => {
    using dir = tempDir();
    const repo = makeHistoryRepo(dir.path, format, 120);
    git(repo, ['commit-graph', 'write', '--reachable']);
    await sameListings(repo, 'one file');
    // Commits the graph does not have yet: read from the objects.
    const tree = git(repo, ['rev-parse', 'main^{tree}']).toString().trim();
    let tip = git(repo, ['rev-parse', 'main']).toString().trim();
    for (let i = 0; i < 3; i++) {
      tip = git(repo, ['commit-tree', tree, '-p', tip, '-m', `after the graph ${i}`], '').toString().trim();
    }
    git(repo, ['update-ref', 'refs/heads/main', tip]);
    await sameListings(repo, 'stale graph');
    // A second layer over the first.
    rmSync(join(repo, 'objects', 'info', 'commit-graph'));
    git(repo, ['commit-graph', 'write', '--reachable', '--split', '--size-multiple=1000']);
    tip = git(repo, ['commit-tree', tree, '-p', tip, '-m', 'on top'], '').toString().trim();
    git(repo, ['update-ref', 'refs/heads/main', tip]);
    git(repo, ['commit-graph', 'write', '--reachable', '--split=no-merge']);
    assert.ok(git(repo, ['commit-graph', 'verify']).length === 0);
    await sameListings(repo, 'split chain');
  });
}

test('a commit the graph has is not read, as in git: listed when its object is gone; core.commitGraph=false reads it and fails', async () => {
  using dir = tempDir();
  const repo = makeRepo(dir.path, 'sha1');
  git(repo, ['commit-graph', 'write', '--reachable']);
  const middle = git(repo, ['rev-parse', 'HEAD~3']).toString().trim();
  rmSync(join(repo, '.git', 'objects', middle.slice(0, 2), middle.slice(2)));
  assert.equal((await packwright(repo, ['rev-list', '--all'])).toString(), git(repo, ['rev-list', '--all']).toString());
  assert.ok(gitFails(repo, ['-c', 'core.commitGraph=false', 'rev-list', '--all']));
  const failed = await packwrightFails(repo, ['-c', 'core.commitGraph=false', 'rev-list', '--all']);
  assert.equal(failed.status, 128);
  assert.match(failed.stderr, new RegExp(middle));
});

test('listing commits reads no tree: a missing tree fails only a listing with --objects, with or without a graph', async () => {
  using dir = tempDir();
  const repo = makeRepo(dir.path, 'sha1');
  const tree = git(repo, ['rev-parse', 'HEAD~2^{tree}']).toString().trim();
  rmSync(join(repo, '.git', 'objects', tree.slice(0, 2), tree.slice(2)));
  for (const graph of [false, true]) {
    if (graph) git(repo, ['commit-graph', 'write', '--reachable']);
    for (const args of [['rev-list', '--all'], ['rev-list', '--count', 'HEAD']]) {
      assert.equal((await packwright(repo, args)).toString(), git(repo, args).toString(), `${args.join(' ')}, graph: ${graph}`);
    }
    assert.ok(gitFails(repo, ['rev-list', '--objects', '--all']));
    const failed = await runPackwright(repo, ['rev-list', '--objects', '--all']);
    assert.equal(failed.status, 128, `--objects, graph: ${graph}`);
    assert.match(failed.stderr, new RegExp(`tree object '?${tree}`));
  }
});
