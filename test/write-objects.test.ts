import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { git, GIT_ENV, makeHistoryRepo, runPackwright, tempDir, type Format } from './helpers/git.js';
import { Repository } from '../src/repo/index.js';
import { parsePerson } from '../src/objects/index.js';
import { isPackwrightError } from '../src/errors/index.js';

for (const format of ['sha1', 'sha256'] as Format[]) {
  test(`writeBlob, writeTree, writeCommit, writeTag give git's ids (hash-object, mktree, commit-tree, mktag), and updateRef git's ref and reflog (${format})`, async () => {
    using dir = tempDir();
    const ours = join(dir.path, 'ours.git');
    const theirs = join(dir.path, 'theirs.git');
    for (const p of [ours, theirs]) {
      git(dir.path, ['init', '-q', '--bare', `--object-format=${format}`, p]);
      git(p, ['config', 'core.logAllRefUpdates', 'true']);
    }
    using holder = { repo: Repository.openGitDir(ours, { env: GIT_ENV }), [Symbol.dispose]() { this.repo.close(); } };
    const repo = holder.repo;
    const blob = await repo.writeBlob('hello\n');
    assert.equal(blob, git(theirs, ['hash-object', '-w', '--stdin'], 'hello\n').toString().trim());
    const bin = await repo.writeBlob(Buffer.from([0, 1, 2, 255]));
    assert.equal(bin, git(theirs, ['hash-object', '-w', '--stdin'], Buffer.from([0, 1, 2, 255])).toString().trim());
    const sub = await repo.writeTree([{ mode: 0o100644, path: 'inner', id: blob }]);
    // Given out of order: written in git's (the tree `a` sorts as `a/`, after `a.txt`).
    const entries = [
      { mode: 0o040000, path: 'a', id: sub },
      { mode: 0o100755, path: 'run.sh', id: bin },
      { mode: 0o100644, path: 'a.txt', id: blob },
      { mode: 0o120000, path: 'link', id: blob },
      { mode: 0o100644, path: 'café', id: blob },
    ];
    const tree = await repo.writeTree(entries);
    const mktree = (es: typeof entries): string => es.map((e) => `${e.mode.toString(8).padStart(6, '0')} ${e.mode === 0o040000 ? 'tree' : 'blob'} ${e.id}\t${e.path}\n`).join('');
    git(theirs, ['mktree'], mktree([{ mode: 0o100644, path: 'inner', id: blob }]));
    git(theirs, ['hash-object', '-w', '--stdin'], Buffer.from([0, 1, 2, 255]));
    assert.equal(tree, git(theirs, ['mktree'], mktree(entries)).toString().trim());
    await assert.rejects(repo.writeTree([{ mode: 0o100644, path: 'a/b', id: blob }]), (e) => isPackwrightError(e, 'INVALID_ARGUMENT'));

    const author = parsePerson('A U Thor <author@example.com> 1700000000 +0000');
    const committer = parsePerson('C O Mitter <committer@example.com> 1700000000 +0000');
    const root = await repo.writeCommit({ tree, author, committer, message: 'root\n' });
    assert.equal(root, git(theirs, ['commit-tree', tree, '-m', 'root']).toString().trim());
    const child = await repo.writeCommit({ tree, parents: [root], author, committer, message: 'child\n\nbody\n' });
    assert.equal(child, git(theirs, ['commit-tree', tree, '-p', root, '-m', 'child', '-m', 'body']).toString().trim());
    const back = await repo.readCommit(child);
    assert.deepEqual([back.tree, back.parents, back.message], [tree, [root], 'child\n\nbody\n']);
    // A signed commit keeps its signature, read back as written.
    const gpgsig = '-----BEGIN PGP SIGNATURE-----\n\nabc\n-----END PGP SIGNATURE-----';
    const signed = await repo.writeCommit({ tree, parents: [child], author, committer, message: 's\n', gpgsig });
    assert.equal((await repo.readCommit(signed)).gpgsig, gpgsig);
    git(ours, ['fsck', '--no-dangling', signed]);

    const tag = await repo.writeTag({ object: child, type: 'commit', tag: 'v1', tagger: committer, message: 'release\n' });
    assert.equal(tag, git(theirs, ['mktag'], `object ${child}\ntype commit\ntag v1\ntagger ${'C O Mitter <committer@example.com> 1700000000 +0000'}\n\nrelease\n`).toString().trim());
    assert.deepEqual((await repo.readTag(tag)).object, child);

    // Refs: the same updates through updateRef and git update-ref leave the same files.
    git(theirs, ['update-ref', '-m', 'first', 'refs/heads/main', root]);
    await repo.updateRef({ ref: 'refs/heads/main', value: root, oldValue: null, message: 'first' });
    git(theirs, ['update-ref', '-m', 'second', 'refs/heads/main', child, root]);
    await repo.updateRef({ ref: 'refs/heads/main', value: child, oldValue: root, message: 'second' });
    await assert.rejects(repo.updateRef({ ref: 'refs/heads/main', value: root, oldValue: root }), (e) => isPackwrightError(e, 'REF_MISMATCH'));
    await repo.updateRef({ ref: 'refs/tags/v1', value: tag });
    git(theirs, ['update-ref', 'refs/tags/v1', tag]);
    await repo.updateRef({ ref: 'refs/heads/gone', value: root });
    await repo.updateRef({ ref: 'refs/heads/gone', value: null, oldValue: root });
    for (const f of ['refs/heads/main', 'logs/refs/heads/main', 'refs/tags/v1']) assert.equal(readFileSync(join(ours, f), 'utf8'), readFileSync(join(theirs, f), 'utf8'), f);
    assert.equal(git(ours, ['for-each-ref']).toString(), git(theirs, ['for-each-ref']).toString());
    git(ours, ['fsck', '--full', '--no-dangling']);
  });
}

