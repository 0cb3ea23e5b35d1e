import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { Readable } from 'node:stream';
import { CLI, git, GIT_ENV, makeHistoryRepo, tempDir, type Format } from './helpers/git.js';
import { packwrightDaemon } from './helpers/servers.js';
import { encodePacket, FLUSH_PACKET, PacketReader } from '../src/protocol/index.js';
import { Repository } from '../src/repo/index.js';
import { receivePack, type ReceivePackOptions } from '../src/serve/index.js';
import { execFileAsync } from './helpers/spawn-client.js';

const FORMATS: Format[] = ['sha1', 'sha256'];

/** packwright's receive-pack (and upload-pack) serving git:// from this process, pushes allowed; `receive` gives the library's push options. */
const daemon = (receive: Pick<ReceivePackOptions, 'beforeUpdate' | 'afterUpdate' | 'hooks'> = {}): ReturnType<typeof packwrightDaemon> => packwrightDaemon({ env: GIT_ENV, authorize: () => true, receive });

/** git, asynchronously (the server answering it may run in this process): its status, stdout and stderr. */
async function gitAsync(cwd: string, args: string[], env: Record<string, string | undefined> = {}): Promise<{ status: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await execFileAsync('git', args, { cwd, env: { ...GIT_ENV, ...env }, maxBuffer: 1 << 28 });
    return { status: 0, stdout, stderr };
  } catch (e) {
    const err = e as { code?: number; stdout?: string; stderr?: string };
    return { status: err.code ?? 1, stdout: err.stdout ?? '', stderr: err.stderr ?? '' };
  }
}

/** A bare repository to push into, with reflogs (so they can be compared) and the settings `config` gives. */
function target(dir: string, name: string, format: Format, config: [string, string][] = []): string {
  const path = join(dir, name);
  git(dir, ['init', '-q', '--bare', `--object-format=${format}`, path]);
  git(path, ['config', 'core.logAllRefUpdates', 'true']);
  for (const [k, v] of config) git(path, ['config', k, v]);
  return path;
}

/** Every file under `dir`, relative, sorted. */
function files(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => relative(dir, join(e.parentPath, e.name))).sort();
}

/** What a push leaves: refs, packed-refs, reflogs, the objects. */
function state(repo: string): string {
  const refs = git(repo, ['for-each-ref', '--format=%(objectname) %(refname)']).toString();
  const packed = existsSync(join(repo, 'packed-refs')) ? readFileSync(join(repo, 'packed-refs'), 'utf8') : '';
  const logs = files(join(repo, 'logs')).map((f) => `${f}:\n${readFileSync(join(repo, 'logs', f), 'utf8')}`).join('');
  const objects = git(repo, ['cat-file', '--batch-all-objects', '--batch-check=%(objectname) %(objecttype)']).toString();
  return `refs:\n${refs}packed:\n${packed}logs:\n${logs}objects:\n${objects}`;
}

/** `git push --porcelain` to git's receive-pack (a local path) and to packwright's (git://): the outcomes, without the "To <url>" line. */
async function pushBoth(src: string, theirs: string, ours: string, url: (path: string) => string, args: string[]): Promise<void> {
  const [a, b] = await Promise.all([
    gitAsync(src, ['push', '--porcelain', ...args.slice(0, -1), `file://${theirs}`, ...args.slice(-1).flatMap((r) => r.split(' '))]),
    gitAsync(src, ['push', '--porcelain', ...args.slice(0, -1), url(ours), ...args.slice(-1).flatMap((r) => r.split(' '))]),
  ]);
  const lines = (out: string): string => out.split('\n').filter((l) => !l.startsWith('To ')).join('\n');
  assert.equal(lines(b.stdout), lines(a.stdout), `git push ${args.join(' ')}: ${b.stderr}`);
  assert.equal(b.status, a.status, `git push ${args.join(' ')}: ${b.stderr}`);
  assert.equal(state(ours), state(theirs), `after git push ${args.join(' ')}`);
  assert.deepEqual(files(join(ours, 'objects')).filter((f) => f.startsWith('tmp_objdir') || f.endsWith('.keep')), []);
}

