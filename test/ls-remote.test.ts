import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer as createHttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { git, GIT_ENV, makeHistoryRepo, runPackwright, tempDir, type Format } from './helpers/git.js';
import { packwrightServers } from './helpers/servers.js';
import { spawnGit } from './helpers/spawn-client.js';
import { listServerRefs } from '../src/client/index.js';
import { isPackwrightError } from '../src/errors/index.js';

for (const format of ['sha1', 'sha256'] as Format[]) {
  test(`ls-remote and listServerRefs give git ls-remote's lines over a path, file:// with git's upload-pack, git:// and HTTP, protocols 0 and 2 (${format})`, async () => {
    using dir = tempDir();
    const src = makeHistoryRepo(dir.path, format);
    await using s = await packwrightServers(src, GIT_ENV);
    for (const version of ['0', '2']) {
      for (const args of [[], ['--heads'], ['--tags'], ['--refs'], ['--symref'], ['main', 'v*']]) {
        const theirs = git(dir.path, ['-c', `protocol.version=${version}`, 'ls-remote', ...args.filter((a) => a.startsWith('-')), src, ...args.filter((a) => !a.startsWith('-'))]).toString();
        for (const url of [src, `file://${src}`, s.git, s.http]) {
          const extra = url.startsWith('file://') ? ['--upload-pack=git-upload-pack'] : [];
          const ours = await runPackwright(dir.path, ['-c', `protocol.version=${version}`, 'ls-remote', ...extra, ...args.filter((a) => a.startsWith('-')), url, ...args.filter((a) => !a.startsWith('-'))], { env: GIT_ENV });
          assert.equal(ours.stdout.toString(), theirs, `v${version} ${args.join(' ')} ${url}: ${ours.stderr}`);
        }
      }
    }
    // Inside a repository, a remote's name (or none: origin) stands for its URL.
    const work = `${dir.path}/work`;
    git(dir.path, ['init', '-q', `--object-format=${format}`, work]);
    git(work, ['remote', 'add', 'origin', src]);
    for (const args of [['origin'], [], ['--heads', 'origin']]) {
      assert.equal((await runPackwright(work, ['ls-remote', ...args], { env: GIT_ENV })).stdout.toString(), git(work, ['ls-remote', ...args]).toString(), args.join(' '));
    }
    const refs = await listServerRefs(s.http, { symrefs: true, peelTags: true, prefixes: ['refs/tags/', 'HEAD'] });
    assert.equal(refs.find((r) => r.ref === 'HEAD')?.target, 'refs/heads/main');
    assert.ok(refs.some((r) => r.ref.startsWith('refs/tags/') && r.peeled !== undefined));
    assert.ok(refs.every((r) => r.ref === 'HEAD' || r.ref.startsWith('refs/tags/')));
  });
}

test('ls-remote without a repository takes the remote git\'s remote_get chooses and names its URL; --sort, --get-url and GIT_TEST_PROTOCOL_VERSION as git\'s', async () => {
  using dir = tempDir();
  const src = makeHistoryRepo(dir.path, 'sha1');
  for (const tag of ['mark', 'mark1.1', 'mark1.2', 'mark1.10', 'mark1.02', 'n000', 'n00', 'n01', 'n010', 'n09', 'n0', 'n1', 'n9', 'n10']) git(src, ['tag', tag]);
  const work = `${dir.path}/work`;
  git(dir.path, ['init', '-q', work]);
  const both = async (args: string[], env: Record<string, string> = {}): Promise<void> => {
    const ours = await runPackwright(work, ['ls-remote', ...args], { env: { ...GIT_ENV, ...env } });
    const theirs = spawnGit(['ls-remote', ...args], { cwd: work, env: { ...GIT_ENV, ...env }, encoding: 'utf8' });
    assert.deepEqual([ours.status, ours.stdout.toString(), ours.stderr], [theirs.status, theirs.stdout, theirs.stderr], args.join(' '));
  };
  // None configured: refused; the one remote there is, whatever its name; of several, origin,
  // unless the branch checked out names its own.
  await both([]);
  git(work, ['remote', 'add', 'only', src]);
  await both([]);
  await both(['-q']);
  const copy = `${dir.path}/copy.git`;
  git(dir.path, ['clone', '-q', '--bare', src, copy]);
  git(work, ['remote', 'add', 'origin', copy]);
  git(work, ['remote', 'add', 'other', src]);
  await both([]);
  git(work, ['config', 'branch.main.remote', 'other']);
  git(work, ['symbolic-ref', 'HEAD', 'refs/heads/main']);
  await both(['--tags']);
  await both(['--get-url']);
  await both(['--get-url', 'origin']);
  for (const sort of ['refname', '-refname', 'version:refname', '-v:refname', 'objectname']) await both([`--sort=${sort}`, '--tags', 'origin']);
  await both(['--sort=refname', '--sort=-version:refname', 'origin']);
  // GIT_TEST_PROTOCOL_VERSION, as git reads it without protocol.version: v0 names only HEAD's symref.
  git(src, ['symbolic-ref', 'refs/heads/alias', 'refs/heads/main']);
  await both(['--symref', 'origin'], { GIT_TEST_PROTOCOL_VERSION: '0' });
  await both(['--symref', 'origin'], { GIT_TEST_PROTOCOL_VERSION: '2' });
  // A key that needs the objects, outside a repository: git's words.
  const outside = await runPackwright(dir.path, ['ls-remote', '--sort=authordate', src], { env: GIT_ENV });
  assert.equal(outside.status, 128);
  assert.match(outside.stderr, /^fatal: not a git repository, but the field 'authordate' requires access to object data\n$/);
});

