import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { CLI, git, makeRepo, runPackwright, tempDir } from './helpers/git.js';
import { runSync, spawnGit } from './helpers/spawn-client.js';
import { Repository, convertToGit } from '../src/repo/index.js';
import { hashObject } from '../src/hash/index.js';
import { parseAlternateList } from '../src/odb/index.js';

const ENV = {
  ...process.env,
  GIT_AUTHOR_NAME: 'A U Thor', GIT_AUTHOR_EMAIL: 'author@example.com', GIT_AUTHOR_DATE: '1700000000 +0000',
  GIT_COMMITTER_NAME: 'C O Mitter', GIT_COMMITTER_EMAIL: 'committer@example.com', GIT_COMMITTER_DATE: '1700000000 +0000',
  GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', HOME: tmpdir(),
};

interface Run { status: number; stdout: string; stderr: string }

function run(command: string, args: string[], cwd: string, input?: string | Buffer): Run {
  const r = runSync(command, args, { cwd, env: ENV, input });
  return { status: r.status ?? -1, stdout: r.stdout.toString('latin1'), stderr: r.stderr.toString('latin1') };
}

/** A packwright command run in this process, as the bin would run it, with ENV. */
async function ours(args: string[], cwd: string, input?: string | Buffer): Promise<Run> {
  const r = await runPackwright(cwd, args, { input, env: ENV });
  return { status: r.status, stdout: r.stdout.toString('latin1'), stderr: r.stderr };
}

/** The command under git and under packwright: same status and stdout (and the kind of its last stderr line when it fails). */
async function sameAsGit(cwd: string, args: string[], input?: string | Buffer): Promise<Run> {
  const g = run('git', args, cwd, input);
  const p = await ours(args, cwd, input);
  assert.deepEqual({ status: p.status, stdout: p.stdout }, { status: g.status, stdout: g.stdout }, `${args.join(' ')}: ${p.stderr}`);
  // git's last word (its fatal line) is ours too.
  const last = (s: string): string => s.trim().split('\n').at(-1)?.split(':')[0] ?? '';
  if (g.status !== 0 && g.status !== 129) assert.equal(last(p.stderr), last(g.stderr), `${args.join(' ')}: ${p.stderr} vs ${g.stderr}`);
  return g;
}

for (const format of ['sha1', 'sha256'] as const) {
  test(`show-ref lists, filters, verifies and dereferences refs as git does (${format})`, async () => {
    using dir = tempDir();
    const repo = makeRepo(dir.path, format, 4);
    git(repo, ['pack-refs', '--all']);
    git(repo, ['tag', '-a', '-m', 'second', 'v2.0', 'HEAD']);
    git(repo, ['branch', 'topic', 'HEAD~1']);
    for (const args of [[], ['--heads'], ['--tags'], ['--heads', '--tags'], ['-d'], ['--head'], ['-s'], ['--hash=9'], ['--abbrev'], ['--abbrev=5', '-d'],
      ['main'], ['v1.0'], ['heads/main'], ['ain'], ['--verify', 'refs/heads/main'], ['--verify', 'main'], ['--verify', '-q', 'main'],
      ['--verify', 'refs/tags/v1.0', 'refs/heads/topic'], ['-q'], ['no-such-ref'], ['--verify', 'HEAD'], ['--head', '-d', '--tags']]) {
      await sameAsGit(repo, ['show-ref', ...args]);
    }
    await sameAsGit(repo, ['show-ref', '--exclude-existing'], `x refs/heads/main\ny refs/heads/new\nz refs/tags/v1.0^{}\nw refs/tags/fresh^{}\nbad ref..name\n`);
    await sameAsGit(repo, ['show-ref', '--exclude-existing=refs/tags/'], `x refs/heads/new\nz refs/tags/fresh\n`);
  });

  test(`hash-object hashes and writes objects as git does (${format})`, async () => {
    using dir = tempDir();
    const repo = makeRepo(dir.path, format, 3);
    writeFileSync(join(repo, 'a.txt'), 'alpha\n');
    writeFileSync(join(repo, 'b.txt'), 'beta\n');
    writeFileSync(join(repo, 'q"uote.txt'), 'quoted\n');
    await sameAsGit(repo, ['hash-object', 'a.txt', 'b.txt']);
    await sameAsGit(repo, ['hash-object', '--stdin', 'a.txt'], 'from stdin\n');
    await sameAsGit(repo, ['hash-object', '--stdin-paths'], 'a.txt\nb.txt\n"q\\"uote.txt"\n');
    await sameAsGit(repo, ['hash-object', '-t', 'commit', '--stdin'], git(repo, ['cat-file', 'commit', 'HEAD']));
    await sameAsGit(repo, ['hash-object', '-t', 'tree', '--stdin'], git(repo, ['cat-file', 'tree', 'HEAD^{tree}']));
    await sameAsGit(repo, ['hash-object', '-t', 'tag', '--stdin'], git(repo, ['cat-file', 'tag', 'v1.0']));
    for (const [type, body] of [['tree', 'abc\n'], ['commit', ''], ['tag', ''], ['bogus', 'x'], ['bl', 'x']]) await sameAsGit(repo, ['hash-object', '-t', type as string, '--stdin'], body);
    await sameAsGit(repo, ['hash-object', '-t', 'odd-type', '--literally', '--stdin'], 'anything\n');
    await sameAsGit(repo, ['hash-object', '--stdin', '--stdin'], 'x');
    await sameAsGit(repo, ['hash-object', '--stdin-paths', 'a.txt'], '');
    await sameAsGit(repo, ['hash-object', 'missing.txt']);
    // -w: the object lands in the store, readable by git.
    const p = await ours(['hash-object', '-w', '--stdin'], repo, 'written by packwright\n');
    assert.equal(p.status, 0);
    assert.equal(git(repo, ['cat-file', '-p', p.stdout.trim()]).toString(), 'written by packwright\n');
    const lit = await ours(['hash-object', '-w', '-t', 'garbage', '--literally', '--stdin'], repo, 'odd\n');
    assert.equal(lit.stdout, run('git', ['hash-object', '-t', 'garbage', '--literally', '--stdin'], repo, 'odd\n').stdout);
    assert.ok(readdirSync(join(repo, '.git', 'objects', lit.stdout.slice(0, 2))).includes(lit.stdout.trim().slice(2)));
  });
}

