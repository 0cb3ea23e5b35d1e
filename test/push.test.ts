import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, cpSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { git, GIT_ENV, makeHistoryRepo, runPackwright, tempDir, type Format } from './helpers/git.js';
import { packwrightServers } from './helpers/servers.js';
import { push } from '../src/client/index.js';
import { execFileAsync } from './helpers/spawn-client.js';


/** Local history moved on: commits on main, a tag, a new branch, `topic` rewritten (not a fast-forward). */
function moveOn(work: string): void {
  const commit = (parent: string, msg: string): string => git(work, ['commit-tree', `${parent}^{tree}`, '-p', parent, '-m', msg]).toString().trim();
  const tip = commit(commit('main', 'one more'), 'two more');
  git(work, ['update-ref', 'refs/heads/main', tip]);
  git(work, ['tag', '-a', '-m', 'next', 'v2.0', tip]);
  git(work, ['update-ref', 'refs/heads/new', 'main~1']);
  git(work, ['update-ref', 'refs/heads/topic', commit('origin/topic~1', 'rewritten')]);
}

/** A server (a mirror of the history repository) and a clone of it whose history moved on. */
function serverAndWork(dir: string): { server: string; work: string } {
  const server = join(dir, 'server.git');
  git(dir, ['clone', '-q', '--mirror', makeHistoryRepo(dir, 'sha1'), server]);
  const work = join(dir, 'work');
  git(dir, ['clone', '-q', '--no-checkout', server, work]);
  moveOn(work);
  return { server, work };
}

const REFSPECS = ['main', 'v2.0', 'new', 'topic', ':oct-a'];

for (const format of ['sha1', 'sha256'] as Format[]) {
  test(`push leaves the server and the remote-tracking refs as git push does, and says it in git's words (${format}; SHA-1 to a path, HTTP served by packwright and git's receive-pack, SHA-256 over git://)`, async () => {
    using dir = tempDir();
    const history = makeHistoryRepo(dir.path, format);
    const base = join(dir.path, 'base');
    git(dir.path, ['clone', '-q', '--no-checkout', history, base]);
    moveOn(base);
    const servers = [0, 1].map((i) => {
      const s = join(dir.path, `server-${i}.git`);
      git(dir.path, ['clone', '-q', '--mirror', history, s]);
      return s;
    });
    await using theirServer = await packwrightServers(servers[0] as string, GIT_ENV, { push: true });
    await using ourServer = await packwrightServers(servers[1] as string, GIT_ENV, { push: true });
    const kinds = format === 'sha1' ? ['path', 'http', 'git-receive-pack'] : ['git'];
    for (const [i, kind] of kinds.entries()) {
      // A fresh pair of servers for each kind: the same starting state.
      for (const s of servers) {
        git(s, ['update-ref', 'refs/heads/main', git(history, ['rev-parse', 'main']).toString().trim()]);
        for (const ref of ['topic', 'oct-a']) git(s, ['update-ref', `refs/heads/${ref}`, git(history, ['rev-parse', ref]).toString().trim()]);
        for (const ref of ['refs/heads/new', 'refs/tags/v2.0']) git(s, ['update-ref', '-d', ref]);
      }
      const urls = servers.map((s, k) => (kind === 'http' ? (k === 0 ? theirServer : ourServer).http : kind === 'git' ? (k === 0 ? theirServer : ourServer).git : kind === 'git-receive-pack' ? `file://${s}` : s));
      const works = [0, 1].map((k) => {
        const w = join(dir.path, `work-${i}-${k}`);
        cpSync(base, w, { recursive: true });
        git(w, ['remote', 'set-url', 'origin', urls[k] as string]);
        return w;
      });
      const extra = kind === 'git-receive-pack' ? ['--receive-pack=git-receive-pack'] : [];
      const theirs = await execFileAsync('git', ['push', ...extra, 'origin', ...REFSPECS], { cwd: works[0], env: GIT_ENV }).then(() => assert.fail('topic is not a fast-forward'), (e: { code: number; stderr: string }) => e);
      const ours = await runPackwright(works[1] as string, ['push', ...extra, 'origin', ...REFSPECS], { env: GIT_ENV });
      assert.equal(ours.status, theirs.code, ours.stderr);
      assert.equal(ours.stderr.replaceAll(urls[1] as string, 'URL'), theirs.stderr.replaceAll(urls[0] as string, 'URL'), kind);
      assert.match(ours.stderr, /! \[rejected\] +topic -> topic \(non-fast-forward\)/);
      assert.equal(git(servers[1] as string, ['for-each-ref']).toString(), git(servers[0] as string, ['for-each-ref']).toString(), kind);
      assert.equal(git(works[1] as string, ['for-each-ref']).toString(), git(works[0] as string, ['for-each-ref']).toString(), kind);
      assert.equal(readFileSync(join(works[1] as string, '.git/logs/refs/remotes/origin/main'), 'utf8'), readFileSync(join(works[0] as string, '.git/logs/refs/remotes/origin/main'), 'utf8'));
      git(servers[1] as string, ['fsck', '--full', '--no-dangling']);
    }
  });
}

