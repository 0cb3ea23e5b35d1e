import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { chmodSync, closeSync, readdirSync, readFileSync, readSync, mkdirSync, rmSync, writeFileSync, existsSync, copyFileSync, openSync, statSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { totalmem } from 'node:os';
import { PassThrough, Readable } from 'node:stream';
import { CLI, fixture, git, packwright, packwrightFails, tempDir, makeRepo, type Format, fileEndingIn } from './helpers/git.js';
import { spawnGit, execGit } from './helpers/spawn-client.js';
import { buildPack, makeDelta } from './helpers/pack-builder.js';
import { seededRandom, testSeed } from './helpers/random.js';
import { encodeOfsDistance } from '../src/pack/entry-header.js';
import { writeIndex } from '../src/idx/write-index.js';
import { crc32 } from 'node:zlib';
import { bytesPerObject, DEFAULT_MAX_MEMORY, defaultMaxMemory, defaultThreads, indexPack, planIndexPackMemory, planPackHolding, resolveDeltas, scanPack } from '../src/resolve/index.js';
import { WorkerPool } from '../src/workers/index.js';
import type { ResolveTasks } from '../src/resolve/resolve-tasks.js';
import { bufferSource, fileSource, type PackSource } from '../src/resolve/pack-source.js';
import { REGIONS_AHEAD, scanWithHelpers, splitScan } from '../src/resolve/parallel-scan.js';
import { PackScanner, sizedFromHeader, type PackScan } from '../src/resolve/pack-scan.js';
import { allocKeptData, type KeptDeltas } from '../src/resolve/kept-deltas.js';
import { StreamSpool } from '../src/resolve/stream-spool.js';
import { buildDeltaTree } from '../src/resolve/delta-tree.js';
import { createBoard } from '../src/resolve/offer-board.js';
import { Resolver } from '../src/resolve/resolver.js';
import { CONTROL_LENGTH, CONTROL_WORKERS } from '../src/resolve/resolve-state.js';
import { COMPARE_BYTES_PER_THREAD } from '../src/fsck/index-pack-visitor.js';
import { isPackwrightError } from '../src/errors/index.js';

/** A fast-import stream: `files` files of 200 lines, each edited in a few places in each of `revs` commits. */
function manyFilesStream(files: number, revs: number): string {
  const random = seededRandom(7);
  const contents = Array.from({ length: files }, (_, f) => Array.from({ length: 200 }, (_, i) => `file ${f} line ${i} ${random().toString(36)}`));
  const parts: string[] = [];
  for (let rev = 0; rev < revs; rev++) {
    parts.push(`commit refs/heads/main\nmark :${rev + 1}\ncommitter A U Thor <a@example.com> ${1700000000 + rev} +0000\ndata 4\nrev\n` + (rev ? `from :${rev}\n` : ''));
    for (let f = 0; f < files; f++) {
      const lines = contents[f] as string[];
      for (let k = 0; k < 3; k++) lines[Math.floor(random() * lines.length)] = `edit ${rev}.${k} ${random().toString(36)}`;
      const data = lines.join('\n') + '\n';
      parts.push(`M 100644 inline f${f}.txt\ndata ${Buffer.byteLength(data)}\n${data}\n`);
    }
  }
  return parts.join('');
}

/**
 * In `work`, a bare repository `r.git` of 60 files × 40 revisions packed by git (thousands of
 * deltas over many roots, so every thread has work; ~50 ms to index), its pack copied to `p.pack`.
 */
function manyFilesPack(work: string): { work: string; pack: string } {
  mkdirSync(work);
  const repo = fixture('many-files', [60, 40], (at) => {
    git(at, ['init', '-q', '--bare', 'r.git']);
    const built = join(at, 'r.git');
    git(built, ['fast-import', '--quiet'], manyFilesStream(60, 40));
    git(built, ['-c', 'pack.threads=1', 'repack', '-adfq']);
    return built;
  }, join(work, 'r.git'));
  const pack = join(work, 'p.pack');
  copyFileSync(packOf(repo), pack);
  return { work, pack };
}

function packOf(repo: string): string {
  const dir = existsSync(join(repo, '.git')) ? join(repo, '.git', 'objects', 'pack') : join(repo, 'objects', 'pack');
  return join(dir, fileEndingIn(dir, '.pack'));
}

/** A SHA-1 test repository in `work/a`, repacked with `repackArgs`, its pack copied to `work/p.pack`. */
function repackedCopy(work: string, revisions: number, repackArgs: string[]): { work: string; repo: string; pack: string } {
  mkdirSync(join(work, 'a'), { recursive: true });
  const repo = makeRepo(join(work, 'a'), 'sha1', revisions);
  git(repo, repackArgs);
  const pack = join(work, 'p.pack');
  copyFileSync(packOf(repo), pack);
  return { work, repo, pack };
}

/** Names the idx files of each comparison apart. */
let comparisons = 0;

/** git's idx (and rev) for `pack` with the given flags, next to ours (given `ourFlags` too); asserts identical bytes. */
async function assertSameIndex(work: string, pack: string, flags: string[] = [], ourFlags: string[] = []): Promise<void> {
  const ours = join(work, `ours-${++comparisons}.idx`);
  const theirs = ours.replace('ours-', 'git-');
  const printed = (await packwright(work, ['index-pack', ...flags, ...ourFlags, '-o', ours, pack])).toString();
  const gitPrinted = git(work, ['index-pack', ...flags, '-o', theirs, pack]).toString();
  assert.equal(printed, gitPrinted);
  assert.deepEqual(readFileSync(ours), readFileSync(theirs), `idx differs for ${flags.join(' ')}`);
  if (flags.includes('--rev-index')) assert.deepEqual(readFileSync(ours.replace(/\.idx$/, '.rev')), readFileSync(theirs.replace(/\.idx$/, '.rev')));
}

const dir = tempDir();
after(() => dir[Symbol.dispose]());

for (const format of ['sha1', 'sha256'] as Format[]) {
  describe(`index-pack on ${format} packs`, () => {
    let ofsPack = '';
    let refPack = '';
    let work = '';
    before(() => {
      work = join(dir.path, format);
      mkdirSync(work);
      const a = join(work, 'a');
      mkdirSync(a);
      const repo = makeRepo(a, format, 10);
      git(repo, ['-c', 'pack.threads=1', 'repack', '-adfq']);
      ofsPack = join(work, 'ofs.pack');
      copyFileSync(packOf(repo), ofsPack);
      git(repo, ['-c', 'pack.threads=1', '-c', 'repack.useDeltaBaseOffset=false', 'repack', '-adfq']);
      refPack = join(work, 'ref.pack');
      copyFileSync(packOf(repo), refPack);
    });
    const fmt = [`--object-format=${format}`];
    test('OFS_DELTA pack: idx v2 identical to git', () => assertSameIndex(work, ofsPack, fmt));
    test('REF_DELTA pack: idx v2 identical to git', () => assertSameIndex(work, refPack, fmt));
    test('idx v1 identical to git', () => assertSameIndex(work, ofsPack, [...fmt, '--index-version=1']));
    test('forced 64-bit offsets identical to git', () => assertSameIndex(work, ofsPack, [...fmt, '--index-version=2,0x200']));
    test('.rev identical to git', () => assertSameIndex(work, refPack, [...fmt, '--rev-index']));
    test('with collision detection: identical to git, no false alarm', () => assertSameIndex(work, refPack, fmt, ['--collision-detection']));
    test('verify-pack -v and -s print what git prints, and a damaged index fails', async () => {
      const idx = join(work, 'verify.idx');
      git(work, ['index-pack', ...fmt, '-o', idx, refPack]);
      const pack = idx.replace(/\.idx$/, '.pack');
      copyFileSync(refPack, pack);
      for (const flag of ['-v', '-s']) {
        assert.equal((await packwright(work, ['verify-pack', ...fmt, flag, 'verify.idx'])).toString(), git(work, ['verify-pack', ...fmt, flag, 'verify.idx']).toString());
      }
      assert.equal((await packwright(work, ['verify-pack', ...fmt, '--collision-detection', '-v', 'verify.idx'])).toString(), git(work, ['verify-pack', ...fmt, '-v', 'verify.idx']).toString());
      // OFS deltas name their base through the pack's own entries, REF deltas through pass 1's list.
      git(work, ['index-pack', ...fmt, '-o', join(work, 'verify-ofs.idx'), ofsPack]);
      copyFileSync(ofsPack, join(work, 'verify-ofs.pack'));
      assert.equal((await packwright(work, ['verify-pack', ...fmt, '-v', 'verify-ofs.idx'])).toString(), git(work, ['verify-pack', ...fmt, '-v', 'verify-ofs.idx']).toString());
      // What git's verify-pack runs: index-pack --verify-stat(-only) prints the same listing.
      for (const flag of ['--verify-stat', '--verify-stat-only']) {
        for (const p of ['verify.pack', 'verify-ofs.pack']) {
          assert.equal((await packwright(work, ['index-pack', ...fmt, flag, p])).toString(), git(work, ['index-pack', ...fmt, flag, p]).toString(), `${flag} ${p}`);
        }
      }
      const bytes = readFileSync(idx);
      bytes.writeUInt8((bytes[8 + 1024 + 5] as number) ^ 1, 8 + 1024 + 5);
      writeFileSync(idx, bytes);
      assert.equal((await packwrightFails(work, ['verify-pack', ...fmt, 'verify.idx'])).status, 1);
      assert.throws(() => git(work, ['verify-pack', ...fmt, 'verify.idx']));
    });
    test('--progress reports phases on stderr like git', () => {
      const r = spawnSync(process.execPath, [CLI, 'index-pack', ...fmt, '--progress', '-o', join(work, 'progress.idx'), ofsPack], { cwd: work });
      assert.equal(r.status, 0);
      const err = r.stderr.toString();
      const count = readFileSync(join(work, 'progress.idx')).readUInt32BE(8 + 255 * 4);
      assert.match(err, new RegExp(`Indexing objects: 100% \\(${count}/${count}\\), done\\.`));
      assert.match(err, /Resolving deltas: 100% \((\d+)\/\1\), done\./);
      const quiet = spawnSync(process.execPath, [CLI, 'index-pack', ...fmt, '-o', join(work, 'quiet.idx'), ofsPack], { cwd: work });
      assert.equal(quiet.stderr.toString(), '', 'quiet when stderr is not a terminal');
    });
    test('the same result with 1, 2, 3 and 8 threads', async () => {
      for (const t of [1, 2, 3, 8]) await assertSameIndex(work, ofsPack, [...fmt, `--threads=${t}`]);
    });
    test('--stdin in small random chunks writes the pack into the repository like git', async () => {
      const repoDir = join(work, `stdin-${Date.now()}`);
      git(work, ['init', '-q', '--bare', `--object-format=${format}`, repoDir]);
      const bytes = readFileSync(ofsPack);
      const seed = testSeed();
      const random = seededRandom(seed);
      const out = await new Promise<string>((resolve, reject) => {
        const child = spawn(process.execPath, [CLI, 'index-pack', '--stdin', '--rev-index'], { cwd: repoDir });
        let stdout = '';
        child.stdout.on('data', (d: Buffer) => { stdout += d.toString(); });
        child.on('close', (code) => (code === 0 ? resolve(stdout) : reject(new Error(`exit ${code} (PACKWRIGHT_SEED=${seed})`))));
        let at = 0;
        const next = (): void => {
          if (at >= bytes.length) { child.stdin.end(); return; }
          const n = 1 + Math.floor(random() * 5000);
          child.stdin.write(bytes.subarray(at, at + n), () => setImmediate(next));
          at += n;
        };
        next();
      });
      const hash = bytes.subarray(bytes.length - (format === 'sha1' ? 20 : 32)).toString('hex');
      assert.equal(out, `pack\t${hash}\n`, `PACKWRIGHT_SEED=${seed}`);
      const base = join(repoDir, 'objects', 'pack', `pack-${hash}`);
      assert.deepEqual(readFileSync(`${base}.pack`), bytes);
      git(repoDir, ['index-pack', `--object-format=${format}`, '--rev-index', '-o', join(work, 'stdin-git.idx'), `${base}.pack`]);
      assert.deepEqual(readFileSync(`${base}.idx`), readFileSync(join(work, 'stdin-git.idx')));
      assert.deepEqual(readFileSync(`${base}.rev`), readFileSync(join(work, 'stdin-git.rev')));
      git(repoDir, ['fsck', '--no-dangling']);
    });
  });
}

describe('index-pack on special packs', () => {
  test('an empty pack', async () => {
    const work = join(dir.path, 'empty');
    mkdirSync(work);
    git(work, ['init', '-q', '--bare', 'r.git']);
    const pack = execGit(['pack-objects', '--stdout'], { cwd: join(work, 'r.git'), input: '' });
    writeFileSync(join(work, 'empty.pack'), pack);
    await assertSameIndex(work, join(work, 'empty.pack'));
  });
  test('a REF_DELTA whose base comes later in the pack', async () => {
    const work = join(dir.path, 'forward');
    mkdirSync(work);
    const base = Buffer.from('the base object, long enough to copy from\n');
    const baseId = execGit(['hash-object', '--stdin'], { input: base }).toString().trim();
    const delta = makeDelta(base.length, 8, [0x90, 4, 4, 0x21, 0x21, 0x21, 0x21]);
    const { pack } = buildPack([{ refTo: Buffer.from(baseId, 'hex'), delta }, { type: 3, data: base }]);
    writeFileSync(join(work, 'fwd.pack'), pack);
    await assertSameIndex(work, join(work, 'fwd.pack'));
    const r = await indexPack(join(work, 'fwd.pack'), { indexPath: join(work, 'api.idx') });
    assert.equal(r.stats.deltas, 1);
    assert.deepEqual(r.stats.chainHistogram, [1, 1]);
  });
  test('a chain deeper than 4000 is identical to git and holds two buffers at a time', async () => {
    const work = join(dir.path, 'deep');
    mkdirSync(work);
    // One 100 KB blob, then 4100 OFS deltas each copying its base whole and appending one byte:
    // a single chain 4100 deep (git's repack rarely builds one that deep in reasonable time).
    const entries: Parameters<typeof buildPack>[0] = [{ type: 3, data: Buffer.alloc(100_000, 0x61) }];
    let size = 100_000;
    for (let k = 1; k <= 4100; k++) {
      const ops: number[] = [];
      for (let at = 0; at < size; at += 0x10000) {
        const len = Math.min(0x10000, size - at);
        // copy: offset bytes 2-3 as needed, size bytes (none for 0x10000)
        ops.push(0x80 | 0x04 | 0x02 | 0x01 | (len === 0x10000 ? 0 : 0x30), at & 255, (at >> 8) & 255, (at >> 16) & 255);
        if (len !== 0x10000) ops.push(len & 255, (len >> 8) & 255);
      }
      ops.push(1, 0x30 + (k % 10));
      entries.push({ ofsTo: k - 1, delta: makeDelta(size, size + 1, ops) });
      size += 1;
    }
    const pack = join(work, 'deep.pack');
    writeFileSync(pack, buildPack(entries).pack);
    await assertSameIndex(work, pack);
    const r = await indexPack(pack, { indexPath: join(work, 'api.idx') });
    assert.equal(r.stats.chainHistogram.length - 1, 4100);
    // A resolver that kept ancestors would hold 4100 × 100 KB = 410 MB.
    assert.ok(r.stats.peakLiveBytes < 3 * 128 * 1024, `peak live bases ${r.stats.peakLiveBytes}`);
  });
});

describe('index-pack options', () => {
  test('--stdin echoes the bytes after the trailer, like git', async () => {
    const work = join(dir.path, 'echo');
    mkdirSync(work);
    git(work, ['init', '-q', '--bare', 'a.git']);
    git(work, ['init', '-q', '--bare', 'b.git']);
    const { pack } = buildPack([{ type: 3, data: Buffer.from('echo me\n') }]);
    const input = Buffer.concat([pack, Buffer.from('after the pack')]);
    const ours = (await packwright(join(work, 'a.git'), ['index-pack', '--stdin'], input)).toString();
    const theirs = git(join(work, 'b.git'), ['index-pack', '--stdin'], input).toString();
    assert.equal(ours, theirs);
    assert.ok(ours.endsWith('after the pack'));
  });
  test('--stdin from a file read from where its offset stands: git\'s idx, the bytes after echoed (the process\'s own stdin)', () => {
    const work = join(dir.path, 'stdin-file');
    mkdirSync(work);
    git(work, ['init', '-q', '--bare', 'a.git']);
    git(work, ['init', '-q', '--bare', 'b.git']);
    // Over 1 MiB reads and two of pass 1's 2 MiB regions, so the helper thread scans from the spool.
    const { pack } = buildPack(Array.from({ length: 6 }, () => ({ type: 3, data: randomBytes(900_000) })));
    writeFileSync(join(work, 'in'), Buffer.concat([Buffer.from('read before'), pack, Buffer.from('after the pack')]));
    const fd = openSync(join(work, 'in'), 'r');
    try {
      readSync(fd, Buffer.alloc(11), 0, 11, null);
      const r = spawnSync(process.execPath, [CLI, 'index-pack', '--stdin', '--threads=2'], { cwd: join(work, 'a.git'), stdio: [fd, 'pipe', 'pipe'] });
      assert.equal(r.status, 0, r.stderr.toString());
      const theirs = git(join(work, 'b.git'), ['index-pack', '--stdin'], Buffer.concat([pack, Buffer.from('after the pack')])).toString();
      assert.equal(r.stdout.toString(), theirs);
      const idx = (repo: string): Buffer => readFileSync(join(work, repo, 'objects', 'pack', fileEndingIn(join(work, repo, 'objects', 'pack'), '.idx')));
      assert.deepEqual(idx('a.git'), idx('b.git'));
    } finally {
      closeSync(fd);
    }
  });
  test('--check-self-contained-and-connected walks a tree that does not decode as git does: its reason, then the fatal line', async () => {
    const work = join(dir.path, 'bad-tree-walk');
    mkdirSync(work);
    git(work, ['init', '-q', '--bare', 'a.git']);
    git(work, ['init', '-q', '--bare', 'b.git']);
    const { pack } = buildPack([{ type: 2, data: Buffer.from('100644 a\0xxxxx') }, { type: 2, data: Buffer.concat([Buffer.from('100644 ok\0'), Buffer.alloc(20, 7)]) }]);
    const ours = await packwrightFails(join(work, 'a.git'), ['index-pack', '--stdin', '--check-self-contained-and-connected'], pack);
    const theirs = spawnGit(['index-pack', '--stdin', '--check-self-contained-and-connected'], { cwd: join(work, 'b.git'), input: pack, encoding: 'utf8' });
    assert.equal(theirs.status, 128);
    assert.equal(ours.stderr, theirs.stderr);
    assert.match(ours.stderr, /^error: too-short tree object\nfatal: Not all child objects of [0-9a-f]{40} are reachable\n$/);
  });
  test('--check-self-contained-and-connected reads commits and tags as git\'s parsers do (no fsck_object): bad idents, a NUL in a header and capital hex pass; what parse_commit_buffer and parse_tag_buffer refuse fails with their words', async () => {
    const work = join(dir.path, 'links-only');
    mkdirSync(work);
    const tree = Buffer.concat([Buffer.from('100644 f\0'), Buffer.from(git(work, ['hash-object', '--stdin'], 'x\n').toString().trim(), 'hex')]);
    const blob = Buffer.from('x\n');
    const treeId = git(work, ['hash-object', '-t', 'tree', '--stdin', '--literally'], tree).toString().trim();
    const commit = (header: string): Buffer => Buffer.from(`tree ${treeId}\n${header}\nmsg\n`);
    const run = async (name: string, objects: { type: number; data: Buffer }[], stderr = false): Promise<{ ours: number; theirs: number; oursSaid?: string; theirsSaid?: string }> => {
      for (const who of ['pw', 'git']) git(work, ['init', '-q', '--bare', `${name}-${who}.git`]);
      const { pack } = buildPack(objects);
      const ours = spawnSync(process.execPath, [CLI, 'index-pack', '--stdin', '--check-self-contained-and-connected'], { cwd: join(work, `${name}-pw.git`), input: pack });
      const theirs = spawnGit(['index-pack', '--stdin', '--check-self-contained-and-connected'], { cwd: join(work, `${name}-git.git`), input: pack });
      const status = { ours: ours.status ?? -1, theirs: theirs.status ?? -1 };
      return stderr ? { ...status, oursSaid: ours.stderr.toString(), theirsSaid: theirs.stderr.toString() } : status;
    };
    const base = [{ type: 2, data: tree }, { type: 3, data: blob }];
    for (const [name, header] of [['no-idents', ''], ['bad-ident', 'author nobody\ncommitter <a@b> x +0000\n'], ['nul', 'author A <a@b> 0 +0000\ncommitter A <a@b> 0 +0000\nx-bad: a\0b\n']] as const) {
      assert.deepEqual(await run(name, [{ type: 1, data: commit(header) }, ...base]), { ours: 0, theirs: 0 }, name);
    }
    const tag = Buffer.from(`object ${treeId}\ntype tree\ntag t\x00x\n\n`);
    assert.deepEqual(await run('tag', [{ type: 4, data: tag }, ...base]), { ours: 0, theirs: 0 });
    // get_oid_hex reads capital digits: such a tree line parses, and its link is followed.
    const upper = commit('author A <a@b> 0 +0000\ncommitter A <a@b> 0 +0000\n').toString().replace(treeId, treeId.toUpperCase());
    assert.deepEqual(await run('upper', [{ type: 1, data: Buffer.from(upper) }, ...base]), { ours: 0, theirs: 0 });
    const upperAlone = await run('upper-alone', [{ type: 1, data: Buffer.from(upper) }], true);
    assert.equal(upperAlone.theirs, 128, 'the tree it names is not in the pack');
    assert.deepEqual(upperAlone, { ...upperAlone, ours: upperAlone.theirs, oursSaid: upperAlone.theirsSaid });
    // A commit or tag whose pointer line does not parse: git's parse_commit_buffer and
    // parse_tag_buffer refuse it, and index-pack dies with their words.
    const zeros = '0'.repeat(40);
    for (const [name, type, data] of [
      ['bogus-commit', 1, `tree 1234\n\nmsg\n`],
      ['bad-tree-pointer', 1, `tree ${'g'.repeat(40)}\nauthor A <a@b> 0 +0000\n\nmsg\n`],
      ['bogus-tag', 4, `object ${zeros.slice(0, 12)}\ntype commit\ntag t\n\n`],
      ['bad-parent', 1, `tree ${treeId}\nparent ${'x'.repeat(40)}\nauthor A <a@b> 0 +0000\n\nmsg\n`],
      ['tag-without-name', 4, `object ${treeId}\ntype tree\ntagger A <a@b> 0 +0000\n\n`],
      ['tag-of-unknown-type', 4, `object ${treeId}\ntype thing\ntag t\n\n`],
    ] as const) {
      const bad = await run(name, [{ type, data: Buffer.from(data) }, ...base], true);
      assert.equal(bad.theirs, 128, name);
      assert.deepEqual(bad, { ...bad, ours: bad.theirs, oursSaid: bad.theirsSaid }, name);
    }
  });
  test('--max-input-size refuses a larger pack and writes nothing', async () => {
    const work = join(dir.path, 'max');
    mkdirSync(work);
    const { pack } = buildPack([{ type: 3, data: Buffer.alloc(5000, 1) }, { type: 3, data: Buffer.alloc(5000, 2) }]);
    writeFileSync(join(work, 'm.pack'), pack);
    const r = await packwrightFails(work, ['index-pack', '--max-input-size=20', 'm.pack']);
    assert.match(r.stderr, /maximum allowed size/);
    assert.throws(() => git(work, ['index-pack', '--max-input-size=20', 'm.pack']));
    git(work, ['init', '-q', '--bare', 'r.git']);
    assert.match((await packwrightFails(join(work, 'r.git'), ['index-pack', '--stdin', '--max-input-size=20'], pack)).stderr, /maximum allowed size/);
    assert.deepEqual(readdirSync(join(work, 'r.git', 'objects', 'pack')), []);
    assert.deepEqual(readdirSync(work).sort(), ['m.pack', 'r.git']);
  });
  test('a duplicate object is indexed twice like git, and refused with --strict', async () => {
    const work = join(dir.path, 'dup');
    mkdirSync(work);
    const blob = Buffer.from('the same object twice\n');
    writeFileSync(join(work, 'd.pack'), buildPack([{ type: 3, data: blob }, { type: 3, data: Buffer.from('other\n') }, { type: 3, data: blob }]).pack);
    await assertSameIndex(work, join(work, 'd.pack'));
    const r = await packwrightFails(work, ['index-pack', '--strict', '-o', 'strict.idx', 'd.pack']);
    assert.match(r.stderr, /appears twice/);
    assert.equal(existsSync(join(work, 'strict.idx')), false);
  });
});

describe('index-pack in parallel', () => {
  test('two threads resolve children of one root concurrently (branch stealing)', async () => {
    const work = join(dir.path, 'one-root');
    mkdirSync(work);
    // One base and 2000 deltas on it: without stealing, whichever thread takes the root does all.
    const base = Buffer.alloc(50_000, 0x62);
    const entries: Parameters<typeof buildPack>[0] = [{ type: 3, data: base }];
    for (let k = 1; k <= 2000; k++) {
      const tail = Buffer.from(String(k).padStart(4, '0'));
      entries.push({ ofsTo: 0, delta: makeDelta(base.length, base.length + 4, [0x80 | 0x30, base.length & 255, base.length >> 8, 4, ...tail]) });
    }
    const pack = join(work, 'one-root.pack');
    writeFileSync(pack, buildPack(entries).pack);
    const r = await indexPack(pack, { indexPath: join(work, 'api.idx'), threads: 2 });
    assert.equal(r.stats.perThread.length, 2, 'a worker and the calling thread');
    assert.ok((r.stats.perThread[0] as number) > 0 && (r.stats.perThread[1] as number) > 0, `per thread ${r.stats.perThread.join(', ')}`);
    assert.ok(r.stats.stolen > 0, 'children were taken from an offered branch');
    assert.deepEqual(readFileSync(join(work, 'api.idx')), (git(work, ['index-pack', '-o', join(work, 'git.idx'), pack]), readFileSync(join(work, 'git.idx'))));
  });
  test('a stream\'s object count, from --pack_header or read off its front, picks the threads: one below 2,000 objects, the default above; a stream that is no pack fails as before', async () => {
    const small = repackedCopy(join(dir.path, 'count-small'), 6, ['repack', '-adfq']);
    const many = manyFilesPack(join(dir.path, 'count-many'));
    for (const { work, pack } of [small, many]) {
      git(work, ['index-pack', '-o', join(work, 'git.idx'), pack]);
      const bytes = readFileSync(pack);
      const objects = bytes.readUInt32BE(8);
      const want = objects < 2000 ? 1 : defaultThreads();
      // Read off the stream's front.
      const peeked = await indexPack(Readable.from([bytes.subarray(0, 5), bytes.subarray(5)]), { packPath: join(work, 'peeked.pack') });
      assert.equal(peeked.stats.threads, want, `${objects} objects, header read here`);
      assert.deepEqual(readFileSync(peeked.indexPath as string), readFileSync(join(work, 'git.idx')));
      // Given, as git's --pack_header, the stream starting after it.
      const given = await indexPack(Readable.from([bytes.subarray(12)]), { packPath: join(work, 'given.pack'), packHeader: { version: 2, count: objects } });
      assert.equal(given.stats.threads, want, `${objects} objects, --pack_header`);
      assert.deepEqual(readFileSync(given.indexPath as string), readFileSync(join(work, 'git.idx')));
    }
    const work = small.work;
    await assert.rejects(indexPack(Readable.from([Buffer.from('NOPE\0\0\0\x02\0\0\0\x01')]), { packPath: join(work, 'bad.pack') }), (e) => isPackwrightError(e, 'PACK_SIGNATURE'));
    await assert.rejects(indexPack(Readable.from([Buffer.from('PACK')]), { packPath: join(work, 'short.pack') }), (e) => isPackwrightError(e, 'PACK_TRUNCATED'));
    await assert.rejects(indexPack(Readable.from([]), { packPath: join(work, 'empty.pack') }), (e) => isPackwrightError(e, 'PACK_TRUNCATED'));
    // A sender that never sends: the signal ends the wait for the header.
    const silent = new PassThrough();
    const stop = new AbortController();
    setTimeout(() => stop.abort(), 50);
    const aborted = indexPack(silent, { packPath: join(work, 'silent.pack'), signal: stop.signal });
    await assert.rejects(aborted, (e) => isPackwrightError(e, 'ABORTED'));
    silent.destroy();
    assert.deepEqual(readdirSync(work).filter((f) => f.startsWith('incoming') || f.startsWith('.tmp')), [], 'no temporary file left');
  });

  test('a pack above memoryLimit is resolved by positioned reads, from a file or a stream, with git\'s idx', async () => {
    const { work, pack } = repackedCopy(join(dir.path, 'pread'), 20, ['repack', '-adfq']);
    git(work, ['index-pack', '-o', join(work, 'git.idx'), pack]);
    const expected = readFileSync(join(work, 'git.idx'));
    for (const threads of [1, 2]) {
      // memoryLimit 1: nothing is held whole, pass 2 reads every entry back from the file.
      await indexPack(pack, { indexPath: join(work, `file-${threads}.idx`), threads, memoryLimit: 1 });
      assert.deepEqual(readFileSync(join(work, `file-${threads}.idx`)), expected, `file, ${threads} threads`);
      const r = await indexPack(Readable.from([readFileSync(pack)]), { packPath: join(work, `s${threads}.pack`), threads, memoryLimit: 1 });
      assert.deepEqual(readFileSync(r.indexPath as string), expected, `stream, ${threads} threads`);
      // And the default: a received pack that fits is read back whole for pass 2.
      const m = await indexPack(Readable.from([readFileSync(pack)]), { packPath: join(work, `m${threads}.pack`), threads });
      assert.deepEqual(readFileSync(m.indexPath as string), expected, `stream in memory, ${threads} threads`);
    }
  });

  test('with collision detection, ids by sha1dc (the trailer plainly) give git\'s idx at 1 and 2 threads, pass 1 split or not, in memory or not', async () => {
    const { work, pack } = repackedCopy(join(dir.path, 'sha1dc'), 20, ['repack', '-adfq']);
    git(work, ['index-pack', '-o', join(work, 'git.idx'), pack]);
    const expected = readFileSync(join(work, 'git.idx'));
    for (const threads of [1, 2]) {
      for (const memoryLimit of [1, Infinity]) {
        const indexPath = join(work, `dc-${threads}-${memoryLimit}.idx`);
        await indexPack(pack, { indexPath, threads, memoryLimit, parallelScanMinSize: 1, detectCollisions: true });
        assert.deepEqual(readFileSync(indexPath), expected, `${threads} threads, memoryLimit ${memoryLimit}`);
      }
      const r = await indexPack(Readable.from([readFileSync(pack)]), { packPath: join(work, `dc-s${threads}.pack`), threads, detectCollisions: true });
      assert.deepEqual(readFileSync(r.indexPath as string), expected, `stream, ${threads} threads`);
    }
  });

  test('maxMemory: a ceiling drops threads and keeps the pack out of memory, with git\'s idx; --max-memory and packwright.maxMemory', async () => {
    const { work, pack } = manyFilesPack(join(dir.path, 'ceiling'));
    git(work, ['index-pack', '-o', join(work, 'git.idx'), pack]);
    const expected = readFileSync(join(work, 'git.idx'));
    const size = statSync(pack).size;
    const run = async (name: string, maxMemory: number | undefined, threads = 2): Promise<[number, boolean]> => {
      const r = await indexPack(pack, { indexPath: join(work, `${name}.idx`), threads, ...(maxMemory !== undefined ? { maxMemory } : {}) });
      assert.deepEqual(readFileSync(join(work, `${name}.idx`)), expected, name);
      return [r.stats.threads, r.stats.resident];
    };
    // The default holds a small pack whole, on the threads asked for.
    assert.deepEqual(await run('default', undefined), [2, true]);
    // Below what the runtime and the tables need: one thread, the pack read back through blocks.
    assert.deepEqual(await run('tight', 1 << 20), [1, false]);
    // The plan's own figures decide: room for the pack to the byte holds it, a byte less does not
    // (on one thread, which the plan never drops).
    const objects = readFileSync(pack).readUInt32BE(8);
    const roomy = planIndexPackMemory({ maxMemory: 1 << 30, format: 'sha1', threads: 1, objects, packSize: size });
    const exact = (1 << 30) - roomy.residentLimit + size;
    assert.equal(planIndexPackMemory({ maxMemory: exact, format: 'sha1', threads: 1, objects, packSize: size }).residentLimit, size);
    assert.deepEqual(await run('exact', exact, 1), [1, true]);
    assert.deepEqual(await run('short', exact - 1, 1), [1, false]);
    // Two threads where the plan has room for both working sets, one where it has not.
    const two = planIndexPackMemory({ maxMemory: 1 << 30, format: 'sha1', threads: 2, objects, packSize: size });
    assert.equal(two.threads, 2);
    assert.equal(planIndexPackMemory({ maxMemory: two.fixed, format: 'sha1', threads: 2, objects, packSize: size }).threads, 1);
    assert.ok(roomy.fixed >= objects * (bytesPerObject('sha1', false, false).object + bytesPerObject('sha1').refDelta), 'the tables are charged, as if every delta were REF before pass 1 counts them');
    // A file under 4 GiB has 32-bit offsets: 4 bytes an object fewer than a stream's.
    assert.equal(planIndexPackMemory({ maxMemory: 1 << 30, format: 'sha1', threads: 1, objects }).fixed - roomy.fixed, 4 * objects);
    // The CLI: the flag, the config key (0: no ceiling), and git's words for a bad magnitude.
    for (const args of [['--max-memory=1k'], ['-c', 'packwright.maxMemory=1m'], ['-c', 'packwright.maxMemory=0']]) {
      const cmd = args[0] === '-c' ? [...args, 'index-pack'] : ['index-pack', ...args];
      await packwright(work, [...cmd, '-o', join(work, 'cli.idx'), pack]);
      assert.deepEqual(readFileSync(join(work, 'cli.idx')), expected, args.join(' '));
      rmSync(join(work, 'cli.idx'));
    }
    const bad = await packwrightFails(work, ['index-pack', '--max-memory=lots', pack]);
    assert.equal(bad.status, 129);
    assert.match(bad.stderr, /option `max-memory' expects a non-negative integer value with an optional k\/m\/g suffix/);
    copyFileSync(pack, join(work, 'v.pack'));
    copyFileSync(join(work, 'git.idx'), join(work, 'v.idx'));
    assert.match((await packwright(work, ['verify-pack', '-v', '--max-memory=2m', 'v.idx'])).toString(), /v\.pack: ok\n$/);
  });


  test('the default ceiling keeps two threads for index-pack --stdin into a repository, with detection and the comparison, on a pack like gitoxide\'s', () => {
    // 226k objects in 111 MB: what a fetch of gitoxide brings. The working sets charged per thread
    // (sha1dc's lanes and the comparison's store among them) once took this to one thread.
    const pack = { format: 'sha1' as const, objects: 226_225, packSize: 111_203_819, detectCollisions: true, visitorBytes: COMPARE_BYTES_PER_THREAD };
    assert.equal(planIndexPackMemory({ ...pack, maxMemory: defaultMaxMemory(pack.objects), threads: 2 }).threads, 2);
    assert.equal(planIndexPackMemory({ ...pack, maxMemory: defaultMaxMemory(pack.objects), threads: 2, deltas: 140_042, refDeltas: 0 }).threads, 2);
  });

  test('pass 1 keeps the deltas\' data for pass 2 where the plan has room, before the pack itself, with git\'s idx', async () => {
    const { work, pack } = manyFilesPack(join(dir.path, 'kept'));
    git(work, ['index-pack', '-o', join(work, 'git.idx'), pack]);
    const expected = readFileSync(join(work, 'git.idx'));
    const run = async (name: string, input: string | Readable, options: Parameters<typeof indexPack>[1]) => {
      const indexPath = join(work, `${name}.idx`);
      const r = await indexPack(input, { indexPath, ...(typeof input === 'string' ? {} : { packPath: join(work, `${name}.pack`) }), ...options });
      assert.deepEqual(readFileSync(typeof input === 'string' ? indexPath : (r.indexPath as string)), expected, name);
      return r.stats;
    };
    // Room for all: every delta's data comes from pass 1, from a file and from a stream, and on
    // two threads (a pack this small is scanned by one, the workers read the kept data), a stream
    // on two threads too (pass 1's helpers keep theirs in the same store).
    for (const [name, input, threads, kept] of [['file', pack, 1, true], ['stream', Readable.from([readFileSync(pack)]), 1, true], ['two', pack, 2, true], ['stream-two', Readable.from([readFileSync(pack)]), 2, true]] as const) {
      const stats = await run(name, input, { threads, maxMemory: 1 << 30 });
      assert.ok(stats.deltas > 100, 'the pack has deltas');
      assert.equal(stats.keptDeltas, kept ? stats.deltas : 0, name);
    }
    // No room (memoryLimit leaves none): all inflated again, the same idx.
    assert.equal((await run('none', pack, { threads: 1, memoryLimit: 1 })).keptDeltas, 0);
    // The plan: the deltas' room first (up to twice the pack), the pack held beside it if it fits;
    // a file's pass 1 split across threads keeps none; less than a MiB of room keeps none.
    const MiB = 1 << 20;
    const big = planPackHolding(200 * MiB, 1000, 100 * MiB, 1, true);
    assert.ok(big.keepDeltas > 190 * MiB && big.keepDeltas < 200 * MiB);
    assert.equal(big.holdPack, false);
    assert.deepEqual(planPackHolding(200 * MiB, 1000, 10 * MiB, 1, true), { keepDeltas: 20 * MiB, holdPack: true });
    assert.deepEqual(planPackHolding(200 * MiB, 1000, 100 * MiB, 2, false), { keepDeltas: 0, holdPack: true });
    assert.deepEqual(planPackHolding(9 * MiB, 1000, 100 * MiB, 1, true), { keepDeltas: 0, holdPack: false });
    // A stream: 16 KiB an object declared, else what the room allows.
    assert.deepEqual(planPackHolding(200 * MiB, 40, undefined, 1, true), { keepDeltas: 40 * 16 * 1024, holdPack: false });
    const room = planPackHolding(200 * MiB, 1_000_000, 10 * 1024 * MiB, 1, true).keepDeltas;
    assert.ok(room > 150 * MiB);
    assert.deepEqual(planPackHolding(200 * MiB, 1_000_000, undefined, 1, true), { keepDeltas: room, holdPack: false });
  });

  test('the plan charges the peak of the phases, and the default ceiling grows past a million objects', () => {
    const MiB = 1 << 20;
    assert.equal(defaultMaxMemory(0), DEFAULT_MAX_MEMORY);
    assert.equal(defaultMaxMemory(1_000_000), DEFAULT_MAX_MEMORY);
    assert.equal(defaultMaxMemory(10_000_000), DEFAULT_MAX_MEMORY + 48 * 9_000_000);
    // The synthetic 10M-object pack of the bench (2M chains of 5, every 4th delta REF, 411 MB):
    // two threads fit its default ceiling once pass 1 has counted the deltas (measured: 646-665
    // MiB at two threads, against 668 MiB), and before, for the kindest mix of deltas.
    const input = { maxMemory: defaultMaxMemory(10_000_000), format: 'sha1' as const, threads: 2, objects: 10_000_000, packSize: 411e6 };
    const counted = planIndexPackMemory({ ...input, deltas: 8_000_000, refDeltas: 2_000_000 });
    assert.equal(counted.threads, 2);
    assert.equal(planIndexPackMemory(input).threads, 2);
    // The phases' peak, not their sum: the tables alone are ~440 MB (39 bytes an object and the REF
    // list), the runtime 56 MiB; the two threads, the tree and the sorted order are not all added.
    assert.ok(counted.fixed < 640 * MiB, `${counted.fixed / MiB} MiB`);
    assert.ok(counted.fixed > 10_000_000 * 39 + 2_000_000 * 24 + 56 * MiB);
    // Before pass 1 the pack's residence is planned for the worst mix, so never above what the
    // counted mix needs; with depths (verify-pack -v) the OFS table stays and depths are kept.
    assert.ok(planIndexPackMemory(input).fixed >= counted.fixed);
    assert.ok(planIndexPackMemory({ ...input, deltas: 8_000_000, refDeltas: 2_000_000, depths: true }).fixed > counted.fixed);
    // The plan is monotone: more objects never free memory, more threads never cost less.
    let last = 0;
    for (const objects of [0, 1000, 100_000, 1_000_000, 5_000_000]) {
      const plan = planIndexPackMemory({ ...input, maxMemory: Infinity, objects, threads: 1 });
      assert.ok(plan.fixed >= last);
      last = plan.fixed;
      assert.ok(planIndexPackMemory({ ...input, maxMemory: Infinity, objects, threads: 3 }).fixed > plan.fixed);
    }
  });
  test('pass 1 split across 2 and 3 threads gives git\'s idx, and errors keep their offsets, with the pack in memory or not', async () => {
    const { work, repo, pack } = repackedCopy(join(dir.path, 'split'), 30, ['-c', 'pack.threads=1', 'repack', '-adfq']);
    git(work, ['index-pack', '-o', join(work, 'git.idx'), pack]);
    // memoryLimit 1: helpers read their regions into buffers of their own, the main thread hashes the rest.
    for (const memoryLimit of [undefined, 1]) {
      for (const threads of [2, 3]) {
        const r = await indexPack(pack, { indexPath: join(work, `t${threads}.idx`), threads, parallelScanMinSize: 0, ...(memoryLimit !== undefined ? { memoryLimit } : {}) });
        assert.deepEqual(readFileSync(join(work, `t${threads}.idx`)), readFileSync(join(work, 'git.idx')), `threads ${threads}, memoryLimit ${memoryLimit}`);
        assert.equal(r.objectCount, Number(/\d+/.exec(git(repo, ['count-objects', '-v']).toString().split('in-pack: ')[1] ?? '')?.[0]));
      }
    }
    // Damage an entry in the second half: the helper gives up and the main scan reports it.
    const bytes = readFileSync(pack);
    const one = await indexPack(pack, { indexPath: join(work, 't1.idx'), threads: 1 });
    const offsets = Array.from(one.scan.offsets.subarray(0, one.objectCount));
    const victim = offsets[Math.floor(offsets.length * 0.75)] as number;
    bytes[victim] = 0x50 | (bytes[victim] as number & 0x0f); // type 5
    const bad = join(work, 'bad.pack');
    writeFileSync(bad, bytes);
    for (const memoryLimit of [undefined, 1]) {
      await assert.rejects(indexPack(bad, { indexPath: join(work, 'bad.idx'), threads: 2, parallelScanMinSize: 0, ...(memoryLimit !== undefined ? { memoryLimit } : {}) }),
        (e: unknown) => (e as { code?: string; offset?: number }).code === 'PACK_CORRUPT' && (e as { offset?: number }).offset === victim);
      assert.equal(existsSync(join(work, 'bad.idx')), false);
    }
  });
  test('pass 1 split into many more regions than helpers scan ahead gives the one-thread scan', async () => {
    const { work, pack } = repackedCopy(join(dir.path, 'regions'), 30, ['-c', 'pack.threads=1', 'repack', '-adfq']);
    const size = statSync(pack).size;
    const one = await scanPack(fileSource(openSync(pack, 'r')), { format: 'sha1', size });
    const pool = new WorkerPool<ResolveTasks>(new URL('../src/resolve/resolve-worker.js', import.meta.url), 2);
    try {
      // 256-byte regions: dozens of them, while the helpers stay within REGIONS_AHEAD of this thread.
      const regionBytes = 256;
      assert.ok(size / regionBytes > 2 * REGIONS_AHEAD * pool.size, `${size} bytes`);
      for (const buffer of [undefined, Buffer.from(new SharedArrayBuffer(size))]) {
        const split = splitScan(pool, { format: 'sha1', path: pack, dataEnd: size - 20, ...(buffer !== undefined ? { buffer } : {}) }, regionBytes);
        // This thread reads slowly (64 bytes a ms), so the helpers, booting meanwhile, get regions.
        const file = fileSource(openSync(pack, 'r'));
        const slow: PackSource = { read: async (buf, offset, length, position) => {
          await new Promise((done) => setTimeout(done, 1));
          return file.read(buf, offset, Math.min(length, 64), position);
        } };
        const scanner = new PackScanner(slow, { format: 'sha1', size, shared: true, ...(buffer !== undefined ? { whole: { buffer } } : {}) });
        const scan = await scanWithHelpers(scanner, split);
        assert.equal(scan.count, one.count);
        assert.deepEqual(Array.from(scan.offsets.subarray(0, scan.count + 1)), Array.from(one.offsets.subarray(0, one.count + 1)));
        assert.deepEqual(Buffer.from(scan.ids.subarray(0, scan.count * 20)), Buffer.from(one.ids.subarray(0, one.count * 20)));
        assert.deepEqual(Array.from(scan.crc32.subarray(0, scan.count)), Array.from(one.crc32.subarray(0, one.count)));
        assert.deepEqual(Array.from(scan.ofsBase.subarray(0, scan.count)), Array.from(one.ofsBase.subarray(0, one.count)));
        // Helpers did scan regions, and none was left claimed by nobody.
        const claims = Array.from(split.claims);
        assert.ok(claims.includes(2), 'a helper claimed regions');
        assert.ok(!claims.includes(0), 'every region was claimed');
      }
    } finally {
      await pool.close();
    }
    rmSync(work, { recursive: true, force: true });
  });
  test('a stream that brings large entries a few KiB at a time gives git\'s idx, each entry inflated in pieces as it arrives', async () => {
    const work = join(dir.path, 'trickle');
    mkdirSync(work);
    git(work, ['init', '-q']);
    // Three versions of a 1.5 MB file, part text, part noise: whole entries and deltas far longer
    // than a chunk, one of them stored rather than compressed.
    const random = seededRandom(testSeed() ^ 0x7e1);
    const noise = Buffer.from(Array.from({ length: 500_000 }, () => Math.floor(random() * 256)));
    for (let v = 0; v < 3; v++) {
      writeFileSync(join(work, 'big'), Buffer.concat([Buffer.from(`version ${v}\n`.repeat(80_000)), noise.subarray(v * 1000)]));
      writeFileSync(join(work, 'noise'), randomBytes(200_000));
      git(work, ['add', '.']);
      git(work, ['-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', `v${v}`]);
    }
    git(work, ['repack', '-adq']);
    const pack = packOf(work);
    const bytes = readFileSync(pack);
    git(work, ['index-pack', '-o', join(work, 'git.idx'), pack]);
    const expected = readFileSync(join(work, 'git.idx'));
    const trickle = (chunk: number): Readable => Readable.from((async function* () {
      for (let at = 0; at < bytes.length; at += chunk) {
        yield bytes.subarray(at, at + chunk);
        await new Promise((done) => setImmediate(done));
      }
    })());
    for (const [threads, chunk] of [[1, 4 << 10], [2, 4 << 10], [1, 997]] as const) {
      const r = await indexPack(trickle(chunk), { packPath: join(work, `t${threads}-${chunk}.pack`), threads, detectCollisions: true });
      assert.deepEqual(readFileSync(r.indexPath as string), expected, `${threads} threads, chunks of ${chunk}`);
    }
  });
  test('a received pack is split too: helpers scan regions already in the spool file while it arrives, giving the one-thread scan; what follows the trailer stays out', async () => {
    const { work, pack } = repackedCopy(join(dir.path, 'spooled'), 30, ['-c', 'pack.threads=1', 'repack', '-adfq']);
    const bytes = readFileSync(pack);
    const keepAll = (): number => 1 << 24;
    const one = await scanPack(bufferSource(bytes), { format: 'sha1', keepDeltas: keepAll });
    const pool = new WorkerPool<ResolveTasks>(new URL('../src/resolve/resolve-worker.js', import.meta.url), 2);
    try {
      const spoolPath = join(work, 'incoming.pack');
      const fd = openSync(spoolPath, 'w+');
      // 256-byte regions, so that this small pack has dozens. The helpers keep their deltas in
      // the store this thread keeps its own in.
      const keptData = allocKeptData(1 << 24, true);
      const split = splitScan(pool, { format: 'sha1', path: spoolPath, dataEnd: Infinity, kept: keptData }, 256);
      // The pack arrives in 4 KiB chunks, then junk, and the sender never ends the stream. This
      // thread holds off reading it back until a helper (booting meanwhile) has taken a region.
      const input = new PassThrough();
      const sent = Buffer.concat([bytes, Buffer.from('junk after the pack')]);
      for (let at = 0; at < sent.length; at += 4096) input.write(sent.subarray(at, at + 4096));
      const spool = new StreamSpool(input, fd, spoolPath, { onReceived: split.received });
      const deadline = Date.now() + 20_000;
      const slow: PackSource = { read: async (buf, offset, length) => {
        while (!Array.from(split.claims).includes(2) && Date.now() < deadline) await new Promise((done) => setTimeout(done, 1));
        return spool.read(buf, offset, length);
      } };
      const scan = await scanWithHelpers(new PackScanner(slow, { format: 'sha1', shared: true, keptData, keepDeltas: keepAll }), split);
      const trailing = spool.stop(scan.end);
      // Every delta's data kept, whoever scanned it, and the same as the one-thread scan kept.
      const deltas = Array.from(one.types.subarray(0, one.count)).filter((t) => t >= 6).length;
      assert.ok(deltas > 10, 'the pack has deltas');
      assert.equal(scan.kept?.count, deltas);
      const keptOf = (p: PackScan, k: number): Buffer => {
        const at = (p.kept as KeptDeltas).at[k] as number;
        return Buffer.from((p.kept as KeptDeltas).data.subarray(at - 1, at - 1 + (p.sizes[k] as number)));
      };
      for (let k = 0; k < one.count; k++) {
        if ((one.types[k] as number) >= 6) assert.deepEqual(keptOf(scan, k), keptOf(one, k), `entry ${k}`);
      }
      assert.equal(scan.count, one.count);
      assert.deepEqual(Array.from(scan.offsets.subarray(0, scan.count + 1)), Array.from(one.offsets.subarray(0, one.count + 1)));
      assert.deepEqual(Buffer.from(scan.ids.subarray(0, scan.count * 20)), Buffer.from(one.ids.subarray(0, one.count * 20)));
      assert.deepEqual(Array.from(scan.crc32.subarray(0, scan.count)), Array.from(one.crc32.subarray(0, one.count)));
      assert.deepEqual(Array.from(scan.ofsBase.subarray(0, scan.count)), Array.from(one.ofsBase.subarray(0, one.count)));
      assert.deepEqual(scan.packHash, one.packHash);
      assert.ok(Array.from(split.claims).includes(2), 'a helper claimed regions');
      // What arrived after the trailer is reported, and the file holds the pack alone.
      assert.ok('junk after the pack'.startsWith(trailing.toString()), trailing.toString());
      assert.deepEqual(readFileSync(spoolPath), bytes);
      input.destroy();
    } finally {
      await pool.close();
    }
    // Through indexPack at two threads: git's idx, from a stream given at once and one arriving slowly.
    git(work, ['index-pack', '-o', join(work, 'git.idx'), pack]);
    const slow = Readable.from((async function* () {
      for (let at = 0; at < bytes.length; at += 64 << 10) {
        yield bytes.subarray(at, at + (64 << 10));
        await new Promise((done) => setTimeout(done, 1));
      }
    })());
    for (const input of [Readable.from([bytes]), slow]) {
      const r = await indexPack(input, { packPath: join(work, 'received.pack'), threads: 2 });
      assert.deepEqual(r.index, readFileSync(join(work, 'git.idx')));
      assert.deepEqual(readFileSync(join(work, 'received.pack')), bytes);
      rmSync(join(work, 'received.pack'), { force: true });
    }
    rmSync(work, { recursive: true, force: true });
  });
  test('a thread that never shows up (a worker killed) fails the others instead of hanging them', async () => {
    const { pack } = buildPack([{ type: 3, data: Buffer.from('base object') }, { ofsTo: 0, delta: makeDelta(11, 4, [0x90, 4]) }]);
    const scan = await scanPack(bufferSource(pack), { format: 'sha1', shared: true });
    const tree = buildDeltaTree(scan, true);
    const control = new Int32Array(new SharedArrayBuffer(CONTROL_LENGTH * 4));
    Atomics.store(control, CONTROL_WORKERS, 2);
    const resolver = new Resolver({
      format: 'sha1', name: 'lonely', packPath: '', packEnd: pack.length, pack: pack, offsets: scan.offsets, types: scan.types, sizes: scan.sizes,
      headerLengths: scan.headerLengths, ids: scan.ids, resolvedTypes: scan.resolvedTypes, depths: new Uint32Array(scan.count),
      ...tree, control, board: createBoard(2, 1024), stallMs: 200,
    });
    const started = Date.now();
    assert.throws(() => resolver.run(), (e: unknown) => (e as { code?: string }).code === 'WORKER_FAILED');
    assert.ok(Date.now() - started < 5000);
    resolver.close();
  });
  test('an abort signal fired before the run stops it with ABORTED', async () => {
    const work = join(dir.path, 'abort');
    mkdirSync(work);
    const controller = new AbortController();
    controller.abort();
    const entries: Parameters<typeof buildPack>[0] = [{ type: 3, data: Buffer.from('x') }];
    writeFileSync(join(work, 'a.pack'), buildPack(entries).pack);
    await assert.rejects(indexPack(join(work, 'a.pack'), { threads: 2, signal: controller.signal }), (e: unknown) => (e as { code?: string }).code === 'ABORTED');
    assert.deepEqual(readdirSync(work), ['a.pack']);
  });
  for (const threads of [1, 2]) {
    test(`an abort from a timer stops a ${threads}-thread run within a slice, in either pass, and writes nothing`, async () => {
      const { work, pack } = manyFilesPack(join(dir.path, `abort-timer-${threads}`));
      // Slices of 2 ms: this pack takes ~50 ms, so a run has many (the default is 40 ms).
      for (const phase of ['indexing', 'resolving'] as const) {
        const controller = new AbortController();
        let firedAt = 0;
        let last = { phase: '', done: 0, total: 0 };
        const run = indexPack(pack, {
          threads, indexPath: join(work, 'p.idx'), signal: controller.signal, parallelScanMinSize: Infinity, sliceMs: 2,
          onProgress: (p, done, total) => {
            last = { phase: p, done, total };
            // The abort comes from a timer: it can only fire when the run lets the event loop turn.
            if (p === phase && firedAt === 0) {
              firedAt = -1;
              setTimeout(() => { firedAt = performance.now(); controller.abort(); }, 0);
            }
          },
        });
        await assert.rejects(run, (e: unknown) => (e as { code?: string }).code === 'ABORTED', `${phase}: rejects with ABORTED`);
        const waited = performance.now() - firedAt;
        assert.ok(firedAt > 0 && waited < 100, `${phase}: the abort was seen ${waited.toFixed(0)} ms after it fired`);
        assert.ok(last.phase !== 'resolving' || last.done < last.total, `${phase}: stopped before the end (${last.done} of ${last.total})`);
        assert.deepEqual(readdirSync(work).sort(), ['p.pack', 'r.git'], `${phase}: nothing written`);
      }
    });
  }
  test('a worker killed midway makes the resolve fail with WORKER_FAILED within a second, not hang', async () => {
    const { pack } = manyFilesPack(join(dir.path, 'killed'));
    const scan = await scanPack(fileSource(openSync(pack, 'r')), { format: 'sha1', shared: true, whole: { buffer: Buffer.from(new SharedArrayBuffer(statSync(pack).size)) } });
    const pool = new WorkerPool<ResolveTasks>(new URL('../src/resolve/resolve-worker.js', import.meta.url), 1);
    let killedAt = 0;
    const resolving = resolveDeltas(pack, scan, {
      pool, sliceMs: 2,
      onProgress: () => {
        if (killedAt !== 0) return;
        killedAt = performance.now();
        // Terminated from outside, as an out-of-memory kill or a crash would end it.
        void pool.close();
      },
    });
    await assert.rejects(resolving, (e: unknown) => (e as { code?: string }).code === 'WORKER_FAILED');
    assert.ok(killedAt > 0, 'the worker was killed during the run');
    assert.ok(performance.now() - killedAt < 1000, `failed ${(performance.now() - killedAt).toFixed(0)} ms after the kill`);
  });
  test('an abort midway through resolving at two threads stops every thread with ABORTED and writes nothing', async () => {
    const work = join(dir.path, 'abort-midway');
    const { pack } = manyFilesPack(work);
    const controller = new AbortController();
    let abortedAt = -1;
    let total = 0;
    await assert.rejects(indexPack(pack, {
      threads: 2, indexPath: join(work, 'p.idx'), signal: controller.signal,
      onProgress: (phase, done, all) => {
        if (phase !== 'resolving' || done === 0 || abortedAt >= 0) return;
        abortedAt = done;
        total = all;
        controller.abort();
      },
    }), (e: unknown) => (e as { code?: string }).code === 'ABORTED');
    assert.ok(abortedAt > 0 && abortedAt < total / 2, `aborted after ${abortedAt} of ${total} deltas: midway, not at the end`);
    assert.deepEqual(readdirSync(work).sort(), ['p.pack', 'r.git']);
    // The same pack indexes fine afterwards (the threads stopped; nothing is left half done).
    const r = await indexPack(pack, { threads: 2, indexPath: join(work, 'p.idx') });
    assert.equal(r.stats.deltas, total);
  });
});

describe('index-pack on bad packs fails like git and leaves no file', () => {
  const work = join(dir.path, 'bad');
  let good: Buffer;
  before(() => {
    mkdirSync(work);
    const a = join(work, 'a');
    mkdirSync(a);
    const repo = makeRepo(a, 'sha1', 4);
    git(repo, ['repack', '-adfq']);
    good = readFileSync(packOf(repo));
  });
  const cases: [string, () => Buffer, RegExp][] = [
    ['a truncated pack', () => good.subarray(0, Math.floor(good.length / 2)), /early EOF|truncat/i],
    ['a bad signature', () => { const b = Buffer.from(good); b.write('PACX', 0, 'latin1'); return b; }, /signature/],
    ['version 4', () => { const b = Buffer.from(good); b.writeUInt32BE(4, 4); return b; }, /version 4/],
    ['a bad trailer', () => { const b = Buffer.from(good); b.writeUInt8(((b.at(-1) as number) + 1) & 255, b.length - 1); return b; }, /SHA1 mismatch/],
    ['junk after the trailer', () => Buffer.concat([good, Buffer.from('junk')]), /junk/],
    ['a missing REF base', () => buildPack([{ refTo: Buffer.alloc(20, 0xab), delta: makeDelta(1, 1, [1, 0x41]) }]).pack, /unresolved/],
    ['a REF_DELTA cycle', () => buildPack([{ refTo: Buffer.alloc(20, 0xab), delta: makeDelta(1, 1, [1, 0x41]) }, { refTo: Buffer.alloc(20, 0xcd), delta: makeDelta(1, 1, [1, 0x42]) }]).pack, /unresolved/],
    ['a delta with the wrong base size', () => buildPack([{ type: 3, data: Buffer.from('abcdef') }, { ofsTo: 0, delta: makeDelta(5, 2, [0x90, 2]) }]).pack, /delta/],
    ['a delta that states a 1 TiB result', () => buildPack([{ type: 3, data: Buffer.from('abcdef') }, { ofsTo: 0, delta: makeDelta(6, 2 ** 40, [0x90, 2]) }]).pack, /delta/],
    ['type 5', () => buildPack([{ raw: Buffer.from([0x50 | 3, 0x78, 0x9c, 0x03, 0x00]) }]).pack, /type 5/],
    ['a declared size too large', () => buildPack([{ type: 3, data: Buffer.from('abc'), declaredSize: 10 }]).pack, /inflate|shorter/],
    ['a declared size its stream cannot hold', () => buildPack([{ type: 3, data: Buffer.from('abc'), declaredSize: 2 ** 31 }]).pack, /declares 2147483648 bytes, more than/],
    ['a declared size too small', () => buildPack([{ type: 3, data: Buffer.from('abcdef'), declaredSize: 3 }]).pack, /inflate|longer/],
    ['an OFS base out of bound', () => buildPack([{ type: 3, data: Buffer.from('abcdef') }, { ofsTo: 0, delta: makeDelta(6, 2, [0x90, 2]), rawOffset: encodeOfsDistance(4000) }]).pack, /out of bound/],
    ['an OFS base in the middle of an entry', () => buildPack([{ type: 3, data: Buffer.from('abcdef') }, { ofsTo: 0, delta: makeDelta(6, 2, [0x90, 2]), rawOffset: encodeOfsDistance(5) }]).pack, /unresolved/],
    ['an overflowing OFS offset', () => buildPack([{ type: 3, data: Buffer.from('abcdef') }, { ofsTo: 0, delta: makeDelta(6, 2, [0x90, 2]), rawOffset: Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f]) }]).pack, /overflow/],
    ['a delta with opcode 0', () => buildPack([{ type: 3, data: Buffer.from('abcdef') }, { ofsTo: 0, delta: makeDelta(6, 2, [1, 0x41, 0]) }]).pack, /opcode 0/],
    ['a delta with trailing instructions', () => buildPack([{ type: 3, data: Buffer.from('abcdef') }, { ofsTo: 0, delta: makeDelta(6, 2, [0x90, 2, 1, 0x41]) }]).pack, /past the declared result size/],
    // FORMATS.md's remaining entry and delta cases: type 0, a copy out of the base, an insert past the delta's end.
    ['type 0', () => buildPack([{ raw: Buffer.from([0x00 | 3, 0x78, 0x9c, 0x03, 0x00]) }]).pack, /type 0/],
    ['a delta copying past the end of its base', () => buildPack([{ type: 3, data: Buffer.from('abcdef') }, { ofsTo: 0, delta: makeDelta(6, 4, [0x91, 5, 4]) }]).pack, /delta/],
    ['a delta with fewer literals than its insert says', () => buildPack([{ type: 3, data: Buffer.from('abcdef') }, { ofsTo: 0, delta: makeDelta(6, 4, [4, 0x41]) }]).pack, /delta/],
  ];
  for (const [what, make, pattern] of cases) {
    test(what, async () => {
      const sub = join(work, what.replace(/\W+/g, '-'));
      mkdirSync(sub);
      const pack = join(sub, 'bad.pack');
      writeFileSync(pack, make());
      const ours = await packwrightFails(sub, ['index-pack', pack]);
      assert.equal(ours.status, 128);
      assert.match(ours.stderr, pattern);
      assert.equal(ours.stderr.trim().split('\n').length, 1, ours.stderr);
      assert.throws(() => git(sub, ['index-pack', pack]));
      assert.deepEqual(readdirSync(sub).sort(), ['bad.pack'], 'no file left behind');
    });
  }
  test('a stream is sized from its header\'s count, unless no machine here could hold it; one that ends early is early EOF, as in git', async () => {
    // A count this machine could hold sizes a stream's tables once (10M objects: 430 MB of
    // tables, where growing them by doubling left as much again to the collector); a file's size
    // bounds its count.
    assert.equal(sizedFromHeader('sha1', 10_000_000, undefined), totalmem() >= 4 * 430_000_000);
    assert.equal(sizedFromHeader('sha256', 0xffffffff, undefined), false);
    assert.equal(sizedFromHeader('sha1', 0xffffffff, 2 ** 40), true);
    const sized = await scanPack(bufferSource(good), { format: 'sha1' });
    assert.equal(sized.capacity, sized.count);
    // Declaring more than the stream holds: 1000 (sized), and 2^32 - 1 (grown as entries come);
    // the stream ends after its last entry (no trailer, which would read as an entry).
    for (const declared of [1000, 0xffffffff]) {
      const repoDir = join(work, `count-${declared}.git`);
      git(work, ['init', '-q', '--bare', repoDir]);
      const b = Buffer.from(good.subarray(0, good.length - 20));
      b.writeUInt32BE(declared, 8);
      const ours = await packwrightFails(repoDir, ['index-pack', '--stdin'], b);
      // Nothing written (git leaves its tmp_pack_* behind: checked before it runs).
      assert.deepEqual(readdirSync(join(repoDir, 'objects', 'pack')), []);
      const theirs = spawnGit(['index-pack', '--stdin'], { cwd: repoDir, input: b, encoding: 'utf8' });
      assert.equal(ours.status, theirs.status, `${declared}: ${theirs.stderr}`);
      assert.match(ours.stderr, /early EOF/, String(declared));
      // git 2.39 refuses 2^32 - 1 before reading on ("size_t overflow" sizing its table).
      assert.match(theirs.stderr, declared === 1000 ? /early EOF/ : /overflow/, String(declared));
    }
  });
  test('--stdin cut at random points fails with early EOF and writes nothing', async () => {
    const repoDir = join(work, 'cut.git');
    git(work, ['init', '-q', '--bare', repoDir]);
    const seed = testSeed();
    const random = seededRandom(seed);
    for (let i = 0; i < 5; i++) {
      const cut = 12 + Math.floor(random() * (good.length - 40));
      const r = await packwrightFails(repoDir, ['index-pack', '--stdin'], good.subarray(0, cut));
      assert.equal(r.status, 128, `cut at ${cut} (PACKWRIGHT_SEED=${seed})`);
      assert.match(r.stderr, /early EOF|mismatch/, `cut at ${cut} (PACKWRIGHT_SEED=${seed})`);
    }
    assert.deepEqual(readdirSync(join(repoDir, 'objects', 'pack')), []);
  });
});

describe('index-pack --fix-thin', () => {
  // git appends the missing bases in the order of the first REF delta naming each, deflated at
  // core.loosecompression (else core.compression, else 1) by reference zlib: the completed pack
  // and its index are git's bytes, whatever the level.
  for (const format of ['sha1', 'sha256'] as Format[]) {
    test(`completes a thin pack from the repository into git's very bytes (${format})`, async () => {
      const work = join(dir.path, `thin-${format}`);
      mkdirSync(work);
      const repo = makeRepo(work, format, 8);
      const thin = execGit(['pack-objects', '--thin', '--stdout', '--revs', '-q'], { cwd: repo, input: 'HEAD\n^HEAD~3\n' });
      // A receiver that has HEAD~3 and everything before it.
      const receiver = join(work, 'receiver.git');
      git(work, ['clone', '-q', '--bare', '--no-local', repo, receiver]);
      git(receiver, ['update-ref', 'refs/heads/main', git(repo, ['rev-parse', 'HEAD~3']).toString().trim()]);
      git(receiver, ['-c', 'gc.reflogExpire=now', 'reflog', 'expire', '--all']);
      git(receiver, ['-c', 'pack.threads=1', 'repack', '-adq']);
      git(receiver, ['prune', '--expire=now']);
      const levels: [string, string[]][] = [['default', []], ['core.compression=9', ['core.compression', '9']], ['core.looseCompression=0', ['core.looseCompression', '0']], ['core.compression=-1', ['core.compression', '-1']]];
      for (const [label, config] of levels) {
        const [ours, theirs] = await Promise.all(['pw', 'git'].map(async (who) => {
          const r = join(work, `${label}-${who}.git`);
          git(work, ['clone', '-q', '--bare', '--no-local', receiver, r]);
          // A level for packs only, which git's index-pack does not use for the bases it appends.
          git(r, ['config', 'pack.compression', '4']);
          if (config.length > 0) git(r, ['config', ...config]);
          const out = who === 'pw' ? (await packwright(r, ['index-pack', '--stdin', '--fix-thin'], thin)).toString() : git(r, ['index-pack', '--stdin', '--fix-thin'], thin).toString();
          const hash = new RegExp(`^pack\t([0-9a-f]{${format === 'sha1' ? 40 : 64}})\n$`).exec(out)?.[1];
          assert.ok(hash, out);
          const base = join(r, 'objects', 'pack', `pack-${hash}`);
          return { out, pack: readFileSync(`${base}.pack`), idx: readFileSync(`${base}.idx`), repo: r };
        })) as [{ out: string; pack: Buffer; idx: Buffer; repo: string }, { out: string; pack: Buffer; idx: Buffer; repo: string }];
        assert.ok(ours.pack.readUInt32BE(8) >= thin.readUInt32BE(8) + 2, `${label}: more than one base appended`);
        assert.equal(ours.out, theirs.out, label);
        assert.ok(ours.pack.equals(theirs.pack), `${label}: the completed pack is git's`);
        assert.ok(ours.idx.equals(theirs.idx), `${label}: the index is git's`);
        git(ours.repo, ['fsck', '--no-dangling']);
      }
    });
  }

  test('an out-of-range level is refused before anything is read', async () => {
    await assert.rejects(indexPack(Buffer.alloc(0), { fixThin: () => undefined, fixThinCompression: 10 }), (e: Error & { code?: string }) => e.code === 'INVALID_ARGUMENT' && /bad zlib compression level 10/.test(e.message));
  });
});

describe('index-pack as git fetch-pack runs it', () => {
  test('--pack_header, --check-self-contained-and-connected, --report-end-of-input and --progress-title: the same files, output and exit status as git', async () => {
    const work = join(dir.path, 'fetch-pack');
    mkdirSync(work);
    const repo = makeRepo(work, 'sha1', 8);
    const full = execGit(['pack-objects', '--stdout', '--revs', '-q'], { cwd: repo, input: 'HEAD\n' });
    const thin = execGit(['pack-objects', '--thin', '--stdout', '--revs', '-q'], { cwd: repo, input: 'HEAD\n^HEAD~3\n' });
    const run = (who: 'git' | 'pw', receiver: string, pack: Buffer, extra: string[]): { status: number; stdout: string; stderr: string; files: string[] } => {
      // fetch-pack reads the header itself and passes what it said.
      const header = `--pack_header=${pack.readUInt32BE(4)},${pack.readUInt32BE(8)}`;
      const args = ['index-pack', '--stdin', header, '--check-self-contained-and-connected', '--report-end-of-input', '--progress-title', 'Receiving', ...extra];
      const r = who === 'git'
        ? spawnGit(args, { cwd: receiver, input: pack.subarray(12) })
        : spawnSync(process.execPath, [CLI, ...args], { cwd: receiver, input: pack.subarray(12) });
      const packDir = join(receiver, 'objects', 'pack');
      return { status: r.status ?? -1, stdout: r.stdout.toString(), stderr: r.stderr.toString(), files: readdirSync(packDir).sort().map((f) => `${f} ${readFileSync(join(packDir, f)).toString('hex').slice(0, 64)}`) };
    };
    const receivers = (name: string, base?: string): [string, string] => ['git', 'pw'].map((who) => {
      const r = join(work, `${name}-${who}.git`);
      if (base === undefined) git(work, ['init', '-q', '--bare', r]);
      else git(work, ['clone', '-q', '--bare', '--no-local', base, r]);
      return r;
    }) as [string, string];
    // A whole pack into an empty repository: self-contained (exit 0).
    const [g, p] = receivers('empty');
    const ours = run('pw', p, full, []);
    const theirs = run('git', g, full, []);
    assert.equal(ours.status, 0, ours.stderr);
    assert.equal(theirs.status, 0);
    assert.equal(ours.stdout, theirs.stdout);
    assert.deepEqual(ours.files, theirs.files);
    assert.equal(ours.stderr.split('\0').length, 2, 'one NUL once the input ended');
    // A thin pack completed from the repository: not self-contained (exit 1), the same pack kept.
    const receiver = join(work, 'has-old.git');
    git(work, ['clone', '-q', '--bare', '--no-local', repo, receiver]);
    git(receiver, ['update-ref', 'refs/heads/main', git(repo, ['rev-parse', 'HEAD~3']).toString().trim()]);
    git(receiver, ['-c', 'gc.reflogExpire=now', 'reflog', 'expire', '--all']);
    git(receiver, ['-c', 'pack.threads=1', 'repack', '-adq']);
    git(receiver, ['prune', '--expire=now']);
    const [g2, p2] = receivers('thin', receiver);
    const ours2 = run('pw', p2, thin, ['--fix-thin']);
    const theirs2 = run('git', g2, thin, ['--fix-thin']);
    assert.equal(theirs2.status, 1);
    assert.equal(ours2.status, 1, ours2.stderr);
    // Completed as git completes it (--fix-thin above): the same pack, the same files.
    assert.equal(ours2.stdout, theirs2.stdout);
    assert.deepEqual(ours2.files, theirs2.files);
    // A bad header argument, as git says it.
    const bad = await packwrightFails(p, ['index-pack', '--stdin', '--pack_header=2;3'], Buffer.alloc(0));
    assert.match(bad.stderr, /bad --pack_header=2;3/);
  });
});

describe('index-pack: the reverse index, as git decides it', () => {
  test('pack.writeReverseIndex (from config or -c) writes a .rev unless --no-rev-index; --verify checks one', async () => {
    using dir = tempDir();
    const repo = makeRepo(dir.path, 'sha1', 4);
    git(repo, ['repack', '-adq']);
    const packDir = join(repo, '.git', 'objects', 'pack');
    const pack = join(packDir, fileEndingIn(packDir, '.pack'));
    const idx = pack.replace(/\.pack$/, '.idx');
    const rev = pack.replace(/\.pack$/, '.rev');
    const run = async (global: string[], args: string[]): Promise<void> => {
      rmSync(idx, { force: true });
      rmSync(rev, { force: true });
      await packwright(repo, [...global, 'index-pack', ...args, pack]);
    };
    for (const [global, args, wanted] of [
      [[], [], false],
      [['-c', 'pack.writeReverseIndex='], [], false],
      [['-c', 'pack.writeReverseIndex=false'], [], false],
      [['-c', 'pack.writeReverseIndex=true'], [], true],
      [['-c', 'pack.writeReverseIndex=true'], ['--no-rev-index'], false],
      [['-c', 'pack.writeReverseIndex=false'], ['--rev-index'], true],
    ] as [string[], string[], boolean][]) {
      await run(global, args);
      assert.equal(existsSync(rev), wanted, `${global.join(' ')} ${args.join(' ')}`);
    }
    git(repo, ['config', 'pack.writeReverseIndex', 'true']);
    await run([], []);
    assert.ok(existsSync(rev), 'from the repository config');
    await packwright(repo, ['index-pack', '--rev-index', '--verify', pack]);
    const bytes = readFileSync(rev);
    bytes.write('xxxx', 0, 'latin1');
    chmodSync(rev, 0o644);
    writeFileSync(rev, bytes);
    const r = await packwrightFails(repo, ['index-pack', '--rev-index', '--verify', pack]);
    assert.equal(r.status, 128);
    assert.match(r.stderr, /validation error/);
  });
});

describe('index-pack --verify, with the options of the index on disk', () => {
  test('an idx v1 and a v2 with forced 64-bit offsets verify as git verifies them', async () => {
    using dir = tempDir();
    const repo = makeRepo(dir.path, 'sha1', 6);
    git(repo, ['repack', '-adq']);
    const packDir = join(repo, '.git', 'objects', 'pack');
    const pack = join(packDir, fileEndingIn(packDir, '.pack'));
    const copy = join(dir.path, 'p.pack');
    copyFileSync(pack, copy);
    const idx = join(dir.path, 'p.idx');
    for (const version of ['--index-version=1', '--index-version=2,0x200']) {
      rmSync(idx, { force: true });
      git(repo, ['index-pack', version, '-o', idx, copy]);
      git(repo, ['index-pack', '--verify', copy]);
      await packwright(repo, ['index-pack', '--verify', copy]);
      // One changed byte of the index's last offset (or CRC) and it no longer verifies.
      const bytes = readFileSync(idx);
      const at = bytes.length - 41;
      bytes[at] = (bytes[at] as number) ^ 1;
      chmodSync(idx, 0o644);
      writeFileSync(idx, bytes);
      assert.equal((await packwrightFails(repo, ['index-pack', '--verify', copy])).status, 128, version);
    }
  });
});

describe('index-pack checks objects as git does: --fsck-objects, --strict, and objects the repository has', () => {
  /** Runs git and packwright on copies of one repository: status, stderr lines, and what each left in the pack directory. */
  const both = (work: string, repo: string, args: string[], input?: Buffer): { git: Outcome; pw: Outcome } => {
    const copy = join(work, `copy-${Math.random().toString(36).slice(2)}`);
    execFileSync('cp', ['-a', repo, copy]);
    return { git: outcome('git', args, repo, input), pw: outcome(process.execPath, [CLI, ...args], copy, input) };
  };
  interface Outcome { status: number; err: string[]; packDir: string[] }
  const outcome = (cmd: string, args: string[], cwd: string, input?: Buffer): Outcome => {
    const r = spawnSync(cmd, args, { cwd, input, env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' } });
    const packDir = join(cwd, '.git', 'objects', 'pack');
    return {
      status: r.status ?? -1,
      err: r.stderr.toString().split('\n').filter((l) => l !== '' && !l.startsWith('usage')),
      packDir: existsSync(packDir) ? readdirSync(packDir).filter((f) => !f.startsWith('tmp_')).sort() : [],
    };
  };

  /** `index-pack --stdin` of `pack` in `repo`, at 1 and 2 threads: git's collision on `blob`, and nothing left behind. */
  const collidesLikeGit = (work: string, repo: string, pack: Buffer, blob: string): void => {
    for (const threads of ['1', '2']) {
      const r = both(work, repo, ['index-pack', `--threads=${threads}`, '--stdin'], pack);
      assert.notEqual(r.git.status, 0);
      assert.equal(r.pw.status, r.git.status);
      assert.deepEqual(r.pw.err, [`fatal: SHA1 COLLISION FOUND WITH ${blob} !`]);
      assert.deepEqual(r.pw.err, r.git.err);
      assert.deepEqual(r.pw.packDir, r.git.packDir);
    }
  };

  test('a tag without a tagger: the same warning, and the pack is kept', () => {
    using work = tempDir();
    const repo = makeRepo(work.path, 'sha1', 3);
    const head = git(repo, ['rev-parse', 'HEAD']).toString().trim();
    const tag = git(repo, ['hash-object', '-t', 'tag', '-w', '--stdin'], `object ${head}\ntype commit\ntag guten tag\n\nno tagger\n`).toString().trim();
    const pack = git(repo, ['pack-objects', '--stdout'], `${tag}\n${head}\n`);
    rmSync(join(repo, '.git', 'objects', tag.slice(0, 2), tag.slice(2)));
    for (const flag of ['--strict', '--fsck-objects']) {
      const r = both(work.path, repo, ['index-pack', flag, '--stdin'], pack);
      assert.equal(r.pw.status, 0, r.pw.err.join('\n'));
      assert.deepEqual(r.pw, r.git);
      assert.ok(r.pw.err.some((l) => l === `warning: object ${tag}: missingTaggerEntry: invalid format - expected 'tagger' line`), r.pw.err.join('\n'));
    }
  });

  test('a bad commit fails --fsck-objects with git\'s lines, and nothing is written', () => {
    using work = tempDir();
    const repo = makeRepo(work.path, 'sha1', 3);
    const tree = git(repo, ['rev-parse', 'HEAD^{tree}']).toString().trim();
    const bad = git(repo, ['hash-object', '-t', 'commit', '-w', '--stdin', '--literally'], `tree ${tree}\nauthor A <a@b> 1 +0000\ncommitter C <c@d>> 1 +0000\n\nm\n`).toString().trim();
    const pack = git(repo, ['pack-objects', '--stdout'], `${bad}\n`);
    const r = both(work.path, repo, ['index-pack', '--fsck-objects', '--stdin'], pack);
    assert.notEqual(r.git.status, 0);
    assert.equal(r.pw.status, r.git.status);
    assert.deepEqual(r.pw.err, r.git.err);
    assert.deepEqual(r.pw.packDir, r.git.packDir, 'nothing new in the pack directory');
    // Its severity can be lowered, as with git's --strict=<id>=<type>.
    const lowered = both(work.path, repo, ['index-pack', '--strict=missingSpaceBeforeDate=warn', '--stdin'], pack);
    assert.equal(lowered.pw.status, 0, lowered.pw.err.join('\n'));
    assert.deepEqual(lowered.pw, lowered.git);
    assert.equal(lowered.pw.err.length, 1);
  });

  test('--strict: a tree whose blobs are neither in the pack nor in the repository', () => {
    using work = tempDir();
    const repo = makeRepo(work.path, 'sha1', 3);
    const tree = git(repo, ['rev-parse', 'HEAD^{tree}']).toString().trim();
    const pack = git(repo, ['pack-objects', '--stdout'], `${tree}\n`);
    const empty = join(work.path, 'empty');
    git(work.path, ['init', '-q', empty]);
    const r = both(work.path, empty, ['index-pack', '--strict', '--stdin'], pack);
    assert.notEqual(r.git.status, 0);
    assert.equal(r.pw.status, r.git.status);
    assert.match(r.pw.err.join('\n'), /^fatal: did not receive expected object [0-9a-f]{40}$/m);
    assert.match(r.git.err.join('\n'), /^fatal: did not receive expected object [0-9a-f]{40}$/m);
    assert.deepEqual(r.pw.packDir, []);
    // Where the repository has them, the same pack is fine.
    const ok = both(work.path, repo, ['index-pack', '--strict', '--stdin'], pack);
    assert.equal(ok.pw.status, 0, ok.pw.err.join('\n'));
    assert.deepEqual(ok.pw, ok.git);
  });

  test('an incoming object the repository has with other bytes is a collision, at any thread count', () => {
    using work = tempDir();
    const repo = makeRepo(work.path, 'sha1', 4);
    // Every object loose: git looks in packs first, and its packed copy would be the right one.
    const pack = git(repo, ['pack-objects', '--all', '--stdout', '-q']);
    rmSync(join(repo, '.git', 'objects', 'pack'), { recursive: true, force: true });
    mkdirSync(join(repo, '.git', 'objects', 'pack'));
    git(repo, ['unpack-objects', '-q'], pack);
    const blob = git(repo, ['rev-parse', 'HEAD:file.txt']).toString().trim();
    // A loose copy of that id with other content, as t5300 fakes a collision.
    const other = git(repo, ['hash-object', '-w', '--stdin'], 'other bytes\n').toString().trim();
    const loose = (id: string): string => join(repo, '.git', 'objects', id.slice(0, 2), id.slice(2));
    chmodSync(loose(blob), 0o644);
    copyFileSync(loose(other), loose(blob));
    collidesLikeGit(work.path, repo, pack, blob);
  });

  test('an incoming object whose stored copy is packed with other bytes is a collision; a repository that has every object the same is not', async () => {
    using work = tempDir();
    const src = makeRepo(work.path, 'sha1', 6);
    const pack = git(src, ['pack-objects', '--all', '--stdout', '-q']);
    const blob = git(src, ['rev-parse', 'HEAD:file.txt']).toString().trim();
    // A repository whose only pack says it holds that blob, with other bytes under its id: the
    // store reads packed objects without hashing them, as git's read_object_file does.
    const repo = join(work.path, 'lying');
    git(work.path, ['init', '-q', repo]);
    const { pack: lying } = buildPack([{ type: 3, data: Buffer.from('other bytes\n') }]);
    const packHash = lying.subarray(lying.length - 20);
    const base = join(repo, '.git', 'objects', 'pack', `pack-${packHash.toString('hex')}`);
    writeFileSync(`${base}.pack`, lying);
    const entries = { ids: Buffer.from(blob, 'hex'), offsets: Float64Array.of(12), crc32: Uint32Array.of(crc32(lying.subarray(12, lying.length - 20))) };
    writeFileSync(`${base}.idx`, writeIndex('sha1', entries, packHash));
    collidesLikeGit(work.path, repo, pack, blob);
    // Indexed again inside the repository it came from (every object there, packed, the same).
    git(src, ['repack', '-adq']);
    const own = readdirSync(join(src, '.git', 'objects', 'pack')).find((f) => f.endsWith('.pack')) as string;
    for (const threads of ['1', '2']) {
      const out = join(work.path, `again-${threads}.idx`);
      await packwright(src, ['index-pack', `--threads=${threads}`, '-o', out, join(src, '.git', 'objects', 'pack', own)]);
      assert.deepEqual(readFileSync(out), readFileSync(join(src, '.git', 'objects', 'pack', own.replace(/\.pack$/, '.idx'))));
    }
  });

  test('--promisor[=<msg>] and --keep write the files git writes, writable by their owner as git\'s (fetch-pack rewrites the .promisor)', async () => {
    using work = tempDir();
    const repo = makeRepo(work.path, 'sha1', 3);
    git(repo, ['repack', '-adq']);
    const pack = readFileSync(packOf(repo));
    for (const flag of ['--promisor', '--promisor=from origin']) {
      const at = (root: string): string => join(root, 'p.pack');
      const g = join(work.path, `g${flag.length}`);
      const p = join(work.path, `p${flag.length}`);
      mkdirSync(g);
      mkdirSync(p);
      writeFileSync(at(g), pack);
      writeFileSync(at(p), pack);
      git(g, ['index-pack', flag, at(g)]);
      await packwright(p, ['index-pack', flag, at(p)]);
      assert.deepEqual(readFileSync(join(p, 'p.promisor')), readFileSync(join(g, 'p.promisor')));
      assert.equal(statSync(join(p, 'p.promisor')).mode & 0o777, statSync(join(g, 'p.promisor')).mode & 0o777);
    }
    const g = join(work.path, 'gk');
    const p = join(work.path, 'pk');
    for (const d of [g, p]) {
      mkdirSync(d);
      writeFileSync(join(d, 'p.pack'), pack);
    }
    git(g, ['index-pack', '--keep=held', join(g, 'p.pack')]);
    await packwright(p, ['index-pack', '--keep=held', join(p, 'p.pack')]);
    assert.deepEqual(readFileSync(join(p, 'p.keep')), readFileSync(join(g, 'p.keep')));
    assert.equal(statSync(join(p, 'p.keep')).mode & 0o777, statSync(join(g, 'p.keep')).mode & 0o777);
  });
});

test('a pack read from a stream ends at its trailer: a sender that keeps its end open (receive-pack waiting for the answer) is not waited for', async () => {
  using dir = tempDir();
  const repo = makeRepo(dir.path, 'sha1', 4);
  const pack = git(repo, ['pack-objects', '--revs', '--stdout', '-q'], 'HEAD\n');
  // The pack's bytes, then a few more (echoed, as git does), and never an end.
  const input = new PassThrough();
  input.write(Buffer.concat([pack, Buffer.from('junk')]));
  const out = join(dir.path, 'received.pack');
  const result = await indexPack(input, { packPath: out });
  assert.equal(result.trailing.toString(), 'junk');
  assert.deepEqual(readFileSync(out), pack);
  input.destroy();
});
