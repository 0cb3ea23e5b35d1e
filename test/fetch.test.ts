import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { git, GIT_ENV, makeHistoryRepo, runPackwright, tempDir, type Format } from './helpers/git.js';
import { ansiTerminal, RemoteMessages } from '../src/cli/remote-messages.js';
import { packwrightServers } from './helpers/servers.js';
import { fetch } from '../src/client/index.js';
import { isPackwrightError } from '../src/errors/index.js';
import { DELIM_PACKET, encodePacket, FLUSH_PACKET } from '../src/protocol/index.js';
import { execFileAsync, spawnGit } from './helpers/spawn-client.js';


/** What a fetch leaves that git's would leave the same: refs, reflogs, FETCH_HEAD, and the objects. */
function state(work: string): string {
  const gitDir = join(work, '.git');
  const logs = (dir: string, rel = ''): string[] => readdirSync(join(dir, rel), { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? logs(dir, join(rel, e.name)) : [`${join(rel, e.name)}:\n${readFileSync(join(dir, rel, e.name), 'utf8')}`]));
  return [
    git(work, ['for-each-ref']).toString(),
    existsSync(join(gitDir, 'packed-refs')) ? readFileSync(join(gitDir, 'packed-refs'), 'utf8') : '',
    logs(join(gitDir, 'logs')).sort().join(''),
    readFileSync(join(gitDir, 'FETCH_HEAD'), 'utf8'),
    git(work, ['cat-file', '--batch-all-objects', '--batch-check']).toString(),
  ].join('\n');
}

/** A server's repository (a mirror of the history fixture) at `<dir>/src.git`, and a clone of it at `<dir>/<work>`. */
function serverAndClone(dir: string, format: Format, work: string): { src: string; work: string } {
  const src = join(dir, 'src.git');
  git(dir, ['clone', '-q', '--mirror', makeHistoryRepo(dir, format), src]);
  git(dir, ['clone', '-q', '--no-checkout', src, join(dir, work)]);
  return { src, work: join(dir, work) };
}

/** The server's history moved on: new commits and an annotated tag on main, a branch rewritten, one deleted, one made. */
function moveOn(src: string): void {
  const commit = (parent: string, msg: string): string => git(src, ['commit-tree', `${parent}^{tree}`, '-p', parent, '-m', msg]).toString().trim();
  const tip = commit(commit('main', 'one more'), 'two more');
  git(src, ['update-ref', 'refs/heads/main', tip]);
  git(src, ['tag', '-a', '-m', 'next', 'v2.0', tip]);
  git(src, ['update-ref', 'refs/heads/topic', commit('topic~1', 'rewritten')]);
  git(src, ['update-ref', '-d', 'refs/heads/oct-a']);
  git(src, ['update-ref', 'refs/heads/new', 'main~1']);
}

/** A server (a mirror of the history repository) and two clones of it: one for packwright, one for git. */
function sideBySide(dir: string, clone = true): { src: string; ours: string; theirs: string } {
  const src = join(dir, 'src.git');
  git(dir, ['clone', '-q', '--mirror', makeHistoryRepo(dir, 'sha1'), src]);
  const ours = join(dir, 'ours');
  if (clone) git(dir, ['clone', '-q', '--no-checkout', src, ours]);
  else git(dir, ['init', '-q', ours]);
  return { src, ours, theirs: join(dir, 'theirs') };
}

/** packwright in `ours` and git in `theirs` run with `args`: their exit statuses and output. */
async function bothRun(ours: string, theirs: string, args: string[], env: Record<string, string | undefined>): Promise<{ ours: { status: number; stdout: string; stderr: string }; git: { status: number; stdout: string; stderr: string } }> {
  const a = await runPackwright(ours, args, { env });
  const b = await execFileAsync('git', args, { cwd: theirs, env }).then((r) => ({ status: 0, ...r }), (e: { code: number; stdout: string; stderr: string }) => ({ status: e.code, stdout: e.stdout, stderr: e.stderr }));
  return { ours: { status: a.status, stdout: a.stdout.toString(), stderr: a.stderr }, git: b };
}

for (const format of ['sha1', 'sha256'] as Format[]) {
  test(`fetch --prune leaves what git fetch leaves, and says it in git's words (${format}; SHA-1 from a path, HTTP served by packwright and git's upload-pack, SHA-256 over git://)`, async () => {
    using dir = tempDir();
    const { src, work: base } = serverAndClone(dir.path, format, 'base');
    moveOn(src);
    await using servers = await packwrightServers(src, GIT_ENV);
    const urls = format === 'sha1' ? [src, servers.http, `file://${src}`] : [servers.git];
    for (const [i, url] of urls.entries()) {
      const theirs = join(dir.path, `git-${i}`);
      const ours = join(dir.path, `pw-${i}`);
      cpSync(base, theirs, { recursive: true });
      cpSync(base, ours, { recursive: true });
      for (const d of [theirs, ours]) git(d, ['remote', 'set-url', 'origin', url]);
      // Asynchronously: the HTTP server answering it is in this process.
      const extra = url.startsWith('file://') ? ['--upload-pack=git-upload-pack'] : [];
      const gitSays = (await execFileAsync('git', ['fetch', '--prune', ...extra, 'origin'], { cwd: theirs, env: GIT_ENV })).stderr;
      const r = await runPackwright(ours, ['fetch', '--prune', ...extra, 'origin'], { env: GIT_ENV });
      assert.equal(r.status, 0, r.stderr);
      assert.equal(r.stderr, gitSays, url);
      assert.match(r.stderr, /- \[deleted\] +\(none\) +-> origin\/oct-a\n/);
      const [a, b] = [state(ours).split('\n\n'), state(theirs).split('\n\n')];
      for (const [k, part] of a.entries()) assert.equal(part, b[k], `${url}: part ${k}`);
      git(ours, ['fsck', '--full', '--no-dangling']);
    }
  });
}

test('fetch --prune that cannot rewrite packed-refs deletes nothing and fails as git\'s (delete_refs), and still fetches', async () => {
  using dir = tempDir();
  const { src, work: base } = serverAndClone(dir.path, 'sha1', 'base');
  // A loose stale ref: git's prune rewrites packed-refs all the same, through packed-refs.new.
  git(base, ['update-ref', 'refs/remotes/origin/extra', 'HEAD']);
  writeFileSync(join(base, '.git', 'packed-refs.new'), '');
  moveOn(src);
  const [theirs, ours] = [join(dir.path, 'theirs'), join(dir.path, 'ours')];
  for (const d of [theirs, ours]) cpSync(base, d, { recursive: true });
  const gitSays = await execFileAsync('git', ['fetch', '--prune', 'origin'], { cwd: theirs, env: GIT_ENV }).then(() => ({ code: 0, stderr: '' }), (e: { code: number; stderr: string }) => e);
  const r = await runPackwright(ours, ['fetch', '--prune', 'origin'], { env: GIT_ENV });
  assert.deepEqual([r.status, gitSays.code], [1, 1]);
  // git names the file relative to where it runs; packwright names it whole.
  const same = (text: string): string => text.replace(/\S*packed-refs\.new/g, 'packed-refs.new');
  assert.equal(same(r.stderr), same(gitSays.stderr));
  assert.match(r.stderr, /^error: could not delete references: unable to create file \S+packed-refs\.new: File exists\nerror: could not delete references: \n/);
  assert.ok(existsSync(join(ours, '.git', 'refs', 'remotes', 'origin', 'extra')), 'nothing pruned');
  const [a, b] = [state(ours).split('\n\n'), state(theirs).split('\n\n')];
  for (const [k, part] of a.entries()) assert.equal(part, b[k], `part ${k}`);
});