test("push: --force, --force-with-lease, --atomic, --delete, --follow-tags and a server hook's refusal, as git judges them", async () => {
  using dir = tempDir();
  const { server, work } = serverAndWork(dir.path);
  const statuses = (refs: readonly { remoteRef: string; status: string; reason?: string | undefined; forced: boolean }[]): string[] =>
    refs.map((r) => `${r.remoteRef} ${r.status}${r.reason !== undefined ? ` (${r.reason})` : ''}${r.forced ? ' forced' : ''}`);
  // --atomic: one refusal refuses all; nothing changes on the server.
  const before = git(server, ['for-each-ref']).toString();
  const atomic = await push({ dir: work, env: GIT_ENV, refspecs: ['main', 'topic'], atomic: true });
  assert.deepEqual(statuses(atomic.refs), ['refs/heads/main rejected (atomic push failed)', 'refs/heads/topic rejected (non-fast-forward)']);
  assert.equal(git(server, ['for-each-ref']).toString(), before);
  // --force-with-lease: refused while the server's ref is not what origin/topic says; then forced.
  git(server, ['update-ref', 'refs/heads/topic', 'refs/heads/main']);
  const stale = await push({ dir: work, env: GIT_ENV, refspecs: ['topic'], forceWithLease: true });
  assert.deepEqual(statuses(stale.refs), ['refs/heads/topic rejected (stale info)']);
  git(work, ['fetch', '-q', 'origin']);
  const leased = await push({ dir: work, env: GIT_ENV, refspecs: ['topic'], forceWithLease: true });
  assert.deepEqual(statuses(leased.refs), ['refs/heads/topic ok forced']);
  assert.equal(git(server, ['rev-parse', 'topic']).toString(), git(work, ['rev-parse', 'topic']).toString());
  // A pre-receive hook that refuses: the server's reason, and its words on stderr as `remote:`
  // lines, as git shows them: a line that came in two packets (the hook pauses) is one line, a
  // progress meter's `\r` updates each end with git's suffix (eight spaces off a terminal).
  const hook = join(server, 'hooks', 'pre-receive');
  writeFileSync(hook, '#!/bin/sh\nprintf "Checking: 50%%"; sleep 0.1; printf "\\rChecking: 100%%\\r"; sleep 0.1; printf "\\nno pushes"; sleep 0.1; echo " on Fridays"\nexit 1\n');
  chmodSync(hook, 0o755);
  const refused = await runPackwright(work, ['push', 'origin', 'main'], { env: GIT_ENV });
  assert.equal(refused.status, 1);
  const gitRefused = await execFileAsync('git', ['push', 'origin', 'main'], { cwd: work, env: GIT_ENV }).then(() => assert.fail('the hook refuses'), (e: { stderr: string }) => e);
  const remoteLines = (text: string): string => text.split(/(?<=[\r\n])/).filter((l) => l.startsWith('remote:')).join('');
  assert.equal(remoteLines(refused.stderr), remoteLines(gitRefused.stderr));
  assert.equal(remoteLines(refused.stderr), 'remote: Checking: 50%        \rremote: Checking: 100%        \rremote: \nremote: no pushes on Fridays        \n');
  assert.match(refused.stderr, / ! \[remote rejected\] main -> main \(pre-receive hook declined\)\n/);
  writeFileSync(hook, '#!/bin/sh\nexit 0\n');
  // --delete, and a push of everything up to date.
  const deleted = await runPackwright(work, ['push', '--delete', 'origin', 'oct-a'], { env: GIT_ENV });
  assert.equal(deleted.status, 0, deleted.stderr);
  assert.match(deleted.stderr, / - \[deleted\] +oct-a\n/);
  assert.throws(() => git(server, ['rev-parse', '--verify', '-q', 'refs/heads/oct-a']));
  assert.throws(() => git(work, ['rev-parse', '--verify', '-q', 'refs/remotes/origin/oct-a']));
  const again = await runPackwright(work, ['push', 'origin', 'topic'], { env: GIT_ENV });
  assert.equal(again.stderr, 'Everything up-to-date\n');
  // --follow-tags: the annotated tag on what is pushed goes too; a lightweight one does not.
  git(work, ['tag', 'light-new', 'topic']);
  git(work, ['tag', '-a', '-m', 'on topic', 'annotated-new', 'topic']);
  const followed = await push({ dir: work, env: GIT_ENV, refspecs: ['topic'], followTags: true });
  assert.deepEqual(statuses(followed.refs), ['refs/heads/topic up-to-date', 'refs/tags/annotated-new ok']);
  assert.throws(() => git(server, ['rev-parse', '--verify', '-q', 'refs/tags/light-new']));
});

