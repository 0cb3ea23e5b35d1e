import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { git, GIT_ENV, makeRepo, runPackwright, tempDir } from './helpers/git.js';
import { execGit } from './helpers/spawn-client.js';
import { Repository } from '../src/repo/index.js';

/** Every file under refs/ and logs/, and packed-refs and HEAD, with their contents: what ref writes leave. */
function refFiles(gitDir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else out[relative(gitDir, path)] = readFileSync(path, 'utf8');
    }
  };
  for (const top of ['refs', 'logs']) if (existsSync(join(gitDir, top))) walk(join(gitDir, top));
  for (const file of ['packed-refs', 'HEAD']) if (existsSync(join(gitDir, file))) out[file] = readFileSync(join(gitDir, file), 'utf8');
  return out;
}

/** git update-ref in `repo`, with the tests' fixed identity and dates; its status and stderr. */
function gitUpdateRef(repo: string, args: string[], input?: string): { status: number; stderr: string } {
  try {
    execGit(['update-ref', ...args], { cwd: repo, env: GIT_ENV, input, stdio: ['pipe', 'pipe', 'pipe'] });
    return { status: 0, stderr: '' };
  } catch (e) {
    const err = e as { status: number; stderr: Buffer };
    return { status: err.status, stderr: err.stderr.toString() };
  }
}

/** A repository made by git, and two copies of it: one for packwright's commands, one for git's. */
function twoCopies(dir: string): { base: string; ours: string; theirs: string } {
  const base = makeRepo(dir, 'sha1');
  const ours = join(dir, 'ours');
  const theirs = join(dir, 'theirs');
  cpSync(base, ours, { recursive: true });
  cpSync(base, theirs, { recursive: true });
  return { base, ours, theirs };
}

test('update-ref writes the refs, packed-refs and reflogs git writes: updates, symrefs, deletes of packed refs, --stdin transactions', async () => {
  using dir = tempDir();
  const { base, ours, theirs } = twoCopies(dir.path);
  const rev = (r: string): string => git(base, ['rev-parse', r]).toString().trim();
  const [a, b, c] = [rev('HEAD'), rev('HEAD~1'), rev('HEAD~2')];
  const steps: { args: string[]; input?: string }[] = [
    { args: ['refs/heads/topic', b] },
    { args: ['-m', 'move  topic\tforward', 'refs/heads/topic', a, b] },
    { args: ['-m', 'through HEAD', 'HEAD', c] },
    { args: ['--no-deref', '-m', 'detach', 'HEAD', b] },
    { args: ['refs/tags/new-tag', c] },
    { args: ['-d', 'refs/heads/topic', a] },
    { args: ['--stdin'], input: `create refs/heads/one ${a}\nupdate refs/heads/two ${b}\nverify refs/heads/main ${c}\ndelete refs/tags/light\n` },
    { args: ['--stdin', '-z'], input: `update refs/heads/one\0${b}\0${a}\0create refs/heads/deep/er/ref\0${c}\0` },
    { args: ['-d', 'refs/heads/deep/er/ref'] },
  ];
  for (const repo of [ours, theirs]) git(repo, ['pack-refs', '--all']);
  for (const step of steps) {
    const r = await runPackwright(ours, ['update-ref', ...step.args], { input: step.input, env: GIT_ENV });
    assert.equal(r.status, 0, `${step.args.join(' ')}: ${r.stderr}`);
    assert.equal(gitUpdateRef(theirs, step.args, step.input).status, 0);
    assert.deepEqual(refFiles(join(ours, '.git')), refFiles(join(theirs, '.git')), step.args.join(' '));
  }
});

