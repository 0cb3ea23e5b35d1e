import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, chmodSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { fileEndingIn, git, makeRepo, runPackwright, tempDir, type Format } from './helpers/git.js';
import { runSync } from './helpers/spawn-client.js';
import { Repository } from '../src/repo/index.js';
import { fsck } from '../src/fsck/index.js';

const ENV = {
  ...process.env,
  GIT_AUTHOR_NAME: 'A U Thor', GIT_AUTHOR_EMAIL: 'author@example.com', GIT_AUTHOR_DATE: '1700000000 +0000',
  GIT_COMMITTER_NAME: 'C O Mitter', GIT_COMMITTER_EMAIL: 'committer@example.com', GIT_COMMITTER_DATE: '1700000000 +0000',
  GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', HOME: tmpdir(),
};

interface Run { status: number; out: string[]; err: string[] }

const lines = (b: Buffer | string): string[] => b.toString('utf8').split('\n').filter((l) => l !== '');

function run(command: string, args: string[], cwd: string): Run {
  const r = runSync(command, args, { cwd, env: ENV });
  return { status: r.status ?? -1, out: lines(r.stdout), err: lines(r.stderr) };
}

/** packwright run in this process, as the bin would run it, with ENV. */
async function ours(args: string[], cwd: string): Promise<Run> {
  const r = await runPackwright(cwd, args, { env: ENV });
  return { status: r.status, out: lines(r.stdout), err: lines(r.stderr) };
}

/** git fsck and packwright fsck on the same repository: same status, same lines on each stream (in any order unless `ordered`). */
async function sameAsGit(cwd: string, args: string[] = [], ordered = false): Promise<Run> {
  // --threads is packwright's own (git checks objects on one thread).
  const g = run('git', ['fsck', '--no-progress', ...args.filter((a) => !a.startsWith('--threads'))], cwd);
  const p = await ours(['fsck', '--no-progress', ...args], cwd);
  const sort = (l: string[]): string[] => (ordered ? l : [...l].sort());
  assert.deepEqual({ status: p.status, out: sort(p.out), err: sort(p.err) }, { status: g.status, out: sort(g.out), err: sort(g.err) }, `fsck ${args.join(' ')} in ${cwd}`);
  return g;
}

function hashObject(cwd: string, type: string, content: string | Buffer, literally = true): string {
  return git(cwd, ['hash-object', '-w', '-t', type, '--stdin', ...(literally ? ['--literally'] : [])], content).toString().trim();
}

function objectPath(cwd: string, hex: string): string {
  return join(cwd, '.git', 'objects', hex.slice(0, 2), hex.slice(2));
}

/** Raw id bytes of a hex id, for tree entries written by hand. */
const raw = (hex: string): Buffer => Buffer.from(hex, 'hex');