test("push: --dry-run changes nothing and reports as git does; a plain refspec goes where remote.<name>.push or push.default=upstream sends it; a branch section without a name is refused", async () => {
  using dir = tempDir();
  const { server, work } = serverAndWork(dir.path);
  // --dry-run: git's report (porcelain too), git's exit status, and neither side changed.
  const before = [git(server, ['for-each-ref']).toString(), git(work, ['for-each-ref']).toString()];
  for (const args of [['--dry-run', 'origin', 'main', 'new'], ['--porcelain', '-n', 'origin', 'main', 'topic']]) {
    const ours = await runPackwright(work, ['push', ...args], { env: GIT_ENV });
    const theirs = await execFileAsync('git', ['push', ...args], { cwd: work, env: GIT_ENV }).then((r) => ({ status: 0, ...r }), (e: { code: number; stdout: string; stderr: string }) => ({ status: e.code, stdout: e.stdout, stderr: e.stderr }));
    assert.equal(ours.status, theirs.status, args.join(' '));
    assert.equal(ours.stdout.toString(), theirs.stdout, args.join(' '));
    assert.equal(ours.stderr, theirs.stderr, args.join(' '));
  }
  assert.deepEqual([git(server, ['for-each-ref']).toString(), git(work, ['for-each-ref']).toString()], before);
  // A refspec without a colon, through the remote's push refspecs, then through the upstream.
  const mirror = (name: string): string => {
    const d = join(dir.path, name);
    git(dir.path, ['init', '-q', '--bare', d]);
    return d;
  };
  const viaPush = mirror('via-push.git');
  git(work, ['config', 'remote.dst.url', viaPush]);
  git(work, ['config', 'remote.dst.push', '+refs/heads/*:refs/remotes/src/*']);
  assert.equal((await runPackwright(work, ['push', '-q', 'dst', 'main'], { env: GIT_ENV })).status, 0);
  assert.equal(git(viaPush, ['for-each-ref', '--format=%(refname) %(objectname)']).toString(), `refs/remotes/src/main ${git(work, ['rev-parse', 'main']).toString()}`);
  const viaUpstream = mirror('via-upstream.git');
  git(work, ['config', '--unset', 'remote.dst.push']);
  git(work, ['config', 'remote.dst.url', viaUpstream]);
  git(work, ['config', 'push.default', 'upstream']);
  git(work, ['config', 'branch.main.remote', 'dst']);
  git(work, ['config', 'branch.main.merge', 'refs/heads/trunk']);
  assert.equal((await runPackwright(work, ['push', '-q', 'dst', 'main'], { env: GIT_ENV })).status, 0);
  assert.equal(git(viaUpstream, ['for-each-ref', '--format=%(refname)']).toString(), 'refs/heads/trunk\n');
  // `[branch ""]`: git's words, and nothing sent.
  git(work, ['config', 'branch..remote', 'dst']);
  const refused = await runPackwright(work, ['push', 'dst', 'main:refs/heads/other'], { env: GIT_ENV });
  assert.equal(refused.status, 128);
  assert.match(refused.stderr, /^fatal: bad config variable 'branch\.\.remote' in file '.*config' at line \d+\n$/);
  assert.equal(git(viaUpstream, ['for-each-ref', '--format=%(refname)']).toString(), 'refs/heads/trunk\n');
});

