import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { CLI, git, GIT_ENV, makeHistoryRepo, runPackwright, tempDir, type Format } from './helpers/git.js';
import { execFileAsync, execGit } from './helpers/spawn-client.js';
import { Repository } from '../src/repo/index.js';
import { createGitHttpHandler, type SmartHttpOptions } from '../src/serve/index.js';
import { encodePacket } from '../src/protocol/index.js';
import { readFileSync, writeFileSync } from 'node:fs';


async function gitAsync(cwd: string, args: string[]): Promise<string> {
  return (await execFileAsync('git', args, { cwd, env: GIT_ENV, maxBuffer: 1 << 28 })).stdout;
}

/** An HTTP server on 127.0.0.1 serving `repos` (URL path → git directory) with packwright's handler; it records when each request's handling ended. */
async function httpServer(repos: Record<string, string>, pushable: boolean | SmartHttpOptions['authorize'] = false): Promise<{ base: string; ended: number[]; errors: string[]; [Symbol.asyncDispose]: () => Promise<void> }> {
  const opened = new Map<string, Repository>();
  const errors: string[] = [];
  const ended: number[] = [];
  const handler = createGitHttpHandler({
    repository: (path) => {
      const dir = repos[path];
      if (dir === undefined) return undefined;
      let repo = opened.get(dir);
      if (repo === undefined) opened.set(dir, (repo = Repository.openGitDir(dir, { env: GIT_ENV })));
      return repo;
    },
    authorize: typeof pushable === 'function' ? pushable : (service) => service === 'upload-pack' || pushable,
    threads: 1,
    onStderr: (text) => void errors.push(text),
  });
  const server: Server = createServer((req, res) => void handler(req, res).then(() => ended.push(Date.now())));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    ended,
    errors,
    [Symbol.asyncDispose]: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      for (const repo of opened.values()) repo.close();
    },
  };
}

/** Refs, shallow boundary and objects of a repository. */
function state(repo: string): string {
  return git(repo, ['show-ref']).toString() + git(repo, ['cat-file', '--batch-all-objects', '--batch-check']).toString();
}

for (const format of ['sha1', 'sha256'] as Format[]) {
  test(`git clones and fetches over smart HTTP from packwright's handler equal git's own (${format}, protocols 0 and 2)`, async () => {
    using dir = tempDir();
    const src = makeHistoryRepo(dir.path, format);
    git(dir.path, ['clone', '-q', '--bare', src, join(dir.path, 'src.git')]);
    const origin = join(dir.path, 'src.git');
    await using server = await httpServer({ '/src.git': origin });
    for (const version of [0, 2]) {
      for (const [name, options] of [['bare', ['--bare']], ['shallow', ['--depth=2', '--bare']]] as const) {
        const ours = join(dir.path, `${name}-${version}-pw`);
        const theirs = join(dir.path, `${name}-${version}-git`);
        await Promise.all([
          gitAsync(dir.path, ['-c', `protocol.version=${version}`, 'clone', '-q', ...options, `${server.base}/src.git`, ours]),
          gitAsync(dir.path, ['-c', `protocol.version=${version}`, 'clone', '-q', '--no-local', ...options, `file://${origin}`, theirs]),
        ]);
        git(ours, ['fsck', '--full', '--no-dangling']);
        assert.equal(state(ours), state(theirs), `${name} v${version}`);
      }
    }
    // New history, then an incremental fetch that negotiates over several stateless requests.
    const clone = join(dir.path, 'bare-2-pw');
    git(origin, ['update-ref', 'refs/heads/main', git(origin, ['commit-tree', 'main^{tree}', '-p', 'main', '-p', 'topic', '-m', 'merge']).toString().trim()]);
    await gitAsync(clone, ['-c', 'protocol.version=2', 'fetch', '-q', 'origin', '+refs/heads/*:refs/heads/*']);
    git(clone, ['fsck', '--full', '--no-dangling']);
    assert.equal(git(clone, ['rev-parse', 'main']).toString(), git(origin, ['rev-parse', 'main']).toString());
    assert.deepEqual(server.errors, []);
  });
}