/** A repository holding one bad object of each kind fsck knows, each reachable from a ref. */
function badObjectsRepo(dir: string, format: Format): string {
  const repo = makeRepo(dir, format, 4);
  const head = git(repo, ['rev-parse', 'HEAD']).toString().trim();
  const tree = git(repo, ['rev-parse', 'HEAD^{tree}']).toString().trim();
  const blob = hashObject(repo, 'blob', 'content\n', false);
  const zero = '0'.repeat(format === 'sha1' ? 40 : 64);
  const commit = (body: string): string => hashObject(repo, 'commit', body);
  const refs: Record<string, string> = {
    'refs/heads/bad-email': commit(`tree ${tree}\nparent ${head}\nauthor A <a@b> 1 +0000\ncommitter C <c@d>> 1 +0000\n\nm\n`),
    'refs/heads/two-authors': commit(`tree ${tree}\nauthor A <a@b> 1 +0000\nauthor B <b@b> 1 +0000\ncommitter C <c@d> 1 +0000\n\nm\n`),
    'refs/heads/bad-tz': commit(`tree ${tree}\nauthor A <a@b> 1 +00x0\ncommitter C <c@d> 1 +0000\n\nm\n`),
    'refs/heads/zero-date': commit(`tree ${tree}\nauthor A <a@b> 01 +0000\ncommitter C <c@d> 1 +0000\n\nm\n`),
    'refs/heads/overflow': commit(`tree ${tree}\nauthor A <a@b> 99999999999999999999 +0000\ncommitter C <c@d> 1 +0000\n\nm\n`),
    'refs/heads/no-committer': commit(`tree ${tree}\nauthor A <a@b> 1 +0000\n\nm\n`),
    'refs/heads/nul-body': commit(`tree ${tree}\nauthor A <a@b> 1 +0000\ncommitter C <c@d> 1 +0000\n\nm\0after\n`),
    'refs/heads/missing-email': commit(`tree ${tree}\nauthor A 1 +0000\ncommitter C <c@d> 1 +0000\n\nm\n`),
  };
  const mktree = (entries: [string, string, string][]): string =>
    hashObject(repo, 'tree', Buffer.concat(entries.map(([mode, name, id]) => Buffer.concat([Buffer.from(`${mode} ${name}\0`, 'latin1'), raw(id)]))));
  const badTrees: Record<string, string> = {
    dups: mktree([['100644', 'a', blob], ['100644', 'a', blob]]),
    unsorted: mktree([['100644', 'b', blob], ['100644', 'a', blob]]),
    mode664: mktree([['100664', 'a', blob]]),
    zeropad: mktree([['040000', 'd', tree]]),
    dotgit: mktree([['100644', '.GiT', blob]]),
    dotdot: mktree([['100644', '..', blob]]),
    nullid: mktree([['160000', 'n', zero]]),
    gitmodules: mktree([['100644', '.gitmodules', hashObject(repo, 'blob', '[submodule "x"]\n\turl = -evil\n\tpath = -p\n', false)]]),
    gitattributes: mktree([['100644', '.gitattributes', hashObject(repo, 'blob', `${'a'.repeat(3000)}\n`, false)]]),
    ntfs: mktree([['100644', 'git~1', blob]]),
  };
  for (const [name, t] of Object.entries(badTrees)) {
    refs[`refs/heads/tree-${name}`] = commit(`tree ${t}\nauthor A <a@b> 1 +0000\ncommitter C <c@d> 1 +0000\n\n${name}\n`);
  }
  refs['refs/tags/bad-name'] = hashObject(repo, 'tag', `object ${head}\ntype commit\ntag bad name\ntagger T <t@t> 1 +0000\n\nm\n`);
  refs['refs/tags/no-tagger'] = hashObject(repo, 'tag', `object ${head}\ntype commit\ntag ok\n\nm\n`);
  refs['refs/tags/nul-header'] = hashObject(repo, 'tag', `object ${head}\ntype commit\ntag o\0k\ntagger T <t@t> 1 +0000\n\nm\n`);
  // Written directly: update-ref refuses a tag of an unknown type.
  for (const [ref, id] of Object.entries(refs)) {
    mkdirSync(join(repo, '.git', ref, '..'), { recursive: true });
    writeFileSync(join(repo, '.git', ref), `${id}\n`);
  }
  return repo;
}

for (const format of ['sha1', 'sha256'] as const) {
  test(`fsck of a sound repository, loose and packed, says what git says (${format})`, async () => {
    using dir = tempDir();
    const repo = makeRepo(dir.path, format, 8);
    // Unreachable objects of each kind, loose and packed, and one a dangling commit points to.
    const blob = hashObject(repo, 'blob', 'dangling blob\n', false);
    const tree = git(repo, ['mktree'], `100644 blob ${blob}\tf\n`).toString().trim();
    git(repo, ['commit-tree', '-m', 'lost', tree]);
    hashObject(repo, 'blob', 'lonely\n', false);
    await sameAsGit(repo, [], true);
    await sameAsGit(repo, ['--unreachable']);
    await sameAsGit(repo, ['--root', '--tags']);
    await sameAsGit(repo, ['--no-dangling']);
    await sameAsGit(repo, ['--connectivity-only']);
    git(repo, ['repack', '-adk']);
    await sameAsGit(repo);
    await sameAsGit(repo, ['--unreachable', '--root', '--tags']);
    await sameAsGit(repo, ['--connectivity-only']);
    await sameAsGit(repo, ['--threads=1']);
    await sameAsGit(repo, ['HEAD~2']);
    // A pack without deltas: every object is a leaf the checker must see (the first one too).
    git(repo, ['repack', '-adf', '--window=0']);
    await sameAsGit(repo, [], true);
    await sameAsGit(repo, ['--threads=2', '--root']);
  });

  test(`fsck reports each bad object as git does, loose, packed and on 1 or 2 threads (${format})`, async () => {
    using dir = tempDir();
    const repo = badObjectsRepo(dir.path, format);
    await sameAsGit(repo);
    await sameAsGit(repo, ['--strict']);
    git(repo, ['repack', '-ad']);
    // Every object is now in one pack, checked by the resolver's threads.
    assert.equal(readdirSync(join(repo, '.git', 'objects')).filter((d) => /^[0-9a-f]{2}$/.test(d)).length, 0);
    await sameAsGit(repo);
    await sameAsGit(repo, ['--strict', '--threads=1']);
    await sameAsGit(repo, ['--threads=2']);
    git(repo, ['config', 'fsck.multipleAuthors', 'ignore']);
    git(repo, ['config', 'fsck.badTimezone', 'warn']);
    const skip = join(dir.path, 'skip');
    writeFileSync(skip, `# skipped\n${git(repo, ['rev-parse', 'bad-email']).toString()}`);
    git(repo, ['config', 'fsck.skipList', skip]);
    await sameAsGit(repo);
  });
}