/** Every loose object of a repository: its id and its type and size, by one `git cat-file --batch-check`. */
function looseObjects(repo: string): Map<string, string> {
  const dir = join(repo, 'objects');
  const ids = readdirSync(dir).filter((d) => /^[0-9a-f]{2}$/.test(d)).flatMap((sub) => readdirSync(join(dir, sub)).map((f) => sub + f));
  if (ids.length === 0) return new Map();
  const lines = git(repo, ['cat-file', '--batch-check=%(objecttype) %(objectsize)'], ids.join('\n') + '\n').toString().trimEnd().split('\n');
  return new Map(ids.map((id, i) => [id, lines[i] as string]));
}

for (const format of ['sha1', 'sha256'] as const) {
  test(`unpack-objects writes the same loose objects as git, and -n writes none (${format})`, async () => {
    using dir = tempDir();
    const repo = makeRepo(dir.path, format, 8);
    git(repo, ['repack', '-adf']);
    const packDir = join(repo, '.git', 'objects', 'pack');
    const pack = readFileSync(join(packDir, readdirSync(packDir).find((f) => f.endsWith('.pack')) as string));
    const into = (name: string): string => {
      const target = join(dir.path, name);
      git(dir.path, ['init', '-q', '--bare', `--object-format=${format}`, target]);
      return target;
    };
    const byGit = into('by-git');
    const byUs = into('by-us');
    const dry = into('dry');
    assert.equal(run('git', ['unpack-objects', '-q'], byGit, pack).status, 0);
    // Trailing bytes after the pack are echoed to stdout, as git does.
    const trailer = Buffer.from('after the pack\n');
    const p = await ours(['unpack-objects', '-q'], byUs, Buffer.concat([pack, trailer]));
    assert.equal(p.status, 0, p.stderr);
    assert.equal(p.stdout, trailer.toString('latin1'));
    assert.deepEqual(looseObjects(byUs), looseObjects(byGit));
    assert.equal(run('git', ['fsck', '--strict'], byUs).status, 0);
    assert.equal((await ours(['unpack-objects', '-n'], dry, pack)).status, 0);
    assert.equal(looseObjects(dry).size, 0);
    // Again into a repository that has them all: nothing new, nothing fails.
    assert.equal((await ours(['unpack-objects', '-q'], byUs, pack)).status, 0);
    // --strict: a pack of trees alone fails in an empty repository (its blobs are missing), passes where they are.
    const trees = git(repo, ['rev-parse', 'HEAD^{tree}', 'HEAD~1^{tree}']).toString();
    const treePack = git(repo, ['pack-objects', '--stdout'], trees);
    const empty = into('empty');
    const strictEmpty = await ours(['unpack-objects', '--strict'], empty, treePack);
    assert.equal(strictEmpty.status, run('git', ['unpack-objects', '--strict'], into('empty-git'), treePack).status);
    assert.notEqual(strictEmpty.status, 0);
    assert.equal(looseObjects(empty).size, 0, 'nothing written when --strict fails');
    assert.equal((await ours(['unpack-objects', '--strict'], byUs, treePack)).status, 0);
  });
}