test('listBranches, listTags, currentBranch, resolveRef as git names them; isAncestor and mergeBase as git merge-base says', async () => {
  using dir = tempDir();
  const src = makeHistoryRepo(dir.path, 'sha1');
  using holder = { repo: Repository.openGitDir(src), [Symbol.dispose]() { this.repo.close(); } };
  const repo = holder.repo;
  const names = (prefix: string): string[] => git(src, ['for-each-ref', '--format=%(refname)', prefix]).toString().split('\n').filter((l) => l !== '').map((l) => l.slice(prefix.length));
  assert.deepEqual(await repo.listBranches(), names('refs/heads/'));
  assert.deepEqual(await repo.listTags(), names('refs/tags/'));
  assert.deepEqual(await repo.listBranches({ remote: 'nowhere' }), []);
  assert.equal(await repo.currentBranch(), git(src, ['symbolic-ref', '--short', 'HEAD']).toString().trim());
  assert.equal(await repo.currentBranch({ fullname: true }), git(src, ['symbolic-ref', 'HEAD']).toString().trim());
  for (const ref of ['main', 'topic', 'HEAD', 'refs/heads/main', (await repo.listTags())[0] as string]) {
    assert.equal(await repo.resolveRef(ref), git(src, ['rev-parse', '--verify', ref]).toString().trim(), ref);
  }
  await assert.rejects(repo.resolveRef('no-such'), (e) => isPackwrightError(e, 'REF_NOT_FOUND'));
  for (const [a, b] of [['main~5', 'main'], ['main', 'main~5'], ['topic', 'main'], ['main~3', 'main~3']]) {
    let expected = true;
    try {
      git(src, ['merge-base', '--is-ancestor', a as string, b as string]);
    } catch {
      expected = false;
    }
    assert.equal(await repo.isAncestor(a as string, b as string), expected, `${a} ${b}`);
  }
  assert.deepEqual((await repo.mergeBase('main', 'topic')).sort(), git(src, ['merge-base', '--all', 'main', 'topic']).toString().trim().split('\n').sort());
});

for (const format of ['sha1', 'sha256'] as Format[]) test(`log lists what git log --format=%H lists (${format}): default and --topo-order, -n, --first-parent, ^exclude, -- <path>, --since, --until`, async () => {
  using dir = tempDir();
  const src = makeHistoryRepo(dir.path, format);
  using holder = { repo: Repository.openGitDir(src), [Symbol.dispose]() { this.repo.close(); } };
  const repo = holder.repo;
  const times = git(src, ['log', '--format=%ct', 'main']).toString().trim().split('\n').map(Number).sort((a, b) => a - b);
  const middle = times[Math.floor(times.length / 2)] as number;
  const cases: [Parameters<Repository['log']>[0], string[]][] = [
    [{ ref: 'main' }, ['main']],
    [{ ref: 'main', order: 'topo' }, ['--topo-order', 'main']],
    [{ ref: 'main', order: 'topo', maxCount: 7 }, ['--topo-order', '-n', '7', 'main']],
    [{ ref: 'main', maxCount: 5 }, ['-n', '5', 'main']],
    [{ ref: 'main', firstParent: true }, ['--first-parent', 'main']],
    [{ ref: 'main', exclude: ['topic'] }, ['main', '^topic']],
    [{ ref: 'main', paths: ['src'] }, ['main', '--', 'src']],
    [{ ref: 'main', since: middle }, [`--since=@${middle}`, 'main']],
    [{ ref: 'main', until: middle, maxCount: 4 }, [`--until=@${middle}`, '-n', '4', 'main']],
    [{ ref: 'main', since: new Date(middle * 1000), exclude: ['main~30'] }, [`--since=@${middle}`, 'main', '^main~30']],
  ];
  for (const [options, args] of cases) {
    const ours: string[] = [];
    for await (const c of repo.log(options)) ours.push(c.id);
    const theirs = git(src, ['log', '--format=%H', ...args]).toString().split('\n').filter((l) => l !== '');
    assert.deepEqual(ours, theirs, args.join(' '));
  }
  let head: { message: string } | undefined;
  for await (const c of repo.log({ maxCount: 1 })) head = c;
  assert.equal(head?.message, git(src, ['log', '-1', '--format=%B']).toString().replace(/\n$/, ''));
});

