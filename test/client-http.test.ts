import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer as createHttpServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { connect as netConnect, createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { createHash } from 'node:crypto';
import { CLI, git, GIT_ENV, makeHistoryRepo, runPackwright, tempDir } from './helpers/git.js';
import { cloneBare, fetch, listServerRefs, bypassesProxy } from '../src/client/index.js';
import { createGitHttpHandler } from '../src/serve/index.js';
import { GitConfig } from '../src/config/index.js';
import { urlMatchedValue } from '../src/config/url-match.js';
import { isPackwrightError } from '../src/errors/index.js';
import { Repository } from '../src/repo/index.js';
import { execFileAsync } from './helpers/spawn-client.js';
import { learnChallenge, parseProxyAuthMethod, proxyAuthorizationFor, type ProxyCredentials } from '../src/client/proxy-auth.js';

/** git against a server in this process: asynchronously, or the server could never answer. */
async function gitAsync(cwd: string, args: string[], env: Record<string, string | undefined> = GIT_ENV): Promise<string> {
  return (await execFileAsync('git', args, { cwd, env })).stdout;
}

const TLS = new URL('../../test/fixtures/tls/', import.meta.url).pathname;

async function listen(server: Server): Promise<number> {
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  return (server.address() as AddressInfo).port;
}

async function close(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise((ok) => server.close(ok));
}

/** packwright's smart HTTP handler for `repo` at `/repo.git`, with `front` deciding first (redirects, gzip) and a log of request paths. */
function gitServer(repo: string, front?: (req: IncomingMessage, res: ServerResponse) => boolean): { handle: (req: IncomingMessage, res: ServerResponse) => void; paths: string[]; close: () => void } {
  const opened: Repository[] = [];
  const handler = createGitHttpHandler({
    repository: (path) => {
      if (path !== '/repo.git') return undefined;
      const r = Repository.openGitDir(repo, { env: GIT_ENV });
      opened.push(r);
      return r;
    },
    threads: 1,
  });
  const paths: string[] = [];
  return {
    paths,
    handle: (req, res) => {
      paths.push(`${req.method} ${req.url}`);
      if (front?.(req, res) === true) return;
      void handler(req, res);
    },
    close: () => { for (const r of opened) r.close(); },
  };
}

/** How a test proxy authenticates: Basic (the default), Digest with an algorithm, or both offered. */
interface ProxyAuth {
  basic?: boolean;
  digest?: 'MD5' | 'SHA-256' | 'MD5-sess';
}

/**
 * Whether `header` is user proxyuser's right answer to this proxy for `method` and `target`: the
 * Basic credentials, or a Digest response (RFC 7616, qop auth, this proxy's nonce and opaque)
 * whose uri is the request target, each nonce count used once.
 */
function proxyAuthorized(header: string | undefined, password: string, auth: ProxyAuth, method: string, target: string, counts: Set<string>): boolean {
  if (header === undefined) return false;
  if (auth.basic !== false && header === `Basic ${Buffer.from(`proxyuser:${password}`).toString('base64')}`) return true;
  if (auth.digest === undefined || !header.startsWith('Digest ')) return false;
  const p = new Map([...header.slice(7).matchAll(/(\w+)=(?:"([^"]*)"|([^,\s]*))/g)].map((m) => [m[1] as string, (m[2] ?? m[3]) as string]));
  const h = (text: string): string => createHash(auth.digest?.startsWith('SHA-256') ? 'sha256' : 'md5').update(text).digest('hex');
  if (p.get('username') !== 'proxyuser' || p.get('realm') !== 'test' || p.get('nonce') !== DIGEST_NONCE || p.get('opaque') !== 'op' || p.get('qop') !== 'auth' || p.get('uri') !== target) return false;
  const count = `${p.get('cnonce')}:${p.get('nc')}`;
  if (counts.has(count)) return false;
  counts.add(count);
  let ha1 = h(`proxyuser:test:${password}`);
  if (auth.digest.endsWith('-sess')) ha1 = h(`${ha1}:${DIGEST_NONCE}:${p.get('cnonce')}`);
  return p.get('response') === h(`${ha1}:${DIGEST_NONCE}:${p.get('nc')}:${p.get('cnonce')}:auth:${h(`${method}:${target}`)}`);
}

const DIGEST_NONCE = 'dcd98b7102dd2f0e8b11d0f600bfb0c093';

/**
 * A forward proxy on 127.0.0.1 that reaches 127.0.0.1 only: plain requests in absolute form and
 * CONNECT tunnels, each logged with its Proxy-Authorization; with `password`, requests without
 * the right one (`auth`: Basic, Digest, or either) get 407 and the challenges.
 */
async function proxyServer(password?: string, overTls = false, auth: ProxyAuth = {}): Promise<{ url: string; seen: { method: string; target: string; auth: string | undefined }[]; [Symbol.asyncDispose]: () => Promise<void> }> {
  const seen: { method: string; target: string; auth: string | undefined }[] = [];
  const counts = new Set<string>();
  // A digest's uri is the path, also of a request in absolute form (curl's, and git's through it); host:port for CONNECT.
  const digestUri = (method: string, target: string): string => (method === 'CONNECT' ? target : ((u) => `${u.pathname}${u.search}`)(new URL(target)));
  const refusedAuth = (header: string | undefined, method: string, target: string): boolean => password !== undefined && !proxyAuthorized(header, password, auth, method, digestUri(method, target), counts);
  const refused = (req: IncomingMessage): boolean => refusedAuth(req.headers['proxy-authorization'], req.method ?? '', req.url ?? '');
  const challenges = [
    ...(auth.digest !== undefined ? [`Digest realm="test", qop="auth", nonce="${DIGEST_NONCE}", opaque="op", algorithm=${auth.digest}`] : []),
    ...(auth.basic !== false ? ['Basic realm="test"'] : []),
  ];
  const sockets = new Set<Socket>();
  const handler = (req: IncomingMessage, res: ServerResponse): void => {
    seen.push({ method: req.method ?? '', target: req.url ?? '', auth: req.headers['proxy-authorization'] });
    if (refused(req)) {
      res.writeHead(407, { 'Proxy-Authenticate': challenges }).end();
      return;
    }
    const target = new URL(req.url ?? '');
    if (target.hostname !== '127.0.0.1') {
      res.writeHead(403).end();
      return;
    }
    const headers = { ...req.headers };
    delete headers['proxy-authorization'];
    const upstream = httpRequest({ host: '127.0.0.1', port: target.port, path: `${target.pathname}${target.search}`, method: req.method, headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  };
  const server = overTls ? (createHttpsServer({ key: readFileSync(join(TLS, 'key.pem')), cert: readFileSync(join(TLS, 'cert.pem')) }, handler) as unknown as Server) : createHttpServer(handler);
  // A CONNECT refused with 407 keeps its connection, and the client may ask again on it (curl
  // does; packwright opens another): the next request head is read from the socket here.
  const onConnect = (target: string, authHeader: string | undefined, client: Socket, head: Buffer): void => {
    seen.push({ method: 'CONNECT', target, auth: authHeader });
    const [host, port] = target.split(':');
    if (refusedAuth(authHeader, 'CONNECT', target)) {
      client.write(`HTTP/1.1 407 Proxy Authentication Required\r\n${challenges.map((c) => `Proxy-Authenticate: ${c}\r\n`).join('')}Content-Length: 0\r\n\r\n`);
      let pending = head;
      const more = (chunk: Buffer): void => {
        pending = Buffer.concat([pending, chunk]);
        const end = pending.indexOf('\r\n\r\n');
        if (end < 0) return;
        client.off('data', more);
        const lines = pending.subarray(0, end).toString('latin1').split('\r\n');
        const next = /^CONNECT (\S+) HTTP\/1\.[01]$/.exec(lines[0] ?? '');
        if (next === null) {
          client.end('HTTP/1.1 400 Bad Request\r\n\r\n');
          return;
        }
        const authLine = lines.find((l) => /^proxy-authorization:/i.test(l));
        onConnect(next[1] as string, authLine?.slice(authLine.indexOf(':') + 1).trim(), client, pending.subarray(end + 4));
      };
      client.on('data', more);
      if (head.length > 0) more(Buffer.alloc(0));
      return;
    }
    if (host !== '127.0.0.1') {
      client.end('HTTP/1.1 403 Forbidden\r\n\r\n');
      return;
    }
    const upstream = netConnect(Number(port), '127.0.0.1', () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    sockets.add(upstream).add(client);
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
  };
  server.on('connect', (req: IncomingMessage, client: Socket, head: Buffer) => {
    sockets.add(client);
    onConnect(req.url ?? '', req.headers['proxy-authorization'], client, head);
  });
  const port = await listen(server);
  return {
    url: `${overTls ? 'https' : 'http'}://127.0.0.1:${port}`,
    seen,
    [Symbol.asyncDispose]: async () => {
      for (const s of sockets) s.destroy();
      await close(server);
    },
  };
}

/**
 * A SOCKS4/4a/5 proxy on 127.0.0.1 that reaches 127.0.0.1 only (`localhost` is taken as
 * 127.0.0.1): each connection logged as `<version> <how the target was named> <target>`; with
 * `password`, SOCKS5 clients must give user "socksuser" and it.
 */
async function socksServer(password?: string): Promise<{ port: number; seen: string[]; [Symbol.asyncDispose]: () => Promise<void> }> {
  const seen: string[] = [];
  const sockets = new Set<Socket>();
  const server = createNetServer((client) => {
    sockets.add(client);
    client.on('error', () => client.destroy());
    let buffered = Buffer.alloc(0);
    const waiters: { n: number; ok: (b: Buffer) => void }[] = [];
    const pump = (): void => {
      while (waiters.length > 0 && buffered.length >= (waiters[0] as { n: number }).n) {
        const w = waiters.shift() as { n: number; ok: (b: Buffer) => void };
        const out = buffered.subarray(0, w.n);
        buffered = buffered.subarray(w.n);
        w.ok(out);
      }
    };
    const onData = (chunk: Buffer): void => {
      buffered = Buffer.concat([buffered, chunk]);
      pump();
    };
    client.on('data', onData);
    const read = (n: number): Promise<Buffer> => new Promise((ok) => { waiters.push({ n, ok }); pump(); });
    const readUntilNul = async (): Promise<string> => {
      let text = '';
      for (let b = await read(1); b[0] !== 0; b = await read(1)) text += String.fromCharCode(b[0] as number);
      return text;
    };
    const splice = (host: string, port: number, ok: Buffer, refused: Buffer): void => {
      if (host !== '127.0.0.1' && host !== 'localhost') {
        client.end(refused);
        return;
      }
      const upstream = netConnect(port, '127.0.0.1', () => {
        client.off('data', onData);
        client.write(ok);
        if (buffered.length > 0) upstream.write(buffered);
        upstream.pipe(client);
        client.pipe(upstream);
      });
      sockets.add(upstream);
      upstream.on('error', () => client.destroy());
    };
    void (async () => {
      const [version] = await read(1);
      if (version === 4) {
        const head = await read(7);
        const port = head.readUInt16BE(1);
        const ip = [...head.subarray(3, 7)].join('.');
        await readUntilNul();
        const named = ip.startsWith('0.0.0.') ? await readUntilNul() : undefined;
        seen.push(`4 ${named !== undefined ? 'name' : 'ip'} ${named ?? ip}:${port}`);
        splice(named ?? ip, port, Buffer.from([0, 0x5a, 0, 0, 0, 0, 0, 0]), Buffer.from([0, 0x5b, 0, 0, 0, 0, 0, 0]));
        return;
      }
      const methods = [...(await read((await read(1))[0] as number))];
      if (password !== undefined) {
        if (!methods.includes(2)) {
          client.end(Buffer.from([5, 0xff]));
          return;
        }
        client.write(Buffer.from([5, 2]));
        await read(1);
        const user = (await read((await read(1))[0] as number)).toString();
        const given = (await read((await read(1))[0] as number)).toString();
        const right = user === 'socksuser' && given === password;
        client.write(Buffer.from([1, right ? 0 : 1]));
        if (!right) {
          client.end();
          return;
        }
      } else client.write(Buffer.from([5, 0]));
      const [, , , type] = await read(4);
      let host: string;
      if (type === 1) host = [...(await read(4))].join('.');
      else if (type === 3) host = (await read((await read(1))[0] as number)).toString();
      else {
        client.end(Buffer.from([5, 8, 0, 1, 0, 0, 0, 0, 0, 0]));
        return;
      }
      const port = (await read(2)).readUInt16BE(0);
      seen.push(`5 ${type === 3 ? 'name' : 'ip'} ${host}:${port}`);
      splice(host, port, Buffer.from([5, 0, 0, 1, 127, 0, 0, 1, 0, 0]), Buffer.from([5, 2, 0, 1, 0, 0, 0, 0, 0, 0]));
    })();
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  return {
    port: (server.address() as AddressInfo).port,
    seen,
    [Symbol.asyncDispose]: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((ok) => server.close(ok));
    },
  };
}

/** `repo` served over HTTP and HTTPS (the test certificate) on 127.0.0.1: the two ports, closed on dispose. */
async function servedOverHttpAndHttps(repo: string): Promise<{ port: number; securePort: number; [Symbol.asyncDispose]: () => Promise<void> }> {
  const served = gitServer(repo);
  const http = createHttpServer(served.handle);
  const https = createHttpsServer({ key: readFileSync(join(TLS, 'key.pem')), cert: readFileSync(join(TLS, 'cert.pem')) }, served.handle);
  return {
    port: await listen(http),
    securePort: await listen(https as unknown as Server),
    [Symbol.asyncDispose]: async () => {
      await close(http);
      await close(https as unknown as Server);
      served.close();
    },
  };
}

test('through SOCKS proxies as curl goes (socks5h and socks4a name the host, socks5 and socks4 an address), with a SOCKS5 user and password; git through the same proxy lists the same refs', async () => {
  using dir = tempDir();
  const src = makeHistoryRepo(dir.path, 'sha1', 20);
  await using servers = await servedOverHttpAndHttps(src);
  const { port, securePort } = servers;
  await using socks = await socksServer('sockspass');
  await using open = await socksServer();
  const expected = await gitAsync(dir.path, ['ls-remote', `http://127.0.0.1:${port}/repo.git`]);
  const cases: [string, string, string][] = [
    [`socks5h://socksuser:sockspass@127.0.0.1:${socks.port}`, `http://localhost:${port}/repo.git`, `5 name localhost:${port}`],
    [`socks5://socksuser:sockspass@127.0.0.1:${socks.port}`, `http://127.0.0.1:${port}/repo.git`, `5 ip 127.0.0.1:${port}`],
    [`socks4a://127.0.0.1:${open.port}`, `http://localhost:${port}/repo.git`, `4 name localhost:${port}`],
    [`socks://127.0.0.1:${open.port}`, `http://127.0.0.1:${port}/repo.git`, `4 ip 127.0.0.1:${port}`],
  ];
  for (const [proxy, url, logged] of cases) {
    const server = proxy.includes('socksuser') ? socks : open;
    const before = server.seen.length;
    const ours = await runPackwright(dir.path, ['-c', `http.proxy=${proxy}`, 'ls-remote', url], { env: GIT_ENV });
    assert.equal(ours.status, 0, `${proxy}: ${ours.stderr}`);
    assert.equal(ours.stdout.toString(), expected, proxy);
    assert.deepEqual(server.seen.slice(before).filter((l, i, all) => all.indexOf(l) === i), [logged], proxy);
    // git (curl) through the same proxy: the proxy is right, and so is what came through it.
    assert.equal(await gitAsync(dir.path, ['-c', `http.proxy=${proxy}`, 'ls-remote', url]), expected, `git via ${proxy}`);
  }
  // A whole clone over HTTPS through SOCKS5: TLS to the server inside the proxied connection.
  await cloneBare(`https://localhost:${securePort}/repo.git`, { dir: join(dir.path, 'c.git'), http: { proxy: `socks5h://socksuser:sockspass@127.0.0.1:${socks.port}`, caInfo: join(TLS, 'cert.pem') } });
  assert.equal(git(join(dir.path, 'c.git'), ['for-each-ref']).toString(), git(src, ['for-each-ref']).toString());
  git(join(dir.path, 'c.git'), ['fsck', '--full']);
  // Refusals: a wrong password, a target the proxy will not reach, a proxy that is not there.
  const url = `http://127.0.0.1:${port}/repo.git`;
  await assert.rejects(listServerRefs(url, { http: { proxy: `socks5://socksuser:nope@127.0.0.1:${socks.port}` } }), (e) => isPackwrightError(e, 'CONNECTION_CLOSED') && /refused the user name and password/.test(e.message));
  await assert.rejects(listServerRefs(url, { http: { proxy: `socks5://127.0.0.1:${socks.port}` } }), (e) => isPackwrightError(e, 'CONNECTION_CLOSED') && /user name and password/.test(e.message));
  await assert.rejects(listServerRefs('http://192.0.2.1:9/repo.git', { http: { proxy: `socks5h://127.0.0.1:${open.port}` } }), (e) => isPackwrightError(e, 'CONNECTION_CLOSED') && /connection not allowed by ruleset|general SOCKS server failure/.test(e.message));
  await assert.rejects(listServerRefs('http://192.0.2.1:9/repo.git', { http: { proxy: `socks4://127.0.0.1:${open.port}` } }), (e) => isPackwrightError(e, 'CONNECTION_CLOSED') && /request rejected/.test(e.message));
  await assert.rejects(listServerRefs(url, { http: { proxy: 'socks5://127.0.0.1:1' } }), (e) => isPackwrightError(e, 'CONNECTION_CLOSED'));
});

test('HTTP through a proxy: http.proxy, http_proxy and the library option, with credentials in its URL; no_proxy goes around it; a proxy that wants credentials is a clear error', async () => {
  using dir = tempDir();
  const src = makeHistoryRepo(dir.path, 'sha1', 30);
  const served = gitServer(src);
  const http = createHttpServer(served.handle);
  const port = await listen(http);
  await using proxy = await proxyServer('secret');
  const proxyUrl = `http://proxyuser:secret@127.0.0.1:${new URL(proxy.url).port}`;
  const url = `http://127.0.0.1:${port}/repo.git`;
  try {
    // The library option.
    await cloneBare(url, { dir: join(dir.path, 'a.git'), http: { proxy: proxyUrl } });
    assert.ok(proxy.seen.length >= 2 && proxy.seen.every((r) => r.target.startsWith(`http://127.0.0.1:${port}/repo.git/`)), JSON.stringify(proxy.seen));
    assert.equal(git(join(dir.path, 'a.git'), ['rev-parse', 'main']).toString(), git(src, ['rev-parse', 'main']).toString());
    // http_proxy from the repository's environment for a fetch; no_proxy naming the host goes direct.
    git(src, ['update-ref', 'refs/heads/main', git(src, ['commit-tree', 'main^{tree}', '-p', 'main', '-m', 'more']).toString().trim()]);
    const before = proxy.seen.length;
    await fetch({ dir: join(dir.path, 'a.git'), env: { ...GIT_ENV, no_proxy: 'example.com,127.0.0.1', http_proxy: proxyUrl } });
    assert.equal(proxy.seen.length, before, 'no_proxy: not through the proxy');
    await fetch({ dir: join(dir.path, 'a.git'), env: { ...GIT_ENV, http_proxy: proxyUrl } });
    assert.ok(proxy.seen.length > before, 'http_proxy: through the proxy');
    // HTTP_PROXY in upper case is not read for http (curl's and git's rule), ALL_PROXY is.
    const seenBefore = proxy.seen.length;
    await listServerRefs(url, { env: { HTTP_PROXY: proxyUrl } });
    assert.equal(proxy.seen.length, seenBefore);
    await listServerRefs(url, { env: { ALL_PROXY: proxyUrl } });
    assert.ok(proxy.seen.length > seenBefore);
    // The CLI: -c http.proxy=…; an empty http.<url>.proxy for the server's URL turns it off again.
    const viaCli = proxy.seen.length;
    const cli = await runPackwright(dir.path, ['-c', `http.proxy=${proxyUrl}`, 'ls-remote', url], { env: GIT_ENV });
    assert.equal(cli.status, 0, cli.stderr);
    assert.equal(cli.stdout.toString(), await gitAsync(dir.path, ['ls-remote', url]));
    assert.ok(proxy.seen.length > viaCli);
    const direct = proxy.seen.length;
    const off = await runPackwright(dir.path, ['-c', `http.proxy=${proxyUrl}`, '-c', `http.http://127.0.0.1:${port}/.proxy=`, 'ls-remote', url], { env: GIT_ENV });
    assert.equal(off.status, 0, off.stderr);
    assert.equal(proxy.seen.length, direct);
    // Without its credentials: the proxy's 407, said as such.
    await assert.rejects(listServerRefs(url, { http: { proxy: proxy.url } }), (e) => isPackwrightError(e, 'REQUEST_REFUSED') && /proxy asks for credentials/.test(e.message));
    // Or asked for (git asks its credential helpers for the proxy's URL), again after a refusal.
    const asked: string[] = [];
    const refs = await listServerRefs(url, {
      http: { proxy: proxy.url },
      onAuth: (at, failed) => {
        asked.push(`${at} ${failed?.password ?? '-'}`);
        return { username: 'proxyuser', password: failed === undefined ? 'wrong' : 'secret' };
      },
    });
    assert.deepEqual(asked, [`http://127.0.0.1:${new URL(proxy.url).port} -`, `http://127.0.0.1:${new URL(proxy.url).port} wrong`]);
    assert.ok(refs.some((r) => r.ref === 'refs/heads/main'));
    // A proxy that is not there, and a kind packwright does not speak.
    await assert.rejects(listServerRefs(url, { http: { proxy: 'http://127.0.0.1:1' } }), (e) => isPackwrightError(e, 'CONNECTION_CLOSED'));
    await assert.rejects(listServerRefs(url, { http: { proxy: 'ftp://127.0.0.1:1080' } }), (e) => isPackwrightError(e, 'INVALID_ARGUMENT') && /ftp/.test(e.message));
  } finally {
    await close(http);
    served.close();
  }
  assert.ok(bypassesProxy('a.b.example.com', 'x.org, .example.com'));
  assert.ok(bypassesProxy('example.com', 'example.com'));
  assert.ok(!bypassesProxy('badexample.com', 'example.com'));
  assert.ok(bypassesProxy('anything', '*'));
});

test('a proxy that asks for Digest (MD5, MD5-sess, SHA-256; qop auth) is answered under anyauth, git\'s default, in plain requests and CONNECT tunnels, as git (curl) answers it; basic and digest methods as git reads them; negotiate and ntlm refused', async () => {
  using dir = tempDir();
  const src = makeHistoryRepo(dir.path, 'sha1', 20);
  await using servers = await servedOverHttpAndHttps(src);
  const url = `http://127.0.0.1:${servers.port}/repo.git`;
  const secureUrl = `https://127.0.0.1:${servers.securePort}/repo.git`;
  const refsOf = (text: string): string => text.split('\n').filter((l) => l.includes('\trefs/')).map((l) => `${l}\n`).sort().join('');
  // The test's certificate to trust, for both clients (a GIT_SSL_CAINFO the machine sets would win over -c http.sslCAInfo).
  const env = { ...GIT_ENV, GIT_SSL_CAINFO: join(TLS, 'cert.pem') };
  // What git lists without a proxy.
  const expected = refsOf(await gitAsync(dir.path, ['ls-remote', url]));
  assert.ok(expected.includes('\trefs/heads/main\n'));
  for (const digest of ['MD5', 'MD5-sess', 'SHA-256'] as const) {
    await using proxy = await proxyServer('s3cret', false, { basic: false, digest });
    const proxyUrl = `http://proxyuser:s3cret@127.0.0.1:${new URL(proxy.url).port}`;
    for (const target of [url, secureUrl]) {
      const before = proxy.seen.length;
      const ours = await runPackwright(dir.path, ['-c', `http.proxy=${proxyUrl}`, 'ls-remote', target], { env });
      assert.equal(ours.status, 0, `${digest} ${target}: ${ours.stderr}`);
      assert.equal(refsOf(ours.stdout.toString()), expected, `${digest} ${target}`);
      // The first request carries no password (anyauth waits for the proxy to say which scheme); the next answer its challenge.
      const mine = proxy.seen.slice(before);
      assert.equal(mine[0]?.auth, undefined, `${digest} ${target}`);
      assert.ok(mine.slice(1).length > 0 && mine.slice(1).every((r) => r.auth?.startsWith('Digest ') === true), `${digest} ${target}: ${JSON.stringify(mine)}`);
      // git through the same proxy: the proxy's check is curl's digest too.
      assert.equal(refsOf(await gitAsync(dir.path, ['-c', `http.proxy=${proxyUrl}`, 'ls-remote', target], env)), expected, `git, ${digest} ${target}`);
    }
    // A clone: the advertisement and the POSTs after it answer with one nonce, counting.
    await cloneBare(url, { dir: join(dir.path, `c-${digest}.git`), http: { proxy: proxyUrl } });
    assert.equal(git(join(dir.path, `c-${digest}.git`), ['rev-parse', 'main']).toString(), git(src, ['rev-parse', 'main']).toString());
  }
  // Offered both, anyauth answers the Digest; http.proxyAuthMethod=basic sends Basic at once, which a Digest-only proxy refuses, as it refuses git's.
  await using both = await proxyServer('s3cret', false, { digest: 'MD5' });
  const bothUrl = `http://proxyuser:s3cret@127.0.0.1:${new URL(both.url).port}`;
  await listServerRefs(url, { http: { proxy: bothUrl } });
  assert.ok(both.seen.slice(1).every((r) => r.auth?.startsWith('Digest ') === true), JSON.stringify(both.seen));
  const basicFirst = both.seen.length;
  await listServerRefs(url, { http: { proxy: bothUrl, proxyAuthMethod: 'basic' } });
  assert.ok(both.seen.slice(basicFirst).every((r) => r.auth?.startsWith('Basic ') === true), JSON.stringify(both.seen.slice(basicFirst)));
  await using digestOnly = await proxyServer('s3cret', false, { basic: false, digest: 'SHA-256' });
  const digestOnlyUrl = `http://proxyuser:s3cret@127.0.0.1:${new URL(digestOnly.url).port}`;
  const refused = await runPackwright(dir.path, ['-c', `http.proxy=${digestOnlyUrl}`, '-c', 'http.proxyAuthMethod=basic', 'ls-remote', url], { env: GIT_ENV });
  assert.notEqual(refused.status, 0);
  assert.match(refused.stderr, /the proxy asks for credentials \(407/);
  await assert.rejects(gitAsync(dir.path, ['-c', `http.proxy=${digestOnlyUrl}`, '-c', 'http.proxyAuthMethod=basic', 'ls-remote', url]));
  // GIT_HTTP_PROXY_AUTHMETHOD wins over the configuration, as in git.
  const viaEnv = await runPackwright(dir.path, ['-c', `http.proxy=${digestOnlyUrl}`, '-c', 'http.proxyAuthMethod=basic', 'ls-remote', url], { env: { ...GIT_ENV, GIT_HTTP_PROXY_AUTHMETHOD: 'digest' } });
  assert.equal(viaEnv.status, 0, viaEnv.stderr);
  // What curl has and packwright does not: said before anything is sent.
  const ntlm = await runPackwright(dir.path, ['-c', `http.proxy=${digestOnlyUrl}`, '-c', 'http.proxyAuthMethod=ntlm', 'ls-remote', url], { env: GIT_ENV });
  assert.notEqual(ntlm.status, 0);
  assert.match(ntlm.stderr, /proxyAuthMethod ntlm: packwright authenticates to proxies with basic and digest/);
});

test('proxy challenges: a stale nonce is taken again with the same credentials, a refusal of the scheme already answered needs new ones, auth-int and unknown algorithms are not answered', () => {
  const auth: ProxyCredentials = { username: 'u', password: 'p', scheme: undefined, digest: undefined };
  const challenge = (nonce: string, extra = ''): string => `Digest realm="r", nonce="${nonce}", qop="auth,auth-int"${extra}`;
  assert.equal(learnChallenge(auth, 'anyauth', ['Basic realm="r"', challenge('n1')]), true, 'learned: try again');
  assert.equal(auth.scheme, 'digest');
  const first = proxyAuthorizationFor(auth, 'anyauth', 'GET', '/x')['Proxy-Authorization'] as string;
  const second = proxyAuthorizationFor(auth, 'anyauth', 'GET', '/x')['Proxy-Authorization'] as string;
  assert.match(first, /^Digest username="u", realm="r", nonce="n1", uri="\/x", algorithm=MD5, response="[0-9a-f]{32}", qop=auth, nc=00000001, cnonce="[0-9a-f]+"$/);
  assert.match(second, /nc=00000002/);
  assert.equal(learnChallenge(auth, 'anyauth', [challenge('n1')]), false, 'refused again: new credentials');
  assert.equal(learnChallenge(auth, 'anyauth', [challenge('n2', ', stale=true')]), true, 'stale: the same credentials, the new nonce');
  assert.match(proxyAuthorizationFor(auth, 'anyauth', 'GET', '/x')['Proxy-Authorization'] as string, /nonce="n2".*nc=00000001/);
  // What cannot be answered: only auth-int, an algorithm not spoken; basic alone then.
  const other: ProxyCredentials = { username: 'u', password: 'p', scheme: undefined, digest: undefined };
  assert.equal(learnChallenge(other, 'anyauth', ['Digest realm="r", nonce="n", qop="auth-int"', 'Digest realm="r", nonce="n", algorithm=SHA-512-256', 'Basic realm="r"']), true);
  assert.equal(other.scheme, 'basic');
  assert.deepEqual(proxyAuthorizationFor(other, 'anyauth', 'GET', '/x'), { 'Proxy-Authorization': `Basic ${Buffer.from('u:p').toString('base64')}` });
  // Under digest, a Basic-only proxy offers nothing to answer; under anyauth nothing is sent before a 407; without a user, nothing ever.
  assert.equal(learnChallenge({ ...other, scheme: undefined }, 'digest', ['Basic realm="r"']), false);
  assert.deepEqual(proxyAuthorizationFor({ username: 'u', password: 'p', scheme: undefined, digest: undefined }, 'anyauth', 'GET', '/x'), {});
  assert.deepEqual(proxyAuthorizationFor({ username: '', password: '', scheme: 'basic', digest: undefined }, 'basic', 'GET', '/x'), {});
  assert.equal(parseProxyAuthMethod('Digest'), 'digest');
  assert.equal(parseProxyAuthMethod('bogus'), 'anyauth', 'as git: an unknown method is anyauth');
});

test('HTTPS: the server checked against http.sslCAInfo (else refused), http.sslVerify=false and GIT_SSL_NO_VERIFY skip the check; through a proxy by CONNECT', async () => {
  using dir = tempDir();
  const src = makeHistoryRepo(dir.path, 'sha256', 20);
  const served = gitServer(src);
  const https = createHttpsServer({ key: readFileSync(join(TLS, 'key.pem')), cert: readFileSync(join(TLS, 'cert.pem')) }, served.handle);
  const port = await listen(https as unknown as Server);
  await using proxy = await proxyServer();
  const url = `https://127.0.0.1:${port}/repo.git`;
  const expected = git(src, ['for-each-ref', '--format=%(objectname) %(refname)']).toString().split(/(?<=\n)/).sort().join('');
  const names = async (refs: Promise<{ ref: string; oid: string }[]>): Promise<string> => (await refs).filter((r) => r.ref !== 'HEAD').map((r) => `${r.oid} ${r.ref}\n`).sort().join('');
  try {
    await assert.rejects(listServerRefs(url), (e) => isPackwrightError(e, 'CONNECTION_CLOSED') && /certificate/.test(e.message));
    assert.equal(await names(listServerRefs(url, { http: { caInfo: join(TLS, 'cert.pem') } })), expected);
    assert.equal(await names(listServerRefs(url, { http: { sslVerify: false } })), expected);
    assert.equal(await names(listServerRefs(url, { env: { GIT_SSL_NO_VERIFY: '1' } })), expected);
    // Through the proxy: a CONNECT tunnel to the server, the certificate checked at its end.
    await cloneBare(url, { dir: join(dir.path, 'b.git'), env: { ...GIT_ENV, https_proxy: proxy.url, GIT_SSL_CAINFO: join(TLS, 'cert.pem') } });
    assert.ok(proxy.seen.some((r) => r.method === 'CONNECT' && r.target === `127.0.0.1:${port}`));
    assert.equal(git(join(dir.path, 'b.git'), ['for-each-ref', '--format=%(objectname) %(refname)']).toString(), git(src, ['for-each-ref', '--format=%(objectname) %(refname)']).toString());
    git(join(dir.path, 'b.git'), ['fsck', '--full']);
    // The CLI: http.sslCAInfo from -c (GIT_SSL_CAINFO, which a machine may set, would win, as in git).
    const cli = await runPackwright(dir.path, ['-c', `http.sslCAInfo=${join(TLS, 'cert.pem')}`, 'ls-remote', '--refs', url], { env: { ...GIT_ENV, GIT_SSL_CAINFO: undefined } });
    assert.equal(cli.status, 0, cli.stderr);
    assert.equal(cli.stdout.toString().split('\n').filter((l) => l !== '').map((l) => `${l.replace('\t', ' ')}\n`).sort().join(''), expected);
  } finally {
    await close(https as unknown as Server);
    served.close();
  }
});

test('client certificates as git shows them (http.sslCert and http.sslKey, GIT_SSL_CERT and GIT_SSL_KEY, an encrypted key whose passphrase is asked for cert:///<path>); an https proxy checked against http.proxySSLCAInfo', async () => {
  using dir = tempDir();
  const src = makeHistoryRepo(dir.path, 'sha1', 20);
  const served = gitServer(src);
  const clientCert = join(TLS, 'client-cert.pem');
  const clientKey = join(TLS, 'client-key.pem');
  const encryptedKey = join(TLS, 'client-key-encrypted.pem');
  const caInfo = join(TLS, 'cert.pem');
  const https = createHttpsServer({ key: readFileSync(join(TLS, 'key.pem')), cert: readFileSync(caInfo), requestCert: true, rejectUnauthorized: true, ca: [readFileSync(clientCert)] }, served.handle);
  const port = await listen(https as unknown as Server);
  const url = `https://127.0.0.1:${port}/repo.git`;
  const env = { ...GIT_ENV, GIT_SSL_CAINFO: caInfo };
  const gitWith = async (args: string[]): Promise<string> => (await execFileAsync('git', args, { cwd: dir.path, env })).stdout;
  try {
    // git with the certificate is the answer; without one the server refuses both.
    const expected = await gitWith(['-c', `http.sslCert=${clientCert}`, '-c', `http.sslKey=${clientKey}`, 'ls-remote', url]);
    assert.match(expected, /refs\/heads\/main/);
    await assert.rejects(gitWith(['ls-remote', url]));
    await assert.rejects(listServerRefs(url, { http: { caInfo } }), (e) => isPackwrightError(e, 'CONNECTION_CLOSED'));
    // The library lists refs without their peeled lines.
    const unpeeled = expected.split(/(?<=\n)/).filter((l) => !l.includes('^{}')).join('');
    const lines = (refs: { ref: string; oid: string }[]): string => refs.map((r) => `${r.oid}\t${r.ref}\n`).join('');
    assert.equal(lines(await listServerRefs(url, { http: { caInfo, sslCert: clientCert, sslKey: clientKey } })), unpeeled);
    // The encrypted key: its passphrase from onAuth, asked for the certificate's path; none given, a clear error.
    const asked: string[] = [];
    const withPassphrase = await listServerRefs(url, { http: { caInfo, sslCert: clientCert, sslKey: encryptedKey, sslCertPasswordProtected: true }, onAuth: (at) => { asked.push(at); return { username: '', password: 'fixture' }; } });
    assert.equal(lines(withPassphrase), unpeeled);
    assert.deepEqual(asked, [`cert://${clientCert}`]);
    await assert.rejects(listServerRefs(url, { http: { caInfo, sslCert: clientCert, sslKey: encryptedKey, sslCertPasswordProtected: true } }), (e) => isPackwrightError(e, 'REQUEST_REFUSED') && /encrypted/.test(e.message));
    await assert.rejects(listServerRefs(url, { http: { caInfo, sslCert: clientCert, sslKey: encryptedKey } }), (e) => isPackwrightError(e, 'INVALID_ARGUMENT') && /client certificate/.test(e.message));
    // The CLI: GIT_SSL_CERT and GIT_SSL_KEY; the passphrase from a credential helper, told protocol=cert and the path.
    const cli = await runPackwright(dir.path, ['ls-remote', url], { env: { ...env, GIT_SSL_CERT: clientCert, GIT_SSL_KEY: clientKey } });
    assert.equal(cli.status, 0, cli.stderr);
    assert.equal(cli.stdout.toString(), expected);
    const log = join(dir.path, 'helper.log');
    const helper = `!f() { cat >>${log}; echo password=fixture; }; f`;
    const encrypted = await runPackwright(dir.path, ['-c', `credential.helper=${helper}`, '-c', 'http.sslCertPasswordProtected=true', '-c', `http.sslCert=${clientCert}`, '-c', `http.sslKey=${encryptedKey}`, 'ls-remote', url], { env });
    assert.equal(encrypted.status, 0, encrypted.stderr);
    assert.equal(encrypted.stdout.toString(), expected);
    assert.equal(readFileSync(log, 'utf8'), `protocol=cert\nhost=\npath=${clientCert}\nusername=\n`);
    // An https proxy: TLS to the proxy too, its certificate checked against http.proxySSLCAInfo.
    await using proxy = await proxyServer(undefined, true);
    const plain = createHttpServer(served.handle);
    const plainPort = await listen(plain);
    try {
      const plainUrl = `http://127.0.0.1:${plainPort}/repo.git`;
      await assert.rejects(listServerRefs(plainUrl, { http: { proxy: proxy.url } }), (e) => isPackwrightError(e, 'CONNECTION_CLOSED') && /certificate/.test(e.message));
      assert.equal(lines(await listServerRefs(plainUrl, { http: { proxy: proxy.url, proxyCaInfo: caInfo } })), unpeeled);
      assert.equal(lines(await listServerRefs(url, { http: { proxy: proxy.url, proxyCaInfo: caInfo, caInfo, sslCert: clientCert, sslKey: clientKey } })), unpeeled);
      assert.deepEqual([...new Set(proxy.seen.map((r) => r.method === 'CONNECT' ? `CONNECT ${r.target}` : r.target.replace(/\?.*$/, '')))], [`http://127.0.0.1:${plainPort}/repo.git/info/refs`, `http://127.0.0.1:${plainPort}/repo.git/git-upload-pack`, `CONNECT 127.0.0.1:${port}`]);
    } finally {
      await close(plain);
    }
  } finally {
    await close(https as unknown as Server);
    served.close();
  }
});

test('redirects as git follows them: the first request\'s (the base moves, with a warning), a loop and a redirect git cannot take a base from are clear errors, http.followRedirects=false follows none; gzip answers', async () => {
  using dir = tempDir();
  const src = makeHistoryRepo(dir.path, 'sha1', 20);
  let port = 0;
  let otherPort = 0;
  // What each server was sent as Authorization, by path.
  const authorization: string[] = [];
  const served = gitServer(src, (req, res) => {
    const path = req.url ?? '';
    authorization.push(`${port} ${path} ${req.headers.authorization ?? 'none'}`);
    if (path.startsWith('/away/')) {
      res.writeHead(302, { Location: `http://127.0.0.1:${otherPort}${path.slice(5)}` }).end();
      return true;
    }
    if (path.startsWith('/old/')) {
      res.writeHead(301, { Location: `http://127.0.0.1:${port}${path.slice(4)}` }).end();
      return true;
    }
    if (path.startsWith('/loop/')) {
      res.writeHead(302, { Location: path }).end();
      return true;
    }
    if (path.startsWith('/elsewhere/')) {
      // To the advertisement, but under a URL that does not end as the one asked for.
      res.writeHead(302, { Location: `/repo.git/info/refs?service=git-upload-pack&from=elsewhere` }).end();
      return true;
    }
    if (path.startsWith('/gzip/') && req.method === 'GET') {
      // The advertisement gzipped, as a server may answer git's Accept-Encoding.
      const inner = httpRequest({ host: '127.0.0.1', port, path: path.slice(5), headers: req.headers }, (answer) => {
        const chunks: Buffer[] = [];
        answer.on('data', (c: Buffer) => chunks.push(c));
        answer.on('end', () => {
          res.writeHead(answer.statusCode ?? 500, { 'Content-Type': answer.headers['content-type'] ?? '', 'Content-Encoding': 'gzip' });
          res.end(gzipSync(Buffer.concat(chunks)));
        });
      });
      inner.end();
      return true;
    }
    if (path.startsWith('/gzip/')) req.url = path.slice(5);
    return false;
  });
  const http = createHttpServer(served.handle);
  port = await listen(http);
  const base = `http://127.0.0.1:${port}`;
  const elsewhere = gitServer(src, (req) => {
    authorization.push(`${otherPort} ${req.url ?? ''} ${req.headers.authorization ?? 'none'}`);
    return false;
  });
  const other = createHttpServer(elsewhere.handle);
  otherPort = await listen(other);
  const warnings: string[] = [];
  try {
    // git clone through the same redirect, for the result to compare with.
    await gitAsync(dir.path, ['clone', '-q', '--bare', `${base}/old/repo.git`, join(dir.path, 'theirs.git')]);
    const cli = await runPackwright(dir.path, ['clone', '--bare', `${base}/old/repo.git`, join(dir.path, 'ours.git')], { env: GIT_ENV });
    assert.equal(cli.status, 0, cli.stderr);
    const refs = (at: string): string => git(join(dir.path, at), ['for-each-ref', '--format=%(objectname) %(refname)']).toString();
    assert.equal(refs('ours.git'), refs('theirs.git'));
    // The POSTs went to the new base: no second redirect.
    assert.ok(served.paths.includes('POST /repo.git/git-upload-pack'));
    assert.equal(served.paths.filter((p) => p.startsWith('POST /old/')).length, 0);
    assert.match(cli.stderr, new RegExp(`warning: redirecting to ${base}/repo.git/\n`));
    await listServerRefs(`${base}/old/repo.git`, { onWarning: (message) => warnings.push(message) });
    assert.deepEqual(warnings, [`redirecting to ${base}/repo.git/`]);
    const loop = await runPackwright(dir.path, ['ls-remote', `${base}/loop/repo.git`], { env: GIT_ENV });
    assert.notEqual(loop.status, 0);
    assert.match(loop.stderr, /Maximum \(20\) redirects followed/);
    await assert.rejects(listServerRefs(`${base}/elsewhere/repo.git`), (e) => isPackwrightError(e, 'PROTOCOL_ERROR') && /unable to update url base from redirection/.test(e.message));
    await assert.rejects(listServerRefs(`${base}/old/repo.git`, { http: { followRedirects: 'never' } }), (e) => isPackwrightError(e, 'REQUEST_REFUSED') && /redirected/.test(e.message));
    // A gzipped advertisement is read as git reads it.
    const zipped = await listServerRefs(`${base}/gzip/repo.git`);
    assert.ok(zipped.some((r) => r.ref === 'refs/heads/main'));
    // The credentials of the URL go only where a server asks for them (curl under git's
    // CURLAUTH_ANY): not to this one, which does not, and never to another host.
    authorization.length = 0;
    const away = await listServerRefs(`http://alice:secret@127.0.0.1:${port}/away/repo.git`);
    assert.ok(away.some((r) => r.ref === 'refs/heads/main'));
    assert.deepEqual(authorization.filter((line) => line.startsWith(`${port} `)), [`${port} /away/repo.git/info/refs?service=git-upload-pack none`]);
    const toOther = authorization.filter((line) => line.startsWith(`${otherPort} `));
    assert.ok(toOther.length >= 2 && toOther.every((line) => line.endsWith(' none')), toOther.join('\n'));
  } finally {
    await close(http);
    await close(other);
    served.close();
    elsewhere.close();
  }
});

test('http.<url>.<key> picks the value git\'s urlmatch picks (config --get-urlmatch): longest host, then path, then a user name; later entries win ties', () => {
  using dir = tempDir();
  const file = join(dir.path, 'config');
  writeFileSync(file, [
    '[http]', '\tproxy = all',
    '[http "https://example.com"]', '\tproxy = host',
    '[http "https://example.com/org"]', '\tproxy = org',
    '[http "https://example.com/org/repo.git"]', '\tproxy = repo',
    '[http "https://example.com/or"]', '\tproxy = not-a-segment',
    '[http "https://me@example.com/org"]', '\tproxy = user-org',
    '[http "https://*.example.com"]', '\tproxy = wildcard',
    '[http "https://a.b.example.com"]', '\tproxy = exact-deep',
    '[http "http://example.com"]', '\tproxy = other-scheme',
    '[http "https://example.com:8443"]', '\tproxy = other-port',
    '[http "https://example.com"]', '\tproxy = host-again',
    '',
  ].join('\n'));
  const config = GitConfig.read(file);
  const urls = [
    'https://example.com', 'https://example.com/', 'https://example.com/org', 'https://example.com/org/', 'https://example.com/organ', 'https://example.com/org/repo.git',
    'https://me@example.com/org/x', 'https://you@example.com/org/x', 'https://EXAMPLE.com:443/org/x', 'https://x.example.com/y', 'https://a.b.example.com/', 'https://c.b.example.com/',
    'http://example.com/org', 'https://example.com:8443/org', 'https://other.org/', 'https://example.com/a/../org/./x',
  ];
  for (const url of urls) {
    const r = git(dir.path, ['config', '--file', file, '--get-urlmatch', 'http.proxy', url]).toString().trim();
    assert.equal(urlMatchedValue(config, 'http', 'proxy', url), r, url);
  }
});

test('http.cookieFile and http.saveCookies: the cookies sent and the file written back are curl\'s (git\'s), from a file in Netscape\'s format and Set-Cookie lines, with what the server sets, replaces and deletes', async () => {
  using dir = tempDir();
  const src = makeHistoryRepo(dir.path, 'sha1', 20);
  // Who sent what, per request; the server sets cookies on every answer, more on the first.
  const sent: string[] = [];
  let requests = 0;
  const served = gitServer(src, (req, res) => {
    sent.push(`${req.method} ${(req.url ?? '').replace(/\?.*/, '')} ${req.headers.cookie ?? '-'}`);
    const set = ['name=value', 'exp=3; Expires=Wed, 09 Jun 2100 10:18:14 GMT; HttpOnly'];
    if (requests++ === 0) {
      // Replaces othername (the same path once sanitized), deletes old, is refused (secure over
      // HTTP, another domain, one label), and one for the IP address itself (host-only).
      set.push('othername=new; Path=/repo.git', 'old=; Max-Age=0; Path=/', 'sec=1; Secure', 'far=1; Domain=example.com', 'top=1; Domain=com', 'ip=2; Domain=127.0.0.1; Path=/');
    }
    res.setHeader('Set-Cookie', set);
    return false;
  });
  const server = createHttpServer(served.handle);
  const port = await listen(server);
  const url = `http://127.0.0.1:${port}/repo.git`;
  const start = [
    '# a comment',
    '127.0.0.1\tFALSE\t/repo.git/\tFALSE\t0\tothername\tothervalue',
    '.127.0.0.1\tTRUE\t/\tFALSE\t0\ttail\tt',
    '#HttpOnly_127.0.0.1\tFALSE\t/repo.git\tFALSE\t4102444800\tho\th',
    '127.0.0.1\tFALSE\t/\tFALSE\t0\told\tgoes',
    '127.0.0.1\tFALSE\t/\tFALSE\t1000\texpired\tlong ago',
    '127.0.0.1\tFALSE\t/elsewhere\tFALSE\t0\tnot\there',
    'Set-Cookie: hdr=1',
    '',
  ].join('\n');
  try {
    const run = async (who: 'git' | 'packwright'): Promise<{ file: string; sent: string[] }> => {
      const file = join(dir.path, `cookies-${who}.txt`);
      writeFileSync(file, start);
      sent.length = 0;
      requests = 0;
      const config = ['-c', `http.cookieFile=${file}`, '-c', 'http.saveCookies=true'];
      if (who === 'git') await gitAsync(dir.path, [...config, 'ls-remote', url]);
      else assert.equal((await runPackwright(dir.path, [...config, 'ls-remote', url])).status, 0);
      return { file: readFileSync(file, 'utf8'), sent: [...sent] };
    };
    const theirs = await run('git');
    const ours = await run('packwright');
    // The file is read again before each request (git sets curl's COOKIEFILE on every handle it
    // takes): the cookie an answer deleted comes back from it, the one an answer set stays.
    assert.ok(theirs.sent.length >= 2 && theirs.sent[0]?.includes('othername=othervalue; ho=h') && (theirs.sent[1] ?? '').includes('othername=new') && (theirs.sent[1] ?? '').includes('old=goes'), theirs.sent.join('\n'));
    assert.deepEqual(ours.sent, theirs.sent);
    assert.equal(ours.file, theirs.file);
    assert.match(theirs.file, /\tothername\tnew\n/);
  } finally {
    await close(server);
    served.close();
  }
});

test('a push over HTTP goes as git\'s remote-curl sends it: with its length while it fits http.postBuffer, else chunked after a "0000" probe, which also settles credentials a server asks only of the push; -v -v says which', async () => {
  using dir = tempDir();
  const history = makeHistoryRepo(dir.path, 'sha1', 20);
  const main = git(history, ['rev-parse', 'main']).toString().trim();
  // What reached the server: each request's method, path, how its body was framed, and whether it carried credentials.
  const log: string[] = [];
  const opened: Repository[] = [];
  let served = '';
  const handler = createGitHttpHandler({
    repository: (path) => {
      if (path !== '/repo.git') return undefined;
      const r = Repository.openGitDir(served, { env: GIT_ENV });
      opened.push(r);
      return r;
    },
    threads: 1,
    // The advertisement is open; the push itself wants user u.
    authorize: (service, _repo, _path, request) => service === 'upload-pack' || !request.path.endsWith('/git-receive-pack') || request.headers?.['authorization'] === `Basic ${Buffer.from('u:p').toString('base64')}`
      ? true : { refuse: 401, headers: [['WWW-Authenticate', 'Basic realm="push"']] },
  });
  const server = createHttpServer((req, res) => {
    log.push(`${req.method} ${(req.url ?? '').replace(/\?.*/, '')} ${req.headers['content-length'] !== undefined ? 'length' : req.headers['transfer-encoding'] ?? 'none'} ${req.headers.authorization !== undefined ? 'auth' : '-'}`);
    void handler(req, res);
  });
  const port = await listen(server);
  const helper = ['-c', 'credential.helper=!f() { test "$1" = get && echo username=u && echo password=p; }; f'];
  try {
    for (const postBuffer of [undefined, '4']) {
      const run = async (who: 'git' | 'packwright'): Promise<{ log: string[]; lines: string[] }> => {
        served = join(dir.path, `served-${who}-${postBuffer ?? 'default'}.git`);
        git(dir.path, ['clone', '-q', '--bare', history, served]);
        git(served, ['update-ref', 'refs/heads/main', `${main}~8`]);
        log.length = 0;
        const config = [...helper, ...(postBuffer !== undefined ? ['-c', `http.postBuffer=${postBuffer}`] : [])];
        const args = [...config, 'push', '-v', '-v', `http://127.0.0.1:${port}/repo.git`, 'main'];
        const stderr = who === 'git'
          ? (await execFileAsync('git', args, { cwd: history, env: GIT_ENV })).stderr
          : (await runPackwright(history, args)).stderr;
        assert.equal(git(served, ['rev-parse', 'main']).toString().trim(), main, `${who} pushed`);
        return { log: [...log], lines: stderr.split('\n').filter((l) => l.startsWith('POST ')) };
      };
      const theirs = await run('git');
      const ours = await run('packwright');
      const what = `http.postBuffer ${postBuffer ?? 'default'}`;
      assert.deepEqual(ours.log, theirs.log, what);
      // The sizes of the packs differ (packwright's deltas are its own), not the framing.
      assert.deepEqual(ours.lines.map((l) => l.replace(/\d+ bytes/, 'N bytes')), theirs.lines.map((l) => l.replace(/\d+ bytes/, 'N bytes')), what);
      assert.match(theirs.lines.join('\n'), postBuffer === undefined ? /^POST git-receive-pack \(\d+ bytes\)$/m : /^POST git-receive-pack \(chunked\)$/m);
      if (postBuffer !== undefined) assert.ok(theirs.log.some((l) => l.startsWith('POST /repo.git/git-receive-pack chunked auth')), theirs.log.join('\n'));
    }
  } finally {
    await close(server);
    for (const r of opened) r.close();
  }
});

test('GIT_TRACE_CURL and GIT_CURL_VERBOSE show the headers git shows, Authorization and cookie values redacted unless GIT_TRACE_REDACT=0; Accept-Language from LANGUAGE as git sends it', async () => {
  using dir = tempDir();
  const src = makeHistoryRepo(dir.path, 'sha1', 20);
  const basic = `Basic ${Buffer.from('u:secret').toString('base64')}`;
  const served = gitServer(src, (req, res) => {
    if (req.headers.authorization !== basic) {
      res.writeHead(401, { 'WWW-Authenticate': 'Basic realm="t"' }).end();
      return true;
    }
    return false;
  });
  const server = createHttpServer(served.handle);
  const port = await listen(server);
  const cookies = join(dir.path, 'cookies');
  writeFileSync(cookies, 'Set-Cookie: Foo=1\nSet-Cookie: Bar=\n');
  const url = `http://u:secret@127.0.0.1:${port}/repo.git`;
  try {
    for (const [name, extra] of [['trace', { GIT_TRACE_CURL: '' }], ['verbose', { GIT_CURL_VERBOSE: '1' }], ['unredacted', { GIT_TRACE_CURL: '', GIT_TRACE_REDACT: '0' }]] as const) {
      const shown = async (who: 'git' | 'packwright'): Promise<string[]> => {
        const file = join(dir.path, `trace-${who}-${name}`);
        const env = { ...GIT_ENV, ...extra, LANGUAGE: 'ko_KR.UTF-8:en', ...('GIT_TRACE_CURL' in extra ? { GIT_TRACE_CURL: file } : {}) };
        const args = ['-c', `http.cookieFile=${cookies}`, 'ls-remote', url];
        let stderr: string;
        // GIT_CURL_VERBOSE writes to the process's own stderr: packwright's is a process here too.
        if (who === 'git') stderr = (await execFileAsync('git', args, { cwd: dir.path, env })).stderr;
        else stderr = (await execFileAsync(process.execPath, [CLI, ...args], { cwd: dir.path, env })).stderr;
        const text = 'GIT_TRACE_CURL' in extra ? readFileSync(file, 'utf8') : stderr;
        return text.split('\n').filter((l) => /=> Send header: (Authorization|Cookie|Accept-Language):/i.test(l)).map((l) => l.replace(/^.*=> Send header: /, ''));
      };
      // The same headers in all (the order within a request is curl's own, not compared).
      const theirs = (await shown('git')).sort();
      const ours = (await shown('packwright')).sort();
      assert.deepEqual(ours, theirs, name);
      assert.ok(theirs.includes('Accept-Language: ko-KR, en;q=0.9, *;q=0.8'), theirs.join('\n'));
      assert.ok(theirs.includes(name === 'unredacted' ? `Authorization: ${basic}` : 'Authorization: Basic <redacted>'), theirs.join('\n'));
      assert.ok(theirs.some((l) => l === (name === 'unredacted' ? 'Cookie: Bar=; Foo=1' : 'Cookie: Bar=<redacted>; Foo=<redacted>')), theirs.join('\n'));
    }
  } finally {
    await close(server);
    served.close();
  }
});

test('http.userAgent and GIT_HTTP_USER_AGENT name the client as git\'s do; http.lowSpeedLimit with http.lowSpeedTime gives up on a server that trickles, as git does', async () => {
  using dir = tempDir();
  const src = makeHistoryRepo(dir.path, 'sha1', 20);
  const agents: string[] = [];
  const served = gitServer(src, (req, res) => {
    agents.push(req.headers['user-agent'] ?? '-');
    if ((req.url ?? '').startsWith('/slow/')) {
      // The advertisement's first line, then a byte every 300 ms: under 1000 bytes a second.
      res.writeHead(200, { 'Content-Type': 'application/x-git-upload-pack-advertisement' });
      res.write('001e# service=git-upload-pack\n0000');
      const drip = setInterval(() => res.write('0'), 300);
      res.on('close', () => clearInterval(drip));
      return true;
    }
    return false;
  });
  const server = createHttpServer(served.handle);
  const port = await listen(server);
  const url = `http://127.0.0.1:${port}/repo.git`;
  try {
    for (const [args, env] of [[['-c', 'http.userAgent=custom/1.0'], {}], [['-c', 'http.userAgent=custom/1.0'], { GIT_HTTP_USER_AGENT: 'from-env/2' }]] as const) {
      agents.length = 0;
      await gitAsync(dir.path, [...args, 'ls-remote', url], { ...GIT_ENV, ...env });
      const theirs = [...new Set(agents)];
      agents.length = 0;
      const r = await runPackwright(dir.path, [...args, 'ls-remote', url], { env: { ...GIT_ENV, ...env } });
      assert.equal(r.status, 0, r.stderr);
      assert.deepEqual([...new Set(agents)], theirs);
      assert.deepEqual(theirs, ['GIT_HTTP_USER_AGENT' in env ? 'from-env/2' : 'custom/1.0']);
    }
    const slow = ['-c', 'http.lowSpeedLimit=1000', '-c', 'http.lowSpeedTime=1', 'ls-remote', `http://127.0.0.1:${port}/slow/repo.git`];
    const started = Date.now();
    await assert.rejects(gitAsync(dir.path, slow), 'git gives up');
    const r = await runPackwright(dir.path, slow);
    assert.notEqual(r.status, 0);
    assert.match(r.stderr, /Operation too slow\. Less than 1000 bytes\/sec transferred the last 1 seconds/);
    assert.ok(Date.now() - started < 15_000, 'both gave up within seconds');
  } finally {
    await close(server);
    served.close();
  }
});

test('a deepening fetch checks its tips whole before it writes the new boundary: a server that unshallows a commit and sends nothing is refused, the repository left consistent, as git\'s fetch', async () => {
  using dir = tempDir();
  const src = join(dir.path, 'src');
  git(dir.path, ['init', '-q', '-b', 'main', src]);
  for (const m of ['one', 'two', 'three']) git(src, ['-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '--allow-empty', '-m', m]);
  const head = git(src, ['rev-parse', 'HEAD']).toString().trim();
  const parent = git(src, ['rev-parse', 'HEAD^']).toString().trim();
  // Once armed, the next fetch answer (the second POST: ls-refs comes first) says "unshallow
  // HEAD^" where it said "shallow HEAD" (git's t5537 does this with its one-time perl script).
  let posts = 0;
  let armed = false;
  const served = gitServer(join(src, '.git'), (req, res) => {
    if (!armed || req.method !== 'POST' || ++posts < 2) return false;
    armed = false;
    const chunks: Buffer[] = [];
    const write = res.write.bind(res);
    const end = res.end.bind(res);
    // Held until the end, then sent changed; a writer waiting for each write's callback gets it.
    type Done = ((error?: Error | null) => void) | undefined;
    res.write = ((chunk: Buffer | string, encoding?: BufferEncoding | Done, done?: Done) => {
      chunks.push(Buffer.from(chunk));
      (typeof encoding === 'function' ? encoding : done)?.();
      return true;
    }) as typeof res.write;
    res.end = ((chunk?: Buffer | string | Done, encoding?: BufferEncoding | Done, done?: Done) => {
      if (chunk !== undefined && typeof chunk !== 'function') chunks.push(Buffer.from(chunk));
      // The pkt-line with or without its newline (git's server writes none): two bytes longer.
      const body = Buffer.concat(chunks).toString('latin1').replace(new RegExp(`003([45])shallow ${head}(\n?)`), (_, d: string, nl: string) => `003${Number(d) + 2}unshallow ${parent}${nl}`);
      write(Buffer.from(body, 'latin1'));
      end();
      (typeof chunk === 'function' ? chunk : typeof encoding === 'function' ? encoding : done)?.();
      return res;
    }) as typeof res.end;
    return false;
  });
  const server = createHttpServer(served.handle);
  const port = await listen(server);
  const url = `http://127.0.0.1:${port}/repo.git`;
  try {
    for (const who of ['git', 'packwright'] as const) {
      const client = join(dir.path, `client-${who}`);
      git(dir.path, ['init', '-q', client]);
      const run = async (args: string[]): Promise<number> => (who === 'git'
        ? execFileAsync('git', args, { cwd: client, env: GIT_ENV }).then(() => 0, (e: { code: number }) => e.code)
        : (await runPackwright(client, args)).status);
      assert.equal(await run(['-c', 'protocol.version=2', 'fetch', '-q', '--depth=2', url, 'main:a_branch']), 0, who);
      armed = true;
      posts = 0;
      assert.notEqual(await run(['-c', 'protocol.version=2', 'fetch', '-q', '--depth=1', url, 'main:a_branch']), 0, `${who}: the second fetch fails`);
      assert.equal(armed, false, 'the answer was rewritten');
      git(client, ['fsck', '--no-dangling']);
      assert.equal(readFileSync(join(client, '.git/shallow'), 'utf8'), `${parent}\n`, `${who}: the boundary stays`);
    }
  } finally {
    await close(server);
    served.close();
  }
});