test('unpack-objects: a thin pack takes its bases from the repository; a truncated pack writes nothing; -r writes what it can', async () => {
  using dir = tempDir();
  const repo = makeRepo(dir.path, 'sha1', 6);
  const target = join(dir.path, 'target');
  git(dir.path, ['clone', '-q', '--bare', '--no-local', repo, target]);
  for (let i = 0; i < 3; i++) {
    writeFileSync(join(repo, 'file.txt'), `${readFileSync(join(repo, 'file.txt'), 'utf8')}\nmore ${i}`);
    git(repo, ['commit', '-qam', `more ${i}`]);
  }
  const thin = git(repo, ['pack-objects', '--revs', '--thin', '--stdout'], 'HEAD\n^HEAD~3\n');
  const p = await ours(['unpack-objects'], target, thin);
  assert.equal(p.status, 0, p.stderr);
  git(target, ['update-ref', 'refs/heads/main', git(repo, ['rev-parse', 'HEAD']).toString().trim()]);
  assert.equal(run('git', ['fsck'], target).status, 0);
  const full = git(repo, ['pack-objects', '--revs', '--stdout'], 'HEAD\n');
  const cut = full.subarray(0, full.length - 100);
  const fresh = join(dir.path, 'fresh');
  git(dir.path, ['init', '-q', '--bare', fresh]);
  const t = await ours(['unpack-objects'], fresh, cut);
  assert.equal(t.status, 128);
  assert.equal(looseObjects(fresh).size, 0);
  const r = await ours(['unpack-objects', '-r'], fresh, cut);
  assert.equal(r.status, 1);
  const g = join(dir.path, 'fresh-git');
  git(dir.path, ['init', '-q', '--bare', g]);
  run('git', ['unpack-objects', '-r'], g, cut);
  assert.deepEqual(looseObjects(fresh), looseObjects(g));
});

test('show-index prints what git prints, for idx v1 and v2 and for short input', async () => {
  using dir = tempDir();
  const repo = makeRepo(dir.path, 'sha1', 4);
  git(repo, ['repack', '-ad']);
  const packDir = join(repo, '.git', 'objects', 'pack');
  const pack = join(packDir, readdirSync(packDir).find((f) => f.endsWith('.pack')) as string);
  git(repo, ['index-pack', '--index-version=1', '-o', join(dir.path, 'v1.idx'), pack]);
  git(repo, ['index-pack', '--index-version=2,64', '-o', join(dir.path, 'v2-64.idx'), pack]);
  for (const f of [pack.replace(/\.pack$/, '.idx'), join(dir.path, 'v1.idx'), join(dir.path, 'v2-64.idx')]) {
    const idx = readFileSync(f);
    await sameAsGit(repo, ['show-index'], idx);
    await sameAsGit(repo, ['show-index'], idx.subarray(0, 600));
    await sameAsGit(repo, ['show-index'], idx.subarray(0, 1300));
  }
  await sameAsGit(repo, ['show-index', '--object-format=sha256'], readFileSync(pack.replace(/\.pack$/, '.idx')).subarray(0, 2000));
});