test('fetch offers its history in rounds and gets only what it lacks; refuses a non-fast-forward without +, and a tag that would be clobbered', async () => {
  using dir = tempDir();
  const { src, work } = serverAndClone(dir.path, 'sha1', 'work');
  // 300 local commits the server never saw: the negotiation must get past them to what is common.
  const local = Array.from({ length: 300 }, (_, i) => `commit refs/heads/local\ncommitter L <l@example.com> ${1800000000 + i} +0000\ndata 4\nl${String(i).padStart(3, '0')}\n${i === 0 ? 'from refs/heads/main\n' : ''}`).join('');
  git(work, ['fast-import', '--quiet'], local);
  moveOn(src);
  const expected = git(src, ['rev-list', '--objects', 'refs/heads/main', 'refs/heads/topic', 'refs/heads/new', 'refs/tags/v2.0', '--not', 'main~2', 'topic~1']).toString().trim().split('\n').length;
  const result = await fetch({ dir: work, env: GIT_ENV, refspecs: ['+refs/heads/*:refs/remotes/origin/*'] });
  assert.equal(result.objects, expected);
  assert.deepEqual(result.refs.filter((r) => r.status !== 'up-to-date').map((r) => `${r.status} ${r.localRef}`).sort(), [
    'fast-forward refs/remotes/origin/main', 'forced refs/remotes/origin/topic', 'new refs/remotes/origin/new', 'new refs/tags/v2.0',
  ]);
  // Without `+`, a rewritten branch is refused; a moved tag likewise, unless forced.
  const commit = (parent: string): string => git(src, ['commit-tree', `${parent}^{tree}`, '-p', parent, '-m', 'again']).toString().trim();
  git(src, ['update-ref', 'refs/heads/topic', commit('topic~1')]);
  git(src, ['tag', '-f', '-a', '-m', 'moved', 'v2.0', 'main~1']);
  const refused = await runPackwright(work, ['fetch', 'origin', 'refs/heads/topic:refs/remotes/origin/topic', 'refs/tags/v2.0:refs/tags/v2.0'], { env: GIT_ENV });
  assert.equal(refused.status, 1);
  assert.match(refused.stderr, / ! \[rejected\] +topic +-> origin\/topic  \(non-fast-forward\)\n/);
  assert.match(refused.stderr, / ! \[rejected\] +v2.0 +-> v2.0  \(would clobber existing tag\)\n/);
  const forced = await runPackwright(work, ['fetch', '--force', 'origin', 'refs/tags/v2.0:refs/tags/v2.0'], { env: GIT_ENV });
  assert.equal(forced.status, 0, forced.stderr);
  assert.match(forced.stderr, / t \[tag update\] +v2.0 +-> v2.0\n/);
  assert.equal(git(work, ['rev-parse', 'v2.0']).toString(), git(src, ['rev-parse', 'v2.0']).toString());
  // A tag object fetched to a branch (`v2.0:tagged` makes refs/heads/tagged): no branch may name
  // anything but a commit, so that ref is not written; the rest is, and both say it as git does.
  const theirs = join(dir.path, 'theirs');
  cpSync(work, theirs, { recursive: true });
  const ours = await runPackwright(work, ['fetch', 'origin', 'refs/tags/v2.0:tagged', 'main:refs/remotes/origin/other'], { env: GIT_ENV });
  const gits = await execFileAsync('git', ['fetch', 'origin', 'refs/tags/v2.0:tagged', 'main:refs/remotes/origin/other'], { cwd: theirs, env: GIT_ENV }).then(() => assert.fail('git writes no tag to a branch'), (e: { code: number; stderr: string }) => e);
  assert.equal(ours.status, gits.code);
  assert.equal(ours.stderr, gits.stderr);
  assert.match(ours.stderr, /error: cannot update ref 'refs\/heads\/tagged': trying to write non-commit object [0-9a-f]{40} to branch 'refs\/heads\/tagged'\n/);
  assert.equal(git(work, ['for-each-ref']).toString(), git(theirs, ['for-each-ref']).toString());
  // --negotiation-tip that names nothing, or an object not here: the fetch ends before it starts, in git's words.
  for (const tip of ['0'.repeat(40), 'no-such-ref']) {
    const refusedTip = await runPackwright(work, ['fetch', `--negotiation-tip=${tip}`, 'origin'], { env: GIT_ENV });
    const gitRefused = await execFileAsync('git', ['fetch', `--negotiation-tip=${tip}`, 'origin'], { cwd: theirs, env: GIT_ENV }).then(() => assert.fail(`git takes ${tip}`), (e: { code: number; stderr: string }) => e);
    assert.equal(refusedTip.status, gitRefused.code, tip);
    assert.equal(refusedTip.stderr, gitRefused.stderr, tip);
  }
  // An object id that no ref names (a tag's commit, which v0 advertises only peeled): a v0 server
  // that does not allow it is not asked (GIT_TEST_PROTOCOL_VERSION as git reads it); v2 asks.
  const peeled = git(src, ['commit-tree', 'main^{tree}', '-p', 'main', '-m', 'tagged only']).toString().trim();
  git(src, ['tag', '-a', '-m', 'peeled only', 'peeled-only', peeled]);
  const v0 = await runPackwright(work, ['fetch', 'origin', peeled], { env: { ...GIT_ENV, GIT_TEST_PROTOCOL_VERSION: '0' } });
  assert.notEqual(v0.status, 0);
  assert.match(v0.stderr, new RegExp(`Server does not allow request for unadvertised object ${peeled}\n$`));
  await assert.rejects(execFileAsync('git', ['fetch', 'origin', peeled], { cwd: theirs, env: { ...GIT_ENV, GIT_TEST_PROTOCOL_VERSION: '0' } }), /Server does not allow request for unadvertised object/);
  const v2 = await runPackwright(work, ['fetch', 'origin', peeled], { env: GIT_ENV });
  assert.equal(v2.status, 0, v2.stderr);
  assert.match(readFileSync(join(work, '.git', 'FETCH_HEAD'), 'utf8'), new RegExp(`^${peeled}\t\t`));
});