test('fsck names missing objects, broken links and bad refs as git does', async () => {
  using dir = tempDir();
  const repo = makeRepo(dir.path, 'sha1', 4);
  const blob = git(repo, ['rev-parse', 'HEAD:file.txt']).toString().trim();
  const sub = git(repo, ['rev-parse', 'HEAD:dir/sub']).toString().trim();
  writeFileSync(join(repo, '.git', 'refs', 'heads', 'not-a-commit'), git(repo, ['rev-parse', 'HEAD^{tree}']));
  git(repo, ['update-ref', '--no-deref', 'refs/heads/gone', 'HEAD']);
  rmSync(objectPath(repo, blob));
  rmSync(objectPath(repo, sub));
  await sameAsGit(repo);
  await sameAsGit(repo, ['--name-objects']);
  await sameAsGit(repo, ['--connectivity-only']);
  writeFileSync(join(repo, '.git', 'refs', 'heads', 'gone'), `${'1'.repeat(40)}\n`);
  await sameAsGit(repo);
  await sameAsGit(repo, ['--no-reflogs']);
  // HEAD pointing somewhere strange, then at nothing.
  writeFileSync(join(repo, '.git', 'HEAD'), 'ref: refs/funny/place\n');
  await sameAsGit(repo);
  writeFileSync(join(repo, '.git', 'HEAD'), `${'0'.repeat(40)}\n`);
  await sameAsGit(repo);
  writeFileSync(join(repo, '.git', 'HEAD'), 'ref: refs/heads/unborn\n');
  await sameAsGit(repo);
});

test('fsck reports corrupt loose objects in git\'s words', async () => {
  using dir = tempDir();
  const repo = makeRepo(dir.path, 'sha1', 3);
  const garbage = hashObject(repo, 'blob', 'trailing\n', false);
  chmodSync(objectPath(repo, garbage), 0o644);
  appendFileSync(objectPath(repo, garbage), 'garbage');
  const notZlib = hashObject(repo, 'blob', 'not zlib\n', false);
  rmSync(objectPath(repo, notZlib));
  writeFileSync(objectPath(repo, notZlib), 'broken\n');
  const moved = hashObject(repo, 'blob', 'moved\n', false);
  const other = `${moved.slice(0, 2)}${'f'.repeat(38)}`;
  renameSync(objectPath(repo, moved), objectPath(repo, other));
  hashObject(repo, 'garbage', 'odd type\n');
  writeFileSync(join(repo, '.git', 'objects', moved.slice(0, 2), 'not-an-object'), 'x');
  await sameAsGit(repo);
});

test('fsck checks the index: its blobs and cache tree are heads', async () => {
  using dir = tempDir();
  const repo = makeRepo(dir.path, 'sha1', 3);
  const staged = hashObject(repo, 'blob', 'staged only\n', false);
  git(repo, ['update-index', '--add', '--cacheinfo', `100644,${staged},staged.txt`]);
  git(repo, ['write-tree']);
  await sameAsGit(repo);
  rmSync(objectPath(repo, staged));
  await sameAsGit(repo);
});