for (const format of ['sha1', 'sha256'] as const) {
  test(`ls-tree lists as git does: paths, -r -d -t -l -z, name and object modes, --format, from a subdirectory (${format})`, async () => {
    using dir = tempDir();
    const repo = makeRepo(dir.path, format, 3);
    // Names that need quoting, and a directory and file sharing a prefix.
    writeFileSync(join(repo, 'tab\there.txt'), 'x\n');
    writeFileSync(join(repo, 'caf\u00e9.txt'), 'y\n');
    writeFileSync(join(repo, 'dir.txt'), 'z\n');
    git(repo, ['add', '-A']);
    git(repo, ['commit', '-qm', 'names']);
    const cases = [[], ['-r'], ['-d'], ['-r', '-d'], ['-r', '-t'], ['-l'], ['-r', '-l'], ['-z'], ['-r', '-z'], ['--name-only'], ['--name-status', '-r'],
      ['--object-only', '-r'], ['--abbrev'], ['--abbrev=5', '-r'], ['dir'], ['dir/'], ['dir/sub'], ['-r', 'dir'], ['-t', 'dir/sub/other.txt'], ['dir.txt', 'dir'],
      ['nothing'], ['--format=%(objecttype) %(objectsize) %(path)%x00', '-r'], ['--format=[%(objectsize:padded)] %(objectname) %%', '-r'],
      ['--format=%(bad)'], ['--long', '--name-only'], ['--name-only', '--name-status']];
    for (const args of cases) await sameAsGit(repo, ['ls-tree', ...args.filter((a) => a.startsWith('-')), 'HEAD', ...args.filter((a) => !a.startsWith('-'))]);
    await sameAsGit(repo, ['ls-tree', 'HEAD^{tree}']);
    await sameAsGit(repo, ['ls-tree', 'v1.0']);
    await sameAsGit(repo, ['ls-tree', 'no-such-rev']);
    await sameAsGit(repo, ['ls-tree', git(repo, ['rev-parse', 'HEAD:file.txt']).toString().trim()]);
    const sub = join(repo, 'dir');
    for (const args of [[], ['-r'], ['--full-name'], ['--full-tree'], ['sub'], ['../file.txt'], ['..'], ['../..']]) await sameAsGit(sub, ['ls-tree', 'HEAD', ...args]);
  });
}

for (const format of ['sha1', 'sha256'] as const) test(`rev-parse answers as git does: revisions, ranges, symbolic names, and where the repository is (${format})`, async () => {
  using dir = tempDir();
  const repo = makeRepo(dir.path, format, 4);
  git(repo, ['branch', 'topic', 'HEAD~1']);
  git(repo, ['worktree', 'add', '-q', join(dir.path, 'wt'), 'topic']);
  const revs = [['HEAD'], ['--verify', 'HEAD'], ['--verify', '-q', 'nope'], ['--verify', 'nope'], ['--verify', 'HEAD', 'main'], ['--short', 'HEAD'], ['--short=10', 'main'],
    ['HEAD~1..HEAD'], ['HEAD^!'], ['HEAD^@'], ['HEAD^-'], ['^HEAD', 'main'], ['--not', 'main', 'topic'], ['--symbolic', 'main'], ['--symbolic-full-name', 'HEAD', 'main', 'v1.0'],
    ['--abbrev-ref', 'HEAD'], ['--abbrev-ref', 'refs/heads/topic'], ['--all'], ['--branches'], ['--tags'], ['--branches=to*'], ['--glob=refs/tags/*'],
    ['v1.0^{commit}', 'HEAD:file.txt', 'HEAD^{tree}'], ['--default', 'HEAD'], ['--is-bare-repository', '--is-inside-git-dir', '--is-inside-work-tree'],
    ['--git-dir', '--absolute-git-dir', '--git-common-dir', '--show-toplevel', '--show-prefix', '--show-cdup'], ['--git-path', 'objects', '--git-path', 'HEAD'],
    ['--path-format=absolute', '--git-dir', '--path-format=relative', '--git-common-dir'], ['--show-object-format', '--is-shallow-repository'],
    ['--flags', '--foo', 'HEAD'], ['--no-flags', '--foo', 'HEAD'], ['--revs-only', 'HEAD', 'file.txt'], ['HEAD', '--', 'file.txt'], ['no-such-thing'],
    ['--sq', 'HEAD', 'it\'s'], ['--sq-quote', 'a b', "c'd"], ['--local-env-vars'], ['--since=2020-01-01T00:00:00Z', '--until=@1700000000']];
  for (const args of revs) await sameAsGit(repo, ['rev-parse', ...args]);
  for (const cwd of [join(repo, 'dir', 'sub'), join(repo, '.git'), join(repo, '.git', 'objects'), join(dir.path, 'wt')]) {
    await sameAsGit(cwd, ['rev-parse', '--is-bare-repository', '--is-inside-git-dir', '--is-inside-work-tree', '--show-prefix', '--git-dir', '--absolute-git-dir', '--show-cdup']);
    await sameAsGit(cwd, ['rev-parse', '--git-common-dir', '--path-format=relative', '--git-dir', '--git-path', 'objects']);
  }
  await sameAsGit(join(repo, 'dir'), ['rev-parse', '--show-toplevel', '--prefix', 'x/', 'file']);
  await sameAsGit(repo, ['--git-dir=.git', 'rev-parse', '--git-dir', '--is-inside-work-tree', '--show-toplevel']);
});