test("push.negotiate: what a fetch's negotiation finds the server has is left out of the pack, as git's; without protocol v2 a warning and the push as without it", async () => {
  using dir = tempDir();
  const src = makeHistoryRepo(dir.path, 'sha1');
  const base = git(src, ['rev-parse', 'main~3']).toString().trim();
  const wrote = (file: string): string => /"write_pack_file\/wrote","value":"(\d+)"/.exec(readFileSync(file, 'utf8'))?.[1] ?? 'none';
  const results: string[][] = [];
  for (const side of ['packwright', 'git']) {
    const out: string[] = [];
    for (const [i, env] of [{ GIT_TEST_PROTOCOL_VERSION: '2' }, { GIT_TEST_PROTOCOL_VERSION: '0' }].entries()) {
      // The server has main~3's history under a ref it hides from pushes and fetches alike.
      const server = join(dir.path, `${side}-${i}-server.git`);
      git(dir.path, ['init', '-q', '--bare', server]);
      git(src, ['push', '-q', server, `${base}:refs/hidden/base`]);
      git(server, ['config', 'transfer.hideRefs', 'refs/hidden']);
      const trace = join(dir.path, `${side}-${i}.trace`);
      const args = ['-c', 'push.negotiate=true', 'push', server, `main:refs/heads/pushed-${i}`];
      const all = { ...GIT_ENV, ...env, GIT_TRACE2_EVENT: trace };
      const stderr = side === 'git' ? (await execFileAsync('git', args, { cwd: src, env: all })).stderr : (await runPackwright(src, args, { env: all })).stderr;
      out.push(wrote(trace), stderr.split('\n').filter((l) => l.startsWith('warning:')).join('\n'));
      git(server, ['fsck', '--no-progress']);
    }
    results.push(out);
  }
  assert.deepEqual(results[0], results[1]);
  assert.equal(results[0]?.[1], '');
  assert.equal(results[0]?.[3], 'warning: --negotiate-only requires protocol v2\nwarning: push negotiation failed; proceeding anyway with push');
  assert.ok(Number(results[0]?.[0]) < Number(results[0]?.[2]), 'the negotiated pack is the smaller');
});

test("GIT_TRACE_PACKET: a push's packets as git's push traces them, the report through the side band as sideband", async () => {
  using dir = tempDir();
  const { work } = serverAndWork(dir.path);
  const traces: string[][] = [];
  for (const side of ['packwright', 'git']) {
    const target = join(dir.path, `${side}.git`);
    git(dir.path, ['init', '-q', '--bare', target]);
    const file = join(dir.path, `${side}.trace`);
    // The same server for both: git's receive-pack, whose own lines are left out.
    const env = { ...GIT_ENV, GIT_TRACE_PACKET: file, GIT_TRACE_BARE: '1' };
    const args = ['push', '-q', '--receive-pack=git receive-pack', target, 'main'];
    if (side === 'git') await execFileAsync('git', args, { cwd: work, env });
    else assert.equal((await runPackwright(work, args, { env })).status, 0);
    traces.push(readFileSync(file, 'utf8').split('\n').filter((l) => /^packet: +(push|sideband)[<>]/.test(l)).map((l) => l.replace(/agent=\S+/, 'agent=X')).sort());
  }
  assert.deepEqual(traces[0], traces[1]);
  assert.ok((traces[0] as string[]).some((l) => /^packet: {9}push> 0{40} [0-9a-f]{40} refs\/heads\/main\\0/.test(l)));
  assert.ok((traces[0] as string[]).includes('packet:         push< unpack ok'));
});