test('fsck of a corrupt pack fails with the pack bit, and still checks the rest', async () => {
  using dir = tempDir();
  const repo = makeRepo(dir.path, 'sha1', 6);
  git(repo, ['repack', '-ad']);
  const packDir = join(repo, '.git', 'objects', 'pack');
  const pack = join(packDir, fileEndingIn(packDir, '.pack'));
  chmodSync(pack, 0o644);
  const bytes = readFileSync(pack);
  bytes[12] = 0;
  writeFileSync(pack, bytes);
  const g = run('git', ['fsck'], repo);
  const p = await ours(['fsck'], repo);
  assert.equal(p.status & 4, 4, p.err.join('\n'));
  assert.notEqual(g.status, 0);
  assert.ok(p.err.some((l) => l.includes('pack checksum mismatch')), p.err.join('\n'));
});

/** The pack's trailer recomputed after an edit, and the index made to name that pack again (SHA-1). */
function fixTrailers(pack: string, idx: string): void {
  const sha1 = (b: Buffer): Buffer => createHash('sha1').update(b).digest();
  const p = readFileSync(pack);
  sha1(p.subarray(0, p.length - 20)).copy(p, p.length - 20);
  writeFileSync(pack, p);
  const i = readFileSync(idx);
  p.copy(i, i.length - 40, p.length - 20);
  sha1(i.subarray(0, i.length - 20)).copy(i, i.length - 20);
  writeFileSync(idx, i);
}

/** The repository's one pack, writable, with its index as `git index-pack` writes it with `indexArgs`. */
function onePack(repo: string, indexArgs: string[] = []): { pack: string; idx: string; entries: { id: string; type: string; offset: number; length: number }[] } {
  const packDir = join(repo, '.git', 'objects', 'pack');
  const pack = join(packDir, fileEndingIn(packDir, '.pack'));
  const idx = pack.replace(/\.pack$/, '.idx');
  chmodSync(pack, 0o644);
  rmSync(idx, { force: true });
  git(repo, ['index-pack', ...indexArgs, pack]);
  chmodSync(idx, 0o644);
  const entries = git(repo, ['verify-pack', '-v', idx]).toString().split('\n')
    .map((l) => l.split(/\s+/))
    .filter((f) => /^[0-9a-f]{40}$/.test(f[0] as string) && f.length >= 5)
    .map((f) => ({ id: f[0] as string, type: f[1] as string, length: Number(f[3]), offset: Number(f[4]) }));
  return { pack, idx, entries };
}

test('fsck checks a pack through its index in any form git writes: v1, v2, 64-bit offsets', async () => {
  using dir = tempDir();
  const repo = makeRepo(dir.path, 'sha1', 8);
  git(repo, ['repack', '-adf', '--depth=3']);
  for (const args of [['--index-version=1'], ['--index-version=2,0x200'], []]) {
    onePack(repo, args);
    await sameAsGit(repo, ['--threads=1']);
    await sameAsGit(repo, ['--threads=2']);
  }
});

