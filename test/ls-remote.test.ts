import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer as createHttpServer } from 'node:http';
import { createServer, type AddressInfo } from 'node:net';
import { git, GIT_ENV, makeHistoryRepo, runPackwright, tempDir, type Format } from './helpers/git.js';
import { Repository } from '../src/repo/index.js';
import { createGitHttpHandler, serveGitDaemonConnection } from '../src/serve/index.js';
import { listServerRefs } from '../src/client/index.js';
import { isPackwrightError } from '../src/errors/index.js';

/** packwright serving `repo` over git:// and HTTP on 127.0.0.1 from this process; closed by the returned function. */
async function servers(repo: string): Promise<{ git: string; http: string; close: () => Promise<void> }> {
  const opened: Repository[] = [];
  const open = (): Repository => {
    const r = Repository.openGitDir(repo, { env: GIT_ENV });
    opened.push(r);
    return r;
  };
  const daemon = createServer((socket) => void serveGitDaemonConnection(socket, { repository: open, threads: 1 }));
  const handler = createGitHttpHandler({ repository: (path) => (path === '/repo.git' ? open() : undefined), threads: 1 });
  const http = createHttpServer((req, res) => void handler(req, res));
  await Promise.all([daemon, http].map((s) => new Promise<void>((ok) => s.listen(0, '127.0.0.1', ok))));
  return {
    git: `git://127.0.0.1:${(daemon.address() as AddressInfo).port}${repo}`,
    http: `http://127.0.0.1:${(http.address() as AddressInfo).port}/repo.git`,
    close: async () => {
      http.closeAllConnections();
      await Promise.all([daemon, http].map((s) => new Promise((ok) => s.close(ok))));
      for (const r of opened) r.close();
    },
  };
}

for (const format of ['sha1', 'sha256'] as Format[]) {
  test(`ls-remote and listServerRefs give git ls-remote's lines over a path, file:// with git's upload-pack, git:// and HTTP, protocols 0 and 2 (${format})`, async () => {
    using dir = tempDir();
    const src = makeHistoryRepo(dir.path, format);
    const s = await servers(src);
    try {
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
      const refs = await listServerRefs(s.http, { symrefs: true, peelTags: true, prefixes: ['refs/tags/', 'HEAD'] });
      assert.equal(refs.find((r) => r.ref === 'HEAD')?.target, 'refs/heads/main');
      assert.ok(refs.some((r) => r.ref.startsWith('refs/tags/') && r.peeled !== undefined));
      assert.ok(refs.every((r) => r.ref === 'HEAD' || r.ref.startsWith('refs/tags/')));
    } finally {
      await s.close();
    }
  });
}

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
  await assert.rejects(listServerRefs('ssh://example.invalid/repo.git'), (e) => isPackwrightError(e, 'INVALID_ARGUMENT'));
});
