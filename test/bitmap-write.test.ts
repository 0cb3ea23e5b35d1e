import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import fc from 'fast-check';
import { git, makeHistoryRepo, packwright, repackedClone, runPackwright, tempDir, type Format } from './helpers/git.js';
import { spawnGit } from './helpers/spawn-client.js';
import { Bitset, decodeEwah, encodeEwah, PackBitmap } from '../src/bitmap/index.js';
import { PackIndex } from '../src/idx/index.js';
import { Repository } from '../src/repo/index.js';
import { RevArgs } from '../src/walk/index.js';
import { createPack } from '../src/create/index.js';

/** The commits a pack's bitmap has entries for, by id. */
function bitmapCommits(packDir: string, hashLength: number): string[] {
  const idx = readdirSync(packDir).find((f) => f.endsWith('.idx')) as string;
  const base = join(packDir, idx.slice(0, -4));
  const index = PackIndex.open(`${base}.idx`, hashLength);
  try {
    const bitmap = PackBitmap.open(`${base}.bitmap`, { objectCount: index.count, hashLength });
    return Array.from({ length: bitmap.entryCount }, (_, i) => index.id(bitmap.entryPositionOf(i)).toString('hex'));
  } finally {
    index.close();
  }
}

test('encodeEwah writes what decodeEwah reads back, for sparse, dense, full and empty sets of any size', () => {
  fc.assert(fc.property(fc.integer({ min: 1, max: 5000 }), fc.array(fc.nat(), { maxLength: 300 }), fc.constantFrom(0, 1, 2), (size, positions, fill) => {
    const bits = new Bitset(size);
    if (fill === 1) for (let i = 0; i < size; i++) bits.set(i);
    for (const p of positions) bits.set(p % size);
    if (fill === 2) for (let i = Math.floor(size / 3); i < size; i++) bits.set(i);
    const stream = encodeEwah(bits, size);
    const back = decodeEwah(stream, 0, stream.length, size);
    assert.equal(back.end, stream.length);
    assert.ok(back.bits.equals(bits, size));
  }), { numRuns: 300 });
});

for (const format of ['sha1', 'sha256'] as Format[]) {
  test(`pack-objects --all --write-bitmap-index: git's commits selected, every bitmap passes git's --test-bitmap, --use-bitmap-index lists what the walk does (${format})`, async () => {
    using dir = tempDir();
    const source = makeHistoryRepo(dir.path, format);
    const H = format === 'sha1' ? 20 : 32;
    const ours = repackedClone(source, dir.path, 'ours.git');
    const theirs = repackedClone(source, dir.path, 'theirs.git');
    const packDir = join(ours, 'objects', 'pack');
    const old = readdirSync(packDir);
    const out = (await packwright(ours, ['pack-objects', '--all', '--revs', '--write-bitmap-index', '-q', join(packDir, 'pack')], '')).toString().trim();
    for (const f of old) rmSync(join(packDir, f));
    assert.ok(existsSync(join(packDir, `pack-${out}.bitmap`)));
    git(theirs, ['repack', '-adbq']);
    const selected = bitmapCommits(packDir, H);
    assert.deepEqual([...selected].sort(), bitmapCommits(join(theirs, 'objects', 'pack'), H).sort());
    assert.ok(selected.length > 10);
    for (const id of selected) git(ours, ['rev-list', '--test-bitmap', id]);
    const sorted = (b: Buffer): string => b.toString().split('\n').map((l) => l.slice(0, 2 * H)).filter((l) => l !== '').sort().join('\n');
    assert.equal(sorted(git(ours, ['rev-list', '--objects', '--all', '--use-bitmap-index'])), sorted(git(ours, ['rev-list', '--objects', '--all'])));
    assert.equal(git(ours, ['fsck', '--no-progress']).toString(), '');
  });
}

