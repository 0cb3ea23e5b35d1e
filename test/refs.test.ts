import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { git, makeRepo, tempDir, type Format } from './helpers/git.js';
import { Repository } from '../src/repo/index.js';
import { isPackwrightError } from '../src/errors/index.js';
import { parseTag } from '../src/objects/index.js';

/**
 * `git for-each-ref` of what packwright lists: name, id, what a tag points at (`%(*objectname)`:
 * packed-refs has it, a loose tag is read), the symbolic target.
 */
function listing(repo: Repository): string {
  return repo.refs.list().map((r) => {
    const obj = repo.objects.read(r.id);
    const peeled = r.peeled ?? (obj.type === 'tag' ? parseTag(obj.data, repo.objects.hashLength).object : undefined);
    return `${r.name} ${r.id.toString('hex')} ${peeled?.toString('hex') ?? ''} ${r.symbolicTarget ?? ''}\n`;
  }).join('');
}
const FORMAT = '%(refname) %(objectname) %(*objectname) %(symref)';

for (const format of ['sha1', 'sha256'] as Format[]) {
  test(`${format}: refs list and resolve as git lists and resolves them, loose over packed, with peeled tags and symbolic refs`, () => {
    const dir = tempDir();
    try {
      mkdirSync(join(dir.path, 'r'));
      const work = makeRepo(join(dir.path, 'r'), format);
      git(work, ['branch', 'topic', 'HEAD~3']);
      git(work, ['tag', '-a', '-m', 'annotated', 'v2.0', 'HEAD~4']);
      git(work, ['update-ref', 'refs/remotes/origin/main', 'HEAD~1']);
      git(work, ['symbolic-ref', 'refs/remotes/origin/HEAD', 'refs/remotes/origin/main']);
      git(work, ['pack-refs', '--all']);
      // After packing: a loose ref that shadows its packed copy, and new loose ones.
      git(work, ['update-ref', 'refs/heads/topic', 'HEAD~2']);
      git(work, ['branch', 'zz-loose', 'HEAD~5']);
      git(work, ['update-ref', 'refs/notes/x', 'HEAD']);
      const repo = Repository.open(join(work, 'dir', 'sub'));
      assert.equal(repo.workTree, work);
      assert.equal(repo.format, format);
      const expected = git(work, ['for-each-ref', `--format=${FORMAT}`]).toString();
      assert.equal(listing(repo).replace(/ +\n/g, '\n'), expected.replace(/ +\n/g, '\n'));
      for (const name of ['HEAD', 'refs/heads/topic', 'refs/tags/v1.0', 'refs/remotes/origin/HEAD', 'refs/heads/zz-loose']) {
        assert.equal(repo.refs.resolve(name)?.toString('hex'), git(work, ['rev-parse', name]).toString().trim(), name);
      }
      for (const rev of ['HEAD', 'topic', 'v1.0', 'v1.0^{}', 'origin/main', 'origin', 'HEAD~3^{tree}', 'main:dir/sub/other.txt']) {
        assert.equal(repo.resolve(rev).toString('hex'), git(work, ['rev-parse', rev]).toString().trim(), rev);
      }
      assert.equal(repo.refs.resolve('refs/heads/nope'), undefined);
      assert.equal(repo.refs.resolve('../config'), undefined, 'names outside refs are not read');
      // A broken packed-refs line is REF_CORRUPT, naming the file.
      writeFileSync(join(work, '.git', 'packed-refs'), 'not a ref line\n');
      assert.throws(() => repo.refs.list(), (e: unknown) => isPackwrightError(e, 'REF_CORRUPT') && e.file === join(work, '.git', 'packed-refs'));
      repo.close();
    } finally {
      dir[Symbol.dispose]();
    }
  });
}

