import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { git, GIT_ENV, makeHistoryRepo, runPackwright, tempDir, type Format } from './helpers/git.js';
import { cloneBare } from '../src/client/index.js';
import { isPackwrightError } from '../src/errors/index.js';
import { packwrightServers } from './helpers/servers.js';
import { encodePacket, FLUSH_PACKET } from '../src/protocol/index.js';
import { Readable } from 'node:stream';
import { Repository } from '../src/repo/index.js';
import { readPackHeader, receiveObjects } from '../src/transfer/index.js';
import { execFileAsync } from './helpers/spawn-client.js';


/** What a bare clone leaves that git would leave the same: the files git writes, the refs, every object. */
function state(repo: string): string {
  const files = ['config', 'HEAD', 'packed-refs', 'description', 'info/exclude'].map((f) => `${f}:\n${existsSync(join(repo, f)) ? readFileSync(join(repo, f), 'utf8') : '(none)'}`).join('\n');
  return `${files}\nrefs:\n${git(repo, ['for-each-ref']).toString()}objects:\n${git(repo, ['cat-file', '--batch-all-objects', '--batch-check']).toString()}`;
}

for (const format of ['sha1', 'sha256'] as Format[]) {
  test(`clone --bare, --mirror and --no-checkout leave what git's leave (${format}): from a path, file:// with git's upload-pack, git:// and HTTP served by packwright`, async () => {
    using dir = tempDir();
    const src = makeHistoryRepo(dir.path, format);
    await using servers = await packwrightServers(src, GIT_ENV);
    const urls = [src, `file://${src}`, servers.git, servers.http];
    for (const [i, url] of urls.entries()) {
      const theirs = join(dir.path, `git-${i}.git`);
      const ours = join(dir.path, `pw-${i}.git`);
      await execFileAsync('git', ['clone', '-q', '--bare', '--no-local', url, theirs], { env: GIT_ENV });
      const extra = url.startsWith('file://') ? ['--upload-pack=git-upload-pack'] : [];
      const r = await runPackwright(dir.path, ['clone', '--bare', '-q', ...extra, url, ours], { env: GIT_ENV });
      assert.equal(r.status, 0, r.stderr);
      assert.equal(state(ours), state(theirs), url);
      git(ours, ['fsck', '--full', '--no-dangling']);
    }
    // --mirror: every ref under refs/ (a note and a pull request's here), and the mirroring remote.
    git(src, ['update-ref', 'refs/pull/1/head', 'main~1']);
    git(src, ['update-ref', 'refs/notes/commits', 'main']);
    await execFileAsync('git', ['clone', '-q', '--mirror', '--no-local', urls[2] as string, join(dir.path, 'git-mirror.git')], { env: GIT_ENV });
    const mirrored = await runPackwright(dir.path, ['clone', '--mirror', '-q', urls[2] as string, join(dir.path, 'pw-mirror.git')], { env: GIT_ENV });
    assert.equal(mirrored.status, 0, mirrored.stderr);
    assert.equal(state(join(dir.path, 'pw-mirror.git')), state(join(dir.path, 'git-mirror.git')));
    assert.match(readFileSync(join(dir.path, 'pw-mirror.git', 'packed-refs'), 'utf8'), /refs\/pull\/1\/head/);
    // Without --bare: the repository in <dir>/.git, the branches as origin's, the HEAD branch made
    // and tracking, the reflogs; no checkout (git clone --no-checkout leaves the same).
    await execFileAsync('git', ['clone', '-q', '--no-checkout', urls[3] as string, join(dir.path, 'git-work')], { env: GIT_ENV });
    const work = await runPackwright(dir.path, ['clone', '-q', '--no-checkout', urls[3] as string, join(dir.path, 'pw-work')], { env: GIT_ENV });
    assert.equal(work.status, 0, work.stderr);
    const files = ['HEAD', 'refs/heads/main', 'refs/remotes/origin/HEAD', 'logs/HEAD', 'logs/refs/heads/main', 'logs/refs/remotes/origin/HEAD'];
    for (const f of files) assert.equal(readFileSync(join(dir.path, 'pw-work', '.git', f), 'utf8'), readFileSync(join(dir.path, 'git-work', '.git', f), 'utf8'), f);
    assert.equal(state(join(dir.path, 'pw-work', '.git')), state(join(dir.path, 'git-work', '.git')));
  });
}

/**
 * A smart-HTTP server (protocol v2) on 127.0.0.1 that has `main` at `tip` and answers every fetch
 * with `pack()` on band 1, whatever was asked: for clients facing a server that sends what it likes.
 */