test('no bitmap unless git would write one: without --all, with --not, to stdout; a pack that leaves out reachable objects warns', async () => {
  using dir = tempDir();
  const repo = makeHistoryRepo(dir.path, 'sha1', 30);
  const packDir = join(repo, 'objects', 'pack');
  const bitmaps = (): string[] => readdirSync(packDir).filter((f) => f.endsWith('.bitmap'));
  await packwright(repo, ['pack-objects', '--revs', '--write-bitmap-index', '-q', join(dir.path, 'one')], 'main\n');
  await packwright(repo, ['pack-objects', '--all', '--revs', '--write-bitmap-index', '-q', join(dir.path, 'two')], '--not\nmain~3\n');
  assert.equal(readdirSync(dir.path).filter((f) => f.endsWith('.bitmap')).length, 0);
  // A kept pack's objects are left out: the pack does not hold what its commits reach.
  const kept = readdirSync(packDir).find((f) => f.endsWith('.pack')) as string;
  writeFileSync(join(packDir, kept.replace(/\.pack$/, '.keep')), '');
  const r = await runPackwright(repo, ['pack-objects', '--all', '--revs', '--honor-pack-keep', '--write-bitmap-index', '-q', join(packDir, 'pack')], { input: '' });
  assert.equal(r.status, 0);
  assert.match(r.stderr, /disabling bitmap writing, as some objects are not being packed/);
  assert.equal(bitmaps().length, 0);
});

test('pack-objects --stdout from a bitmapped pack reports git\'s pack-reused count, whole and with objects the pack lacks', async () => {
  using dir = tempDir();
  const source = makeHistoryRepo(dir.path, 'sha1');
  const repo = repackedClone(source, dir.path, 'reuse.git', ['repack', '-adbq']);
  const totalLine = (stderr: string): string => (stderr.split(/[\r\n]/).find((l) => l.startsWith('Total ')) ?? '').trim();
  const gitTotal = (): string => totalLine(spawnGit(['pack-objects', '--all', '--stdout', '--progress'], { cwd: repo, input: '', env: { ...process.env, GIT_PROGRESS_DELAY: '0' } }).stderr.toString());
  const ours = async (): Promise<string> => totalLine((await runPackwright(repo, ['pack-objects', '--all', '--stdout', '--progress'], { input: '' })).stderr);
  assert.match(gitTotal(), /pack-reused [1-9]/);
  assert.equal(await ours(), gitTotal());
  // A commit the pack does not have: partial reuse.
  const tree = git(repo, ['rev-parse', 'main^{tree}']).toString().trim();
  const tip = git(repo, ['commit-tree', tree, '-p', 'main', '-m', 'not in the pack'], '').toString().trim();
  git(repo, ['update-ref', 'refs/heads/main', tip]);
  assert.equal(await ours(), gitTotal());
  // pack.allowPackReuse=false: none (as git's line says too).
  git(repo, ['config', 'pack.allowPackReuse', 'false']);
  assert.match(await ours(), /pack-reused 0$/);
  assert.match(gitTotal(), /pack-reused 0$/);
});

test('pack-objects --stdout over a multi-pack bitmap reuses its preferred pack, as git counts it', async () => {
  using dir = tempDir();
  const source = makeHistoryRepo(dir.path, 'sha1');
  const repo = repackedClone(source, dir.path, 'midx.git', ['-c', 'repack.writeBitmaps=false', 'repack', '-adq']);
  const big = readdirSync(join(repo, 'objects', 'pack')).find((f) => f.endsWith('.pack')) as string;
  // A second pack: two commits on main with their trees and blobs.
  let parent = git(repo, ['rev-parse', 'main']).toString().trim();
  for (let i = 0; i < 2; i++) {
    const blob = git(repo, ['hash-object', '-w', '--stdin'], `second pack ${i}\n`).toString().trim();
    const tree = git(repo, ['mktree'], `100644 blob ${blob}\tsecond-${i}.txt\n`).toString().trim();
    parent = git(repo, ['commit-tree', tree, '-p', parent, '-m', `second ${i}`]).toString().trim();
  }
  git(repo, ['update-ref', 'refs/heads/main', parent]);
  git(repo, ['repack', '-dq']);
  const small = readdirSync(join(repo, 'objects', 'pack')).find((f) => f.endsWith('.pack') && f !== big) as string;
  const totalLine = (stderr: string): string => (stderr.split(/[\r\n]/).find((l) => l.startsWith('Total ')) ?? '').trim();
  const gitTotal = (): string => totalLine(spawnGit(['pack-objects', '--all', '--stdout', '--progress'], { cwd: repo, input: '', env: { ...process.env, GIT_PROGRESS_DELAY: '0' } }).stderr.toString());
  const ours = async (): Promise<string> => totalLine((await runPackwright(repo, ['pack-objects', '--all', '--stdout', '--progress'], { input: '' })).stderr);
  for (const preferred of [big, small]) {
    git(repo, ['multi-pack-index', 'write', '--bitmap', `--preferred-pack=${preferred}`]);
    assert.match(gitTotal(), /pack-reused [1-9]/, preferred);
    assert.equal(await ours(), gitTotal(), preferred);
    // What a fetch of main sends after main~2: counted from the bitmap on both sides.
    const fetchGit = spawnGit(['pack-objects', '--revs', '--stdout', '--thin', '--progress'], { cwd: repo, input: 'main\n^main~2\n', env: { ...process.env, GIT_PROGRESS_DELAY: '0' } });
    const fetchOurs = await runPackwright(repo, ['pack-objects', '--revs', '--stdout', '--thin', '--progress'], { input: 'main\n^main~2\n' });
    assert.equal(totalLine(fetchOurs.stderr), totalLine(fetchGit.stderr.toString()), `a fetch, preferring ${preferred}`);
  }
});