test('a server that cuts its pack short, or names objects its pack lacks: fetch fails, refs and FETCH_HEAD unchanged, nothing left in the pack directory', async () => {
  using dir = tempDir();
  const src = makeHistoryRepo(dir.path, 'sha1');
  const work = join(dir.path, 'work');
  git(dir.path, ['clone', '-q', '--no-checkout', src, work]);
  const lie = '1'.repeat(40);
  const header = Buffer.from([0x50, 0x41, 0x43, 0x4b, 0, 0, 0, 2, 0, 0, 0, 0]);
  // An empty pack, complete with its trailer, and the same pack cut before the trailer.
  const emptyPack = Buffer.concat([header, createHash('sha1').update(header).digest()]);
  for (const [pack, code] of [[header, 'PACK_TRUNCATED'], [emptyPack, 'OBJECT_NOT_FOUND']] as const) {
    const server = createServer((req, res) => {
      if (req.url?.includes('info/refs') === true) {
        res.setHeader('Content-Type', 'application/x-git-upload-pack-advertisement');
        res.end(Buffer.concat([encodePacket('version 2\n'), encodePacket('object-format=sha1\n'), encodePacket('ls-refs\n'), encodePacket('fetch\n'), FLUSH_PACKET]));
        return;
      }
      let body = '';
      req.on('data', (d: Buffer) => (body += d.toString('latin1')));
      req.on('end', () => {
        res.setHeader('Content-Type', 'application/x-git-upload-pack-result');
        if (body.includes('command=ls-refs')) res.end(Buffer.concat([encodePacket(`${lie} refs/heads/main\n`), FLUSH_PACKET]));
        else {
          // Before `done`, the acknowledgments and `ready`; then the pack.
          const acks = body.includes('0009done\n') ? [] : [encodePacket('acknowledgments\n'), encodePacket('ready\n'), DELIM_PACKET];
          res.end(Buffer.concat([...acks, encodePacket('packfile\n'), encodePacket(Buffer.concat([Buffer.from([1]), pack])), FLUSH_PACKET]));
        }
      });
    });
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
    try {
      git(work, ['remote', 'set-url', 'origin', `http://127.0.0.1:${(server.address() as AddressInfo).port}/x.git`]);
      const before = git(work, ['for-each-ref']).toString();
      await assert.rejects(fetch({ dir: work, env: GIT_ENV }), (e) => isPackwrightError(e, code));
      assert.equal(git(work, ['for-each-ref']).toString(), before);
      assert.equal(existsSync(join(work, '.git', 'FETCH_HEAD')), false);
      const packDir = join(work, '.git', 'objects', 'pack');
      assert.deepEqual(readdirSync(packDir).filter((f) => !/^pack-[0-9a-f]{40}\.(pack|idx|rev)$/.test(f)), []);
    } finally {
      await new Promise((ok) => server.close(ok));
    }
  }
});

test('a server that stops answering: fetch gives up after idleTimeoutMs, before the answer and in the middle of it, with refs unchanged', async () => {
  using dir = tempDir();
  const work = join(dir.path, 'work');
  git(dir.path, ['clone', '-q', '--no-checkout', makeHistoryRepo(dir.path, 'sha1'), work]);
  const open = new Set<import('node:http').ServerResponse>();
  for (const stall of ['before', 'during'] as const) {
    const server = createServer((req, res) => {
      open.add(res);
      if (req.url?.includes('info/refs') === true) {
        res.setHeader('Content-Type', 'application/x-git-upload-pack-advertisement');
        // The advertisement's start, then (`during`) nothing more; or (`before`) all of it, and the request that follows never answered.
        if (stall === 'during') res.write(encodePacket('version 2\n'));
        else res.end(Buffer.concat([encodePacket('version 2\n'), encodePacket('object-format=sha1\n'), encodePacket('ls-refs\n'), encodePacket('fetch\n'), FLUSH_PACKET]));
      }
    });
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
    try {
      git(work, ['remote', 'set-url', 'origin', `http://127.0.0.1:${(server.address() as AddressInfo).port}/x.git`]);
      const before = git(work, ['for-each-ref']).toString();
      const started = Date.now();
      await assert.rejects(fetch({ dir: work, env: GIT_ENV, idleTimeoutMs: 300 }), (e) => isPackwrightError(e, 'CONNECTION_CLOSED') && /stopped answering/.test(String(e)));
      assert.ok(Date.now() - started < 1500, stall);
      assert.equal(git(work, ['for-each-ref']).toString(), before);
    } finally {
      for (const res of open) res.destroy();
      server.closeAllConnections();
      await new Promise((ok) => server.close(ok));
    }
  }
});

test("the server's progress shown as git's demultiplex_sideband shows it, whatever the packets' bounds", () => {
  const shown = (packets: string[], terminal: boolean): string => {
    let out = '';
    const says = new RemoteMessages((text) => (out += text), terminal);
    for (const p of packets) says.text(p);
    says.end();
    return out;
  };
  const whole = 'Counting objects:  50% (1/2)\rCounting objects: 100% (2/2)\rCounting objects: 100% (2/2), done.\nTotal 2 (delta 0)\n';
  const expected = 'remote: Counting objects:  50% (1/2)        \rremote: Counting objects: 100% (2/2)        \rremote: Counting objects: 100% (2/2), done.        \nremote: Total 2 (delta 0)        \n';
  assert.equal(shown([whole], false), expected);
  // Cut anywhere, even at a line's break: one `remote: ` a line, the same screen.
  for (let cut = 1; cut < whole.length; cut++) assert.equal(shown([whole.slice(0, cut), whole.slice(cut)], false), expected, `cut at ${cut}`);
  // A terminal clears to the end of the line; a final '\n' after '\r' updates gets no suffix; an unended line is ended.
  assert.equal(shown(['Resolving: 1%\r', 'Resolving: 100%\r', '\n', 'bye'], true), 'remote: Resolving: 1%\x1b[K\rremote: Resolving: 100%\x1b[K\rremote: \nremote: bye\n');
  assert.equal(ansiTerminal(true, { TERM: 'xterm' }), true);
  assert.equal(ansiTerminal(true, { TERM: 'dumb' }), false);
  assert.equal(ansiTerminal(true, {}), false);
  assert.equal(ansiTerminal(false, { TERM: 'xterm' }), false);
});

test("git's older remotes files: $GIT_DIR/remotes/<name> (URL, Pull, Push lines) and $GIT_DIR/branches/<name> (URL#branch), for fetch and push as git reads them", async () => {
  using dir = tempDir();
  const { src, ours, theirs } = sideBySide(dir.path, false);
  const gitDir = join(ours, '.git');
  mkdirSync(join(gitDir, 'remotes'), { recursive: true });
  writeFileSync(join(gitDir, 'remotes', 'old'), `URL: ${src}\nPull: refs/heads/main:refs/heads/from-main\nPull: refs/heads/topic:refs/heads/from-topic\nPush: refs/heads/from-main:refs/heads/pushed-by-remotes\n`);
  mkdirSync(join(gitDir, 'branches'), { recursive: true });
  writeFileSync(join(gitDir, 'branches', 'older'), `${src}#topic\n`);
  cpSync(ours, theirs, { recursive: true });
  for (const name of ['old', 'older']) {
    const a = await runPackwright(ours, ['fetch', name], { env: GIT_ENV });
    assert.equal(a.status, 0, a.stderr);
    const b = await execFileAsync('git', ['fetch', name], { cwd: theirs, env: GIT_ENV });
    assert.equal(a.stderr, b.stderr, name);
    assert.equal(readFileSync(join(gitDir, 'FETCH_HEAD'), 'utf8'), readFileSync(join(theirs, '.git', 'FETCH_HEAD'), 'utf8'), name);
  }
  assert.equal(git(ours, ['for-each-ref']).toString(), git(theirs, ['for-each-ref']).toString());
  assert.match(git(ours, ['for-each-ref', '--format=%(refname)']).toString(), /refs\/heads\/older\n/);
  // Push: remotes/ sends what its Push lines say; branches/ sends HEAD to its branch.
  git(ours, ['symbolic-ref', 'HEAD', 'refs/heads/from-main']);
  assert.equal((await runPackwright(ours, ['push', '-q', 'old'], { env: GIT_ENV })).status, 0);
  assert.equal(git(src, ['rev-parse', 'pushed-by-remotes']).toString(), git(ours, ['rev-parse', 'from-main']).toString());
  const moved = git(ours, ['commit-tree', 'from-main^{tree}', '-p', 'from-topic', '-m', 'on topic']).toString().trim();
  git(ours, ['update-ref', 'refs/heads/from-main', moved]);
  const pushed = await runPackwright(ours, ['push', 'older'], { env: GIT_ENV });
  assert.equal(pushed.status, 0, pushed.stderr);
  assert.match(pushed.stderr, / {3}[0-9a-f]+\.\.[0-9a-f]+ +HEAD -> topic\n/);
  assert.equal(git(src, ['rev-parse', 'topic']).toString().trim(), moved);
});