test("the pre-push hook: run as git runs it (remote name and URL, a line a ref on stdin, in the work tree), a failure stops the push before anything is sent, --no-verify and onPrePush", async () => {
  using dir = tempDir();
  const { server, work } = serverAndWork(dir.path);
  const before = git(server, ['for-each-ref']).toString();
  // The hook keeps what it was given, beside the work tree, and fails when told to.
  const hook = join(work, '.git/hooks/pre-push');
  writeFileSync(hook, '#!/bin/sh\n{ echo "$1 $2 $(basename "$PWD")"; cat; } >"../hook-$SIDE"\necho to-stdout; echo to-stderr >&2\ntest -z "$FAIL"\n');
  chmodSync(hook, 0o755);
  const refspecs = [...REFSPECS, 'main~1:refs/heads/older', 'HEAD:refs/heads/head'];
  for (const fail of [true, false]) {
    const theirs = join(dir.path, `theirs-${fail}`);
    const ours = join(dir.path, `ours-${fail}`);
    for (const w of [theirs, ours]) cpSync(work, w, { recursive: true });
    for (const s of [`${server}-theirs-${fail}`, `${server}-ours-${fail}`]) cpSync(server, s, { recursive: true });
    git(theirs, ['remote', 'set-url', 'origin', `${server}-theirs-${fail}`]);
    git(ours, ['remote', 'set-url', 'origin', `${server}-ours-${fail}`]);
    const env = { ...GIT_ENV, SIDE: `${fail}`, ...(fail ? { FAIL: '1' } : {}) };
    const g = await execFileAsync('git', ['push', 'origin', ...refspecs], { cwd: theirs, env }).then((r) => ({ code: 0, ...r }), (e: { code: number; stdout: string; stderr: string }) => e);
    // Our hook writes where git's did: the file is read, then made again by ours.
    const gitHookSaw = readFileSync(join(dir.path, `hook-${fail}`), 'utf8');
    const r = await runPackwright(ours, ['push', 'origin', ...refspecs], { env });
    assert.equal(r.status, g.code, r.stderr);
    const normal = (text: string, side: string): string => text.replaceAll(`${server}-${side}-${fail}`, 'S').replaceAll(`${side}-${fail}`, 'W');
    assert.equal(normal(readFileSync(join(dir.path, `hook-${fail}`), 'utf8'), 'ours'), normal(gitHookSaw, 'theirs'));
    assert.equal(r.stdout.toString(), g.stdout);
    if (fail) {
      assert.equal(normal(r.stderr, 'ours'), normal(g.stderr, 'theirs'));
      assert.equal(git(`${server}-ours-${fail}`, ['for-each-ref']).toString(), before);
    }
    assert.equal(git(`${server}-ours-${fail}`, ['for-each-ref']).toString(), git(`${server}-theirs-${fail}`, ['for-each-ref']).toString());
  }
  // --no-verify: the hook is not run, the push goes through.
  const skipped = join(dir.path, 'skipped');
  cpSync(work, skipped, { recursive: true });
  git(skipped, ['remote', 'set-url', 'origin', `${server}-ours-true`]);
  const r = await runPackwright(skipped, ['push', '--no-verify', 'origin', 'new'], { env: { ...GIT_ENV, SIDE: 'skipped', FAIL: '1' } });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(git(`${server}-ours-true`, ['rev-parse', 'new']).toString(), git(work, ['rev-parse', 'new']).toString());
  // The library's callback sees the same lines, and its no stops the push.
  let seen: unknown;
  const declined = await push({ dir: skipped, remote: 'origin', refspecs: ['main'], noVerify: true, onPrePush: (e) => ((seen = e), false) });
  assert.equal(declined.declined, true);
  assert.equal(declined.ok, false);
  assert.deepEqual(seen, { remote: 'origin', url: `${server}-ours-true`, updates: [{ localRef: 'refs/heads/main', localOid: git(work, ['rev-parse', 'main']).toString().trim(), remoteRef: 'refs/heads/main', remoteOid: git(server, ['rev-parse', 'main']).toString().trim() }] });
  assert.equal(git(`${server}-ours-true`, ['rev-parse', 'main']).toString(), git(server, ['rev-parse', 'main']).toString());
});