test('fsck finds a damaged pack entry whatever the index says of it, as git does', async () => {
  using dir = tempDir();
  const base = makeRepo(dir.path, 'sha1', 8);
  const fresh = (name: string, config: string[] = []): string => {
    const repo = join(dir.path, name);
    cpSync(base, repo, { recursive: true });
    git(repo, [...config, 'repack', '-adf', '--depth=3']);
    return repo;
  };
  const bothFail = async (repo: string, expect: RegExp): Promise<void> => {
    for (const threads of ['1', '2']) {
      const p = await ours(['fsck', '--no-progress', `--threads=${threads}`], repo);
      assert.equal(p.status & 4, 4, `${repo}: ${p.err.join('\n')}`);
      assert.ok(p.err.some((l) => expect.test(l)), `${repo}: ${expect} in\n${p.err.join('\n')}`);
      assert.ok(!p.err.some((l) => /^\s+at /.test(l)), 'no stack trace');
    }
    assert.notEqual(run('git', ['fsck', '--no-progress'], repo).status, 0, `${repo}: git agrees`);
  };

  // A byte of a delta's zlib stream changed, the trailers made to match: the v2 index's CRC32 says so.
  {
    const repo = fresh('flipped');
    const { pack, idx, entries } = onePack(repo);
    const delta = entries.find((e) => e.length > 12 && entries.indexOf(e) > 2 && /^(blob|tree)$/.test(e.type) && e.offset > 12) as (typeof entries)[number];
    const bytes = readFileSync(pack);
    const flip = delta.offset + Math.floor(delta.length / 2);
    bytes[flip] = (bytes[flip] as number) ^ 0x55;
    writeFileSync(pack, bytes);
    fixTrailers(pack, idx);
    await bothFail(repo, /index CRC mismatch for the object at offset \d+/);
  }

  // Stored (uncompressed) deflate with its Adler-32 fixed: the stream is sound, the object is
  // not what the index calls it. A v1 index has no CRC32, so only the hash can tell.
  {
    const repo = fresh('rewritten', ['-c', 'pack.compression=0']);
    const blob = hashObject(repo, 'blob', 'x'.repeat(300) + '\n', false);
    git(repo, ['tag', 'big-blob', blob]);
    git(repo, ['-c', 'pack.compression=0', 'repack', '-adf']);
    const { pack, idx } = onePack(repo, ['--index-version=1']);
    const bytes = readFileSync(pack);
    const at = bytes.indexOf('x'.repeat(300));
    assert.ok(at > 0);
    bytes[at + 10] = 0x79;
    // Adler-32 of the blob's new content, right after it (one stored block).
    let a = 1;
    let b = 0;
    for (let i = at; i < at + 301; i++) {
      a = (a + (bytes[i] as number)) % 65521;
      b = (b + a) % 65521;
    }
    bytes.writeUInt32BE(((b << 16) | a) >>> 0, at + 301);
    writeFileSync(pack, bytes);
    fixTrailers(pack, idx);
    await bothFail(repo, new RegExp(`packed ${blob} from .* is corrupt`));
  }

  // Two objects' offsets swapped in the index (its checksum made to match).
  {
    const repo = fresh('swapped');
    const { idx } = onePack(repo);
    const i = readFileSync(idx);
    const n = i.readUInt32BE(8 + 255 * 4);
    const offsets = 8 + 1024 + n * 24;
    const first = i.readUInt32BE(offsets);
    i.writeUInt32BE(i.readUInt32BE(offsets + 4), offsets);
    i.writeUInt32BE(first, offsets + 4);
    createHash('sha1').update(i.subarray(0, i.length - 20)).digest().copy(i, i.length - 20);
    writeFileSync(idx, i);
    await bothFail(repo, /index CRC mismatch for the object at offset \d+/);
  }
});

test('fsck --lost-found writes what git writes', async () => {
  using dir = tempDir();
  const repo = makeRepo(dir.path, 'sha1', 3);
  const blob = hashObject(repo, 'blob', 'lost blob\n', false);
  const tree = git(repo, ['mktree'], `100644 blob ${blob}\tf\n`).toString().trim();
  git(repo, ['commit-tree', '-m', 'lost', tree]);
  const copy = join(dir.path, 'copy');
  cpSync(repo, copy, { recursive: true });
  const g = run('git', ['fsck', '--lost-found'], repo);
  const p = await ours(['fsck', '--lost-found'], copy);
  assert.deepEqual(p, g);
  const list = (root: string): Record<string, string> => {
    const out: Record<string, string> = {};
    for (const kind of ['commit', 'other']) {
      const d = join(root, '.git', 'lost-found', kind);
      if (!existsSync(d)) continue;
      for (const f of readdirSync(d)) out[`${kind}/${f}`] = readFileSync(join(d, f), 'latin1');
    }
    return out;
  };
  assert.deepEqual(list(copy), list(repo));
});

test('fsck as a library: findings as data, --json, aborts', async () => {
  using dir = tempDir();
  const repo = badObjectsRepo(dir.path, 'sha1');
  git(repo, ['repack', '-ad']);
  const r = Repository.open(repo);
  try {
    const result = await fsck(r, { threads: 2 });
    assert.equal(result.status, 4, 'errors in packed objects fail the pack, as in git');
    const ids = new Set(result.messages.filter((m) => m.kind === 'error' && m.msgId !== undefined).map((m) => m.msgId));
    for (const id of ['missingSpaceBeforeDate', 'multipleAuthors', 'badTimezone', 'zeroPaddedDate', 'badDateOverflow', 'missingCommitter', 'duplicateEntries', 'treeNotSorted', 'gitmodulesUrl', 'gitattributesLineLength', 'nulInHeader']) {
      assert.ok(ids.has(id), `${id} in ${[...ids].join(' ')}`);
    }
    assert.ok(result.objects > 0 && result.checked === result.objects && result.reachable > 0);
    const controller = new AbortController();
    controller.abort();
    await assert.rejects(fsck(r, { signal: controller.signal }), (e: { code?: string }) => e.code === 'ABORTED');
  } finally {
    r.close();
  }
  const json = JSON.parse((await ours(['fsck', '--json'], repo)).out.join('\n')) as { status: number; messages: { kind: string }[] };
  assert.equal(json.status, 4);
  assert.ok(json.messages.some((m) => m.kind === 'error'));
});