for (const format of FORMATS) {
  test(`pushes received by packwright leave what git's receive-pack leaves (${format}): new, fast-forward, refused, forced, tags, deletes, atomic, thin`, async () => {
    using dir = tempDir();
    const src = makeHistoryRepo(dir.path, format);
    await using server = await daemon();
    const config: [string, string][] = [['receive.hideRefs', 'refs/hidden']];
    // Below the unpack limit objects are written loose; above it, kept as a pack. At 100 both
    // happen (the first push and the fourth are packs, the second and fifth loose), so sha256 takes
    // that one only: half the pushes.
    for (const limit of format === 'sha1' ? ['100', '1'] : ['100']) {
      const theirs = target(dir.path, `git-${limit}.git`, format, [...config, ['transfer.unpackLimit', limit]]);
      const ours = target(dir.path, `pw-${limit}.git`, format, [...config, ['transfer.unpackLimit', limit]]);
      const steps = [
        ['main~30:refs/heads/main'],
        ['main~20:refs/heads/main topic~2:refs/heads/topic'],
        ['main~25:refs/heads/main'],
        ['+main~25:refs/heads/main'],
        ['main:refs/heads/main topic:refs/heads/topic'],
        ['--tags', 'main:refs/heads/main'],
        ['main~3:refs/heads/old :refs/heads/topic'],
        ['--atomic', 'main:refs/heads/a main:refs/hidden/b'],
        ['main:refs/heads/c main:refs/hidden/d'],
        [':refs/heads/nothing-here'],
        ['main:refs/tags/funny main:HEAD2'],
      ];
      for (const step of steps) await pushBoth(src, theirs, ours, server.url, step);
      git(ours, ['fsck', '--full', '--no-dangling']);
      git(theirs, ['config', 'receive.denyNonFastForwards', 'true']);
      git(ours, ['config', 'receive.denyNonFastForwards', 'true']);
      git(theirs, ['config', 'receive.denyDeletes', 'true']);
      git(ours, ['config', 'receive.denyDeletes', 'true']);
      await pushBoth(src, theirs, ours, server.url, ['+main~5:refs/heads/main :refs/heads/c main~1:refs/heads/e']);
    }
    assert.deepEqual(server.errors, []);
  });
}

/** Hooks that write what they were given into `<repo>/hooks.log` (the order runs, stdin, arguments, the push options, whether the quarantine is set and its objects visible), and say something on stdout and stderr. */
function installHooks(repo: string, declinePre = false): void {
  const log = join(repo, 'hooks.log');
  const script = (name: string, body: string): void => {
    const path = join(repo, 'hooks', name);
    mkdirSync(join(repo, 'hooks'), { recursive: true });
    writeFileSync(path, `#!/bin/sh\n${body}\n`);
    chmodSync(path, 0o755);
  };
  const common = `echo "== $0 $*" >>'${log}'; echo "GIT_DIR=$GIT_DIR cwd=$(basename "$PWD") options=$GIT_PUSH_OPTION_COUNT \${GIT_PUSH_OPTION_0-} \${GIT_PUSH_OPTION_1-} quarantine=\${GIT_QUARANTINE_PATH:+yes}" >>'${log}'`;
  const stdin = `while read old new ref; do echo "$old $new $ref" >>'${log}'; git cat-file -e "$new" 2>/dev/null && echo "  visible $ref" >>'${log}'; done`;
  script('pre-receive', `${common}\n${stdin}\necho "pre-receive says hello"\necho "pre-receive on stderr" >&2\n${declinePre ? 'exit 1' : 'exit 0'}`);
  script('update', `${common}\necho "update $1"\ncase "$1" in refs/heads/declined) echo "no, not $1" >&2; exit 1;; esac`);
  script('post-receive', `${common}\n${stdin}\necho "post-receive done"`);
  script('post-update', `${common}\necho "post-update $*"`);
}