test('fetch --all, --multiple and remote groups: skipFetchAll honoured, a remote that fails named and the rest still fetched, arguments git refuses refused', async () => {
  using dir = tempDir();
  const { src, ours, theirs } = sideBySide(dir.path, false);
  git(ours, ['remote', 'add', 'bad', join(dir.path, 'no-such-repository')]);
  git(ours, ['remote', 'add', 'one', src]);
  git(ours, ['remote', 'add', 'skipped', src]);
  git(ours, ['config', 'remote.skipped.skipFetchAll', 'true']);
  git(ours, ['config', 'remotes.pair', 'one skipped']);
  cpSync(ours, theirs, { recursive: true });
  const both = (args: string[]): ReturnType<typeof bothRun> => bothRun(ours, theirs, ['fetch', ...args], GIT_ENV);
  const all = await both(['--all']);
  assert.equal(all.ours.status, all.git.status);
  assert.equal(all.ours.status, 1);
  assert.equal(all.ours.stdout, all.git.stdout);
  assert.equal(all.ours.stdout, 'Fetching bad\nFetching one\n');
  assert.match(all.ours.stderr, /\nerror: could not fetch bad\n/);
  assert.equal(git(ours, ['for-each-ref']).toString(), git(theirs, ['for-each-ref']).toString());
  assert.match(git(ours, ['for-each-ref', '--format=%(refname)']).toString(), /^refs\/remotes\/one\/main$/m);
  // A group: each of its remotes, skipFetchAll or not.
  const group = await both(['pair']);
  assert.equal(group.ours.status, 0, group.ours.stderr);
  assert.equal(group.ours.stdout, group.git.stdout);
  assert.equal(git(ours, ['for-each-ref']).toString(), git(theirs, ['for-each-ref']).toString());
  // A path is no group, whatever it looks like to the configuration.
  const byPath = await both(['-q', `${src}/.`, 'refs/heads/main']);
  assert.equal(byPath.ours.status, 0, byPath.ours.stderr);
  assert.equal(byPath.git.status, 0);
  for (const args of [['--all', 'one'], ['--all', 'one', 'main'], ['--multiple', 'one', 'nowhere'], ['pair', 'main']]) {
    const r = await both(args);
    assert.equal(r.ours.status, r.git.status, args.join(' '));
    assert.equal(r.ours.status, 128, args.join(' '));
  }
});

test("GIT_TRACE_PACKET: each packet a fetch sends and receives, in git's format, the pack shown once", async () => {
  using dir = tempDir();
  const src = join(dir.path, 'src.git');
  git(dir.path, ['clone', '-q', '--mirror', makeHistoryRepo(dir.path, 'sha1'), src]);
  const traces: string[][] = [];
  for (const side of ['packwright', 'git']) {
    const work = join(dir.path, side);
    git(dir.path, ['init', '-q', work]);
    const file = join(dir.path, `${side}.trace`);
    // The same server for both: git's upload-pack, whose own lines (upload-pack>) are left out.
    const env = { ...GIT_ENV, GIT_TRACE_PACKET: file, GIT_TRACE_BARE: '1' };
    const args = ['fetch', '-q', '--upload-pack=git upload-pack', src, 'refs/heads/main:refs/heads/main'];
    if (side === 'git') await execFileAsync('git', args, { cwd: work, env });
    else assert.equal((await runPackwright(work, args, { env })).status, 0);
    // The client's packets, and those of its side-band demultiplexer (git's `sideband`).
    const lines = readFileSync(file, 'utf8').split('\n').filter((l) => /^packet: +(fetch|sideband)[<>]/.test(l));
    for (const l of lines) assert.match(l, /^packet: {8}fetch[<>] [\x20-\x7e]*$|^packet: {5}sideband< [\x20-\x7e]*$/);
    traces.push(lines.filter((l) => /fetch> (want|done|command=)|fetch< (packfile|0000$)|sideband< /.test(l)));
  }
  assert.deepEqual(traces[0], traces[1]);
  assert.ok((traces[0] as string[]).includes('packet:     sideband< PACK ...'));
  assert.ok((traces[0] as string[]).some((l) => /^packet: {8}fetch> want [0-9a-f]{40}$/.test(l)));
});

