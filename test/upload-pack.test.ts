import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { casesFor, CLI, git, GIT_ENV, makeHistoryRepo, runPackwright, tempDir, type Format } from './helpers/git.js';
import { execFileAsync, execGit } from './helpers/spawn-client.js';
import { packwrightDaemon } from './helpers/servers.js';
import { encodePacket, PacketReader } from '../src/protocol/index.js';
import { PassThrough, Readable } from 'node:stream';
import { Repository } from '../src/repo/index.js';
import { uploadPack } from '../src/serve/index.js';


const FORMATS: Format[] = ['sha1', 'sha256'];
/** git runs this through the shell for every connection: packwright standing in for git's upload-pack. */
const UPLOAD_PACK = `${JSON.stringify(process.execPath)} ${JSON.stringify(CLI)} upload-pack`;

/** What a clone or fetch left: refs, the shallow boundary, every object received. */
function state(repo: string): string {
  const bare = existsSync(join(repo, 'HEAD'));
  const gitDir = bare ? repo : join(repo, '.git');
  const shallow = existsSync(join(gitDir, 'shallow')) ? readFileSync(join(gitDir, 'shallow'), 'utf8').split('\n').sort().join('\n') : '';
  const objects = git(repo, ['cat-file', '--batch-all-objects', '--batch-check=%(objectname) %(objecttype)']).toString();
  return `${git(repo, ['show-ref', '--head']).toString()}\nshallow:\n${shallow}\nobjects:\n${objects}`;
}

/** git, asynchronously (the server answering it runs in this process). */
async function gitAsync(cwd: string, args: string[]): Promise<string> {
  const { stdout } = await execFileAsync('git', args, { cwd, env: GIT_ENV, maxBuffer: 1 << 28 });
  return stdout;
}

/** `git clone` twice, from git's upload-pack and from packwright's over git://, with the same options; packwright's is checked by fsck. */
async function cloneBoth(server: { url: (path: string) => string }, dir: string, src: string, version: number, options: string[], name: string): Promise<{ ours: string; theirs: string }> {
  const theirs = join(dir, `${name}-git`);
  const ours = join(dir, `${name}-pw`);
  await Promise.all([
    gitAsync(dir, ['-c', `protocol.version=${version}`, 'clone', '-q', '--no-local', ...options, `file://${src}`, theirs]),
    gitAsync(dir, ['-c', `protocol.version=${version}`, 'clone', '-q', ...options, server.url(src), ours]),
  ]);
  await gitAsync(ours, ['fsck', '--full', '--no-dangling']);
  return { ours, theirs };
}

async function fetchBoth(repos: { ours: string; theirs: string }, version: number, options: string[]): Promise<void> {
  await Promise.all([
    gitAsync(repos.theirs, ['-c', `protocol.version=${version}`, 'fetch', '-q', ...options, 'origin']),
    gitAsync(repos.ours, ['-c', `protocol.version=${version}`, 'fetch', '-q', ...options, 'origin']),
  ]);
  await gitAsync(repos.ours, ['fsck', '--full', '--no-dangling']);
}

const daemonResource = (): ReturnType<typeof packwrightDaemon> => packwrightDaemon();

/** A commit on `branch` of a bare repository, made without a work tree. */
function commitTo(repo: string, branch: string, message: string): void {
  const parent = git(repo, ['rev-parse', branch]).toString().trim();
  const blob = git(repo, ['hash-object', '-w', '--stdin'], `${message}\n`).toString().trim();
  const base = git(repo, ['ls-tree', parent]).toString();
  const tree = git(repo, ['mktree'], `${base}100644 blob ${blob}\tnew-${message.replace(/\W/g, '-')}\n`).toString().trim();
  const commit = git(repo, ['commit-tree', tree, '-p', parent, '-m', message]).toString().trim();
  git(repo, ['update-ref', `refs/heads/${branch}`, commit]);
}

