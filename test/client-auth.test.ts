import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { git, GIT_ENV, makeRepo, runPackwright, tempDir } from './helpers/git.js';
import { packwrightServers } from './helpers/servers.js';
import { cloneBare, fetch, listServerRefs, type Credentials } from '../src/client/index.js';
import { isPackwrightError } from '../src/errors/index.js';
import { execFileAsync } from './helpers/spawn-client.js';

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
  // A callback, asked again with what was refused; told what was refused and what was taken (once).
  const asked: (Credentials | undefined)[] = [];
  const told: string[] = [];
  await cloneBare(url, {
    dir: join(dir.path, 'cb.git'),
    onAuth: (where, failed) => {
      assert.equal(where, url);
      asked.push(failed);
      return failed === undefined ? { username: 'alice', password: 'wrong' } : { username: 'alice', password: 'secret' };
    },
    onAuthFailure: (where, c) => void told.push(`failure ${where} ${c.username}:${c.password}`),
    onAuthSuccess: (where, c) => void told.push(`success ${where} ${c.username}:${c.password}`),
  });
  assert.deepEqual(asked, [undefined, { username: 'alice', password: 'wrong' }]);
  assert.deepEqual(told, [`failure ${url} alice:wrong`, `success ${url} alice:secret`]);
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
  // What a helper is told, against what git tells it: get, then store what the server took; erase what it refused.
  const log = join(dir.path, 'helper.log');
  const logging = (password: string): string => `!f() { echo "action=$1" >> ${log}; cat >> ${log}; if [ "$1" = get ]; then echo username=alice; echo password=${password}; fi; }; f`;
  const helperSaw = async (password: string, run: () => Promise<unknown>): Promise<string> => {
    rmSync(log, { force: true });
    git(cli, ['config', 'credential.helper', logging(password)]);
    await run();
    return readFileSync(log, 'utf8');
  };
  const gitFetch = (): Promise<unknown> => execFileAsync('git', ['fetch', '-q', 'origin'], { cwd: cli, env: GIT_ENV }).catch(() => undefined);
  const ourFetch = (): Promise<unknown> => runPackwright(cli, ['fetch', '-q', 'origin'], { env: GIT_ENV });
  const stored = await helperSaw('secret', ourFetch);
  assert.equal(stored, await helperSaw('secret', gitFetch));
  assert.match(stored, /action=store\nprotocol=http\nhost=127\.0\.0\.1:\d+\nusername=alice\npassword=secret\n/);
  const erased = await helperSaw('wrong', ourFetch);
  assert.equal(erased, await helperSaw('wrong', gitFetch));
  assert.match(erased, /action=erase\n.*\nusername=alice\npassword=wrong\n/s);
  // Helpers for the URL as well (credential.<url>.helper: every one that covers it, after the
  // plain one), and credential.<url>.useHttpPath, as git's urlmatch with select_all applies them.
  const origin = new URL(url).origin;
  git(cli, ['config', `credential.${origin}.helper`, `!f() { echo "scoped $1" >> ${log}; cat >> ${log}; }; f`]);
  git(cli, ['config', 'credential.http://example.org.helper', `!f() { echo "other $1" >> ${log}; }; f`]);
  git(cli, ['config', `credential.${origin}/repo.git.useHttpPath`, 'true']);
  const scoped = await helperSaw('secret', ourFetch);
  assert.equal(scoped, await helperSaw('secret', gitFetch));
  assert.match(scoped, /scoped store\nprotocol=http\nhost=127\.0\.0\.1:\d+\npath=repo\.git\n/);
  assert.doesNotMatch(scoped, /other/);
  git(cli, ['config', '--remove-section', `credential.${origin}`]);
  git(cli, ['config', '--remove-section', `credential.${origin}/repo.git`]);
  git(cli, ['config', 'credential.helper', logging('wrong')]);
  // clone, outside any repository, takes its helper from the global configuration, as git's.
  const globalConfig = join(dir.path, 'global-config');
  writeFileSync(globalConfig, '[credential]\n\thelper = "!f() { echo username=alice; echo password=secret; }; f"\n');
  const cloned = await runPackwright(dir.path, ['clone', '-q', '--bare', url, 'global.git'], { env: { ...GIT_ENV, GIT_CONFIG_GLOBAL: globalConfig } });
  assert.equal(cloned.status, 0, cloned.stderr);
  const none = await runPackwright(cli, ['ls-remote', url], { env: GIT_ENV });
  assert.notEqual(none.status, 0);
  assert.match(none.stderr, /Authentication failed for/);
});