test("push -u (--set-upstream): branch.<name>.remote and .merge written as git writes them, its lines on stdout; --dry-run only says so; a deletion or a tag sets nothing", async () => {
  using dir = tempDir();
  const { server, work } = serverAndWork(dir.path);
  git(work, ['symbolic-ref', 'HEAD', 'refs/heads/new']);
  // A branch section already there (its merge replaced), and branch.autoSetupRebase.
  git(work, ['config', 'branch.main.merge', 'refs/heads/elsewhere']);
  git(work, ['config', 'branch.autoSetupRebase', 'remote']);
  const runs: string[][] = [['-u', '--dry-run', 'origin', 'main'], ['-u', 'origin', 'main', 'HEAD:refs/heads/other', 'v2.0', ':oct-a'], ['--set-upstream', 'origin', 'new']];
  const sides = ['theirs', 'ours'].map((side) => {
    const w = join(dir.path, side);
    const s = `${server}-${side}`;
    cpSync(work, w, { recursive: true });
    cpSync(server, s, { recursive: true });
    git(w, ['remote', 'set-url', 'origin', s]);
    return w;
  });
  for (const args of runs) {
    const g = await execFileAsync('git', ['push', ...args], { cwd: sides[0], env: GIT_ENV });
    const r = await runPackwright(sides[1] as string, ['push', ...args], { env: GIT_ENV });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout.toString(), g.stdout, args.join(' '));
    assert.equal(readFileSync(join(sides[1] as string, '.git/config'), 'utf8').replaceAll('ours', 'SIDE'), readFileSync(join(sides[0] as string, '.git/config'), 'utf8').replaceAll('theirs', 'SIDE'), args.join(' '));
  }
  // HEAD pushed to `other` made `new` track it, then `new` pushed to itself: the merge line replaced, last.
  assert.match(readFileSync(join(sides[1] as string, '.git/config'), 'utf8'), /\[branch "new"\]\n\tremote = origin\n\trebase = true\n\tmerge = refs\/heads\/new\n/);
});

test("push checks each refspec's source before contacting the server, as git's check_push_refs: no such ref or object, or a short name that matches more than one ref", async () => {
  using dir = tempDir();
  const { server, work } = serverAndWork(dir.path);
  git(work, ['tag', 'new']);
  // A receive-pack that only says it ran: it must not.
  const fake = join(dir.path, 'fake-receive-pack');
  writeFileSync(fake, `#!/bin/sh\ntouch "${dir.path}/ran"\nexit 1\n`);
  chmodSync(fake, 0o755);
  for (const refspecs of [['missing'], ['new'], ['nosuch~2:main'], ['missing', 'new', 'main']]) {
    const args = ['push', `--receive-pack=${fake}`, server, ...refspecs];
    const g = await execFileAsync('git', args, { cwd: work, env: GIT_ENV }).then(() => assert.fail('git pushed'), (e: { code: number; stderr: string }) => e);
    // (git's own push may start the receive-pack for a revision that does not resolve; ours must not.)
    rmSync(join(dir.path, 'ran'), { force: true });
    const r = await runPackwright(work, args, { env: GIT_ENV });
    assert.equal(r.status, g.code, refspecs.join(' '));
    assert.equal(r.stderr, g.stderr, refspecs.join(' '));
    assert.ok(!existsSync(join(dir.path, 'ran')), refspecs.join(' '));
  }
});