test('git clones through `packwright upload-pack` (stdio, as --upload-pack) equal git\'s own, protocol 0 and 2', () => {
  using dir = tempDir();
  const src = makeHistoryRepo(dir.path, 'sha1');
  for (const version of [0, 2]) {
    const theirs = join(dir.path, `git-${version}`);
    const ours = join(dir.path, `pw-${version}`);
    git(dir.path, ['-c', `protocol.version=${version}`, 'clone', '-q', '--mirror', '--no-local', `file://${src}`, theirs]);
    git(dir.path, ['-c', `protocol.version=${version}`, 'clone', '-q', '--mirror', `--upload-pack=${UPLOAD_PACK}`, `file://${src}`, ours]);
    git(ours, ['fsck', '--full', '--no-dangling']);
    assert.equal(state(ours), state(theirs));
    assert.equal(readFileSync(join(ours, 'packed-refs'), 'utf8'), readFileSync(join(theirs, 'packed-refs'), 'utf8'));
  }
});

test('a pack of many megabytes through `packwright upload-pack` (stdio): sent whole from a bitmapped pack and entry by entry, its buffers reused, every object arrives', () => {
  using dir = tempDir();
  const src = join(dir.path, 'src.git');
  git(dir.path, ['init', '-q', '--bare', src]);
  // ~6 MB of pack: the pack spans several of the writer's 1 MiB chunks and
  // of the whole-pack copy's 4 MiB reads, so a buffer reused before the output took it would show.
  let seed = 7;
  const word = (): string => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return seed.toString(36).padStart(7, '0');
  };
  const parts: string[] = [];
  for (let f = 0; f < 10; f++) {
    // One of them larger than two chunks, so that one entry is handed over in several.
    const data = Array.from({ length: f === 0 ? 400_000 : 70_000 }, word).join(' ');
    parts.push(`blob\nmark :${f + 1}\ndata ${data.length}\n${data}\n`);
  }
  parts.push(`commit refs/heads/main\ncommitter A <a@example.com> 1700000000 +0000\ndata 4\nbig\n${Array.from({ length: 10 }, (_, f) => `M 100644 :${f + 1} f${f}\n`).join('')}\n`);
  git(src, ['fast-import', '--quiet'], parts.join(''));
  for (const bitmap of [true, false]) {
    // No delta search: nothing here would delta, and looking takes seconds.
    git(src, ['repack', '-adq', '--window=0', bitmap ? '--write-bitmap-index' : '--no-write-bitmap-index']);
    const ours = join(dir.path, `pw-${bitmap}`);
    git(dir.path, ['clone', '-q', '--bare', `--upload-pack=${UPLOAD_PACK}`, `file://${src}`, ours]);
    git(ours, ['fsck', '--full', '--no-dangling']);
    const objects = (repo: string): string => git(repo, ['cat-file', '--batch-all-objects', '--batch-check']).toString();
    assert.equal(objects(ours), objects(src));
  }
});

for (const format of FORMATS) {
  test(`git clones served by packwright equal git's own (${format}, protocols 0 and 2): full, bare, mirror, single branch, depth`, async () => {
    using dir = tempDir();
    const src = makeHistoryRepo(dir.path, format);
    await using server = await daemonResource();
    const kinds = [['full', []], ['bare', ['--bare']], ['mirror', ['--mirror']], ['single', ['--single-branch', '--branch', 'main']], ['depth', ['--depth=3', '--no-single-branch']]] as const;
    // SHA-256 takes a third of them (casesFor), both protocols among them.
    for (const [version, [name, options]] of casesFor(format, [0, 2].flatMap((version) => kinds.map((kind) => [version, kind] as const)))) {
      const { ours, theirs } = await cloneBoth(server, dir.path, src, version, [...options], `${name}-${version}`);
      assert.equal(state(ours), state(theirs), `${name}, protocol ${version}`);
    }
    assert.deepEqual(server.errors, []);
  });
}