test('git\'s hooks run as under git\'s receive-pack: stdin, arguments, push options, the quarantine, output relayed to the pusher; a declining hook refuses', async () => {
  using dir = tempDir();
  const src = makeHistoryRepo(dir.path, 'sha1');
  await using server = await daemon();
  for (const decline of [false, true]) {
    const config: [string, string][] = [['receive.advertisePushOptions', 'true']];
    const theirs = target(dir.path, `git-hooks-${decline}.git`, 'sha1', config);
    const ours = target(dir.path, `pw-hooks-${decline}.git`, 'sha1', config);
    installHooks(theirs, decline);
    installHooks(ours, decline);
    const args = ['-o', 'first option', '-o', 'second', 'main~2:refs/heads/main topic:refs/heads/declined main:refs/heads/x'];
    const [a, b] = await Promise.all([
      gitAsync(src, ['push', '--porcelain', ...args.slice(0, -1), `file://${theirs}`, ...(args.at(-1) as string).split(' ')]),
      gitAsync(src, ['push', '--porcelain', ...args.slice(0, -1), server.url(ours), ...(args.at(-1) as string).split(' ')]),
    ]);
    const remote = (out: string): string => out.split('\n').filter((l) => l.startsWith('remote:')).join('\n');
    assert.equal(remote(b.stderr), remote(a.stderr));
    assert.match(remote(b.stderr), decline ? /pre-receive on stderr/ : /post-update refs\/heads\/main refs\/heads\/x/);
    const lines = (out: string): string => out.split('\n').filter((l) => !l.startsWith('To ')).join('\n');
    assert.equal(lines(b.stdout), lines(a.stdout));
    assert.equal(readFileSync(join(ours, 'hooks.log'), 'utf8').replaceAll('pw-hooks', 'git-hooks'), readFileSync(join(theirs, 'hooks.log'), 'utf8'));
    assert.equal(state(ours), state(theirs));
  }
});

/** A push made by hand: the commands (the first with `caps`), a flush, then `pack`. */
function pushRequest(commands: string[], caps: string, pack: Buffer): Readable {
  const parts = commands.map((c, i) => encodePacket(i === 0 ? `${c}\0${caps}\n` : `${c}\n`));
  return Readable.from([Buffer.concat([...parts, FLUSH_PACKET, pack])]);
}

/** Runs receivePack on a request; the report's lines (side band 1 unwrapped when asked for). */
async function receive(repo: Repository, input: Readable, options: Partial<ReceivePackOptions> = {}): Promise<{ report: string[]; results: Awaited<ReturnType<typeof receivePack>>; stderr: string }> {
  const out: Buffer[] = [];
  let stderr = '';
  const results = await receivePack(repo, { input, output: (c) => void out.push(c), stderr: (t) => void (stderr += t), statelessRpc: true, ...options });
  const reader = new PacketReader(Readable.from([Buffer.concat(out)]));
  const report: string[] = [];
  for (;;) {
    const p = await reader.read();
    if (p.kind !== 'data') break;
    report.push(p.line);
  }
  return { report, results, stderr };
}