test('fsck with linked worktrees checks each HEAD, as git does', async () => {
  using dir = tempDir();
  const repo = makeRepo(dir.path, 'sha1', 3);
  git(repo, ['worktree', 'add', '-q', join(dir.path, 'wt'), 'HEAD~1']);
  await sameAsGit(repo);
  await sameAsGit(join(dir.path, 'wt'));
  mkdirSync(join(repo, '.git', 'worktrees', 'wt'), { recursive: true });
  writeFileSync(join(repo, '.git', 'worktrees', 'wt', 'HEAD'), 'ref: refs/odd/place\n');
  await sameAsGit(repo);
});

test('fsck verifies the commit-graph as git does: sound, split, and damaged in its checksum, fan-out, dates and trees', async () => {
  using dir = tempDir();
  const base = makeRepo(dir.path, 'sha1', 6);
  // A merge and an octopus merge, so parents come from the commit data and from the EDGE chunk.
  const head = git(base, ['rev-parse', 'HEAD']).toString().trim();
  const tree = git(base, ['rev-parse', 'HEAD^{tree}']).toString().trim();
  const p1 = git(base, ['commit-tree', '-m', 'side 1', tree]).toString().trim();
  const p2 = git(base, ['commit-tree', '-m', 'side 2', tree]).toString().trim();
  const octopus = git(base, ['commit-tree', '-p', head, '-p', p1, '-p', p2, '-m', 'octopus', tree]).toString().trim();
  git(base, ['update-ref', 'refs/heads/octopus', octopus]);
  const sha1 = (b: Buffer): Buffer => createHash('sha1').update(b).digest();
  const graphRepo = (name: string, split: boolean): string => {
    const repo = join(dir.path, name);
    cpSync(base, repo, { recursive: true });
    if (split) {
      git(repo, ['commit-graph', 'write', '--reachable', '--split']);
      git(repo, ['commit', '-q', '--allow-empty', '-m', 'on top']);
      git(repo, ['commit-graph', 'write', '--reachable', '--split=no-merge']);
    } else {
      git(repo, ['commit-graph', 'write', '--reachable']);
    }
    return repo;
  };
  await sameAsGit(graphRepo('single', false), ['--no-dangling']);
  const splitRepo = graphRepo('split', true);
  assert.ok(existsSync(join(splitRepo, '.git', 'objects', 'info', 'commit-graphs', 'commit-graph-chain')));
  await sameAsGit(splitRepo, ['--no-dangling']);

  /** Edits the single graph file; with `fix`, sets its checksum to match again. */
  const damaged = (name: string, edit: (g: Buffer, chunk: (id: string) => number) => void, fix = true): string => {
    const repo = graphRepo(name, false);
    const path = join(repo, '.git', 'objects', 'info', 'commit-graph');
    chmodSync(path, 0o644);
    const g = readFileSync(path);
    const chunk = (id: string): number => {
      for (let c = 0; c < (g[6] as number); c++) if (g.toString('latin1', 8 + 12 * c, 12 + 12 * c) === id) return Number(g.readBigUInt64BE(12 + 12 * c));
      throw new Error(`no ${id} chunk`);
    };
    edit(g, chunk);
    if (fix) sha1(g.subarray(0, g.length - 20)).copy(g, g.length - 20);
    writeFileSync(path, g);
    return repo;
  };
  const cases: [string, (g: Buffer, chunk: (id: string) => number) => void, boolean][] = [
    ['checksum', (g) => { g[g.length - 1] = (g[g.length - 1] as number) ^ 1; }, false],
    ['date', (g, chunk) => { const at = chunk('CDAT') + 20 + 8 + 4; g.writeUInt32BE(g.readUInt32BE(at) + 1, at); }, true],
    ['tree', (g, chunk) => { g[chunk('CDAT')] = (g[chunk('CDAT')] as number) ^ 0x10; }, true],
    ['fanout', (g, chunk) => { g.writeUInt32BE(g.readUInt32BE(chunk('OIDF') + 4 * 200) + 1, chunk('OIDF') + 4 * 200); }, true],
  ];
  for (const [name, edit, fix] of cases) {
    const repo = damaged(name, edit, fix);
    const g = await sameAsGit(repo, ['--no-dangling']);
    assert.equal(g.status & 0o20, 0o20, `${name}: git reports it`);
  }
  // core.commitGraph=false: not looked at.
  const off = damaged('off', (g) => { g[g.length - 1] = (g[g.length - 1] as number) ^ 1; }, false);
  git(off, ['config', 'core.commitGraph', 'false']);
  await sameAsGit(off, ['--no-dangling']);
});