for (const version of [0, 2]) {
  test(`shallow clones deepened by fetch, and incremental fetches, as git's own (protocol ${version})`, async () => {
    using dir = tempDir();
    await using server = await daemonResource();
    const src = makeHistoryRepo(dir.path, 'sha1');
    git(dir.path, ['clone', '-q', '--bare', src, join(dir.path, 'src.git')]);
    const origin = join(dir.path, 'src.git');
    const cases: [string, string[], string[][]][] = [
      ['since', ['--shallow-since=@1600090000'], [['--deepen=3'], ['--unshallow']]],
      ['exclude', ['--shallow-exclude=topic'], [['--depth=5']]],
      ['depth', ['--depth=2'], [['--deepen=1'], ['--shallow-since=@1600050000']]],
    ];
    for (const [name, options, fetches] of cases) {
      const repos = await cloneBoth(server, dir.path, origin, version, options, name);
      assert.equal(state(repos.ours), state(repos.theirs), name);
      for (const f of fetches) {
        await fetchBoth(repos, version, f);
        assert.equal(state(repos.ours), state(repos.theirs), `${name} then ${f.join(' ')}`);
      }
    }
    // New commits on two branches: a fetch negotiates from what the clone has, and gets only those.
    const repos = await cloneBoth(server, dir.path, origin, version, [], 'incremental');
    commitTo(origin, 'main', `on main ${version}`);
    commitTo(origin, 'topic', `on topic ${version}`);
    git(origin, ['tag', '-a', '-m', 'new tag', `new-${version}`, 'main']);
    await fetchBoth(repos, version, ['--tags']);
    assert.equal(state(repos.ours), state(repos.theirs));
  });
}

test('partial clones (blob:none, tree:0, blob:limit) as git\'s own; a filter the server does not allow is refused in git\'s words', async () => {
  using dir = tempDir();
  await using server = await daemonResource();
  const src = makeHistoryRepo(dir.path, 'sha1');
  git(dir.path, ['clone', '-q', '--bare', src, join(dir.path, 'src.git')]);
  const origin = join(dir.path, 'src.git');
  git(origin, ['config', 'uploadpack.allowFilter', 'true']);
  for (const version of [0, 2]) {
    for (const filter of ['blob:none', 'tree:0', 'blob:limit=1k']) {
      const repos = await cloneBoth(server, dir.path, origin, version, [`--filter=${filter}`, '--bare'], `filter-${version}-${filter.replace(/\W/g, '')}`);
      assert.equal(state(repos.ours), state(repos.theirs), filter);
      assert.equal(git(repos.ours, ['config', 'remote.origin.partialclonefilter']).toString(), git(repos.theirs, ['config', 'remote.origin.partialclonefilter']).toString());
    }
  }
  git(origin, ['config', 'uploadpackfilter.tree.allow', 'false']);
  await assert.rejects(gitAsync(dir.path, ['-c', 'protocol.version=2', 'clone', '-q', '--filter=tree:0', server.url(origin), join(dir.path, 'refused')]), /filter 'tree' not supported/);
});

test('a want by id: a commit our refs reach over v2 and with allowReachableSHA1InWant, refused as "not our ref" otherwise', () => {
  using dir = tempDir();
  const src = makeHistoryRepo(dir.path, 'sha1');
  git(dir.path, ['clone', '-q', '--bare', src, join(dir.path, 'src.git')]);
  const origin = join(dir.path, 'src.git');
  const old = git(origin, ['rev-parse', 'main~5']).toString().trim();
  const client = join(dir.path, 'client');
  git(dir.path, ['init', '-q', '--bare', client]);
  git(client, ['remote', 'add', 'origin', `file://${origin}`]);
  const v0 = (): string => execFileSync('sh', ['-c', `git -c protocol.version=0 fetch -q --upload-pack='${UPLOAD_PACK}' origin ${old} 2>&1; echo status $?`], { cwd: client }).toString();
  // Without allow-reachable-sha1-in-want advertised, git's client does not even ask (the server would refuse: see the bad requests).
  const refused = v0();
  assert.match(refused, new RegExp(`Server does not allow request for unadvertised object ${old}`));
  assert.doesNotMatch(refused, /status 0/);
  git(client, ['-c', 'protocol.version=2', 'fetch', '-q', `--upload-pack=${UPLOAD_PACK}`, 'origin', old]);
  git(client, ['cat-file', '-e', old]);
  git(client, ['update-ref', '-d', 'FETCH_HEAD']);
  git(client, ['-c', 'gc.pruneExpire=now', 'gc', '-q', '--prune=now']);
  assert.throws(() => git(client, ['cat-file', '-e', old]));
  git(origin, ['config', 'uploadpack.allowReachableSHA1InWant', 'true']);
  assert.match(v0(), /status 0/);
  git(client, ['cat-file', '-e', old]);
});