test('a pack that leaves out what the new tip needs is refused ("missing necessary objects"), a truncated one is an unpack error: no ref changes, nothing moves in', async () => {
  using dir = tempDir();
  const src = makeHistoryRepo(dir.path, 'sha1');
  const path = target(dir.path, 'incomplete.git', 'sha1');
  const tip = git(src, ['rev-parse', 'main']).toString().trim();
  const zero = '0'.repeat(40);
  // The commit alone: its tree and history are not there.
  const commitOnly = git(src, ['pack-objects', '--stdout'], `${tip}\n`);
  using repo = { r: Repository.openGitDir(path, { env: GIT_ENV }), [Symbol.dispose]() { this.r.close(); } };
  const missing = await receive(repo.r, pushRequest([`${zero} ${tip} refs/heads/main`], 'report-status', commitOnly));
  assert.deepEqual(missing.report, ['unpack ok', 'ng refs/heads/main missing necessary objects']);
  // Every object but one blob, kept as a pack (above the unpack limit): whether it is
  // self-contained is only observed while it is indexed, and the walk refuses it as git does.
  const listed = git(src, ['rev-list', '--objects', 'main']).toString().trim().split('\n').map((l) => l.slice(0, 40));
  const blob = listed.find((id) => git(src, ['cat-file', '-t', id]).toString().trim() === 'blob') as string;
  assert.ok(listed.length > 100);
  const lacking = git(src, ['pack-objects', '--stdout'], `${listed.filter((id) => id !== blob).join('\n')}\n`);
  const holed = await receive(repo.r, pushRequest([`${zero} ${tip} refs/heads/main`], 'report-status', lacking));
  assert.deepEqual(holed.report, ['unpack ok', 'ng refs/heads/main missing necessary objects']);
  const whole = git(src, ['pack-objects', '--revs', '--stdout'], 'main\n');
  const truncated = await receive(repo.r, pushRequest([`${zero} ${tip} refs/heads/main`], 'report-status', whole.subarray(0, whole.length >> 1)));
  assert.equal(truncated.report[1], 'ng refs/heads/main unpacker error');
  assert.match(truncated.report[0] as string, /^unpack (index-pack|unpack-objects) abnormal exit$/);
  assert.match(truncated.stderr, /fatal: /);
  const badHeader = await receive(repo.r, pushRequest([`${zero} ${tip} refs/heads/main`], 'report-status', Buffer.from('PACX0000')));
  assert.deepEqual(badHeader.report, ['unpack eof before pack header was fully read', 'ng refs/heads/main unpacker error']);
  assert.equal(git(path, ['for-each-ref']).toString(), '');
  assert.deepEqual(files(join(path, 'objects')).filter((f) => !f.startsWith('info/')), []);
  // The whole pack goes through, report-status-v2 and a side band asked for.
  const ok = await receive(repo.r, pushRequest([`${zero} ${tip} refs/heads/main`], 'report-status-v2 side-band-64k', whole));
  assert.deepEqual(ok.results.map((r) => [r.ref, r.error]), [['refs/heads/main', undefined]]);
  git(path, ['fsck', '--full', '--no-dangling']);
  assert.equal(git(path, ['rev-parse', 'refs/heads/main']).toString().trim(), tip);
});

test('the library\'s policy callbacks: beforeUpdate sees the quarantined objects and refuses refs with its reasons, afterUpdate is told what changed', async () => {
  using dir = tempDir();
  const src = makeHistoryRepo(dir.path, 'sha1');
  const seen: string[] = [];
  let after: string[] = [];
  await using server = await daemon({
    beforeUpdate: ({ commands, repository, pushOptions }) => {
      for (const c of commands) seen.push(`${c.ref} ${repository.objects.has(Buffer.from(c.newId, 'hex')) ? 'visible' : 'absent'} ${pushOptions.join(',')}`);
      return Object.fromEntries(commands.filter((c) => c.ref.includes('wip')).map((c) => [c.ref, 'no work in progress here']));
    },
    afterUpdate: (updated) => void (after = updated.map((c) => c.ref)),
  });
  const ours = target(dir.path, 'policy.git', 'sha1', [['receive.updateServerInfo', 'true']]);
  const pushed = await gitAsync(src, ['push', '--porcelain', server.url(ours), 'main:refs/heads/main', 'topic:refs/heads/wip']);
  assert.equal(pushed.status, 1);
  assert.match(pushed.stdout, /!\trefs\/heads\/topic:refs\/heads\/wip\t\[remote rejected\] \(no work in progress here\)/);
  assert.deepEqual(seen, ['refs/heads/main visible ', 'refs/heads/wip visible ']);
  assert.deepEqual(after, ['refs/heads/main']);
  assert.equal(git(ours, ['for-each-ref', '--format=%(refname)']).toString(), 'refs/heads/main\n');
  // receive.updateServerInfo: the dumb clients' files follow the push.
  assert.equal(readFileSync(join(ours, 'info', 'refs'), 'utf8'), `${git(ours, ['rev-parse', 'main']).toString().trim()}\trefs/heads/main\n`);
  git(ours, ['fsck', '--full', '--no-dangling']);
});

