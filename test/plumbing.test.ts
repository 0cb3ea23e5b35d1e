import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { CLI, git, makeRepo, tempDir } from './helpers/git.js';

const ENV = {
  ...process.env,
  GIT_AUTHOR_NAME: 'A U Thor', GIT_AUTHOR_EMAIL: 'author@example.com', GIT_AUTHOR_DATE: '1700000000 +0000',
  GIT_COMMITTER_NAME: 'C O Mitter', GIT_COMMITTER_EMAIL: 'committer@example.com', GIT_COMMITTER_DATE: '1700000000 +0000',
  GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', HOME: tmpdir(),
};

interface Run { status: number; stdout: string; stderr: string }

function run(command: string, args: string[], cwd: string, input?: string | Buffer): Run {
  const r = spawnSync(command, args, { cwd, env: ENV, input, maxBuffer: 1 << 28 });
  return { status: r.status ?? -1, stdout: r.stdout.toString('latin1'), stderr: r.stderr.toString('latin1') };
}

/** The command under git and under packwright: same status and stdout (and the kind of its last stderr line when it fails). */
function sameAsGit(cwd: string, args: string[], input?: string | Buffer): Run {
  const g = run('git', args, cwd, input);
  const p = run(process.execPath, [CLI, ...args], cwd, input);
  assert.deepEqual({ status: p.status, stdout: p.stdout }, { status: g.status, stdout: g.stdout }, `${args.join(' ')}: ${p.stderr}`);
  // git's last word (its fatal line) is ours too.
  const last = (s: string): string => s.trim().split('\n').at(-1)?.split(':')[0] ?? '';
  if (g.status !== 0 && g.status !== 129) assert.equal(last(p.stderr), last(g.stderr), `${args.join(' ')}: ${p.stderr} vs ${g.stderr}`);
  return g;
}

for (const format of ['sha1', 'sha256'] as const) {
  test(`show-ref lists, filters, verifies and dereferences refs as git does (${format})`, () => {
    using dir = tempDir();
    const repo = makeRepo(dir.path, format, 4);
    git(repo, ['pack-refs', '--all']);
    git(repo, ['tag', '-a', '-m', 'second', 'v2.0', 'HEAD']);
    git(repo, ['branch', 'topic', 'HEAD~1']);
    for (const args of [[], ['--heads'], ['--tags'], ['--heads', '--tags'], ['-d'], ['--head'], ['-s'], ['--hash=9'], ['--abbrev'], ['--abbrev=5', '-d'],
      ['main'], ['v1.0'], ['heads/main'], ['ain'], ['--verify', 'refs/heads/main'], ['--verify', 'main'], ['--verify', '-q', 'main'],
      ['--verify', 'refs/tags/v1.0', 'refs/heads/topic'], ['-q'], ['no-such-ref'], ['--verify', 'HEAD'], ['--head', '-d', '--tags']]) {
      sameAsGit(repo, ['show-ref', ...args]);
    }
    sameAsGit(repo, ['show-ref', '--exclude-existing'], `x refs/heads/main\ny refs/heads/new\nz refs/tags/v1.0^{}\nw refs/tags/fresh^{}\nbad ref..name\n`);
    sameAsGit(repo, ['show-ref', '--exclude-existing=refs/tags/'], `x refs/heads/new\nz refs/tags/fresh\n`);
  });

  test(`hash-object hashes and writes objects as git does (${format})`, () => {
    using dir = tempDir();
    const repo = makeRepo(dir.path, format, 3);
    writeFileSync(join(repo, 'a.txt'), 'alpha\n');
    writeFileSync(join(repo, 'b.txt'), 'beta\n');
    writeFileSync(join(repo, 'q"uote.txt'), 'quoted\n');
    sameAsGit(repo, ['hash-object', 'a.txt', 'b.txt']);
    sameAsGit(repo, ['hash-object', '--stdin', 'a.txt'], 'from stdin\n');
    sameAsGit(repo, ['hash-object', '--stdin-paths'], 'a.txt\nb.txt\n"q\\"uote.txt"\n');
    sameAsGit(repo, ['hash-object', '-t', 'commit', '--stdin'], git(repo, ['cat-file', 'commit', 'HEAD']));
    sameAsGit(repo, ['hash-object', '-t', 'tree', '--stdin'], git(repo, ['cat-file', 'tree', 'HEAD^{tree}']));
    sameAsGit(repo, ['hash-object', '-t', 'tag', '--stdin'], git(repo, ['cat-file', 'tag', 'v1.0']));
    for (const [type, body] of [['tree', 'abc\n'], ['commit', ''], ['tag', ''], ['bogus', 'x'], ['bl', 'x']]) sameAsGit(repo, ['hash-object', '-t', type as string, '--stdin'], body);
    sameAsGit(repo, ['hash-object', '-t', 'odd-type', '--literally', '--stdin'], 'anything\n');
    sameAsGit(repo, ['hash-object', '--stdin', '--stdin'], 'x');
    sameAsGit(repo, ['hash-object', '--stdin-paths', 'a.txt'], '');
    sameAsGit(repo, ['hash-object', 'missing.txt']);
    // -w: the object lands in the store, readable by git.
    const p = run(process.execPath, [CLI, 'hash-object', '-w', '--stdin'], repo, 'written by packwright\n');
    assert.equal(p.status, 0);
    assert.equal(git(repo, ['cat-file', '-p', p.stdout.trim()]).toString(), 'written by packwright\n');
    const lit = run(process.execPath, [CLI, 'hash-object', '-w', '-t', 'garbage', '--literally', '--stdin'], repo, 'odd\n');
    assert.equal(lit.stdout, run('git', ['hash-object', '-t', 'garbage', '--literally', '--stdin'], repo, 'odd\n').stdout);
    assert.ok(readdirSync(join(repo, '.git', 'objects', lit.stdout.slice(0, 2))).includes(lit.stdout.trim().slice(2)));
  });
}