/** Runs packwright's upload-pack in this process on `input`, with GIT_PROTOCOL for `version`. */
async function serve(dir: string, repo: string, input: Buffer | string, version: number, args: string[] = []): Promise<{ status: number; stdout: Buffer; stderr: string }> {
  const env = { ...process.env, GIT_PROTOCOL: version === 0 ? undefined : `version=${version}`, GIT_USER_AGENT: 'FAKE' };
  return runPackwright(dir, ['upload-pack', ...args, repo], { input, env });
}

/** git's own upload-pack on the same input. */
function gitServe(repo: string, input: Buffer | string, version: number, args: string[] = []): Buffer {
  return execGit(['upload-pack', ...args, repo], { input, env: { ...process.env, GIT_PROTOCOL: version === 0 ? '' : `version=${version}`, GIT_USER_AGENT: 'FAKE' }, stdio: ['pipe', 'pipe', 'pipe'] });
}

const pkt = (line: string): string => encodePacket(`${line}\n`).toString('latin1');

for (const format of FORMATS) {
  test(`the advertisements, ls-refs and object-info answers are git's bytes (${format})`, async () => {
    using dir = tempDir();
    const repo = makeHistoryRepo(dir.path, format);
    git(repo, ['symbolic-ref', 'refs/remotes/origin/HEAD', 'refs/heads/main']);
    git(repo, ['update-ref', 'refs/remotes/origin/main', 'main']);
    git(repo, ['config', 'uploadpack.hideRefs', 'refs/remotes/origin/main']);
    // v0 and v1 advertisements (the info/refs of HTTP), and v2's capabilities.
    for (const version of [0, 1, 2]) {
      const ours = await serve(dir.path, repo, '', version, ['--advertise-refs']);
      assert.equal(ours.status, 0, ours.stderr);
      assert.equal(ours.stdout.toString('latin1'), gitServe(repo, '', version, ['--advertise-refs']).toString('latin1'), `v${version}`);
    }
    const blob = (/ blob ([0-9a-f]+)\t/.exec(git(repo, ['ls-tree', 'main']).toString()) as RegExpExecArray)[1] as string;
    const requests = [
      `${pkt('command=ls-refs')}${pkt(`object-format=${format}`)}0001${pkt('peel')}${pkt('symrefs')}0000`,
      `${pkt('command=ls-refs')}${pkt(`object-format=${format}`)}0001${pkt('symrefs')}${pkt('ref-prefix refs/tags/')}${pkt('ref-prefix HEAD')}0000`,
      `${pkt('command=object-info')}${pkt(`object-format=${format}`)}0001${pkt('size')}${pkt(`oid ${blob}`)}${pkt(`oid ${'0'.repeat(blob.length)}`)}0000`,
    ];
    for (const request of requests) {
      const ours = await serve(dir.path, repo, request, 2, ['--stateless-rpc']);
      assert.equal(ours.status, 0, ours.stderr);
      assert.equal(ours.stdout.toString('latin1'), gitServe(repo, request, 2, ['--stateless-rpc']).toString('latin1'), request);
    }
    // An empty repository: git 2.39's upload-pack advertises nothing (a flush), and ls-refs an unborn HEAD.
    const empty = join(dir.path, 'empty.git');
    git(dir.path, ['init', '-q', '--bare', `--object-format=${format}`, '-b', 'trunk', empty]);
    assert.equal((await serve(dir.path, empty, '', 0, ['--advertise-refs'])).stdout.toString(), '0000');
    const unborn = `${pkt('command=ls-refs')}${pkt(`object-format=${format}`)}0001${pkt('symrefs')}${pkt('unborn')}0000`;
    assert.equal((await serve(dir.path, empty, unborn, 2, ['--stateless-rpc'])).stdout.toString('latin1'), gitServe(empty, unborn, 2, ['--stateless-rpc']).toString('latin1'));
  });
}