test('racing pushes to the same refs (8 clients: 4 served in this process, 4 by receive-pack processes): each ref ends at a value a push set, every "ok" is in the reflog, every loser told "failed to update ref", no lock left', async () => {
  using dir = tempDir();
  const src = makeHistoryRepo(dir.path, 'sha1');
  const path = target(dir.path, 'race.git', 'sha1');
  git(src, ['push', '-q', path, 'main:refs/heads/r0', 'main:refs/heads/r1', 'main:refs/heads/r2']);
  await using server = await daemon();
  const receivePackCommand = `${JSON.stringify(process.execPath)} ${JSON.stringify(CLI)} receive-pack`;
  const clients = 8;
  const rounds = 4;
  // One new commit per push, all on top of main.
  const commits = Array.from({ length: clients * rounds }, (_, i) => git(src, ['commit-tree', 'main^{tree}', '-p', 'main', '-m', `push ${i}`]).toString().trim());
  const outcomes: { ref: string; commit: string; ok: boolean; reason: string }[] = [];
  await Promise.all(Array.from({ length: clients }, async (_, c) => {
    for (let k = 0; k < rounds; k++) {
      const commit = commits[c * rounds + k] as string;
      const ref = `refs/heads/r${(c + k) % 3}`;
      const via = c < clients / 2 ? [server.url(path)] : [`--receive-pack=${receivePackCommand}`, `file://${path}`];
      const r = await gitAsync(src, ['push', '--porcelain', ...via.slice(0, -1), via.at(-1) as string, `+${commit}:${ref}`]);
      const line = r.stdout.split('\n').find((l) => l.includes(`${commit}:${ref}`)) ?? '';
      outcomes.push({ ref, commit, ok: /^[+* ]\t/.test(line), reason: line.split('\t')[2] ?? r.stderr });
    }
  }));
  assert.equal(outcomes.length, clients * rounds);
  for (const o of outcomes.filter((x) => !x.ok)) assert.equal(o.reason, '[remote rejected] (failed to update ref)', `${o.commit} ${o.ref}`);
  for (const ref of ['refs/heads/r0', 'refs/heads/r1', 'refs/heads/r2']) {
    const log = readFileSync(join(path, 'logs', ref), 'utf8').trim().split('\n').map((l) => l.split(' ')[1] as string);
    const ok = outcomes.filter((o) => o.ref === ref && o.ok).map((o) => o.commit).sort();
    // The reflog holds the ref's first value, then exactly the pushes told "ok", the last one being the ref.
    assert.deepEqual(log.slice(1).sort(), ok, ref);
    assert.equal(git(path, ['rev-parse', ref]).toString().trim(), log.at(-1));
  }
  assert.ok(outcomes.some((o) => o.ok));
  assert.deepEqual(files(join(path, 'refs')).filter((f) => f.endsWith('.lock')), []);
  assert.deepEqual(files(join(path, 'objects')).filter((f) => f.startsWith('tmp_objdir') || f.endsWith('.keep')), []);
  git(path, ['fsck', '--full', '--no-dangling']);
});