test('update-ref refuses what git refuses, in git\'s words, and a refused transaction changes nothing and leaves no lock', async () => {
  using dir = tempDir();
  const repo = makeRepo(dir.path, 'sha1');
  const rev = (r: string): string => git(repo, ['rev-parse', r]).toString().trim();
  const [a, b] = [rev('HEAD'), rev('HEAD~1')];
  writeFileSync(join(repo, '.git', 'refs', 'heads', 'locked.lock'), '');
  // For the file/directory clashes within one transaction: a loose ref, a packed one, and a
  // broken one (a loose file that holds no ref), with a symbolic ref to it and one to a missing ref.
  git(repo, ['update-ref', 'refs/df/packed', b]);
  git(repo, ['pack-refs', '--all']);
  git(repo, ['update-ref', 'refs/df/loose', b]);
  git(repo, ['update-ref', 'refs/df/long/x', b]);
  mkdirSync(join(repo, '.git', 'refs', 'broken'));
  writeFileSync(join(repo, '.git', 'refs', 'broken', 'foo'), 'gobbledigook\n');
  git(repo, ['symbolic-ref', 'refs/broken/sym', 'refs/broken/foo']);
  git(repo, ['symbolic-ref', 'refs/missing/sym', 'refs/missing/foo']);
  const cases: { args: string[]; input?: string }[] = [
    { args: ['refs/heads/main', a, b] },
    { args: ['refs/heads/nothing', a, b] },
    { args: ['--stdin'], input: `create refs/heads/main ${a}\n` },
    { args: ['refs/heads/main/below', a] },
    { args: ['--stdin'], input: `update refs/heads/fresh ${a}\nupdate refs/heads/fresh/below ${a}\n` },
    { args: ['refs/heads/locked', a] },
    { args: ['--stdin'], input: `update refs/heads/x ${a}\nverify refs/heads/main ${b}\n` },
    { args: ['--stdin'], input: 'update refs/heads/x\n' },
    { args: ['--stdin'], input: `bogus refs/heads/x ${a}\n` },
    { args: ['--stdin'], input: ` update refs/heads/x ${a}\n` },
    { args: ['--stdin'], input: `update "refs/heads/x ${a}\n` },
    { args: ['bad..name', a] },
    // A branch names a commit, and no ref a missing object (git's write_ref_to_lockfile).
    { args: ['refs/heads/tagged', rev('v1.0')] },
    { args: ['refs/heads/main', rev('HEAD^{tree}')] },
    { args: ['--no-deref', 'HEAD', rev('v1.0')] },
    { args: ['refs/tags/gone', '1'.repeat(40)] },
    { args: ['--stdin'], input: `update refs/tags/fine ${rev('v1.0')}\nupdate refs/heads/tagged ${rev('v1.0')}\n` },
    // A ref deleted in the same transaction still clashes (git's lock_raw_ref), loose or packed,
    // in either order; two new ones clash with each other.
    { args: ['--stdin'], input: `create refs/df/loose/x ${a}\ndelete refs/df/loose\n` },
    { args: ['--stdin'], input: `delete refs/df/loose\ncreate refs/df/loose/x ${a}\n` },
    { args: ['--stdin'], input: `delete refs/df/packed\ncreate refs/df/packed/x ${a}\n` },
    { args: ['--stdin'], input: `delete refs/df/long/x\ncreate refs/df/long ${a}\n` },
    { args: ['--stdin'], input: `create refs/df/new ${a}\ncreate refs/df/new/x ${a}\n` },
    { args: ['--stdin'], input: `create refs/df/other/x ${a}\ncreate refs/df/other ${a}\n` },
    // A broken ref is not overwritten, directly or through a symbolic ref; a symbolic ref to a
    // missing ref, changed without following it, is missing the value expected.
    { args: ['--stdin'], input: `update refs/broken/foo ${a}\n` },
    { args: ['--stdin'], input: `update refs/broken/sym ${a} ${b}\n` },
    { args: ['--stdin'], input: `option no-deref\nupdate refs/missing/sym ${a} ${b}\n` },
  ];
  const before = refFiles(join(repo, '.git'));
  for (const c of cases) {
    const ours = await runPackwright(repo, ['update-ref', ...c.args], { input: c.input, env: GIT_ENV });
    const theirs = gitUpdateRef(repo, c.args, c.input);
    assert.equal(theirs.status, 128, `git accepts ${c.args.join(' ')} ${c.input ?? ''}`);
    assert.equal(ours.status, 128, `${c.args.join(' ')} ${c.input ?? ''}: ${ours.stderr}`);
    // The first line is git's (the lock-file case goes on with git's advice).
    assert.equal(ours.stderr.split('\n')[0], theirs.stderr.split('\n')[0], `${c.args.join(' ')} ${c.input ?? ''}`);
    assert.deepEqual(refFiles(join(repo, '.git')), before, `${c.args.join(' ')} changed something`);
  }
  // packed-refs is rewritten through packed-refs.new, as git's: one left there fails a deletion
  // of a packed ref, which then changes nothing (git names the file relative to where it runs).
  writeFileSync(join(repo, '.git', 'packed-refs.new'), '');
  const ours = await runPackwright(repo, ['update-ref', '-d', 'refs/df/packed'], { env: GIT_ENV });
  const theirs = gitUpdateRef(repo, ['-d', 'refs/df/packed']);
  // git's delete_ref() reports the error and returns 1.
  assert.deepEqual([ours.status, theirs.status], [1, 1]);
  assert.match(ours.stderr, /^error: unable to create file \S*packed-refs\.new: File exists\n$/);
  assert.match(theirs.stderr, /^error: unable to create file \S*packed-refs\.new: File exists\n$/);
  assert.deepEqual(refFiles(join(repo, '.git')), before);
});

