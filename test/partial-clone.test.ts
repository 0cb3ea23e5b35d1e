import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cloneBothWays, git, GIT_ENV, makeRepo, runPackwright, tempDir, type Format } from './helpers/git.js';
import { fetchMissing } from '../src/client/index.js';
import { isPackwrightError } from '../src/errors/index.js';
import { Repository } from '../src/repo/index.js';

/** What a partial clone or fetch leaves that git's leaves the same: config, refs, the promisor marks and the objects. */
function state(gitDir: string): string {
  const read = (name: string): string => (existsSync(join(gitDir, name)) ? `${name}:\n${readFileSync(join(gitDir, name), 'utf8')}` : `${name}: none`);
  const packDir = join(gitDir, 'objects', 'pack');
  const promisors = readdirSync(packDir).filter((f) => f.endsWith('.promisor')).map((f) => readFileSync(join(packDir, f), 'utf8')).sort();
  return [
    read('config'), read('HEAD'), read('packed-refs'), read('FETCH_HEAD'), git(gitDir, ['for-each-ref']).toString(), ...promisors,
    git(gitDir, ['cat-file', '--batch-all-objects', '--batch-check']).toString(),
  ].join('\n');
}

for (const format of ['sha1', 'sha256'] as Format[]) {
  test(`partial clones and fetches leave what git's leave (${format}): --filter=blob:none, tree:0, blob:limit, the promisor remote's filter on fetch`, async () => {
    using dir = tempDir();
    const src = join(makeRepo(dir.path, format, 4), '.git');
    git(src, ['config', 'uploadpack.allowFilter', 'true']);
    const url = `file://${src}`;
    for (const [k, args] of [['--bare', '--filter=blob:none'], ['-n', '--filter=tree:0'], ['--bare', '--filter=blob:limit=1k']].entries()) {
      const { ours, theirs } = await cloneBothWays(dir.path, args, url, k);
      assert.equal(state(ours), state(theirs), `clone ${args.join(' ')}`);
    }
    // A fetch from the promisor remote takes its filter (or --filter's), and marks the pack.
    const base = join(dir.path, 'base');
    git(dir.path, ['clone', '-q', '-n', '--filter=blob:none', url, base]);
    git(src, ['update-ref', 'refs/heads/main', git(src, ['commit-tree', 'main^{tree}', '-p', 'main', '-m', 'more']).toString().trim()]);
    for (const args of [[], ['--filter=tree:0']]) {
      const ours = join(dir.path, `fetch-ours${args.length}`);
      const theirs = join(dir.path, `fetch-theirs${args.length}`);
      cpSync(base, ours, { recursive: true });
      cpSync(base, theirs, { recursive: true });
      const r = await runPackwright(ours, ['fetch', '-q', ...args], { env: GIT_ENV });
      assert.equal(r.status, 0, r.stderr);
      git(theirs, ['fetch', '-q', ...args]);
      assert.equal(state(join(ours, '.git')), state(join(theirs, '.git')), `fetch ${args.join(' ')}`);
    }
    const refused = await runPackwright(base, ['fetch', '--filter=blob:none', url], { env: GIT_ENV });
    assert.match(refused.stderr, /--filter can only be used with the remote configured in extensions.partialclone/);
  });
}