async function packServer(tip: string, pack: () => Buffer): Promise<{ url: string; close(): Promise<void> }> {
  const http = createHttpServer((req, res) => {
    if (req.url?.includes('info/refs') === true) {
      res.setHeader('Content-Type', 'application/x-git-upload-pack-advertisement');
      res.end(Buffer.concat([encodePacket('version 2\n'), encodePacket('object-format=sha1\n'), encodePacket('ls-refs\n'), encodePacket('fetch=shallow\n'), FLUSH_PACKET]));
      return;
    }
    res.setHeader('Content-Type', 'application/x-git-upload-pack-result');
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString('latin1')));
    req.on('end', () => {
      if (body.includes('command=ls-refs')) {
        res.end(Buffer.concat([encodePacket(`${tip} refs/heads/main\n`), FLUSH_PACKET]));
        return;
      }
      const bytes = pack();
      const bands: Buffer[] = [];
      for (let at = 0; at < bytes.length; at += 65515) bands.push(encodePacket(Buffer.concat([Buffer.from([1]), bytes.subarray(at, at + 65515)])));
      res.end(Buffer.concat([encodePacket('packfile\n'), ...bands, FLUSH_PACKET]));
    });
  });
  await new Promise<void>((ok) => http.listen(0, '127.0.0.1', ok));
  return { url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/x.git`, close: () => new Promise<void>((ok) => http.close(() => ok())) };
}

test('a clone that fails leaves nothing behind, and refuses a destination that is not empty', async () => {
  using dir = tempDir();
  const src = makeHistoryRepo(dir.path, 'sha1');
  const busy = join(dir.path, 'busy');
  mkdirSync(busy);
  writeFileSync(join(busy, 'file'), 'x');
  await assert.rejects(cloneBare(src, { dir: busy }), (e) => isPackwrightError(e, 'INVALID_ARGUMENT'));
  assert.ok(existsSync(join(busy, 'file')));
  // A server that sends a broken pack (a header of no object, and no trailer: cut short): nothing is
  // left where the clone was to go.
  const server = await packServer('1'.repeat(40), () => Buffer.concat([Buffer.from('PACK'), Buffer.from([0, 0, 0, 2, 0, 0, 0, 0])]));
  try {
    const dest = join(dir.path, 'broken.git');
    await assert.rejects(cloneBare(server.url, { dir: dest }), (e) => isPackwrightError(e, 'PACK_TRUNCATED'));
    assert.equal(existsSync(dest), false);
  } finally {
    await server.close();
  }
});

test('a clone trusts a pack that names only what it holds (git\'s check_self_contained_and_connected), and walks one that does not', async () => {
  using dir = tempDir();
  const src = makeHistoryRepo(dir.path, 'sha1', 20);
  const main = git(src, ['rev-parse', 'main']).toString().trim();
  const listed = git(src, ['rev-list', '--objects', 'main']).toString().trim().split('\n').map((l) => l.slice(0, 40));
  const blob = listed.find((id) => git(src, ['cat-file', '-t', id]).toString().trim() === 'blob') as string;
  const packOf = (ids: string[]): Buffer => git(src, ['pack-objects', '--stdout', '-q'], `${ids.join('\n')}\n`);
  const whole = packOf(listed);
  const lacking = packOf(listed.filter((id) => id !== blob));
  // The receiving side alone. As git's index-pack with --check-self-contained-and-connected: a
  // link to an object that is nowhere fails the pack; one the repository has makes it not
  // self-contained.
  const receive = async (pack: Buffer, name: string, has: string[] = []): Promise<boolean | undefined> => {
    const to = join(dir.path, name);
    git(dir.path, ['init', '-q', '--bare', to]);
    for (const id of has) git(to, ['hash-object', '-w', '--stdin'], git(src, ['cat-file', 'blob', id]));
    const repo = Repository.openGitDir(to);
    try {
      const { header, rest } = await readPackHeader(Readable.from([pack]));
      return (await receiveObjects(repo, header, rest, { unpackLimit: 0, checkSelfContained: true })).selfContained;
    } finally {
      repo.close();
    }
  };
  assert.equal(await receive(whole, 'r-whole.git'), true);
  await assert.rejects(receive(lacking, 'r-lacking.git'), (e) => isPackwrightError(e, 'OBJECT_NOT_FOUND') && e.message === `did not receive expected object ${blob}`);
  assert.equal(await receive(lacking, 'r-has-blob.git', [blob]), false);
  // A clone of each, over HTTP (protocol v2) from a server that answers with that pack.
  let pack = whole;
  const server = await packServer(main, () => pack);
  try {
    const url = server.url;
    await cloneBare(url, { dir: join(dir.path, 'whole.git') });
    git(join(dir.path, 'whole.git'), ['fsck', '--full', '--no-dangling']);
    pack = lacking;
    const dest = join(dir.path, 'lacking.git');
    await assert.rejects(cloneBare(url, { dir: dest }), (e) => isPackwrightError(e, 'OBJECT_NOT_FOUND'));
    assert.equal(existsSync(dest), false);
  } finally {
    await server.close();
  }
});