/** One raw HTTP request to the server; its status, headers and body. */
function raw(url: string, options: { method?: string; headers?: Record<string, string>; body?: Buffer }): Promise<{ status: number; headers: IncomingMessage['headers']; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: options.method ?? 'GET', headers: options.headers ?? {} }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

test('smart HTTP requests git refuses get git http-backend\'s statuses; a gzip request body is read', async () => {
  using dir = tempDir();
  const repo = makeHistoryRepo(dir.path, 'sha1');
  await using server = await httpServer({ '/r.git': repo });
  const base = `${server.base}/r.git`;
  assert.equal((await raw(`${server.base}/nothing.git/info/refs?service=git-upload-pack`, {})).status, 404);
  assert.equal((await raw(`${base}/info/refs`, {})).status, 403, 'the dumb protocol');
  assert.equal((await raw(`${base}/objects/info/packs`, {})).status, 403, 'the dumb protocol');
  assert.equal((await raw(`${base}/info/refs?service=git-receive-pack`, {})).status, 403, 'no pushes');
  assert.equal((await raw(`${base}/info/refs?service=git-bogus`, {})).status, 403);
  const wrongMethod = await raw(`${base}/git-upload-pack`, {});
  assert.equal(wrongMethod.status, 405);
  assert.equal(wrongMethod.headers['allow'], 'POST');
  const wrongType = await raw(`${base}/git-upload-pack`, { method: 'POST', headers: { 'Content-Type': 'text/plain' }, body: Buffer.from('0000') });
  assert.equal(wrongType.status, 415);
  assert.match(wrongType.body.toString(), /Expected POST with Content-Type 'application\/x-git-upload-pack-request', but received 'text\/plain' instead/);
  // v2 ls-refs in a gzip body, as git's client sends large requests.
  const lsRefs = Buffer.from(`${encodePacket('command=ls-refs\n').toString()}${encodePacket('object-format=sha1\n').toString()}0001${encodePacket('peel\n').toString()}0000`);
  const plain = await raw(`${base}/git-upload-pack`, { method: 'POST', headers: { 'Content-Type': 'application/x-git-upload-pack-request', 'Git-Protocol': 'version=2' }, body: lsRefs });
  const gzipped = await raw(`${base}/git-upload-pack`, { method: 'POST', headers: { 'Content-Type': 'application/x-git-upload-pack-request', 'Content-Encoding': 'gzip', 'Git-Protocol': 'version=2' }, body: gzipSync(lsRefs) });
  assert.equal(plain.status, 200);
  assert.equal(plain.headers['content-type'], 'application/x-git-upload-pack-result');
  assert.equal(gzipped.body.toString(), plain.body.toString());
  assert.match(plain.body.toString(), /refs\/heads\/main/);
  const advertisement = await raw(`${base}/info/refs?service=git-upload-pack`, {});
  assert.equal(advertisement.headers['content-type'], 'application/x-git-upload-pack-advertisement');
  assert.equal(advertisement.headers['cache-control'], 'no-cache, max-age=0, must-revalidate');
  assert.match(advertisement.body.toString(), /^001e# service=git-upload-pack\n0000/);
});

test('a client that goes away in the middle of a pack: its request ends within a second', async () => {
  using dir = tempDir();
  const repo = join(dir.path, 'big.git');
  git(dir.path, ['init', '-q', '--bare', repo]);
  // 12 MiB that does not compress: more than the sockets can buffer.
  const blobs = [0, 1, 2].map((i) => {
    const path = join(dir.path, `blob-${i}`);
    writeFileSync(path, randomBytes(4 << 20));
    return git(repo, ['hash-object', '-w', path]).toString().trim();
  });
  const tree = git(repo, ['mktree'], blobs.map((id, i) => `100644 blob ${id}\tfile-${i}\n`).join('')).toString().trim();
  git(repo, ['update-ref', 'refs/heads/main', git(repo, ['commit-tree', tree, '-m', 'big'], '').toString().trim()]);
  git(repo, ['repack', '-adq']);
  await using server = await httpServer({ '/big.git': repo });
  const tip = git(repo, ['rev-parse', 'main']).toString().trim();
  const body = Buffer.from(`${encodePacket('command=fetch\n').toString()}${encodePacket('object-format=sha1\n').toString()}0001${encodePacket(`want ${tip}\n`).toString()}${encodePacket('done\n').toString()}0000`);
  const left = await new Promise<number>((resolve, reject) => {
    const req = request(`${server.base}/big.git/git-upload-pack`, { method: 'POST', headers: { 'Content-Type': 'application/x-git-upload-pack-request', 'Git-Protocol': 'version=2' } }, (res) => {
      res.once('data', () => {
        // Read one chunk, stop reading (the server's writes back up), then go away.
        res.pause();
        setTimeout(() => {
          req.destroy();
          resolve(Date.now());
        }, 100);
      });
    });
    req.on('error', () => {});
    req.once('error', reject);
    req.end(body);
  });
  const deadline = left + 1000;
  while (server.ended.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  assert.equal(server.ended.length, 1, 'the request was still being answered a second after its client left');
  assert.ok((server.ended[0] as number) - left < 1000);
});

test('packwright http-backend answers as git http-backend (CGI): headers and body of the advertisement, refusals', async () => {
  using dir = tempDir();
  const repo = makeHistoryRepo(dir.path, 'sha1');
  const cgi = (query: string, extra: Record<string, string> = {}): Record<string, string | undefined> => ({
    ...process.env, GIT_PROJECT_ROOT: dir.path, PATH_INFO: `/${repo.slice(dir.path.length + 1)}/info/refs`, REQUEST_METHOD: 'GET',
    QUERY_STRING: query, GIT_HTTP_EXPORT_ALL: '1', GIT_USER_AGENT: 'FAKE', GIT_CONFIG_NOSYSTEM: '1', ...extra,
  });
  for (const protocol of [{}, { HTTP_GIT_PROTOCOL: 'version=2' }]) {
    const env = cgi('service=git-upload-pack', protocol);
    const ours = await runPackwright(dir.path, ['http-backend'], { env });
    const theirs = execGit(['http-backend'], { env, cwd: dir.path });
    assert.equal(ours.status, 0, ours.stderr);
    assert.equal(ours.stdout.toString('latin1'), theirs.toString('latin1'));
  }
  // Not exported: 404, as git's.
  const hidden = { ...cgi('service=git-upload-pack'), GIT_HTTP_EXPORT_ALL: undefined };
  assert.match((await runPackwright(dir.path, ['http-backend'], { env: hidden })).stdout.toString(), /^Status: 404 Not Found\r\n/);
  assert.match(execGit(['http-backend'], { env: hidden, cwd: dir.path }).toString(), /^Status: 404 Not Found\r\n/);
  assert.match((await runPackwright(dir.path, ['http-backend'], { env: cgi('service=git-receive-pack') })).stdout.toString(), /^Status: 403 Forbidden\r\n/);
});

test('packwright serve: prints its URL on 127.0.0.1, serves a clone, and stops by itself after --max-requests', async () => {
  using dir = tempDir();
  const repo = makeHistoryRepo(dir.path, 'sha1');
  const child = spawn(process.execPath, [CLI, 'serve', '--max-requests=3', '--idle-timeout=20', repo], { stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<number>((resolve) => child.once('exit', (code) => resolve(code ?? 128)));
  const url = await new Promise<string>((resolve) => child.stdout.once('data', (d: Buffer) => resolve(d.toString().trim())));
  assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/history-sha1\.git$/);
  // v2: the capabilities, ls-refs and fetch: three requests.
  await gitAsync(dir.path, ['-c', 'protocol.version=2', 'clone', '-q', '--bare', url, join(dir.path, 'clone.git')]);
  assert.equal(await exited, 0);
  git(join(dir.path, 'clone.git'), ['fsck', '--full', '--no-dangling']);
  assert.equal(git(join(dir.path, 'clone.git'), ['rev-parse', 'main']).toString(), git(repo, ['rev-parse', 'main']).toString());
});

for (const format of ['sha1', 'sha256'] as Format[]) {
  test(`git pushes over smart HTTP to packwright's handler as to git's receive-pack (${format}): refs, reflogs, objects; a refused update in git's words`, async () => {
    using dir = tempDir();
    const src = makeHistoryRepo(dir.path, format);
    const make = (name: string): string => {
      const path = join(dir.path, name);
      git(dir.path, ['init', '-q', '--bare', `--object-format=${format}`, path]);
      git(path, ['config', 'core.logAllRefUpdates', 'true']);
      git(path, ['config', 'receive.denyNonFastForwards', 'true']);
      return path;
    };
    const ours = make('pushed-pw.git');
    const theirs = make('pushed-git.git');
    await using server = await httpServer({ '/pushed.git': ours }, true);
    const full = (repo: string): string => state(repo) + git(repo, ['for-each-ref', '--format=%(refname)']).toString().split('\n').filter((r) => r !== '').map((r) => git(repo, ['reflog', 'show', '--format=%H %gs', r, '--']).toString()).join('');
    for (const [version, refspecs] of [[0, ['main~10:refs/heads/main', 'topic:refs/heads/topic']], [2, ['main:refs/heads/main', '--tags']], [0, ['+main~3:refs/heads/main']]] as const) {
      const push = (url: string): Promise<string> => execFileAsync('git', ['-c', `protocol.version=${version}`, 'push', '--porcelain', url, ...refspecs], { cwd: src, env: GIT_ENV }).then((r) => r.stdout, (e: { stdout: string }) => `failed\n${e.stdout}`);
      const [a, b] = await Promise.all([push(`file://${theirs}`), push(`${server.base}/pushed.git`)]);
      const lines = (out: string): string => out.split('\n').filter((l) => !l.startsWith('To ')).join('\n');
      assert.equal(lines(b), lines(a), refspecs.join(' '));
      assert.equal(full(ours), full(theirs), refspecs.join(' '));
    }
    assert.match(git(ours, ['for-each-ref']).toString(), /refs\/tags\//);
    git(ours, ['fsck', '--full', '--no-dangling']);
    assert.deepEqual(server.errors, []);
  });
}

test('a host\'s authorize callback: 401 makes git ask for credentials, which it checks in the request\'s headers; the pusher it names is in the reflog', async () => {
  using dir = tempDir();
  const src = makeHistoryRepo(dir.path, 'sha1');
  const target = join(dir.path, 'guarded.git');
  git(dir.path, ['init', '-q', '--bare', target]);
  git(target, ['config', 'core.logAllRefUpdates', 'true']);
  const seen: string[] = [];
  await using server = await httpServer({ '/guarded.git': target }, (service, _repo, _path, request) => {
    if (service === 'upload-pack') return true;
    const auth = request.headers?.['authorization'];
    seen.push(typeof auth === 'string' ? auth.split(' ')[0] as string : 'none');
    if (auth === undefined) return { refuse: 401, headers: [['WWW-Authenticate', 'Basic realm="git"']] };
    const [user, password] = Buffer.from(String(auth).replace(/^Basic /, ''), 'base64').toString().split(':');
    return user === 'pat' && password === 'secret' ? { pusher: { name: 'Pat Pusher', email: 'pat@example.com' } } : { refuse: 403, message: 'wrong password' };
  });
  const url = (credentials: string): string => server.base.replace('http://', `http://${credentials}@`) + '/guarded.git';
  const push = (credentials: string): Promise<{ ok: boolean; stderr: string }> => execFileAsync('git', ['-c', 'credential.helper=', 'push', url(credentials), 'main:refs/heads/main'], { cwd: src, env: { ...GIT_ENV, GIT_TERMINAL_PROMPT: '0', GIT_ASKPASS: '/bin/false' } }).then(() => ({ ok: true, stderr: '' }), (e: { stderr: string }) => ({ ok: false, stderr: e.stderr }));
  const refused = await push('pat:wrong');
  assert.equal(refused.ok, false);
  assert.equal(git(target, ['for-each-ref']).toString(), '');
  assert.ok((await push('pat:secret')).ok);
  assert.equal(git(target, ['rev-parse', 'main']).toString(), git(src, ['rev-parse', 'main']).toString());
  assert.match(readFileSync(join(target, 'logs', 'refs', 'heads', 'main'), 'utf8'), /^0{40} [0-9a-f]{40} Pat Pusher <pat@example\.com> \d+ [+-]\d{4}\tpush\n$/);
  assert.ok(seen.includes('none') && seen.includes('Basic'), seen.join());
});