test('a clone of a repository repacked with a bitmap is its pack, byte for byte (git\'s whole-pack reuse); otherwise entry by entry', async () => {
  using dir = tempDir();
  const source = makeHistoryRepo(dir.path, 'sha1');
  const repo = repackedClone(source, dir.path, 'whole.git', ['repack', '-adbq']);
  const packDir = join(repo, 'objects', 'pack');
  const pack = readFileSync(join(packDir, readdirSync(packDir).find((f) => f.endsWith('.pack')) as string));
  const out = await packwright(repo, ['pack-objects', '--all', '--stdout', '-q'], '');
  assert.ok(out.equals(pack));
  // One object the pack does not have: not the pack as it is, and git indexes what comes.
  const tree = git(repo, ['rev-parse', 'main^{tree}']).toString().trim();
  const tip = git(repo, ['commit-tree', tree, '-p', 'main', '-m', 'loose'], '').toString().trim();
  git(repo, ['update-ref', 'refs/heads/main', tip]);
  const partial = await packwright(repo, ['pack-objects', '--all', '--stdout', '-q'], '');
  assert.ok(!partial.equals(pack));
  const check = join(dir.path, 'check.pack');
  writeFileSync(check, partial);
  git(dir.path, ['index-pack', check]);
  assert.equal(git(dir.path, ['show-index'], readFileSync(join(dir.path, 'check.idx'))).toString().split('\n').filter((l) => l !== '').length, pack.readUInt32BE(8) + 1);
  // With OFS_DELTA, the pack's entries in whole 64-bit words of the bitmap go out as they are, at
  // the same offsets (git's verbatim reuse): the first 64 × ⌊N/64⌋ entries, byte for byte.
  const idx = readFileSync(join(packDir, readdirSync(packDir).find((f) => f.endsWith('.idx')) as string));
  const entries = git(dir.path, ['show-index'], idx).toString().trim().split('\n').map((l) => { const [offset, id] = l.split(' '); return { offset: Number(offset), id: id as string }; }).sort((a, b) => a.offset - b.offset);
  const run = 64 * Math.floor(entries.length / 64);
  assert.ok(run > 0);
  const runEnd = (entries[run] as { offset: number }).offset;
  const verbatim = await packwright(repo, ['pack-objects', '--all', '--stdout', '-q', '--delta-base-offset'], '');
  assert.ok(verbatim.subarray(12, runEnd).equals(pack.subarray(12, runEnd)), 'the run, byte for byte');
  /** The library's statistics of the same pack. */
  const stats = async (): Promise<{ verbatim: number; badCrc: number }> => {
    const r = Repository.open(repo);
    try {
      const revs = new RevArgs(r);
      revs.add('--all');
      const made = await createPack({ objects: r.objects, tips: revs.tips, deltaBaseOffset: true, sink: () => {} });
      return made.stats;
    } finally {
      r.close();
    }
  };
  assert.equal((await stats()).verbatim, run, 'sent as one run');
  // A newer pack holding copies of objects of the run (as a pushed pack completed with --fix-thin
  // holds its bases): the run's objects are still sent from the run.
  const copies = entries.slice(3, 6).map((e) => e.id);
  const extra = git(repo, ['pack-objects', '-q', join(packDir, 'pack')], `${copies.join('\n')}\n`).toString().trim();
  const later = new Date(Date.now() + 60_000);
  utimesSync(join(packDir, `pack-${extra}.pack`), later, later);
  assert.equal((await stats()).verbatim, run, 'sent as one run, copies elsewhere or not');
  for (const ext of ['pack', 'idx']) rmSync(join(packDir, `pack-${extra}.${ext}`));
  // A damaged entry in the run (its object has another copy, in a pack of its own): the run
  // ends before it, and it and the rest are written one by one, the damaged one from the copy.
  const damaged = entries[10] as { offset: number; id: string };
  const packPath = join(packDir, readdirSync(packDir).find((f) => f.endsWith('.pack')) as string);
  git(repo, ['pack-objects', '-q', join(packDir, 'pack')], `${damaged.id}\n`);
  chmodSync(packPath, 0o644);
  const bad = Buffer.from(pack);
  const inStream = (entries[11] as { offset: number }).offset - 2;
  bad[inStream] = (bad[inStream] as number) ^ 0x5a;
  writeFileSync(packPath, bad);
  const repaired = await packwright(repo, ['pack-objects', '--all', '--stdout', '-q', '--delta-base-offset'], '');
  assert.deepEqual(await stats().then((s) => [s.verbatim, s.badCrc]), [10, 1]);
  assert.ok(repaired.subarray(12, damaged.offset).equals(pack.subarray(12, damaged.offset)), 'the run up to the damaged entry');
  const fixed = join(dir.path, 'fixed.pack');
  writeFileSync(fixed, repaired);
  git(dir.path, ['index-pack', fixed]);
  const fresh = join(dir.path, 'fresh.git');
  git(dir.path, ['init', '-q', '--bare', fresh]);
  git(fresh, ['index-pack', '--stdin'], repaired);
  git(fresh, ['update-ref', 'refs/heads/main', tip]);
  git(fresh, ['fsck', '--full', '--no-dangling']);
});