test('hash-object converts line endings as git does: text, -text, eol, crlf, ident, core.autocrlf, --path, --no-filters', async () => {
  using dir = tempDir();
  const repo = makeRepo(dir.path, 'sha1', 3);
  writeFileSync(join(repo, '.gitattributes'), '*.txt text\n*.bin -text\n*.lf eol=lf\nlegacy crlf\nplain -crlf\n*.id ident\nsub/*.x text\n[attr]mine -text\n*.mine mine\n');
  const crlf = 'one\r\ntwo\r\nlone\rcr\r\n';
  for (const name of ['a.txt', 'b.bin', 'c.lf', 'legacy', 'plain', 'other.dat', 'e.mine']) writeFileSync(join(repo, name), crlf);
  writeFileSync(join(repo, 'v.id'), 'x $Id: whatever $ y\r\n');
  writeFileSync(join(repo, 'binary.dat'), Buffer.from([0x0d, 0x0a, 0, 1, 2, 0x0d, 0x0a]));
  writeFileSync(join(repo, 'auto.dat'), 'auto\r\ntext\r\n');
  const names = ['a.txt', 'b.bin', 'c.lf', 'legacy', 'plain', 'other.dat', 'e.mine', 'v.id', 'binary.dat', 'auto.dat'];
  for (const autocrlf of ['false', 'true', 'input']) {
    git(repo, ['config', 'core.autocrlf', autocrlf]);
    await sameAsGit(repo, ['hash-object', ...names]);
    await sameAsGit(repo, ['hash-object', '--no-filters', ...names]);
    await sameAsGit(repo, ['hash-object', '--path=a.txt', 'other.dat']);
    await sameAsGit(repo, ['hash-object', '--stdin', '--path=a.txt'], crlf);
    await sameAsGit(repo, ['hash-object', '--stdin-paths'], names.join('\n') + '\n');
  }
  // git's safer autocrlf looks at the index, which hash-object does not read: converted all the same.
  git(repo, ['config', 'core.autocrlf', 'false']);
  git(repo, ['add', 'auto.dat']);
  git(repo, ['config', 'core.autocrlf', 'true']);
  await sameAsGit(repo, ['hash-object', 'auto.dat']);
  // …while git add does: the library's checkIndex is that rule.
  writeFileSync(join(repo, 'auto.dat'), 'auto\r\ntext\r\nmore\r\n');
  git(repo, ['add', 'auto.dat']);
  const added = git(repo, ['ls-files', '-s', 'auto.dat']).toString().split(' ')[1];
  const r = Repository.open(repo);
  try {
    const converted = convertToGit(r, 'auto.dat', readFileSync(join(repo, 'auto.dat')), undefined, true);
    assert.equal(hashObject('sha1', 3, converted).toString('hex'), added);
    assert.notEqual(hashObject('sha1', 3, convertToGit(r, 'auto.dat', readFileSync(join(repo, 'auto.dat')))).toString('hex'), added);
  } finally {
    r.close();
  }
});