test("push without refspecs as git's push.default: no upstream, an upstream of another name, upstream to another remote (git's words), push.autoSetupRemote, and nothing in common with an empty server", async () => {
  using dir = tempDir();
  const { server, work } = serverAndWork(dir.path);
  git(work, ['symbolic-ref', 'HEAD', 'refs/heads/new']);
  const empty = join(dir.path, 'empty.git');
  git(dir.path, ['init', '-q', '--bare', empty]);
  const cases: [string, string[], string[]][] = [
    ['no upstream', [], ['push']],
    ['another name', ['branch.new.remote=origin', 'branch.new.merge=refs/heads/main'], ['push']],
    ['another name, upstream mode', ['branch.new.remote=origin', 'branch.new.merge=refs/heads/main', 'push.default=upstream'], ['push', '--dry-run']],
    ['upstream mode, another remote', ['push.default=upstream', 'branch.new.remote=elsewhere', 'branch.new.merge=refs/heads/new'], ['push', 'origin']],
    ['autoSetupRemote', ['push.autoSetupRemote=true'], ['push']],
    ['nothing in common', [], ['push', empty, ':']],
  ];
  for (const [name, config, args] of cases) {
    const sides = ['theirs', 'ours'].map((side) => {
      const w = join(dir.path, `${side}-${name.replaceAll(' ', '-').replaceAll(',', '')}`);
      cpSync(work, w, { recursive: true });
      cpSync(server, `${w}.git`, { recursive: true });
      git(w, ['remote', 'set-url', 'origin', `${w}.git`]);
      for (const c of config) git(w, ['config', ...c.split('=')]);
      return w;
    });
    const g = await execFileAsync('git', args, { cwd: sides[0], env: GIT_ENV }).then((r) => ({ code: 0, ...r }), (e: { code: number; stdout: string; stderr: string }) => e);
    const r = await runPackwright(sides[1] as string, args, { env: GIT_ENV });
    const normal = (text: string, side: string): string => text.replaceAll(join(dir.path, side), 'W').replaceAll(side, 'W');
    // git's push to an empty server over a pipe also loses its receive-pack ("the remote end hung up"): not repeated here.
    const gitSaid = g.stderr.replace('fatal: the remote end hung up unexpectedly\n', '');
    assert.equal(r.status === 0, g.code === 0, `${name}: ${r.stderr}`);
    assert.equal(normal(r.stderr, 'ours'), normal(gitSaid, 'theirs'), name);
    assert.equal(normal(r.stdout.toString(), 'ours'), normal(g.stdout, 'theirs'), name);
    assert.equal(git(`${sides[1] as string}.git`, ['for-each-ref']).toString(), git(`${sides[0] as string}.git`, ['for-each-ref']).toString(), name);
    assert.equal(readFileSync(join(sides[1] as string, '.git/config'), 'utf8').replaceAll('ours', 'W'), readFileSync(join(sides[0] as string, '.git/config'), 'utf8').replaceAll('theirs', 'W'), name);
  }
});

test("push from a shallow clone: its boundary sent as git's send-pack sends it, the pack cut there; under transfer.fsckObjects the boundary's parents are not asked for, and the server refuses or takes it as git's receive-pack does", async () => {
  using dir = tempDir();
  const history = makeHistoryRepo(dir.path, 'sha1');
  const shallow = join(dir.path, 'shallow');
  git(dir.path, ['clone', '-q', '--no-local', '--depth=1', '--no-checkout', history, shallow]);
  git(shallow, ['update-ref', 'refs/heads/main', git(shallow, ['commit-tree', 'HEAD^{tree}', '-p', 'HEAD', '-m', 'on top']).toString().trim()]);
  for (const shallowUpdate of [false, true]) {
    const results: string[] = [];
    for (const side of ['git', 'packwright']) {
      const server = join(dir.path, `server-${side}-${shallowUpdate}.git`);
      git(dir.path, ['init', '-q', '--bare', server]);
      git(server, ['config', 'transfer.fsckObjects', 'true']);
      if (shallowUpdate) git(server, ['config', 'receive.shallowUpdate', 'true']);
      const args = ['push', ...(side === 'git' ? ['--receive-pack=git-receive-pack'] : []), server, 'main:refs/heads/pushed'];
      const r = await runPackwright(shallow, args, { env: GIT_ENV });
      results.push(`${r.status} ${r.stderr.replaceAll(server, 'S')} ${git(server, ['for-each-ref']).toString()}`);
      if (r.status === 0) git(server, ['fsck', '--no-progress', '--no-dangling']);
    }
    assert.equal(results[1], results[0], `receive.shallowUpdate=${shallowUpdate}`);
    assert.match(results[0] as string, shallowUpdate ? /^0 / : /shallow update not allowed/);
  }
});