test('v2 fetch negotiation answers as git\'s: acknowledgments, ready, and the sections before the pack', async () => {
  using dir = tempDir();
  const repo = makeHistoryRepo(dir.path, 'sha1');
  const tip = git(repo, ['rev-parse', 'main']).toString().trim();
  const have = git(repo, ['rev-parse', 'main~3']).toString().trim();
  const unknown = 'f'.repeat(40);
  // Haves without done: the acknowledgments only (and "ready", since the want reaches a have).
  const ack = `${pkt('command=fetch')}${pkt('object-format=sha1')}0001${pkt(`want ${tip}`)}${pkt(`have ${unknown}`)}${pkt(`have ${have}`)}0000`;
  const ours = await serve(dir.path, repo, ack, 2, ['--stateless-rpc']);
  const theirs = gitServe(repo, ack, 2, ['--stateless-rpc']);
  // Up to the pack's first packet (progress and pack bytes differ in compression).
  const head = (b: Buffer): string => b.toString('latin1', 0, b.indexOf('packfile\n') + 9);
  assert.equal(head(ours.stdout), head(theirs));
  assert.match(head(ours.stdout), /acknowledgments\n.*ACK [0-9a-f]{40}\n.*ready\n0001.*packfile\n/s);
  // The pack that follows is a thin pack git's index-pack completes.
  const wait = `${pkt('command=fetch')}${pkt('object-format=sha1')}0001${pkt(`want ${tip}`)}${pkt(`have ${have}`)}${pkt('wait-for-done')}0000`;
  assert.equal((await serve(dir.path, repo, wait, 2, ['--stateless-rpc'])).stdout.toString('latin1'), gitServe(repo, wait, 2, ['--stateless-rpc']).toString('latin1'));
});

test('bad requests fail in git\'s words with git\'s status, telling the client where git does', async () => {
  using dir = tempDir();
  const repo = makeHistoryRepo(dir.path, 'sha1');
  const tip = git(repo, ['rev-parse', 'main']).toString().trim();
  const missing = '1'.repeat(40);
  const unadvertised = git(repo, ['rev-parse', 'main~4']).toString().trim();
  const cases: [number, string, RegExp, RegExp?][] = [
    [0, '00zz', /^fatal: protocol error: bad line length character: 00zz\n$/],
    [0, `${'fff0'}${'x'.repeat(100)}`, /^fatal: the remote end hung up unexpectedly\n$/],
    [0, '0003', /^fatal: protocol error: bad line length 3\n$/],
    [0, `${pkt('want nothing')}0000`, /^fatal: git upload-pack: protocol error, expected to get object ID, not 'want nothing'\n$/],
    [0, `${pkt(`want ${missing}`)}0000`, new RegExp(`^fatal: git upload-pack: not our ref ${missing}\\n$`), new RegExp(`ERR upload-pack: not our ref ${missing}`)],
    [0, `${pkt(`want ${unadvertised}`)}0000`, new RegExp(`^fatal: git upload-pack: not our ref ${unadvertised}\\n$`), new RegExp(`ERR upload-pack: not our ref ${unadvertised}`)],
    [0, `${pkt(`want ${tip} multi_ack`)}0000${pkt('have nonsense')}`, /^fatal: git upload-pack: expected SHA1 object, got 'nonsense'\n$/],
    [0, `${pkt(`want ${tip}`)}${pkt('deepen 0')}0000`, /^fatal: Invalid deepen: deepen 0\n$/],
    [0, `${pkt(`want ${tip}`)}${pkt('deepen-not no-such-ref')}0000`, /^fatal: git upload-pack: ambiguous deepen-not: deepen-not no-such-ref\n$/],
    [0, `${pkt(`want ${tip}`)}${pkt('filter blob:none')}0000`, /^fatal: git upload-pack: filtering capability not negotiated\n$/],
    [0, `${pkt(`want ${tip}`)}0000`, /^fatal: the remote end hung up unexpectedly\n$/],
    [2, `${pkt('command=bogus')}0000`, /^fatal: invalid command 'bogus'\n$/],
    [2, `${pkt('command=fetch')}${pkt('bogus-capability')}0000`, /^fatal: unknown capability 'bogus-capability'\n$/],
    [2, `${pkt('object-format=sha1')}0000`, /^fatal: no command requested\n$/],
    [2, `${pkt('command=fetch')}${pkt('object-format=sha256')}0000`, /^fatal: mismatched object format: server sha1; client sha256\n$/],
    [2, `${pkt('command=fetch')}0001${pkt('bogus')}0000`, /^fatal: unexpected line: 'bogus'\n$/],
    [2, `${pkt('command=ls-refs')}0001${pkt('peel')}`, /^fatal: the remote end hung up unexpectedly\n$/],
    [2, `${pkt('command=ls-refs')}0001${pkt('peel')}0001`, /^fatal: expected flush after ls-refs arguments\n$/],
    [2, `${pkt('command=fetch')}0001${pkt(`want ${missing}`)}0000`, new RegExp(`^fatal: git upload-pack: not our ref ${missing}\\n$`), new RegExp(`ERR upload-pack: not our ref ${missing}`)],
  ];
  for (const [version, input, stderr, stdout] of cases) {
    const r = await serve(dir.path, repo, input, version, ['--advertise-refs'].filter(() => false));
    assert.equal(r.status, 128, `${input}: ${r.stderr}`);
    assert.match(r.stderr, stderr, input);
    if (stdout !== undefined) assert.match(r.stdout.toString('latin1'), stdout, input);
    // git's upload-pack fails the same way.
    let gitFailed = false;
    try {
      gitServe(repo, input, version);
    } catch (e) {
      gitFailed = (e as { status: number }).status === 128;
    }
    assert.ok(gitFailed, `git accepts ${JSON.stringify(input)}`);
  }
  const notRepo = await runPackwright(dir.path, ['upload-pack', join(dir.path, 'nowhere')]);
  assert.equal(notRepo.status, 128);
  assert.equal(notRepo.stderr, `fatal: '${join(dir.path, 'nowhere')}' does not appear to be a git repository\n`);
});