test('cat-file: git 2.39 option rules, --batch-command, -z, --follow-symlinks, replace refs, --allow-unknown-type, --filters', async () => {
  using dir = tempDir();
  const repo = makeRepo(dir.path, 'sha1', 3);
  // Usage errors exit 129 as git's do (the messages are compared by their first word).
  for (const args of [['-e', '-p', 'HEAD'], ['-t', '-s', 'HEAD'], ['--batch', '--batch-check'], ['--buffer', 'HEAD'], ['-z'], ['-p'], ['-p', 'a', 'b'], ['--batch', 'HEAD'],
    ['-p', '--batch'], ['--path=x', 'HEAD'], ['--textconv'], ['blob']]) {
    const g = run('git', ['cat-file', ...args], repo);
    const p = await ours(['cat-file', ...args], repo);
    assert.equal(p.status, g.status, `${args.join(' ')}: ${p.stderr}`);
  }
  await sameAsGit(repo, ['cat-file', '--batch-command'], 'info HEAD\ncontents HEAD:file.txt\ninfo nope\n');
  await sameAsGit(repo, ['cat-file', '--batch-command', '--buffer'], 'info HEAD\nflush\ncontents HEAD~1\n');
  await sameAsGit(repo, ['cat-file', '--batch-command'], 'flush\n');
  await sameAsGit(repo, ['cat-file', '--batch-command'], 'bogus HEAD\n');
  await sameAsGit(repo, ['cat-file', '--batch-check', '-z'], 'HEAD\0HEAD:file.txt\0nope\0');
  // Symlinks inside the tree, out of it, dangling, and through a directory.
  writeFileSync(join(repo, 'target.txt'), 'target\n');
  for (const [name, to] of [['in', 'target.txt'], ['up', '../outside'], ['abs', '/etc/passwd'], ['gone', 'nothing-here'], ['todir', 'dir'], ['loop1', 'loop2'], ['loop2', 'loop1']]) {
    git(repo, ['update-index', '--add', '--cacheinfo', `120000,${hashObject('sha1', 3, Buffer.from(to as string)).toString('hex')},${name}`]);
    git(repo, ['hash-object', '-w', '--stdin'], to);
  }
  git(repo, ['add', 'target.txt']);
  git(repo, ['commit', '-qm', 'links']);
  await sameAsGit(repo, ['cat-file', '--batch-check', '--follow-symlinks'], ['in', 'up', 'abs', 'gone', 'todir', 'todir/sub', 'todir/sub/other.txt', 'loop1', 'file.txt/x', 'dir/sub/../rev-0.txt'].map((p) => `HEAD:${p}`).join('\n') + '\n');
  await sameAsGit(repo, ['cat-file', '--batch', '--follow-symlinks'], 'HEAD:in\n');
  // A replace ref: reads of the original give the replacement, but not over all objects.
  const orig = git(repo, ['rev-parse', 'HEAD~1']).toString().trim();
  git(repo, ['replace', orig, 'HEAD']);
  await sameAsGit(repo, ['cat-file', '--batch-check'], `${orig}\n`);
  await sameAsGit(repo, ['cat-file', '-p', orig]);
  await sameAsGit(repo, ['--no-replace-objects', 'cat-file', '-p', orig]);
  // An object of a type git does not know.
  const odd = git(repo, ['hash-object', '-w', '-t', 'oddity', '--literally', '--stdin'], 'odd\n').toString().trim();
  for (const args of [['-t', odd], ['-s', odd], ['-t', '--allow-unknown-type', odd], ['-s', '--allow-unknown-type', odd], ['-p', odd]]) await sameAsGit(repo, ['cat-file', ...args]);
  await sameAsGit(repo, ['cat-file', '--batch-check'], `${odd}\n`);
  // --filters: the blob as a checkout writes it.
  writeFileSync(join(repo, '.gitattributes'), '*.txt text eol=crlf\n*.id ident\n');
  writeFileSync(join(repo, 'v.id'), 'x $Id$\n');
  git(repo, ['add', '.gitattributes', 'v.id']);
  git(repo, ['commit', '-qm', 'attrs']);
  for (const p of ['HEAD:file.txt', 'HEAD:v.id', 'HEAD:run.sh']) await sameAsGit(repo, ['cat-file', '--filters', p]);
  await sameAsGit(repo, ['cat-file', '--textconv', 'HEAD:file.txt']);
  await sameAsGit(repo, ['cat-file', '--filters', '--path=file.txt', 'HEAD:run.sh']);
});

