import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { git, GIT_ENV, makeRepo, runPackwright, tempDir } from './helpers/git.js';
import { packwrightServers } from './helpers/servers.js';
import { cloneBare, fetch, listServerRefs, type Credentials } from '../src/client/index.js';
import { isPackwrightError } from '../src/errors/index.js';

test('HTTP credentials: from the URL, an onAuth callback (asked again after a refusal), http.extraHeader, and the CLI\'s credential helper and askpass; without any, git\'s "Authentication failed"', async () => {
  using dir = tempDir();
  const src = join(makeRepo(dir.path, 'sha1', 3), '.git');
  const basic = `Basic ${Buffer.from('alice:secret').toString('base64')}`;
  // The server takes alice's password or a token header; anything else is a 401 asking for Basic credentials.
  await using servers = await packwrightServers(src, GIT_ENV, {
    authorizeHttp: (_service, _repo, _path, request) => (request.headers?.['authorization'] === basic || request.headers?.['x-token'] === 't0k3n' ? true : { refuse: 401, headers: [['WWW-Authenticate', 'Basic realm="test"']] }),
  });
  const url = servers.http;
  const withUser = url.replace('http://', 'http://alice:secret@');
  const heads = git(src, ['for-each-ref', '--format=%(objectname) %(refname)', 'refs/heads/']).toString();

  // No credentials at all.
  await assert.rejects(listServerRefs(url, { prefixes: ['refs/heads/'] }), (e) => isPackwrightError(e, 'REQUEST_REFUSED') && e.message === `Authentication failed for '${url}/'`);
  // In the URL (which fetch itself would refuse to send).
  const listed = await listServerRefs(withUser, { prefixes: ['refs/heads/'] });
  assert.equal(listed.map((r) => `${r.oid} ${r.ref}\n`).join(''), heads);
  // A callback, asked again with what was refused.
  const asked: (Credentials | undefined)[] = [];
  await cloneBare(url, { dir: join(dir.path, 'cb.git'), onAuth: (where, failed) => {
    assert.equal(where, url);
    asked.push(failed);
    return failed === undefined ? { username: 'alice', password: 'wrong' } : { username: 'alice', password: 'secret' };
  } });
  assert.deepEqual(asked, [undefined, { username: 'alice', password: 'wrong' }]);
  assert.equal(git(join(dir.path, 'cb.git'), ['for-each-ref', '--format=%(objectname) %(refname)', 'refs/heads/']).toString(), heads);
  await assert.rejects(cloneBare(url, { dir: join(dir.path, 'gave-up.git'), onAuth: () => undefined }), (e) => isPackwrightError(e, 'REQUEST_REFUSED'));
  assert.equal(existsSync(join(dir.path, 'gave-up.git')), false);

  // http.<url>.extraHeader from the repository's configuration, for fetch.
  const work = join(dir.path, 'work');
  git(dir.path, ['init', '-q', work]);
  git(work, ['remote', 'add', 'origin', url]);
  await assert.rejects(fetch({ dir: work, remote: 'origin' }), (e) => isPackwrightError(e, 'REQUEST_REFUSED'));
  git(work, ['config', `http.${url}.extraHeader`, 'X-Token: t0k3n']);
  const fetched = await fetch({ dir: work, remote: 'origin' });
  assert.ok(fetched.refs.length > 0);

  // The CLI: a credential helper, then an askpass program (a helper's refused answer is not asked for again).
  const cli = join(dir.path, 'cli');
  git(dir.path, ['init', '-q', cli]);
  git(cli, ['remote', 'add', 'origin', url]);
  git(cli, ['config', 'credential.helper', '!f() { echo username=alice; echo password=secret; }; f']);
  const viaHelper = await runPackwright(cli, ['fetch', '-q', 'origin'], { env: GIT_ENV });
  assert.equal(viaHelper.status, 0, viaHelper.stderr);
  git(cli, ['config', 'credential.helper', '!f() { echo username=alice; echo password=wrong; }; f']);
  const askpass = join(dir.path, 'askpass.sh');
  writeFileSync(askpass, '#!/bin/sh\ncase "$1" in Username*) echo alice ;; *) echo secret ;; esac\n', { mode: 0o755 });
  const viaAskpass = await runPackwright(cli, ['fetch', '-q', 'origin'], { env: { ...GIT_ENV, GIT_ASKPASS: askpass } });
  assert.equal(viaAskpass.status, 0, viaAskpass.stderr);
  const none = await runPackwright(cli, ['ls-remote', url], { env: GIT_ENV });
  assert.notEqual(none.status, 0);
  assert.match(none.stderr, /Authentication failed for/);
});