test('rev-list --since, --until, --max-age and --min-age list what git lists', async () => {
  using dir = tempDir();
  const src = makeHistoryRepo(dir.path, 'sha1');
  for (const args of [['--since=@1600090000'], ['--until=@1600090000', '-n', '3'], ['--max-age=1600050000', '--min-age=1600150000'], ['--after=@1600090000', '--first-parent']]) {
    const ours = await runPackwright(src, ['rev-list', ...args, 'main']);
    assert.equal(ours.stdout.toString(), git(src, ['rev-list', ...args, 'main']).toString(), args.join(' '));
  }
});

test('rev-list --skip, --min-parents, --max-parents, --merges, --no-merges, and <rev>^@, ^! and ^-<n>, list what git lists', async () => {
  using dir = tempDir();
  const src = makeHistoryRepo(dir.path, 'sha1');
  const cases = [['--skip=2'], ['--skip=3', '-n', '2'], ['--skip=100'], ['--max-parents=0'], ['--min-parents=2'], ['--merges'], ['--no-merges', '-n', '4'], ['--merges', '--no-max-parents'], ['--min-parents=3', '--no-min-parents', '--max-parents=1'], ['--no-merges', '--objects'], ['--skip=1', '--merges', '--all']];
  for (const args of cases) {
    const revs = args.includes('--all') ? [] : ['main', 'oct-a', 'topic'];
    const ours = await runPackwright(src, ['rev-list', ...args, ...revs]);
    assert.equal(ours.stdout.toString(), git(src, ['rev-list', ...args, ...revs]).toString(), args.join(' '));
  }
  // git's <rev>^@, <rev>^!, <rev>^-<n> (a merge's parents among them).
  const merge = git(src, ['rev-list', '--merges', '-n', '1', '--all']).toString().trim();
  for (const args of [[`${merge}^@`], [`${merge}^!`], [`${merge}^-`], [`${merge}^-2`], ['main^!', '--not', 'topic'], ['main~1^@']]) {
    const ours = await runPackwright(src, ['rev-list', ...args]);
    assert.equal(ours.stdout.toString(), git(src, ['rev-list', ...args]).toString(), args.join(' '));
  }
  // Some of them list something, and not everything.
  const all = git(src, ['rev-list', '--all']).toString().split('\n').length;
  const merges = git(src, ['rev-list', '--merges', '--all']).toString().split('\n').length;
  assert.ok(merges > 1 && merges < all);
});

for (const format of ['sha1', 'sha256'] as Format[]) test(`listRefs peels annotated tags, loose and packed, as git show-ref -d does (through tags of tags) (${format})`, async () => {
  using dir = tempDir();
  const src = makeHistoryRepo(dir.path, format);
  // A loose annotated tag beside the packed ones.
  git(src, ['tag', '-a', '-m', 'loose one', 'loose-tag', 'main~2']);
  using holder = { repo: Repository.openGitDir(src), [Symbol.dispose]() { this.repo.close(); } };
  const ours = (await holder.repo.listRefs()).map((r) => `${r.id} ${r.name}\n${r.peeled !== undefined ? `${r.peeled} ${r.name}^{}\n` : ''}`).join('');
  assert.equal(ours, git(src, ['show-ref', '-d']).toString());
  assert.ok(ours.includes('refs/tags/loose-tag'));
});

test('update-server-info writes git\'s info/refs and objects/info/packs, and rewrites them as refs change', async () => {
  using dir = tempDir();
  const src = makeHistoryRepo(dir.path, 'sha1');
  const copy = join(dir.path, 'copy.git');
  git(dir.path, ['clone', '-q', '--mirror', src, copy]);
  git(copy, ['update-server-info']);
  const ours = join(dir.path, 'ours.git');
  git(dir.path, ['clone', '-q', '--mirror', src, ours]);
  assert.equal((await runPackwright(ours, ['update-server-info'])).status, 0);
  for (const f of ['info/refs', 'objects/info/packs']) assert.equal(readFileSync(join(ours, f), 'utf8'), readFileSync(join(copy, f), 'utf8'), f);
  git(ours, ['tag', '-a', '-m', 'new', 'newer', 'main~1']);
  git(copy, ['tag', '-a', '-m', 'new', 'newer', 'main~1']);
  git(copy, ['update-server-info']);
  assert.equal((await runPackwright(ours, ['update-server-info'])).status, 0);
  assert.equal(readFileSync(join(ours, 'info/refs'), 'utf8'), readFileSync(join(copy, 'info/refs'), 'utf8'));
});