test('a linked worktree has its own HEAD and shares the rest; objects come from the common directory', () => {
  const dir = tempDir();
  try {
    mkdirSync(join(dir.path, 'r'));
    const work = makeRepo(join(dir.path, 'r'), 'sha1');
    const linked = join(dir.path, 'linked');
    git(work, ['worktree', 'add', '-q', '-b', 'side', linked, 'HEAD~2']);
    git(linked, ['update-ref', 'refs/bisect/bad', 'HEAD~1']);
    const repo = Repository.open(linked);
    assert.equal(repo.workTree, linked);
    assert.equal(repo.commonDir, join(work, '.git'));
    assert.equal(repo.resolve('HEAD').toString('hex'), git(linked, ['rev-parse', 'HEAD']).toString().trim());
    assert.equal(repo.resolve('main').toString('hex'), git(linked, ['rev-parse', 'main']).toString().trim());
    assert.equal(listing(repo).replace(/ +\n/g, '\n'), git(linked, ['for-each-ref', `--format=${FORMAT}`]).toString().replace(/ +\n/g, '\n'));
    const id = repo.resolve('HEAD:file.txt');
    assert.deepEqual(repo.objects.read(id).data, git(linked, ['cat-file', 'blob', 'HEAD:file.txt']));
    // The main worktree does not see the linked one's per-worktree refs.
    const main = Repository.open(work);
    assert.equal(main.refs.resolve('refs/bisect/bad'), undefined);
    assert.equal(listing(main).replace(/ +\n/g, '\n'), git(work, ['for-each-ref', `--format=${FORMAT}`]).toString().replace(/ +\n/g, '\n'));
    repo.close();
    main.close();
  } finally {
    dir[Symbol.dispose]();
  }
});

test('the repository configuration is git\'s: global and local files, includes, typed values', () => {
  const dir = tempDir();
  try {
    mkdirSync(join(dir.path, 'r'));
    const work = makeRepo(join(dir.path, 'r'), 'sha1');
    const global = join(dir.path, 'global-config');
    writeFileSync(global, '[user]\n\tname = Global Name\n[core]\n\tbigFileThreshold = 1m\n[pack]\n\tthreads = 3\n');
    git(work, ['config', 'pack.threads', '2']);
    git(work, ['config', 'remote.origin.url', 'https://example.com/x.git']);
    const env = { GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: global, HOME: dir.path };
    const repo = Repository.open(work, { env });
    assert.equal(repo.config.get('user.name'), 'Global Name');
    assert.equal(repo.config.getInt('pack.threads'), 2, 'the repository overrides the global file');
    assert.equal(repo.config.getInt('core.bigfilethreshold'), 1024 * 1024);
    assert.equal(repo.config.get('remote.origin.url'), 'https://example.com/x.git');
    assert.deepEqual(repo.config.getAll('pack.threads'), ['3', '2']);
    repo.close();
  } finally {
    dir[Symbol.dispose]();
  }
});