test('a receive-pack process killed (SIGKILL) at any point of a push: the ref is as before or as pushed, at most its lock is left, the repository stays whole, the next push goes through', async () => {
  using dir = tempDir();
  const src = makeHistoryRepo(dir.path, 'sha1');
  const path = target(dir.path, 'killed.git', 'sha1', [['transfer.unpackLimit', '1']]);
  git(src, ['push', '-q', path, 'main~40:refs/heads/main']);
  const old = git(path, ['rev-parse', 'main']).toString().trim();
  const tip = git(src, ['rev-parse', 'main']).toString().trim();
  const pack = git(src, ['pack-objects', '--revs', '--thin', '--stdout', '-q'], `main\n^${old}\n`);
  const request = Buffer.concat([encodePacket(`${old} ${tip} refs/heads/main\0report-status\n`), FLUSH_PACKET, pack]);
  const run = (killAfterMs: number | undefined): Promise<string> => new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, 'receive-pack', '--stateless-rpc', path], { env: GIT_ENV, stdio: ['pipe', 'pipe', 'ignore'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString('latin1')));
    child.stdin.on('error', () => undefined);
    child.stdin.end(request);
    if (killAfterMs !== undefined) setTimeout(() => child.kill('SIGKILL'), killAfterMs);
    child.on('close', () => resolve(out));
  });
  const started = Date.now();
  await run(undefined);
  const whole = Date.now() - started;
  assert.equal(git(path, ['rev-parse', 'main']).toString().trim(), tip);
  let seed = 11;
  for (let i = 0; i < 10; i++) {
    git(path, ['update-ref', 'refs/heads/main', old]);
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    await run(Math.floor((seed / 2 ** 32) * whole));
    const now = git(path, ['rev-parse', 'main']).toString().trim();
    assert.ok(now === old || now === tip, `after a kill: ${now}`);
    // A kill inside the ref transaction (a fraction of a millisecond) leaves the ref's lock, as a
    // killed git leaves its own: the only one there can be, and git's message says to remove it.
    const locks = files(join(path, 'refs')).filter((f) => f.endsWith('.lock'));
    assert.ok(locks.length === 0 || (locks.length === 1 && locks[0] === 'heads/main.lock'), locks.join());
    for (const lock of locks) rmSync(join(path, 'refs', lock));
    git(path, ['fsck', '--full', '--no-dangling', '--no-progress']);
  }
  // Whatever a kill left in a quarantine is git prune's; the next push goes through.
  git(path, ['update-ref', 'refs/heads/main', old]);
  assert.match(await run(undefined), /ok refs\/heads\/main/);
  assert.equal(git(path, ['rev-parse', 'main']).toString().trim(), tip);
  git(path, ['prune']);
  assert.deepEqual(files(join(path, 'objects')).filter((f) => f.startsWith('tmp_objdir')), []);
});

test('a push over git:// to git\'s own receive-pack (git daemon), with packwright as its index-pack and unpack-objects, completes: the pack is read to its trailer on a connection the pusher keeps open', async () => {
  using dir = tempDir();
  const src = makeHistoryRepo(dir.path, 'sha1');
  // git's exec path, but `git index-pack` and `git unpack-objects` (what receive-pack runs) are packwright.
  const gitExec = git(dir.path, ['--exec-path']).toString().trim();
  const exec = join(dir.path, 'exec');
  mkdirSync(exec);
  for (const name of readdirSync(gitExec)) if (name !== 'git') symlinkSync(join(gitExec, name), join(exec, name));
  writeFileSync(join(exec, 'git'), `#!/bin/sh\nfor a in "$@"; do case "$a" in -*) ;; index-pack|unpack-objects) echo "$a" >>${JSON.stringify(join(dir.path, 'ran'))}; exec ${JSON.stringify(process.execPath)} ${JSON.stringify(CLI)} "$@";; *) break;; esac; done\nexec ${JSON.stringify(join(gitExec, 'git'))} "$@"\n`);
  chmodSync(join(exec, 'git'), 0o755);
  const env = { ...GIT_ENV, GIT_EXEC_PATH: exec, PATH: `${exec}:${process.env['PATH'] ?? ''}` };
  const server = createServer((socket) => {
    const child = spawn(join(exec, 'git'), ['daemon', '--inetd', '--export-all', '--enable=receive-pack', `--base-path=${dir.path}`], { env, stdio: ['pipe', 'pipe', 'ignore'] });
    socket.pipe(child.stdin);
    child.stdout.pipe(socket);
    socket.on('error', () => child.kill());
    child.stdin.on('error', () => undefined);
    child.on('close', () => socket.end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const url = `git://127.0.0.1:${(server.address() as AddressInfo).port}/daemon.git`;
    const path = target(dir.path, 'daemon.git', 'sha1');
    // Over the unpack limit (index-pack --stdin --fix-thin), then under it (unpack-objects).
    for (const refspec of ['main~5:refs/heads/main', 'main:refs/heads/main']) {
      const pushed = await Promise.race([
        gitAsync(src, ['push', '--porcelain', url, refspec]),
        new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`git push ${refspec} did not finish`)), 30_000).unref()),
      ]);
      assert.equal(pushed.status, 0, pushed.stderr);
    }
    assert.equal(git(path, ['rev-parse', 'main']).toString(), git(src, ['rev-parse', 'main']).toString());
    assert.equal(readFileSync(join(dir.path, 'ran'), 'utf8'), 'index-pack\nunpack-objects\n');
    git(path, ['fsck', '--full', '--no-dangling']);
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
});