test("a destination git cannot place (an object id or a remote-tracking ref to a short name): git's error and advice, advice.pushUnqualifiedRefName, nothing sent", async () => {
  using dir = tempDir();
  const { server, work } = serverAndWork(dir.path);
  const before = git(server, ['for-each-ref']).toString();
  const commit = git(work, ['rev-parse', 'main']).toString().trim();
  const tag = git(work, ['rev-parse', 'v2.0']).toString().trim();
  const tree = git(work, ['rev-parse', 'main^{tree}']).toString().trim();
  for (const [config, refspec] of [[[], `${commit}:dst`], [[], `${tag}:dst`], [[], `${tree}:dst`], [[], 'refs/remotes/origin/main:dst'], [['-c', 'advice.pushUnqualifiedRefName=false'], `${commit}:dst`]] as const) {
    const args = [...config, 'push', server, refspec];
    const g = await execFileAsync('git', args, { cwd: work, env: GIT_ENV }).then(() => assert.fail('git pushed'), (e: { code: number; stderr: string }) => e);
    const r = await runPackwright(work, args, { env: GIT_ENV });
    assert.equal(r.status, g.code, refspec);
    assert.equal(r.stderr, g.stderr, refspec);
  }
  assert.equal(git(server, ['for-each-ref']).toString(), before);
});

test('colors as git push colors its lines: color.transport\'s rejected ref lines, color.push\'s error, color.advice\'s hints (always, their slots), none unless asked off a terminal (not by color.ui)', async () => {
  using dir = tempDir();
  const { server, work } = serverAndWork(dir.path);
  const copies = [0, 1].map((k) => {
    const s = join(dir.path, `server-${k}.git`);
    cpSync(server, s, { recursive: true });
    const w = join(dir.path, `work-${k}`);
    cpSync(work, w, { recursive: true });
    git(w, ['remote', 'set-url', 'origin', s]);
    return w;
  });
  const settings: string[][] = [
    ['-c', 'color.transport=always', '-c', 'color.advice=always', '-c', 'color.push=always'],
    ['-c', 'color.transport=true', '-c', 'color.push', '-c', 'color.advice=auto', '-c', 'color.transport=always', '-c', 'color.push=always', '-c', 'color.advice=always',
      '-c', 'color.transport.rejected=bold magenta', '-c', 'color.push.error=blue ul', '-c', 'color.advice.hint=#00ff00', '-c', 'color.advice.reset=normal'],
    ['-c', 'color.transport=always', '-c', 'color.push=false', '-c', 'color.advice=never'],
    // git's push reads no color.ui: off a terminal, none.
    ['-c', 'color.ui=always'],
    [],
  ];
  for (const config of settings) {
    // topic is not a fast-forward: refused, after main and the rest went.
    const args = [...config, 'push', 'origin', 'topic', 'main', 'new'];
    const theirs = await execFileAsync('git', args, { cwd: copies[0], env: GIT_ENV }).then(() => assert.fail('refused'), (e: { code: number; stderr: string }) => e);
    const ours = await runPackwright(copies[1] as string, args, { env: GIT_ENV });
    assert.equal(ours.status, theirs.code);
    const shown = (text: string, k: number): string => text.replaceAll(join(dir.path, `server-${k}.git`), 'SERVER');
    assert.equal(shown(ours.stderr, 1), shown(theirs.stderr, 0), config.join(' '));
    assert.equal(theirs.stderr.includes('\x1b['), config.some((c) => /^color\.(transport|push|advice)=always$/.test(c)), config.join(' '));
  }
});