test("fetch.output=compact, --no-show-forced-updates and a path that is no repository: git's lines, refs and reflogs", async () => {
  using dir = tempDir();
  const { src, ours, theirs } = sideBySide(dir.path);
  cpSync(ours, theirs, { recursive: true });
  moveOn(src);
  const env = { ...GIT_ENV, COLUMNS: '80' };
  // The rewritten topic comes in as a fast-forward when the check is off; the new tag and branch compact.
  const r = await bothRun(ours, theirs, ['-c', 'fetch.output=compact', 'fetch', '--no-show-forced-updates', 'origin'], env);
  assert.equal(r.ours.status, r.git.status);
  assert.equal(r.ours.stderr, r.git.stderr);
  assert.equal(state(ours), state(theirs));
  assert.match(readFileSync(join(ours, '.git', 'logs', 'refs', 'remotes', 'origin', 'topic'), 'utf8'), /fetch --no-show-forced-updates origin: fast-forward\n$/);
  // git's upload-pack's words for a path that is no repository, the path as given, then its
  // client's (die_initial_contact): git's own fetch says the same.
  const missing = await runPackwright(ours, ['fetch', "a\\!'b"], { env });
  const gitMissing = spawnGit(['fetch', "a\\!'b"], { cwd: theirs, env, encoding: 'utf8' });
  assert.deepEqual([missing.status, missing.stderr], [gitMissing.status, gitMissing.stderr]);
  assert.match(missing.stderr, /^fatal: 'a\\!'b' does not appear to be a git repository\nfatal: Could not read from remote repository\./);
});

test('fetch.writeCommitGraph (and --write-commit-graph): a layer of the split commit-graph for what the refs reach, the bytes git writes', async () => {
  using dir = tempDir();
  const { src, ours, theirs } = sideBySide(dir.path);
  cpSync(ours, theirs, { recursive: true });
  moveOn(src);
  assert.equal((await runPackwright(ours, ['-c', 'fetch.writeCommitGraph=true', 'fetch', '-q', 'origin'], { env: GIT_ENV })).status, 0);
  await execFileAsync('git', ['-c', 'fetch.writeCommitGraph=true', 'fetch', '-q', 'origin'], { cwd: theirs, env: GIT_ENV });
  const graphs = (work: string): Buffer[] => {
    const chainDir = join(work, '.git', 'objects', 'info', 'commit-graphs');
    return readFileSync(join(chainDir, 'commit-graph-chain'), 'utf8').trim().split('\n').map((h) => readFileSync(join(chainDir, `graph-${h}.graph`)));
  };
  assert.deepEqual(graphs(ours), graphs(theirs));
  git(ours, ['commit-graph', 'verify']);
  // Off by --no-write-commit-graph whatever the configuration says.
  const other = join(dir.path, 'other');
  git(dir.path, ['clone', '-q', '--no-checkout', src, other]);
  git(src, ['update-ref', 'refs/heads/more', git(src, ['commit-tree', 'main^{tree}', '-p', 'main', '-m', 'more']).toString().trim()]);
  assert.equal((await runPackwright(other, ['-c', 'fetch.writeCommitGraph=true', 'fetch', '-q', '--no-write-commit-graph', 'origin'], { env: GIT_ENV })).status, 0);
  assert.equal(existsSync(join(other, '.git', 'objects', 'info', 'commit-graphs')), false);
});

test("a branch checked out in a linked work tree is not fetched into (git's words), unless --update-head-ok; a bare repository's linked work tree too", async () => {
  using dir = tempDir();
  const { src, ours } = sideBySide(dir.path);
  for (const repo of [ours, join(dir.path, 'bare.git')]) {
    if (repo !== ours) git(dir.path, ['clone', '-q', '--bare', src, repo]);
    const wt = join(dir.path, `wt-${repo === ours ? 'a' : 'b'}`);
    git(repo, ['worktree', 'add', '-q', '-b', 'wt', wt, 'main~1']);
    const theirs = await execFileAsync('git', ['fetch', src, 'main:wt'], { cwd: repo, env: GIT_ENV }).then(() => assert.fail('git refuses'), (e: { code: number; stderr: string }) => e);
    const refused = await runPackwright(repo, ['fetch', src, 'main:wt'], { env: GIT_ENV });
    assert.equal(refused.status, 128);
    assert.equal(refused.stderr, theirs.stderr);
    assert.match(refused.stderr, /^fatal: refusing to fetch into branch 'refs\/heads\/wt' checked out at '.*wt-[ab]'\n$/);
    assert.equal((await runPackwright(repo, ['fetch', '-q', '-u', src, 'main:wt'], { env: GIT_ENV })).status, 0);
    assert.equal(git(repo, ['rev-parse', 'wt']).toString(), git(src, ['rev-parse', 'main']).toString());
  }
});

test("bundles as git's bundle transport reads them: ls-remote, clone and fetch from a bundle file (v2 and v3, SHA-1 and SHA-256), its prerequisites checked", async () => {
  using dir = tempDir();
  for (const format of ['sha1', 'sha256'] as Format[]) {
    const src = makeHistoryRepo(join(dir.path, format), format);
    const bundle = (name: string, args: string[]): string => {
      const file = join(dir.path, format, name);
      git(src, ['bundle', 'create', '-q', ...(format === 'sha256' ? ['--version=3'] : []), file, ...args]);
      return file;
    };
    const all = bundle('all.bundle', ['--all']);
    const tip = bundle('tip.bundle', ['main~1..main']);
    const ls = await runPackwright(dir.path, ['ls-remote', all], { env: GIT_ENV });
    assert.equal(ls.stdout.toString(), git(dir.path, ['ls-remote', all]).toString());
    // A bare clone: the refs, HEAD and the objects git's clone of the bundle leaves.
    const ours = join(dir.path, format, 'ours.git');
    const theirs = join(dir.path, format, 'theirs.git');
    assert.equal((await runPackwright(dir.path, ['clone', '-q', '--bare', all, ours], { env: GIT_ENV })).status, 0);
    git(dir.path, ['clone', '-q', '--bare', all, theirs]);
    const view = (repo: string): string => [git(repo, ['for-each-ref']), git(repo, ['symbolic-ref', 'HEAD']), git(repo, ['cat-file', '--batch-all-objects', '--batch-check'])].join('');
    assert.equal(view(ours), view(theirs));
    git(ours, ['fsck', '--no-progress']);
    // A thin bundle fetched where its prerequisite is, and refused where it is not.
    const a = await runPackwright(ours, ['fetch', tip, 'main:from-bundle'], { env: GIT_ENV });
    const b = await execFileAsync('git', ['fetch', tip, 'main:from-bundle'], { cwd: theirs, env: GIT_ENV });
    assert.equal(a.status, 0, a.stderr);
    assert.equal(a.stderr, b.stderr);
    assert.equal(readFileSync(join(ours, 'FETCH_HEAD'), 'utf8'), readFileSync(join(theirs, 'FETCH_HEAD'), 'utf8'));
    const empty = join(dir.path, format, 'empty');
    git(dir.path, ['init', '-q', `--object-format=${format}`, empty]);
    const refused = await runPackwright(empty, ['fetch', tip, 'main:x'], { env: GIT_ENV });
    assert.notEqual(refused.status, 0);
    assert.match(refused.stderr, new RegExp(`Repository lacks these prerequisite commits:\\n${git(src, ['rev-parse', 'main~1']).toString().trim()}\\n$`));
    assert.equal(git(empty, ['for-each-ref']).toString(), '');
  }
});

test("fetch runs git's auto maintenance last, as git's fetch does: 'Auto packing' under gc.autoPackLimit, nothing with --no-auto-maintenance, -q or maintenance.auto=false", async () => {
  using dir = tempDir();
  const { src, work: base } = serverAndClone(dir.path, 'sha1', 'base');
  moveOn(src);
  // As t5510's "fetching with auto-gc does not lock up": the fetched pack kept as one, and a
  // limit of one pack, so that git's gc --auto repacks. The suite's own switch-off left out.
  for (const [k, v] of [['fetch.unpackLimit', '1'], ['gc.autoPackLimit', '1'], ['gc.autoDetach', 'false']] as const) git(base, ['config', k, v]);
  const env: Record<string, string | undefined> = { ...GIT_ENV };
  for (const k of Object.keys(env)) if (k.startsWith('GIT_CONFIG_') && k !== 'GIT_CONFIG_NOSYSTEM' && k !== 'GIT_CONFIG_GLOBAL') delete env[k];
  const packs = (repo: string): number => readdirSync(join(repo, '.git/objects/pack')).filter((f) => f.endsWith('.pack')).length;
  const cases: [string[], boolean][] = [[['fetch', '--verbose'], true], [['fetch', '--no-auto-maintenance'], false], [['fetch', '--no-auto-gc', '--auto-gc'], true], [['fetch', '-q'], false], [['-c', 'maintenance.auto=false', 'fetch'], false]];
  for (const [i, [args, said]] of cases.entries()) {
    const theirs = join(dir.path, `git-${i}`);
    const ours = join(dir.path, `pw-${i}`);
    cpSync(base, theirs, { recursive: true });
    cpSync(base, ours, { recursive: true });
    const gitSays = (await execFileAsync('git', args, { cwd: theirs, env })).stderr;
    const r = await runPackwright(ours, args, { env });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(/Auto packing the repository/.test(gitSays), said, `git ${args.join(' ')}: ${gitSays}`);
    assert.equal(/Auto packing the repository/.test(r.stderr), said, `${args.join(' ')}: ${r.stderr}`);
    // Repacked into one pack, or left as the clone's and the fetch's two; quiet, git's gc still runs.
    assert.equal(packs(ours), packs(theirs), args.join(' '));
    git(ours, ['fsck', '--no-progress']);
  }
});

test("the haves each negotiator offers (fetch.negotiationAlgorithm: consecutive, skipping, noop), over v0 and v2: git's lines, ACKs read one round late over a stream as git reads them", async () => {
  using dir = tempDir();
  // t5552's shape: eight branches of twenty commits, interleaved in time; the server has one of
  // them (not advertised) with a commit on top, and an unrelated branch to fetch.
  const client = join(dir.path, 'client');
  git(dir.path, ['init', '-q', '-b', 'b1', client]);
  let stream = '';
  let mark = 0;
  const tips = new Map<number, number>();
  for (let j = 0; j < 20; j++) {
    for (let b = 1; b <= 8; b++) {
      const parent = tips.get(b);
      const message = `b${b}.c${String(j).padStart(2, '0')}\n`;
      stream += `commit refs/heads/b${b}\nmark :${++mark}\ncommitter C <c@x> ${1700000000 + mark * 60} +0000\ndata ${message.length}\n${message}`;
      stream += `${parent !== undefined ? `from :${parent}\n` : ''}M 644 inline f${b}\ndata 3\n${String(j).padStart(2, '0')}\n\n`;
      tips.set(b, mark);
    }
  }
  git(client, ['fast-import', '--quiet'], stream);
  const server = join(dir.path, 'server.git');
  git(dir.path, ['init', '-q', '--bare', server]);
  git(client, ['push', '-q', server, 'b1:refs/heads/b1']);
  git(server, ['update-ref', 'refs/heads/b1', git(server, ['commit-tree', 'b1^{tree}', '-p', 'b1', '-m', 'on b1']).toString().trim()]);
  git(server, ['update-ref', 'refs/heads/to_fetch', git(server, ['commit-tree', '4b825dc642cb6eb9a060e54bf8d69288fbee4904', '-m', 'unrelated']).toString().trim()]);
  for (const algorithm of ['consecutive', 'skipping', 'noop']) {
    for (const version of ['0', '2']) {
      const traces: string[][] = [];
      for (const side of ['git', 'packwright']) {
        const work = join(dir.path, `${side}-${algorithm}-v${version}`);
        cpSync(client, work, { recursive: true });
        git(work, ['config', 'fetch.negotiationAlgorithm', algorithm]);
        const file = join(dir.path, `${side}-${algorithm}-${version}.trace`);
        const env = { ...GIT_ENV, GIT_TRACE_PACKET: file, GIT_TRACE_BARE: '1', GIT_PROTOCOL_VERSION: undefined, GIT_TEST_PROTOCOL_VERSION: undefined };
        // A stream (v0 is then stateful), git's upload-pack serving, its own lines left out.
        const args = ['-c', `protocol.version=${version}`, 'fetch', '-q', '--no-tags', '--upload-pack=git upload-pack', server, 'to_fetch'];
        if (side === 'git') await execFileAsync('git', args, { cwd: work, env });
        else assert.equal((await runPackwright(work, args, { env })).status, 0);
        const lines = readFileSync(file, 'utf8').split('\n').filter((l) => /^packet: +fetch> (have|done|0000)|^packet: +fetch< (ACK|NAK)/.test(l));
        // v2 repeats the commits found common from a set (git's oidset, in hash-table order), and
        // the server answers in the order asked: within a run of haves or of ACKs, order is free.
        if (version === '2') {
          for (let i = 0; i < lines.length;) {
            const kind = (lines[i] as string).replace(/ [0-9a-f]{40}$/, '');
            let j = i;
            while (j < lines.length && (lines[j] as string).replace(/ [0-9a-f]{40}$/, '') === kind) j++;
            lines.splice(i, j - i, ...lines.slice(i, j).sort());
            i = j;
          }
        }
        traces.push(lines);
      }
      assert.deepEqual(traces[1], traces[0], `${algorithm}, protocol v${version}`);
      if (algorithm === 'noop') assert.ok(!(traces[0] as string[]).some((l) => l.includes('have')));
      else assert.ok((traces[0] as string[]).filter((l) => l.includes('have')).length >= 16, `${algorithm} v${version}: haves were offered`);
    }
  }
});

test("negative refspecs as git reads them (fetch and push, pruning included, an object id refused) and fetch --prefetch: the refs git leaves", async () => {
  using dir = tempDir();
  const { src, work: base } = serverAndClone(dir.path, 'sha1', 'base');
  for (const b of ['p/a', 'p/b', 'p/c']) git(src, ['update-ref', `refs/heads/${b}`, 'main']);
  const cases: string[][] = [
    ['fetch', 'origin', 'refs/heads/p/*:refs/remotes/p/*', '^refs/heads/p/b'],
    ['fetch', '--prune', 'origin', 'refs/heads/*:refs/remotes/origin/*', '^refs/heads/topic'],
    ['fetch', '--prefetch', '--no-tags', 'origin'],
    // (git 2.39 aborts when --prefetch drops a command-line refspec of tags: a double free.)
    ['fetch', '--prefetch', 'origin', 'refs/heads/main:main', '^refs/heads/nothing'],
    ['push', '--prune', 'origin', 'refs/remotes/origin/*:refs/heads/*', '^refs/heads/topic', '^refs/heads/HEAD'],
  ];
  for (const [i, args] of cases.entries()) {
    const servers = ['theirs', 'ours'].map((side) => {
      const s = join(dir.path, `${side}-${i}.git`);
      cpSync(src, s, { recursive: true });
      return s;
    });
    const works = ['theirs', 'ours'].map((side, k) => {
      const w = join(dir.path, `${side}-${i}`);
      cpSync(base, w, { recursive: true });
      git(w, ['remote', 'set-url', 'origin', servers[k] as string]);
      // A remote-tracking ref gone from the server, for --prune to delete (or not).
      git(w, ['update-ref', 'refs/remotes/origin/topic', 'main']);
      git(w, ['update-ref', 'refs/remotes/origin/gone', 'main']);
      return w;
    });
    const g = await execFileAsync('git', args, { cwd: works[0], env: GIT_ENV }).then((r) => ({ code: 0, ...r }), (e: { code: number; stdout: string; stderr: string }) => e);
    const r = await runPackwright(works[1] as string, args, { env: GIT_ENV });
    assert.equal(r.status, g.code, `${args.join(' ')}: ${r.stderr}`);
    assert.equal(git(works[1] as string, ['for-each-ref']).toString(), git(works[0] as string, ['for-each-ref']).toString(), args.join(' '));
    assert.equal(git(servers[1] as string, ['for-each-ref']).toString(), git(servers[0] as string, ['for-each-ref']).toString(), args.join(' '));
  }
  const refused = await runPackwright(base, ['fetch', 'origin', 'refs/heads/*:refs/remotes/x/*', `^${git(src, ['rev-parse', 'main']).toString().trim()}`], { env: GIT_ENV });
  assert.equal(refused.status, 128);
  assert.match(refused.stderr, /^fatal: invalid refspec '\^[0-9a-f]{40}'\n$/);
});

test("FETCH_HEAD for a branch that merges several refs (branch.<name>.merge given full or short), over v0 and v2: git's lines", async () => {
  using dir = tempDir();
  const { work: base } = serverAndClone(dir.path, 'sha1', 'base');
  git(base, ['config', 'branch.main.remote', 'origin']);
  git(base, ['config', '--replace-all', 'branch.main.merge', 'refs/heads/main']);
  git(base, ['config', '--add', 'branch.main.merge', 'topic']);
  git(base, ['symbolic-ref', 'HEAD', 'refs/heads/main']);
  for (const version of ['0', '2']) {
    const theirs = join(dir.path, `theirs-${version}`);
    const ours = join(dir.path, `ours-${version}`);
    for (const w of [theirs, ours]) cpSync(base, w, { recursive: true });
    const args = ['-c', `protocol.version=${version}`, 'fetch', 'origin'];
    await execFileAsync('git', args, { cwd: theirs, env: GIT_ENV });
    const r = await runPackwright(ours, args, { env: GIT_ENV });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(readFileSync(join(ours, '.git/FETCH_HEAD'), 'utf8'), readFileSync(join(theirs, '.git/FETCH_HEAD'), 'utf8'), `v${version}`);
    assert.match(readFileSync(join(ours, '.git/FETCH_HEAD'), 'utf8'), /\t\tbranch 'topic' of /);
  }
});

test("GIT_TRACE_PACKET from a local path served in this process: the server's side traced as git's spawned upload-pack traces it", async () => {
  using dir = tempDir();
  const { src, work: base } = serverAndClone(dir.path, 'sha1', 'base');
  moveOn(src);
  const lines: string[][] = [];
  for (const side of ['git', 'packwright']) {
    const work = join(dir.path, side);
    cpSync(base, work, { recursive: true });
    const file = join(dir.path, `${side}.trace`);
    const env = { ...GIT_ENV, GIT_TRACE_PACKET: file, GIT_TRACE_BARE: '1' };
    if (side === 'git') await execFileAsync('git', ['fetch', '-q', 'origin'], { cwd: work, env });
    else assert.equal((await runPackwright(work, ['fetch', '-q', 'origin'], { env })).status, 0);
    lines.push(readFileSync(file, 'utf8').split('\n').filter((l) => /^packet: +upload-pack< (want|have|done|command=)/.test(l)));
  }
  assert.deepEqual(lines[1], lines[0]);
  assert.ok((lines[0] as string[]).some((l) => / want [0-9a-f]{40}$/.test(l)));
});

test("fetch into a repository with an alternate offers the alternate's refs as haves, as git does: only what the alternate lacks comes", async () => {
  using dir = tempDir();
  const { src } = serverAndClone(dir.path, 'sha1', 'base');
  const history = join(dir.path, 'history.git');
  git(dir.path, ['clone', '-q', '--bare', src, history]);
  moveOn(src);
  const counts: string[] = [];
  for (const side of ['git', 'packwright']) {
    const work = join(dir.path, `alt-${side}`);
    git(dir.path, ['init', '-q', work]);
    writeFileSync(join(work, '.git/objects/info/alternates'), `${join(history, 'objects')}\n`);
    const args = ['fetch', '-q', src, 'main:refs/heads/it'];
    if (side === 'git') await execFileAsync('git', args, { cwd: work, env: GIT_ENV });
    else assert.equal((await runPackwright(work, args, { env: GIT_ENV })).status, 0);
    counts.push(git(work, ['count-objects', '-v']).toString().split('\n').filter((l) => /^(count|in-pack):/.test(l)).join(' '));
    git(work, ['fsck', '--no-progress']);
  }
  assert.equal(counts[1], counts[0]);
});

test("fetch of a tip already here whose history is not (git's quickfetch): asked for again, not taken as common; --keep keeps what comes as a pack", async () => {
  using dir = tempDir();
  const { src, work: base } = serverAndClone(dir.path, 'sha1', 'base');
  moveOn(src);
  // The new tip copied here by hand, without the objects below it.
  const tip = git(src, ['rev-parse', 'main']).toString().trim();
  const raw = git(src, ['cat-file', 'commit', tip]);
  const id = git(base, ['hash-object', '-w', '-t', 'commit', '--stdin'], raw).toString().trim();
  assert.equal(id, tip);
  const shapes: string[] = [];
  for (const side of ['git', 'packwright']) {
    const work = join(dir.path, `quick-${side}`);
    cpSync(base, work, { recursive: true });
    const args = ['fetch', '-q', '-k', 'origin'];
    if (side === 'git') await execFileAsync('git', args, { cwd: work, env: GIT_ENV });
    else assert.equal((await runPackwright(work, args, { env: GIT_ENV })).status, 0);
    git(work, ['fsck', '--no-progress', '--connectivity-only']);
    assert.equal(git(work, ['rev-parse', 'origin/main']).toString().trim(), tip);
    // The fetch's objects in a pack of their own, nothing more loose, no .keep left.
    shapes.push(`${readdirSync(join(work, '.git/objects/pack')).map((f) => f.replace(/^pack-[0-9a-f]+/, 'P')).sort().join(' ')} / ${git(work, ['count-objects']).toString().replace(/, .*/, '')}`);
  }
  assert.equal(shapes[1], shapes[0]);
});

test("a pattern refspec leaves a local symbolic ref alone (refs/remotes/origin/HEAD), as git's ignore_symref_update", async () => {
  using dir = tempDir();
  const { src } = serverAndClone(dir.path, 'sha1', 'base');
  // The server is itself a clone with remote-tracking refs, its origin/HEAD symbolic.
  const middle = join(dir.path, 'middle');
  git(dir.path, ['clone', '-q', '--no-checkout', src, middle]);
  for (const w of [join(dir.path, 'g'), join(dir.path, 'p')]) git(dir.path, ['clone', '-q', '--no-checkout', middle, w]);
  moveOn(src);
  git(middle, ['fetch', '-q', 'origin']);
  const args = ['fetch', middle, 'refs/remotes/*:refs/remotes/*'];
  const g = await execFileAsync('git', args, { cwd: join(dir.path, 'g'), env: GIT_ENV });
  const r = await runPackwright(join(dir.path, 'p'), args, { env: GIT_ENV });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stderr, g.stderr);
  for (const cmd of [['for-each-ref', 'refs/remotes'], ['symbolic-ref', 'refs/remotes/origin/HEAD']]) assert.equal(git(join(dir.path, 'p'), cmd).toString(), git(join(dir.path, 'g'), cmd).toString());
});