test('ls-remote of what is not a repository, or not a git server, fails in its words', async () => {
  using dir = tempDir();
  await assert.rejects(listServerRefs(dir.path), (e) => isPackwrightError(e, 'REPO_NOT_FOUND'));
  const http = createHttpServer((_req, res) => { res.statusCode = 404; res.end('no'); });
  await new Promise<void>((ok) => http.listen(0, '127.0.0.1', ok));
  try {
    await assert.rejects(listServerRefs(`http://127.0.0.1:${(http.address() as AddressInfo).port}/x.git`), (e) => isPackwrightError(e, 'REPO_NOT_FOUND') && /404/.test(e.message));
  } finally {
    await new Promise((ok) => http.close(ok));
  }
  await assert.rejects(listServerRefs('ftp://127.0.0.1/repo.git'), (e) => isPackwrightError(e, 'INVALID_ARGUMENT'));
  // A path that is no repository, served in this process: the server's line, then the client's
  // die_initial_contact, as git's spawned upload-pack and receive-pack and its client say them;
  // git's clone refuses the path itself.
  const work = `${dir.path}/work`;
  git(dir.path, ['init', '-q', work]);
  git(work, ['commit', '-q', '--allow-empty', '-m', 'one']);
  const missing = `${dir.path}/nothing-here`;
  for (const args of [['ls-remote', missing], ['fetch', missing], ['push', missing, 'HEAD:refs/heads/x'], ['clone', '--bare', missing, `${dir.path}/cloned.git`]]) {
    const ours = await runPackwright(work, args, { env: GIT_ENV });
    const theirs = spawnGit(args, { cwd: work, env: GIT_ENV, encoding: 'utf8' });
    assert.deepEqual([ours.status, ours.stderr], [theirs.status, theirs.stderr], args[0]);
  }
  // A spawned server that ends before saying anything (one that refused the repository says why
  // on stderr first): git's die_initial_contact, after what the server said.
  for (const uploadPack of ['true', 'git upload-pack']) {
    const args = ['ls-remote', `--upload-pack=${uploadPack}`, `${dir.path}/nothing-here`];
    const ours = await runPackwright(dir.path, args, { env: GIT_ENV });
    const theirs = spawnGit(args, { cwd: dir.path, env: GIT_ENV, encoding: 'utf8' });
    // The spawned server's own line goes to this process's stderr, which the test does not see.
    const serverSaid = uploadPack === 'true' ? '' : `fatal: '${dir.path}/nothing-here' does not appear to be a git repository\n`;
    assert.deepEqual([ours.status, serverSaid + ours.stderr], [theirs.status, theirs.stderr], uploadPack);
    assert.match(ours.stderr, /fatal: Could not read from remote repository\.\n\nPlease make sure you have the correct access rights\nand the repository exists\.\n$/);
  }
});