test('the pkt-line reader: special packets, the length limit, a stream that ends inside a packet, and the rest handed on', async () => {
  const bytes = Buffer.from(`${pkt('a')}0000${pkt('b')}00010002PACKDATA`, 'latin1');
  // Delivered one byte at a time: every packet waits for its own bytes.
  const reader = new PacketReader(Readable.from([...bytes].map((b) => Buffer.from([b]))));
  const kinds: string[] = [];
  for (let i = 0; i < 5; i++) {
    const p = await reader.read();
    kinds.push(p.kind === 'data' ? `data:${p.line}` : p.kind);
  }
  assert.deepEqual(kinds, ['data:a', 'flush', 'data:b', 'delim', 'response-end']);
  const rest: Buffer[] = [];
  for await (const chunk of reader.rest()) rest.push(chunk);
  assert.equal(Buffer.concat(rest).toString(), 'PACKDATA');
  const longest = new PacketReader(Readable.from([encodePacket(Buffer.alloc(65515, 0x61))]));
  assert.equal((await longest.read()).kind, 'data');
  const over = new PacketReader(Readable.from([Buffer.from('fff4')]));
  await assert.rejects(over.read(), { code: 'PROTOCOL_ERROR', message: 'protocol error: bad line length 65520' });
  const cut = new PacketReader(Readable.from([Buffer.from('0009ab')]));
  assert.equal((await cut.read()).kind, 'eof');
  assert.equal(cut.truncated, true);
  assert.equal((await new PacketReader(Readable.from([])).read()).kind, 'eof');
  assert.throws(() => encodePacket(Buffer.alloc(65517)), /exceeds max packet size/);
});

test('--timeout: a client that stays idle is dropped (CONNECTION_CLOSED) after that many seconds, as git\'s alarm does', async () => {
  using dir = tempDir();
  const repo = Repository.openGitDir(makeHistoryRepo(dir.path, 'sha1'));
  try {
    const input = new PassThrough();
    const output: Buffer[] = [];
    const started = Date.now();
    // The advertisement goes out; then nothing comes back.
    await assert.rejects(uploadPack(repo, { input, output: (chunk) => void output.push(chunk), timeout: 1 }), { code: 'CONNECTION_CLOSED', message: /timed out/ });
    const took = Date.now() - started;
    assert.ok(took >= 900 && took < 3000, `dropped after ${took} ms`);
    assert.match(Buffer.concat(output).toString('latin1'), /refs\/heads\/main/);
    input.destroy();
  } finally {
    repo.close();
  }
});