test("transfer.credentialsInUrl: a URL with a password refused (die) or warned about (warn) in git's words, before any connection", async () => {
  using dir = tempDir();
  const work = join(dir.path, 'w');
  git(dir.path, ['init', '-q', work]);
  // Port 1 on 127.0.0.1: nothing is ever reached there; git and packwright stop before trying.
  for (const [command, url] of [['fetch', 'https://user:secret@127.0.0.1:1/repo.git'], ['push', 'https://user%40host:@127.0.0.1:1/repo.git']] as const) {
    const args = ['-c', 'transfer.credentialsInUrl=die', command, url, ...(command === 'push' ? ['HEAD:refs/heads/x'] : [])];
    const g = await execFileAsync('git', args, { cwd: work, env: GIT_ENV }).then(() => assert.fail('git went on'), (e: { code: number; stderr: string }) => e);
    const r = await runPackwright(work, args, { env: GIT_ENV });
    assert.equal(r.status, g.code, r.stderr);
    assert.equal(r.stderr, g.stderr);
    assert.match(r.stderr, /^fatal: URL 'https:\/\/user(%40host)?:<redacted>@127\.0\.0\.1:1\/repo\.git' uses plaintext credentials\n$/);
  }
});

test("--shallow-since takes a date as git writes one (seconds and a time zone) and '<n> days ago': the boundary git's fetch leaves, an octopus cut among its parents too", async () => {
  using dir = tempDir();
  const src = makeHistoryRepo(dir.path, 'sha1');
  const when = git(src, ['log', '-1', '--format=%ct', 'main~2']).toString().trim();
  // Whole days back to a little before main~2. git and packwright read "now" a moment apart: a
  // boundary within two minutes of a commit's date could fall on either side of it, so it moves
  // a day further back until none is that near.
  const dates = git(src, ['log', '--all', '--format=%ct']).toString().trim().split('\n').map(Number);
  let days = Math.ceil((Date.now() / 1000 - Number(when)) / 86400);
  while (dates.some((d) => Math.abs(Date.now() / 1000 - days * 86400 - d) < 120)) days++;
  // And a boundary just after the octopus merge's first parent: the merge is cut, its two newer
  // parents stay in the history (git records all three as shallow, though the pack reaches
  // neither parent).
  const octopus = git(src, ['log', '--all', '--format=%H', '--grep=octopus merge']).toString().trim().split('\n')[0] as string;
  const justAfter = Number(git(src, ['log', '-1', '--format=%ct', `${octopus}^1`]).toString().trim()) + 1;
  for (const [i, since] of [`${when} +0700`, `${days} days ago`, `${justAfter} +0000`].entries()) {
    const shallow: string[] = [];
    for (const side of ['git', 'packwright']) {
      const work = join(dir.path, `${side}-${i}`);
      git(dir.path, ['clone', '-q', '--no-local', '--depth=1', '--no-checkout', src, work]);
      const args = ['fetch', '-q', `--shallow-since=${since}`, 'origin'];
      if (side === 'git') await execFileAsync('git', args, { cwd: work, env: GIT_ENV });
      else assert.equal((await runPackwright(work, args, { env: GIT_ENV })).status, 0);
      shallow.push(`${readFileSync(join(work, '.git/shallow'), 'utf8')}|${git(work, ['for-each-ref']).toString()}`);
    }
    assert.equal(shallow[1], shallow[0], since);
  }
});