test('update-ref -d deletes only what is safe to take for a ref, as git\'s refname_is_safe: a bad name under refs/ yes, another file of the git directory no', async () => {
  using dir = tempDir();
  const { ours, theirs } = twoCopies(dir.path);
  const a = git(ours, ['rev-parse', 'HEAD']).toString().trim();
  for (const repo of [ours, theirs]) {
    writeFileSync(join(repo, '.git', 'my-private-file'), 'precious\n');
    // A ref whose name git would not let anyone create now, left by an older tool.
    writeFileSync(join(repo, '.git', 'refs', 'heads', 'broken...ref'), `${a}\n`);
  }
  for (const name of ['my-private-file', 'config', 'refs/heads/../../config']) {
    const r = await runPackwright(ours, ['update-ref', '-d', name], { env: GIT_ENV });
    const g = gitUpdateRef(theirs, ['-d', name]);
    assert.deepEqual([r.status, r.stderr], [g.status, g.stderr], name);
    assert.equal(r.status, 1, name);
  }
  assert.equal(readFileSync(join(ours, '.git', 'my-private-file'), 'utf8'), 'precious\n');
  const r = await runPackwright(ours, ['update-ref', '-d', 'refs/heads/broken...ref'], { env: GIT_ENV });
  assert.deepEqual([r.status, r.stderr], [0, '']);
  assert.equal(gitUpdateRef(theirs, ['-d', 'refs/heads/broken...ref']).status, 0);
  assert.deepEqual(refFiles(join(ours, '.git')), refFiles(join(theirs, '.git')));
  assert.ok(existsSync(join(ours, '.git', 'config')));
});

test('update-ref takes away empty directories where a ref goes, as git does, and refuses a non-empty one', async () => {
  using dir = tempDir();
  const { ours, theirs } = twoCopies(dir.path);
  const a = git(ours, ['rev-parse', 'HEAD']).toString().trim();
  for (const repo of [ours, theirs]) {
    git(repo, ['update-ref', 'refs/e/packed', a]);
    git(repo, ['pack-refs', '--all']);
    for (const name of ['new', 'packed', 'full']) mkdirSync(join(repo, '.git', 'refs', 'e', name, 'bar', 'baz'), { recursive: true });
    writeFileSync(join(repo, '.git', 'refs', 'e', 'full', 'bar', 'baz', 'x.lock'), '');
  }
  for (const input of [`create refs/e/new ${a}\n`, `verify refs/e/packed ${a}\n`, `update refs/e/packed ${a} ${a}\n`]) {
    const r = await runPackwright(ours, ['update-ref', '--stdin'], { input, env: GIT_ENV });
    assert.equal(r.status, 0, `${input}: ${r.stderr}`);
    assert.equal(gitUpdateRef(theirs, ['--stdin'], input).status, 0, input);
  }
  assert.deepEqual(refFiles(join(ours, '.git')), refFiles(join(theirs, '.git')));
  // Not empty: refused; with an old value expected, the ref is missing (git's lock_raw_ref).
  for (const [input, words] of [[`update refs/e/full ${a}\n`, /^fatal: cannot lock ref 'refs\/e\/full': there is a non-empty directory '\S+refs\/e\/full' blocking reference 'refs\/e\/full'\n$/], [`update refs/e/full ${a} ${a}\n`, /^fatal: cannot lock ref 'refs\/e\/full': unable to resolve reference 'refs\/e\/full'\n$/]] as const) {
    const r = await runPackwright(ours, ['update-ref', '--stdin'], { input, env: GIT_ENV });
    const g = gitUpdateRef(theirs, ['--stdin'], input);
    assert.deepEqual([r.status, g.status], [128, 128], input);
    assert.match(r.stderr, words);
    assert.match(g.stderr, words);
  }
});

test('a library transaction: all or nothing, compare-and-swap, and every lock released', () => {
  using dir = tempDir();
  const path = makeRepo(dir.path, 'sha256');
  const repo = Repository.open(path, { env: GIT_ENV });
  try {
    const head = repo.resolve('HEAD');
    const parent = repo.resolve('HEAD~1');
    repo.refTransaction().create('refs/heads/a', parent).update('refs/heads/main', parent, head).commit();
    assert.deepEqual(repo.refs.resolve('refs/heads/a'), parent);
    assert.deepEqual(repo.refs.resolve('refs/heads/main'), parent);
    // The second update's expectation is stale: the first does not happen either.
    const t = repo.refTransaction().update('refs/heads/a', head, parent).update('refs/heads/main', head, head);
    assert.throws(() => t.commit(), { code: 'REF_MISMATCH' });
    assert.deepEqual(repo.refs.resolve('refs/heads/a'), parent);
    assert.deepEqual(readdirSync(join(path, '.git', 'refs', 'heads')).filter((f) => f.endsWith('.lock')), []);
    // git reads what the transaction wrote, reflog included.
    assert.equal(git(path, ['rev-parse', 'a']).toString().trim(), parent.toString('hex'));
    assert.match(git(path, ['reflog', 'show', '--format=%H %gs', 'refs/heads/main']).toString(), new RegExp(`^${parent.toString('hex')} `));
  } finally {
    repo.close();
  }
});