/** The history repository in four packs: everything, then three more of new commits on two branches, a tag among them. */
function multiPackRepo(dir: string, format: Format, name: string): string {
  const source = makeHistoryRepo(dir, format, 60);
  const repo = repackedClone(source, dir, name, ['-c', 'repack.writeBitmaps=false', 'repack', '-adq']);
  for (let round = 0; round < 3; round++) {
    for (const branch of ['main', 'topic']) {
      let parent = git(repo, ['rev-parse', branch]).toString().trim();
      for (let i = 0; i < 3; i++) {
        const blob = git(repo, ['hash-object', '-w', '--stdin'], `${branch} ${round} ${i}\n`).toString().trim();
        const tree = git(repo, ['mktree'], `100644 blob ${blob}\tnew-${round}-${i}.txt\n`).toString().trim();
        parent = git(repo, ['commit-tree', tree, '-p', parent, '-m', `${branch} ${round} ${i}`]).toString().trim();
      }
      git(repo, ['update-ref', `refs/heads/${branch}`, parent]);
    }
    if (round === 1) git(repo, ['tag', '-a', '-m', 'a tag', `round-${round}`, 'main']);
    git(repo, ['repack', '-dq']);
  }
  return repo;
}

/** The bitmap's sets, type sets and entries as text (what must match git's, whatever the EWAH layout). */
function bitmapContents(path: string, objects: number, hashLength: number): string {
  const bitmap = PackBitmap.open(path, { objectCount: objects, hashLength });
  const bits = (set: Bitset): string => Array.from({ length: objects }, (_, i) => (set.get(i) ? '1' : '0')).join('');
  const lines = ['commits', 'trees', 'blobs', 'tags'].map((t) => `${t} ${bits(bitmap[t as 'commits'])}`);
  for (let i = 0; i < bitmap.entryCount; i++) lines.push(`entry ${bitmap.entryPositionOf(i)} ${bits(bitmap.reachable(i))}`);
  lines.push(`hashes ${bitmap.hashes === undefined ? 'none' : Array.from(bitmap.hashes).join(',')}`);
  return lines.join('\n');
}