test("over HTTP in protocol v0 (stateless): the same haves, ACKs and done lines as git's fetch-pack (no done after ready when the server offers no-done)", async () => {
  using dir = tempDir();
  const { src, work: base } = serverAndClone(dir.path, 'sha1', 'base');
  moveOn(src);
  await using servers = await packwrightServers(src, GIT_ENV);
  const traces: string[][] = [];
  for (const side of ['git', 'packwright']) {
    const work = join(dir.path, `nd-${side}`);
    cpSync(base, work, { recursive: true });
    const file = join(dir.path, `nd-${side}.trace`);
    const env = { ...GIT_ENV, GIT_TRACE_PACKET: file, GIT_TRACE_BARE: '1', GIT_TEST_PROTOCOL_VERSION: undefined };
    const args = ['-c', 'protocol.version=0', 'fetch', '-q', servers.http, 'refs/heads/*:refs/remotes/x/*'];
    if (side === 'git') await execFileAsync('git', args, { cwd: work, env });
    else assert.equal((await runPackwright(work, args, { env })).status, 0);
    // After the advertisement, git's conversation is its fetch-pack child's, traced as `fetch-pack`.
    traces.push(readFileSync(file, 'utf8').split('\n').filter((l) => /^packet: +(fetch-pack|fetch)[<>] (have |done|ACK|NAK)/.test(l)));
  }
  assert.deepEqual(traces[1], traces[0]);
  assert.ok((traces[0] as string[]).some((l) => /^packet: {3}fetch-pack> have /.test(l)));
});

