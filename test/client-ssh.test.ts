import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { git, GIT_ENV, makeRepo, runPackwright, tempDir } from './helpers/git.js';
import { execGit } from './helpers/spawn-client.js';

test('ssh URLs (ssh://user@host:port/path, host:path) reach the services through the ssh program git would run, with git\'s arguments', async () => {
  using dir = tempDir();
  const src = join(makeRepo(dir.path, 'sha1', 3), '.git');
  // git's test-fake-ssh: logs its arguments, then runs the remote command here.
  const log = join(dir.path, 'ssh.log');
  const fake = join(dir.path, 'fake-ssh');
  writeFileSync(fake, `#!/bin/sh\necho "$*" >>${log}\nwhile test "$1" != "\${1#-}"; do case "$1" in -p|-o|-P) shift;; esac; shift; done\nshift\nexec sh -c "$*"\n`, { mode: 0o755 });
  const env = { ...GIT_ENV, GIT_SSH_COMMAND: fake };
  const heads = (repo: string): string => git(repo, ['for-each-ref']).toString();
  const logged = (): string => {
    const text = readFileSync(log, 'utf8');
    rmSync(log);
    return text;
  };

  // A clone: the same arguments as git's (the -G probe of an unknown program, then the service).
  const url = `ssh://me@myhost:2222${src}`;
  const r = await runPackwright(dir.path, ['clone', '-q', '--bare', url, 'ours.git'], { env });
  assert.equal(r.status, 0, r.stderr);
  const ours = logged();
  execGit(['clone', '-q', '--bare', url, 'theirs.git'], { cwd: dir.path, env, stdio: 'pipe' });
  assert.equal(ours, logged());
  assert.match(ours, /^-o SendEnv=GIT_PROTOCOL -p 2222 me@myhost git-upload-pack '/m);
  assert.equal(heads(join(dir.path, 'ours.git')), heads(join(dir.path, 'theirs.git')));

  // The scp-like form, for fetch and push (receive-pack over ssh); GIT_SSH runs a program without the shell.
  const work = join(dir.path, 'work');
  git(dir.path, ['init', '-q', '-b', 'main', work]);
  git(work, ['remote', 'add', 'origin', `myhost:${src}`]);
  const fetched = await runPackwright(work, ['fetch', '-q', 'origin'], { env: { ...GIT_ENV, GIT_SSH: fake, GIT_SSH_VARIANT: 'ssh' } });
  assert.equal(fetched.status, 0, fetched.stderr);
  assert.match(logged(), /^-o SendEnv=GIT_PROTOCOL myhost git-upload-pack '/m);
  const target = join(dir.path, 'target.git');
  git(dir.path, ['init', '-q', '--bare', target]);
  const pushed = await runPackwright(work, ['push', '-q', `myhost:${target}`, 'refs/remotes/origin/main:refs/heads/main'], { env });
  assert.equal(pushed.status, 0, pushed.stderr);
  assert.match(logged(), /myhost git-receive-pack '/);
  assert.equal(git(target, ['rev-parse', 'main']).toString(), git(src, ['rev-parse', 'main']).toString());
  // plink takes -P for the port; a program git cannot tell (the probe fails) cannot be given one.
  await runPackwright(dir.path, ['ls-remote', 'ssh://myhost:2200/nowhere'], { env: { ...GIT_ENV, GIT_SSH: fake, GIT_SSH_VARIANT: 'plink' } });
  assert.match(logged(), /^-P 2200 myhost git-upload-pack '\/nowhere'/m);
  const simple = await runPackwright(dir.path, ['ls-remote', 'ssh://myhost:2200/nowhere'], { env: { ...GIT_ENV, GIT_SSH_COMMAND: 'false', GIT_SSH_VARIANT: 'simple' } });
  assert.match(simple.stderr, /ssh variant 'simple' does not support setting port/);
});