test('revision syntax as git reads it: reflogs, prior checkouts, upstreams, message searches, index paths', async () => {
  using dir = tempDir();
  const repo = makeRepo(dir.path, 'sha1', 4);
  git(repo, ['checkout', '-q', '-b', 'topic']);
  writeFileSync(join(repo, 'topic.txt'), 'topic\n');
  git(repo, ['add', 'topic.txt']);
  git(repo, ['commit', '-qm', 'Topic work: special marker']);
  git(repo, ['checkout', '-q', 'main']);
  git(repo, ['config', 'branch.topic.remote', '.']);
  git(repo, ['config', 'branch.topic.merge', 'refs/heads/main']);
  const revs = ['main@{0}', 'main@{1}', 'main@{3}', 'main@{99}', 'HEAD@{1}', '@{1}', '@{-1}', '@{-1}@{u}', 'topic@{u}', 'topic@{upstream}~1', 'main@{u}', 'nope@{u}',
    'main@{1.year.ago}', 'main@{2030-01-01}', '@', '@~1', 'HEAD^{/revision 1}', 'topic^{/marker}', ':/special', ':/!-revision', 'main^{/no such thing}', ':file.txt', ':0:dir/sub/other.txt', ':nothing'];
  for (const r of revs) await sameAsGit(repo, ['rev-parse', '--verify', '-q', r]);
  await sameAsGit(repo, ['rev-parse', '--symbolic-full-name', '@{-1}', 'topic@{u}', '@']);
  // Names that are neither a revision nor a file: git's diagnosis, word for word.
  writeFileSync(join(repo, 'disk-only.txt'), 'x\n');
  for (const name of ['HEAD:nothing.txt', 'HEAD:disk-only.txt', ':nothing.txt', ':disk-only.txt', ':1:file.txt', 'nosuch:file.txt', 'HEAD:../up', '..', '*.c', 'main...topic']) {
    const g = run('git', ['rev-parse', name], repo);
    const p = await ours(['rev-parse', name], repo);
    assert.deepEqual({ status: p.status, out: p.stdout, err: p.stderr.split('\n')[0] }, { status: g.status, out: g.stdout, err: g.stderr.split('\n')[0] }, name);
  }
  const sub = join(repo, 'dir');
  for (const name of ['HEAD:sub', ':rev-0.txt', 'HEAD:./sub/other.txt']) await sameAsGit(sub, ['rev-parse', name]);
  await sameAsGit(repo, ['rev-parse', '--abbrev-ref', '@{-1}', 'topic@{u}']);
});

test('global --work-tree and a GIT_DIR that is a gitdir file, as git sets them up', async () => {
  using dir = tempDir();
  const repo = makeRepo(dir.path, 'sha1', 3);
  // --work-tree elsewhere: "./" paths of a revision have nothing to be relative to.
  await sameAsGit(repo, ['--git-dir=.git', '--work-tree=dir', 'rev-parse', 'HEAD:./file.txt']);
  await sameAsGit(repo, ['--git-dir=.git', '--work-tree=.', 'rev-parse', 'HEAD:./file.txt']);
  await sameAsGit(join(repo, 'dir'), ['--git-dir=../.git', '--work-tree=..', 'rev-parse', '--show-prefix', 'HEAD:./sub']);
  // A work tree that passes through a directory that is not there dies; one that only ends in one does not.
  for (const workTree of ['/.invalid/work/tree', join(dir.path, 'not-yet')]) {
    const env = { ...ENV, GIT_WORK_TREE: workTree };
    const p = spawnSync(process.execPath, [CLI, 'rev-parse', '--is-inside-work-tree'], { cwd: repo, env });
    const g = spawnGit(['rev-parse', '--is-inside-work-tree'], { cwd: repo, env });
    assert.deepEqual([p.status, p.stdout.toString(), p.stderr.toString()], [g.status, g.stdout.toString(), g.stderr.toString()], workTree);
  }
  // GIT_DIR naming a "gitdir: <path>" file.
  writeFileSync(join(dir.path, 'gitfile'), `gitdir: ${join(repo, '.git')}\n`);
  for (const args of [['rev-parse', '--git-common-dir'], ['rev-parse', '--verify', 'HEAD'], ['cat-file', '-t', 'HEAD']]) {
    const env = { ...ENV, GIT_DIR: join(dir.path, 'gitfile') };
    const p = spawnSync(process.execPath, [CLI, ...args], { cwd: dir.path, env });
    const g = spawnGit(args, { cwd: dir.path, env });
    assert.equal(p.status, g.status, args.join(' '));
    assert.equal(p.stdout.toString(), g.stdout.toString(), args.join(' '));
  }
});