for (const format of ['sha1', 'sha256'] as const) {
  test(`multi-pack-index write --bitmap: git's file (RIDX chunk, preferred pack) and a bitmap with git's commits and sets; git's --test-bitmap passes (${format})`, async () => {
    using dir = tempDir();
    const ours = multiPackRepo(dir.path, format, 'ours.git');
    const theirs = join(dir.path, 'theirs.git');
    git(dir.path, ['clone', '-q', '--mirror', '--no-local', ours, theirs]);
    // Same packs on both sides (the clone repacked): copy ours over.
    rmSync(join(theirs, 'objects', 'pack'), { recursive: true });
    spawnSync('cp', ['-a', join(ours, 'objects', 'pack'), join(theirs, 'objects', 'pack')]);
    const packDir = (repo: string): string => join(repo, 'objects', 'pack');
    assert.equal(readdirSync(packDir(ours)).filter((f) => f.endsWith('.pack')).length, 4);
    const H = format === 'sha1' ? 20 : 32;
    const bitmapOf = (repo: string): string => join(packDir(repo), readdirSync(packDir(repo)).find((f) => /^multi-pack-index-[0-9a-f]+\.bitmap$/.test(f)) as string);
    const objects = (repo: string): number => Number(/in-pack: (\d+)/.exec(git(repo, ['count-objects', '-v']).toString())?.[1]);
    const compare = (what: string): void => {
      assert.ok(readFileSync(join(packDir(ours), 'multi-pack-index')).equals(readFileSync(join(packDir(theirs), 'multi-pack-index'))), `${what}: the multi-pack-index`);
      assert.equal(bitmapContents(bitmapOf(ours), objects(ours), H), bitmapContents(bitmapOf(theirs), objects(theirs), H), `${what}: the bitmap`);
    };
    await packwright(ours, ['multi-pack-index', 'write', '--bitmap']);
    git(theirs, ['multi-pack-index', 'write', '--bitmap']);
    compare('default');
    for (const tip of ['main', 'topic', 'round-1', 'main~4']) {
      const run = spawnGit(['rev-list', '--test-bitmap', tip], { cwd: ours, encoding: 'utf8' });
      assert.ok(run.status === 0 || /doesn't have an indexed bitmap/.test(run.stderr), `${tip}: ${run.stderr}`);
      if (run.status === 0) assert.match(run.stderr, /OK!/);
    }
    // And both read it: git's rev-list and packwright's, in the bitmap's order.
    assert.equal((await packwright(ours, ['rev-list', '--objects', '--all', '--use-bitmap-index'])).toString(), git(ours, ['rev-list', '--objects', '--all', '--use-bitmap-index']).toString());
    // A preferred pack named, pack.preferBitmapTips, the lookup table, no hash cache.
    const smallest = readdirSync(packDir(ours)).filter((f) => f.endsWith('.pack')).sort()[0] as string;
    for (const repo of [ours, theirs]) {
      git(repo, ['config', 'pack.preferBitmapTips', 'refs/heads/topic']);
      git(repo, ['config', 'pack.writeBitmapLookupTable', 'true']);
      git(repo, ['config', 'pack.writeBitmapHashCache', 'false']);
    }
    await packwright(ours, ['multi-pack-index', 'write', '--bitmap', `--preferred-pack=${smallest}`]);
    git(theirs, ['multi-pack-index', 'write', '--bitmap', `--preferred-pack=${smallest}`]);
    compare('preferred pack, tips, lookup table');
    // A refs snapshot: only these tips, the + one preferred.
    const snapshot = join(dir.path, 'snapshot');
    writeFileSync(snapshot, `${git(ours, ['rev-parse', 'main~2']).toString().trim()}\n+${git(ours, ['rev-parse', 'topic']).toString().trim()}\n`);
    for (const repo of [ours, theirs]) rmSync(bitmapOf(repo));
    await packwright(ours, ['multi-pack-index', 'write', '--bitmap', `--refs-snapshot=${snapshot}`]);
    git(theirs, ['multi-pack-index', 'write', '--bitmap', `--refs-snapshot=${snapshot}`]);
    compare('refs snapshot');
    // --no-bitmap with nothing new: the file stays, its bitmap goes (as git's).
    await packwright(ours, ['multi-pack-index', 'write', '--no-bitmap']);
    assert.ok(existsSync(join(packDir(ours), 'multi-pack-index')));
    assert.deepEqual(readdirSync(packDir(ours)).filter((f) => f.endsWith('.bitmap') && f.startsWith('multi-pack-index')), []);
    writeFileSync(snapshot, 'not an id\n');
    const bad = await runPackwright(ours, ['multi-pack-index', 'write', '--bitmap', `--refs-snapshot=${snapshot}`], {});
    assert.notEqual(bad.status, 0);
    assert.match(bad.stderr, /could not parse line: not an id/);
  });
}
