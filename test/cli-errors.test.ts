import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { CLI, makeRepo, tempDir } from './helpers/git.js';
import { spawnGit } from './helpers/spawn-client.js';

/** Runs a command line with packwright and with git; returns both exit statuses and stderrs. */
function both(cwd: string, args: string[]): { ours: { status: number | null; stderr: string; stdout: string }; git: { status: number | null } } {
  const ours = spawnSync(process.execPath, [CLI, ...args], { cwd, encoding: 'utf8' });
  const theirs = spawnGit(args, { cwd, encoding: 'utf8', env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' } });
  return { ours: { status: ours.status, stderr: ours.stderr, stdout: ours.stdout }, git: { status: theirs.status } };
}

test('failures a new user meets exit as git does, with one line that names the problem and no stack', () => {
  const dir = tempDir();
  try {
    mkdirSync(join(dir.path, 'r'));
    const repo = makeRepo(join(dir.path, 'r'), 'sha1', 3);
    const cases: [string[], RegExp][] = [
      [['index-pack', '-o', 'x.idx', 'nonexistent.pack'], /^fatal: could not open '.*nonexistent\.pack' for reading: No such file or directory$/],
      [['verify-pack', 'nonexistent.idx'], /nonexistent\.idx.*No such file or directory$/],
      [['verify-pack', '-v', 'nonexistent.pack'], /nonexistent\.idx.*No such file or directory$/],
      [['cat-file', '-e', 'no-such-name'], /^fatal: Not a valid object name no-such-name$/],
      [['cat-file', '-p', 'HEAD:no/such/path'], /^fatal: .*no\/such\/path/],
      [['index-pack', '--threads=two', 'x.pack'], /^usage: packwright index-pack/],
      [['index-pack', '--index-version=2,zz', 'x.pack'], /^fatal: bad --index-version=2,zz$/],
      [['verify-pack', '--object-format=md5', 'x.idx'], /^fatal: unknown hash algorithm 'md5'$/],
      [['no-such-command'], /^packwright: 'no-such-command' is not a packwright command/],
    ];
    for (const [args, message] of cases) {
      const r = both(repo, args);
      assert.equal(r.ours.status, r.git.status, `exit status of ${args.join(' ')}`);
      const lines = r.ours.stderr.trim().split('\n');
      assert.match(lines[0] as string, message, args.join(' '));
      assert.ok(!/^\s+at /m.test(r.ours.stderr), `no stack trace for ${args.join(' ')}: ${r.ours.stderr}`);
    }
    // A valid id that is not there: exit 1 and no message, as git.
    const missing = both(repo, ['cat-file', '-e', 'f'.repeat(40)]);
    assert.deepEqual([missing.ours.status, missing.ours.stderr], [missing.git.status, '']);
    // git is lenient here (--max-input-size=abc reads as 0, "no limit"); packwright refuses the value.
    const r = spawnSync(process.execPath, [CLI, 'index-pack', '--max-input-size=abc', 'x.pack'], { cwd: repo, encoding: 'utf8' });
    assert.deepEqual([r.status, r.stderr], [128, 'fatal: bad --max-input-size=abc\n']);
    assert.deepEqual(readdirSync(repo).sort(), ['.git', 'dir', 'file.txt', 'link', 'run.sh'], 'nothing was written');
  } finally {
    dir[Symbol.dispose]();
  }
});

test('<command> -h prints its usage on stdout and exits 129, --help exits 0, as git', () => {
  for (const command of ['cat-file', 'index-pack', 'verify-pack']) {
    const h = spawnSync(process.execPath, [CLI, command, '-h'], { encoding: 'utf8' });
    const git = spawnGit([command, '-h'], { encoding: 'utf8' });
    assert.equal(h.status, git.status, `${command} -h`);
    assert.match(h.stdout, new RegExp(`^usage: packwright ${command}`));
    const help = spawnSync(process.execPath, [CLI, command, '--help'], { encoding: 'utf8' });
    assert.equal(help.status, 0);
    assert.equal(help.stdout, h.stdout);
  }
});