test("receive-pack's quarantine: GIT_OBJECT_DIRECTORY takes what index-pack and unpack-objects write, GIT_ALTERNATE_OBJECT_DIRECTORIES is read first, as in git", async () => {
  using dir = tempDir();
  const repo = makeRepo(dir.path, 'sha1', 6);
  const objects = join(repo, 'objects');
  const pack = spawnGit(['pack-objects', '--stdout', '--revs', '-q'], { cwd: repo, env: ENV, input: 'HEAD\n^HEAD~2\n' }).stdout;
  for (const [command, args] of [['index-pack', ['--stdin']], ['unpack-objects', ['-q']]] as const) {
    const quarantine: Record<string, string> = {};
    const outs: Run[] = [];
    for (const who of ['git', 'pw']) {
      const incoming = join(dir.path, `incoming-${command}-${who}`);
      mkdirSync(incoming);
      quarantine[who] = incoming;
      const env = { ...ENV, GIT_OBJECT_DIRECTORY: incoming, GIT_ALTERNATE_OBJECT_DIRECTORIES: objects };
      const r = who === 'git'
        ? spawnGit([command, ...args], { cwd: repo, env, input: pack })
        : spawnSync(process.execPath, [CLI, command, ...args], { cwd: repo, env, input: pack });
      outs.push({ status: r.status ?? -1, stdout: r.stdout.toString(), stderr: r.stderr.toString() });
    }
    assert.deepEqual(outs[1], { ...(outs[0] as Run), stderr: (outs[1] as Run).stderr }, command);
    const files = (d: string): string[] => readdirSync(d, { recursive: true }).map(String).sort();
    assert.deepEqual(files(quarantine['pw'] as string), files(quarantine['git'] as string), `${command}: what the quarantine holds`);
    assert.ok(files(quarantine['pw'] as string).length > 0, `${command} wrote into the quarantine`);
  }
  // An object only in the alternate the variable names, found through it.
  const alt = join(dir.path, 'alt');
  mkdirSync(alt);
  const id = spawnGit(['hash-object', '-w', '--stdin'], { cwd: repo, env: { ...ENV, GIT_OBJECT_DIRECTORY: alt }, input: 'only in the alternate\n' }).stdout.toString().trim();
  const env = { ...ENV, GIT_ALTERNATE_OBJECT_DIRECTORIES: `"${alt}":/does/not/exist` };
  const p = spawnSync(process.execPath, [CLI, 'cat-file', '-p', id], { cwd: repo, env });
  const g = spawnGit(['cat-file', '-p', id], { cwd: repo, env });
  assert.equal(p.stdout.toString(), 'only in the alternate\n');
  assert.equal(p.stdout.toString(), g.stdout.toString());
  assert.deepEqual(parseAlternateList('"/a:b\\"c":/d::e'), ['/a:b"c', '/d', 'e']);
});

test('unpack-objects --strict reads no fsck.* configuration, as git (receive-pack passes its own with --strict=)', async () => {
  using dir = tempDir();
  const src = join(dir.path, 'src');
  git(dir.path, ['init', '-q', src]);
  const tree = git(src, ['mktree'], '').toString().trim();
  const bad = git(src, ['hash-object', '-t', 'commit', '-w', '--stdin'], `tree ${tree}\nauthor A <a> 1 +0000\ncommitter no-email 1 +0000\n\nbad\n`).toString().trim();
  const pack = spawnGit(['pack-objects', '--stdout', '-q'], { cwd: src, env: ENV, input: `${bad}\n${tree}\n` }).stdout;
  const dst = join(dir.path, 'dst');
  git(dir.path, ['init', '-q', dst]);
  writeFileSync(join(dst, 'SKIP'), `${bad}\n`);
  git(dst, ['config', 'fsck.skipList', 'SKIP']);
  git(dst, ['config', 'fsck.missingEmail', 'ignore']);
  await sameAsGit(dst, ['unpack-objects', '-q', '--strict'], pack);
  // skiplist= in the option itself counts, and a file that is not there is git's error.
  await sameAsGit(dst, ['unpack-objects', '-q', '--strict=skiplist=does-not-exist'], pack);
  const missing = await ours(['unpack-objects', '-q', '--strict=skiplist=does-not-exist'], dst, pack);
  assert.match(missing.stderr, /could not open object name list: does-not-exist/);
  await sameAsGit(dst, ['unpack-objects', '-q', `--strict=skiplist=${join(dst, 'SKIP')}`], pack);
});