test('fsck of a shallow clone: the shallow commits\' parents are not missing, as in git; a missing skip list is git\'s error', async () => {
  using dir = tempDir();
  const repo = makeRepo(dir.path, 'sha1', 5);
  const shallow = join(dir.path, 'shallow');
  git(dir.path, ['clone', '-q', '--depth=1', '--no-local', repo, shallow]);
  assert.ok(existsSync(join(shallow, '.git', 'shallow')));
  await sameAsGit(shallow);
  const again = join(dir.path, 'again');
  git(dir.path, ['clone', '-q', shallow, again]);
  await sameAsGit(again, ['--unreachable']);
  const bad = await sameAsGit(repo, []);
  assert.equal(bad.status, 0);
  const p = await ours(['-c', 'fsck.skipList=does-not-exist', 'fsck'], repo);
  const g = run('git', ['-c', 'fsck.skipList=does-not-exist', 'fsck'], repo);
  assert.deepEqual(p, g);
});

test('tree links given against the tree before: every link of each tree given by then, and none that no tree has', async () => {
  const fc = (await import('fast-check')).default;
  const { IncrementalTreeLinks } = await import('../src/fsck/incremental-tree-links.js');
  const { objectLinks } = await import('../src/objects/object-links.js');
  const H = 20;
  type Entry = { mode: string; name: string; id: number };
  const encode = (entries: Entry[]): Buffer => Buffer.concat(entries.map((e) => Buffer.concat([Buffer.from(`${e.mode} ${e.name}\0`), Buffer.alloc(H, e.id)])));
  const entry = fc.record({ mode: fc.constantFrom('100644', '100755', '40000', '120000', '160000'), name: fc.stringMatching(/^[a-d]{1,3}$/), id: fc.integer({ min: 1, max: 12 }) });
  // Each step makes a tree from the one before (entries changed, added, dropped) or a new one, or bytes that are not a tree.
  const step = fc.oneof(
    fc.record({ kind: fc.constant('edit' as const), at: fc.nat(), add: fc.array(entry, { maxLength: 3 }), drop: fc.nat(3), id: fc.integer({ min: 1, max: 12 }) }),
    fc.record({ kind: fc.constant('new' as const), entries: fc.array(entry, { maxLength: 12 }) }),
    fc.record({ kind: fc.constant('bad' as const), bytes: fc.uint8Array({ maxLength: 40 }) }),
  );
  fc.assert(fc.property(fc.array(entry, { maxLength: 12 }), fc.array(step, { maxLength: 25 }), (start, steps) => {
    const walker = new IncrementalTreeLinks(H);
    const given = new Set<string>();
    const ever = new Set<string>();
    let entries = start;
    const trees: Buffer[] = [encode(entries)];
    for (const s of steps) {
      if (s.kind === 'edit') {
        const at = entries.length === 0 ? 0 : s.at % entries.length;
        entries = [...entries.slice(0, at), ...s.add, ...entries.slice(at + s.drop)].map((e, i) => (i === at ? { ...e, id: s.id } : e));
        trees.push(encode(entries));
      } else if (s.kind === 'new') {
        entries = s.entries;
        trees.push(encode(entries));
      } else {
        trees.push(Buffer.from(s.bytes));
      }
    }
    for (const tree of trees) {
      const mine: string[] = [];
      const theirError = objectLinks(2, tree, H, (d, at, type) => mine.push(`${type}:${Buffer.from(d.subarray(at, at + H)).toString('hex')}`));
      for (const l of mine) ever.add(l);
      const error = walker.links(tree, (d, at, type) => given.add(`${type}:${Buffer.from(d.subarray(at, at + H)).toString('hex')}`));
      assert.equal(error, theirError);
      // A tree that decodes has all its links given by now; one that does not, those before its error.
      for (const l of mine) assert.ok(given.has(l), `${l} not given`);
      for (const l of given) assert.ok(ever.has(l), `${l} given, but no tree has it`);
    }
  }), { numRuns: 300 });
});