test('a partial clone\'s missing objects are fetched from its promisor remote as git fetches them lazily: fetchMissing, and cat-file naming one', async () => {
  using dir = tempDir();
  const src = join(makeRepo(dir.path, 'sha1', 4), '.git');
  git(src, ['config', 'uploadpack.allowFilter', 'true']);
  const { ours, theirs } = await cloneBothWays(dir.path, ['--bare', '--filter=blob:none'], `file://${src}`, 0);
  // What the clone lacks (rev-list --missing does not fetch).
  const blobs = git(ours, ['rev-list', '--objects', '--all', '--missing=print']).toString().split('\n').filter((l) => l.startsWith('?')).map((l) => l.slice(1));
  assert.ok(blobs.length >= 2);
  const [first, second] = blobs as [string, string];
  const objects = (repo: string): string => git(repo, ['cat-file', '--batch-all-objects', '--batch-check']).toString();
  const refs = (repo: string): string => git(repo, ['for-each-ref']).toString();
  const promisors = (repo: string): string[] => readdirSync(join(repo, 'objects', 'pack')).filter((f) => f.endsWith('.promisor')).map((f) => readFileSync(join(repo, 'objects', 'pack', f), 'utf8')).sort();
  // git's lazy fetch of one blob (cat-file -p names it), and ours through the library.
  const expected = git(theirs, ['cat-file', '-p', first]);
  const result = await fetchMissing({ dir: ours, ids: [first] });
  assert.deepEqual(result, { remote: 'origin', objects: 1, present: 0 });
  assert.equal(objects(ours), objects(theirs));
  assert.equal(refs(ours), refs(theirs));
  // A promisor pack, marked as git marks it.
  assert.deepEqual(promisors(ours), promisors(theirs));
  const repo = Repository.open(ours);
  try {
    assert.deepEqual(await repo.readBlob(first), expected);
    assert.equal(repo.objects.has(Buffer.from(second, 'hex')), false);
    // Already here: nothing asked.
    assert.deepEqual(await fetchMissing({ repository: repo, ids: [Buffer.from(first, 'hex')] }), { remote: 'origin', objects: 0, present: 1 });
  } finally {
    repo.close();
  }
  // The CLI fetches what cat-file is asked for, as git's does.
  const shown = await runPackwright(ours, ['cat-file', '-p', second], { env: GIT_ENV });
  assert.equal(shown.status, 0, shown.stderr);
  assert.deepEqual(shown.stdout, git(theirs, ['cat-file', '-p', second]));
  assert.equal(objects(ours), objects(theirs));
  assert.deepEqual(promisors(ours), promisors(theirs));
  // cat-file --batch fetches the missing ids of what it reads at once (git: one at a time), then answers as git.
  const rest = blobs.slice(2);
  assert.ok(rest.length >= 2);
  const input = `${rest.join('\n')}\n`;
  const batch = await runPackwright(ours, ['cat-file', '--batch'], { env: GIT_ENV, input });
  assert.equal(batch.status, 0, batch.stderr);
  assert.deepEqual(batch.stdout, git(theirs, ['cat-file', '--batch'], input));
  assert.equal(objects(ours), objects(theirs));
  // A repository that is not a partial clone has nothing to fetch from.
  await assert.rejects(fetchMissing({ dir: src, ids: [first] }), (e) => isPackwrightError(e, 'INVALID_ARGUMENT'));
});