test('transports as git allows them: GIT_ALLOW_PROTOCOL, protocol.<name>.allow, protocol.allow, "user" with GIT_PROTOCOL_FROM_USER; refused with git\'s words before anything is reached; a library call can allow https alone; a path that reads as an option is refused', async () => {
  using dir = tempDir();
  const history = makeHistoryRepo(dir.path, 'sha1', 20);
  const served = join(dir.path, 'served.git');
  git(dir.path, ['clone', '-q', '--bare', history, served]);
  await using servers = await packwrightServers(served, GIT_ENV);
  const work = join(dir.path, 'work.git');
  git(dir.path, ['init', '-q', '--bare', work]);
  const urls: [string, string][] = [['file', served], ['git', servers.git], ['http', servers.http]];
  const cases: [string, string[], Record<string, string>][] = [
    ['allowed', [], {}],
    ['none', [], { GIT_ALLOW_PROTOCOL: 'none' }],
    ['listed', ['-c', 'protocol.allow=never'], { GIT_ALLOW_PROTOCOL: 'file:git:http' }],
    ['never', ['-c', 'protocol.allow=never'], {}],
    ['named', ['-c', 'protocol.allow=never', '-c', 'protocol.file.allow=always', '-c', 'protocol.git.allow=always', '-c', 'protocol.http.allow=always'], {}],
    ['user', ['-c', 'protocol.allow=user'], {}],
    ['not from the user', ['-c', 'protocol.allow=user'], { GIT_PROTOCOL_FROM_USER: '0' }],
  ];
  for (const [kind, url] of urls) {
    for (const [name, config, env] of cases) {
      const args = [...config, 'fetch', url, 'main:refs/heads/fetched'];
      // Asynchronously: the servers are in this process.
      const theirs = await execFileAsync('git', args, { cwd: work, env: { ...GIT_ENV, ...env } }).then(() => ({ status: 0, stderr: '' }), (e: { code: number; stderr: string }) => ({ status: e.code, stderr: e.stderr }));
      const ours = await runPackwright(work, args, { env: { ...GIT_ENV, ...env } });
      const what = `${kind}: ${name}`;
      assert.equal(ours.status, theirs.status, `${what}: ${ours.stderr}`);
      if (theirs.status !== 0) assert.equal(ours.stderr, theirs.stderr, what);
      git(work, ['update-ref', '-d', 'refs/heads/fetched']);
    }
  }
  // The library: a policy of the caller's own.
  await assert.rejects(fetch({ dir: work, remote: served, refspecs: ['main'], allowTransport: (type) => type === 'https' }), (e) => isPackwrightError(e, 'TRANSPORT_NOT_ALLOWED') && e.message === "transport 'file' not allowed");
  // A path that reads as an option is refused, as git's connect.c refuses it; the same path in full is fetched.
  cpSync(served, join(work, '-repo.git'), { recursive: true });
  for (const [url, fails] of [['-repo.git', true], [join(work, '-repo.git'), false]] as const) {
    const args = ['fetch', '--', url, 'main:refs/heads/dash'];
    const theirs = await execFileAsync('git', args, { cwd: work, env: GIT_ENV }).then(() => ({ status: 0, stderr: '' }), (e: { code: number; stderr: string }) => ({ status: e.code, stderr: e.stderr }));
    const ours = await runPackwright(work, args, { env: GIT_ENV });
    assert.equal(ours.status, theirs.status, ours.stderr);
    assert.equal(theirs.status !== 0, fails);
    if (fails) assert.equal(ours.stderr, theirs.stderr);
    else git(work, ['update-ref', '-d', 'refs/heads/dash']);
  }
});