test('packed refs are found by bisection in a sorted packed-refs, and by a full parse in an unsorted one', () => {
  const dir = tempDir();
  try {
    mkdirSync(join(dir.path, 'r'));
    const work = makeRepo(join(dir.path, 'r'), 'sha1');
    const commits = git(work, ['rev-list', 'HEAD']).toString().trim().split('\n');
    // Hundreds of refs, every fifth an annotated tag (a peeled line follows it in packed-refs).
    const names: string[] = [];
    let updates = '';
    for (let i = 0; i < 300; i++) {
      const name = i % 5 === 0 ? `refs/tags/t${i}` : `refs/heads/b/${i.toString(36)}`;
      names.push(name);
      if (i % 5 !== 0) updates += `create ${name} ${commits[i % commits.length]}\n`;
      else git(work, ['tag', '-a', '-m', `tag ${i}`, `t${i}`, commits[i % commits.length] as string]);
    }
    git(work, ['update-ref', '--stdin'], updates);
    git(work, ['pack-refs', '--all']);
    const packed = join(work, '.git', 'packed-refs');
    const expected = git(work, ['rev-parse', ...names]).toString().trim().split('\n');
    const peeled = git(work, ['rev-parse', ...names.filter((n) => n.startsWith('refs/tags/')).map((n) => `${n}^{}`)]).toString().trim().split('\n');
    for (const text of [readFileSync(packed, 'utf8'), readFileSync(packed, 'utf8').replace(/ sorted ?/, ' ')]) {
      writeFileSync(packed, text);
      const repo = Repository.open(work);
      assert.deepEqual(names.map((n) => repo.refs.resolve(n)?.toString('hex')), expected);
      const tags = names.filter((n) => n.startsWith('refs/tags/')).map((n) => {
        const v = repo.refs.read(n);
        return v?.kind === 'id' ? v.peeled?.toString('hex') : undefined;
      });
      assert.deepEqual(tags, peeled, 'peeled lines');
      for (const missing of ['refs/heads/b/0', 'refs/heads/a', 'refs/heads/b/zzz', 'refs/tags/t1', 'refs/zzz', 'refs/heads/b']) {
        assert.equal(repo.refs.resolve(missing), undefined, missing);
      }
      // A listing under a prefix is the run of records the bisection lands on (or the full parse's).
      for (const prefix of ['refs/', 'refs/heads/', 'refs/heads/b/', 'refs/tags/', 'refs/a/', 'refs/zzz/', 'refs/heads/b/z/']) {
        const listed = repo.refs.list(prefix).map((r) => `${r.name} ${r.id.toString('hex')} ${r.peeled?.toString('hex') ?? ''}`);
        const want = git(work, ['for-each-ref', '--format=%(refname) %(objectname) %(*objectname)', prefix]).toString().split('\n').filter((l) => l !== '');
        assert.deepEqual(listed, want, prefix);
      }
      repo.close();
    }
  } finally {
    dir[Symbol.dispose]();
  }
});

test('a long-lived ref store sees packed-refs rewritten by git (a new file) and written over in place (same size)', () => {
  using dir = tempDir();
  mkdirSync(join(dir.path, 'r'));
  const work = makeRepo(join(dir.path, 'r'), 'sha1');
  git(work, ['pack-refs', '--all']);
  const repo = Repository.open(work);
  const first = git(work, ['rev-parse', 'HEAD~1']).toString().trim();
  const second = git(work, ['rev-parse', 'HEAD~2']).toString().trim();
  assert.equal(repo.refs.resolve('refs/tags/light')?.toString('hex'), first);
  // git's update-ref then pack-refs: a new packed-refs renamed over the old one.
  git(work, ['update-ref', 'refs/tags/light', second]);
  git(work, ['pack-refs', '--all']);
  assert.equal(repo.refs.resolve('refs/tags/light')?.toString('hex'), second);
  assert.deepEqual(repo.refs.list('refs/tags/').map((r) => r.name), ['refs/tags/light', 'refs/tags/v1.0']);
  // The same bytes' length written over the same file: still seen.
  const path = join(work, '.git', 'packed-refs');
  writeFileSync(path, readFileSync(path, 'latin1').replace(second, first), 'latin1');
  assert.equal(repo.refs.resolve('refs/tags/light')?.toString('hex'), first);
  repo.close();
});

test('discovery stops below GIT_CEILING_DIRECTORIES, as git does', () => {
  using dir = tempDir();
  const repo = makeRepo(dir.path, 'sha1', 3);
  const inner = join(repo, 'a', 'b');
  mkdirSync(inner, { recursive: true });
  assert.equal(Repository.open(inner, { env: {} }).gitDir, join(repo, '.git'));
  // git rev-parse --git-dir fails the same way from there.
  const env = { GIT_CEILING_DIRECTORIES: `/nonexistent:${join(repo, 'a')}` };
  assert.throws(() => Repository.open(inner, { env }), (e: unknown) => isPackwrightError(e, 'REPO_NOT_FOUND'));
  assert.equal(Repository.open(join(repo, 'a'), { env }).gitDir, join(repo, '.git'), 'the ceiling itself may look up to the repository');
});