test('symbolic-ref reads, sets (with a reflog line) and deletes symbolic refs as git does', async () => {
  using dir = tempDir();
  const { base, ours, theirs } = twoCopies(dir.path);
  git(base, ['branch', 'other', 'HEAD~1']);
  for (const repo of [ours, theirs]) git(repo, ['branch', 'other', 'HEAD~1']);
  const steps = [['HEAD'], ['--short', 'HEAD'], ['-m', 'switch', 'HEAD', 'refs/heads/other'], ['refs/heads/alias', 'refs/heads/main'], ['-d', 'refs/heads/alias']];
  for (const args of steps) {
    const r = await runPackwright(ours, ['symbolic-ref', ...args], { env: GIT_ENV });
    assert.equal(r.status, 0, `${args.join(' ')}: ${r.stderr}`);
    assert.equal(r.stdout.toString(), execGit(['symbolic-ref', ...args], { cwd: theirs, env: GIT_ENV }).toString());
    assert.deepEqual(refFiles(join(ours, '.git')), refFiles(join(theirs, '.git')), args.join(' '));
  }
  const refused = await runPackwright(ours, ['symbolic-ref', 'HEAD', 'elsewhere'], { env: GIT_ENV });
  assert.equal(refused.stderr, 'fatal: Refusing to point HEAD outside of refs/\n');
});

test('the reference-transaction hook is run as git runs it: prepared, committed, aborted, the lines it reads, and a refusal in prepared', async () => {
  using dir = tempDir();
  const base = makeRepo(dir.path, 'sha1', 3);
  const ours = join(dir.path, 'ours');
  const theirs = join(dir.path, 'theirs');
  cpSync(base, ours, { recursive: true });
  cpSync(base, theirs, { recursive: true });
  const hook = (repo: string, refuse: boolean): void => {
    writeFileSync(join(repo, '.git', 'hooks', 'reference-transaction'), `#!/bin/sh\n{ echo "$1"; cat; } >>"$(git rev-parse --git-dir)/hook.log"\n${refuse ? 'test "$1" != prepared' : 'exit 0'}\n`, { mode: 0o755 });
  };
  const head = git(base, ['rev-parse', 'HEAD']).toString().trim();
  const parent = git(base, ['rev-parse', 'HEAD~1']).toString().trim();
  const steps: { args: string[]; input?: string }[] = [
    { args: ['update-ref', 'HEAD', parent] },
    { args: ['update-ref', 'refs/heads/side', head, '0'.repeat(40)] },
    // (A delete is left out: git 2.39 also runs the hook for the packed-refs side of it, an
    // "aborted" with a line of zeros before the real transaction, which packwright does not.)
    { args: ['update-ref', '--stdin'], input: `start\nupdate refs/heads/x ${head}\nabort\n` },
  ];
  hook(ours, false);
  hook(theirs, false);
  for (const { args, input } of steps) {
    const r = await runPackwright(ours, args, { env: GIT_ENV, input });
    assert.equal(r.status, 0, r.stderr);
    execGit(args, { cwd: theirs, env: GIT_ENV, input: input ?? '' });
  }
  hook(ours, true);
  hook(theirs, true);
  const refused = await runPackwright(ours, ['update-ref', 'refs/heads/y', head], { env: GIT_ENV });
  assert.notEqual(refused.status, 0);
  assert.match(refused.stderr, /ref updates aborted by hook/);
  assert.throws(() => execGit(['update-ref', 'refs/heads/y', head], { cwd: theirs, env: GIT_ENV, stdio: 'pipe' }));
  assert.equal(readFileSync(join(ours, '.git', 'hook.log'), 'utf8'), readFileSync(join(theirs, '.git', 'hook.log'), 'utf8'));
  assert.equal(existsSync(join(ours, '.git', 'refs', 'heads', 'y')), false);
  // The library's transactions run it too.
  using holder = { repo: Repository.open(ours, { env: GIT_ENV }), [Symbol.dispose]() { this.repo.close(); } };
  assert.throws(() => holder.repo.refTransaction().create('refs/heads/z', Buffer.from(head, 'hex')).commit(), { code: 'REQUEST_REFUSED' });
});