test('rev-list --objects, ls-tree, diff-tree, rev-parse and cat-file <rev>:<path> in a partial clone fetch what they lack from the promisor remote first, as git\'s lazy fetch does; --missing leaves it missing', async () => {
  using dir = tempDir();
  const src = join(makeRepo(dir.path, 'sha1', 6), '.git');
  git(src, ['config', 'uploadpack.allowFilter', 'true']);
  for (const filter of ['blob:none', 'tree:0']) {
    const { ours } = await cloneBothWays(dir.path, ['--bare', `--filter=${filter}`], `file://${src}`, filter === 'blob:none' ? 1 : 2);
    const lacking = (): string[] => git(ours, ['rev-list', '--objects', '--all', '--missing=print']).toString().split('\n').filter((l) => l.startsWith('?'));
    assert.ok(lacking().length > 0, filter);
    if (filter === 'tree:0') {
      // A path through trees the clone lacks: each is fetched as the name resolves, then the blob.
      const deep = git(src, ['ls-tree', '-r', '--name-only', 'HEAD']).toString().split('\n').find((p) => p.includes('/')) as string;
      const shown = await runPackwright(ours, ['cat-file', '-p', `HEAD:${deep}`], { env: GIT_ENV });
      assert.equal(shown.status, 0, shown.stderr);
      assert.deepEqual(shown.stdout, git(src, ['cat-file', '-p', `HEAD:${deep}`]));
      // rev-parse resolves a path through trees the clone lacks.
      const parsed = await runPackwright(ours, ['rev-parse', `HEAD~1:${deep}`], { env: GIT_ENV });
      assert.equal(parsed.status, 0, parsed.stderr);
      assert.equal(parsed.stdout.toString(), git(src, ['rev-parse', `HEAD~1:${deep}`]).toString());
      // diff-tree reads the trees of both sides (a commit's against its parent's too).
      for (const args of [['-r', 'HEAD~3', 'HEAD~1'], ['-r', 'HEAD~2']]) {
        const diff = await runPackwright(ours, ['diff-tree', ...args], { env: GIT_ENV });
        assert.equal(diff.status, 0, diff.stderr);
        assert.equal(diff.stdout.toString(), git(src, ['diff-tree', ...args]).toString(), args.join(' '));
      }
      // ls-tree reads every tree it lists, and with -l every blob's size: fetched before it prints.
      const listing = await runPackwright(ours, ['ls-tree', '-r', '-l', 'HEAD'], { env: GIT_ENV });
      assert.equal(listing.status, 0, listing.stderr);
      assert.equal(listing.stdout.toString(), git(src, ['ls-tree', '-r', '-l', 'HEAD']).toString());
    }
    // --missing=print does not fetch (git's fetch_if_missing off).
    // (git prints the missing ids in its hash set's order: compared sorted.)
    const sorted = (text: string): string[] => text.split('\n').sort();
    const printed = await runPackwright(ours, ['rev-list', '--objects', '--all', '--missing=print'], { env: GIT_ENV });
    assert.deepEqual(sorted(printed.stdout.toString()), sorted(git(ours, ['rev-list', '--objects', '--all', '--missing=print']).toString()));
    assert.ok(lacking().length > 0);
    // Without it: everything the listing names is fetched (trees, then what they name), and the listing is git's.
    const listed = await runPackwright(ours, ['rev-list', '--objects', '--all'], { env: GIT_ENV });
    assert.equal(listed.status, 0, listed.stderr);
    assert.deepEqual(lacking(), [], filter);
    assert.equal(listed.stdout.toString(), git(ours, ['rev-list', '--objects', '--all']).toString(), filter);
    git(ours, ['fsck', '--full']);
  }
});

test('the promisor remote as git finds it: extensions.partialClone, else the first remote whose promisor is true (a bare key too), not one set false, no, off or 0', () => {
  using dir = tempDir();
  git(dir.path, ['init', '-q', '--bare', 'r.git']);
  const repoDir = join(dir.path, 'r.git');
  const promisorOf = (): string | undefined => {
    const repo = Repository.openGitDir(repoDir, { env: GIT_ENV });
    try {
      return repo.promisorRemote;
    } finally {
      repo.close();
    }
  };
  assert.equal(promisorOf(), undefined);
  for (const [name, value] of [['a', 'false'], ['b', 'no'], ['c', 'off'], ['d', '0']]) git(repoDir, ['config', `remote.${name}.promisor`, value as string]);
  assert.equal(promisorOf(), undefined);
  // A key with no value at all (`[remote "e"] promisor`) is true.
  writeFileSync(join(repoDir, 'config'), `${readFileSync(join(repoDir, 'config'), 'utf8')}[remote "e"]\n\tpromisor\n`);
  assert.equal(git(repoDir, ['config', '--bool', 'remote.e.promisor']).toString().trim(), 'true');
  assert.equal(promisorOf(), 'e');
  git(repoDir, ['config', 'extensions.partialClone', 'f']);
  assert.equal(promisorOf(), 'f');
});
