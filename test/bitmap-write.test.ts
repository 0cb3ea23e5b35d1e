import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import fc from 'fast-check';
import { git, makeHistoryRepo, packwright, runPackwright, tempDir, type Format } from './helpers/git.js';
import { Bitset, decodeEwah, encodeEwah, PackBitmap } from '../src/bitmap/index.js';
import { PackIndex } from '../src/idx/index.js';

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
    const source = makeHistoryRepo(dir.path, format, 130);
    const H = format === 'sha1' ? 20 : 32;
    const ours = join(dir.path, 'ours.git');
    const theirs = join(dir.path, 'theirs.git');
    for (const r of [ours, theirs]) git(dir.path, ['clone', '-q', '--bare', '--no-local', source, r]);
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
  const source = makeHistoryRepo(dir.path, 'sha1', 130);
  const repo = join(dir.path, 'reuse.git');
  git(dir.path, ['clone', '-q', '--bare', '--no-local', source, repo]);
  git(repo, ['repack', '-adbq']);
  const totalLine = (stderr: string): string => (stderr.split(/[\r\n]/).find((l) => l.startsWith('Total ')) ?? '').trim();
  const gitTotal = (): string => totalLine(spawnSync('git', ['pack-objects', '--all', '--stdout', '--progress'], { cwd: repo, input: '', env: { ...process.env, GIT_PROGRESS_DELAY: '0' } }).stderr.toString());
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
  const source = makeHistoryRepo(dir.path, 'sha1', 130);
  const repo = join(dir.path, 'midx.git');
  git(dir.path, ['clone', '-q', '--bare', '--no-local', source, repo]);
  git(repo, ['-c', 'repack.writeBitmaps=false', 'repack', '-adq']);
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
  const gitTotal = (): string => totalLine(spawnSync('git', ['pack-objects', '--all', '--stdout', '--progress'], { cwd: repo, input: '', env: { ...process.env, GIT_PROGRESS_DELAY: '0' } }).stderr.toString());
  const ours = async (): Promise<string> => totalLine((await runPackwright(repo, ['pack-objects', '--all', '--stdout', '--progress'], { input: '' })).stderr);
  for (const preferred of [big, small]) {
    git(repo, ['multi-pack-index', 'write', '--bitmap', `--preferred-pack=${preferred}`]);
    assert.match(gitTotal(), /pack-reused [1-9]/, preferred);
    assert.equal(await ours(), gitTotal(), preferred);
    // What a fetch of main sends after main~2: counted from the bitmap on both sides.
    const fetchGit = spawnSync('git', ['pack-objects', '--revs', '--stdout', '--thin', '--progress'], { cwd: repo, input: 'main\n^main~2\n', env: { ...process.env, GIT_PROGRESS_DELAY: '0' } });
    const fetchOurs = await runPackwright(repo, ['pack-objects', '--revs', '--stdout', '--thin', '--progress'], { input: 'main\n^main~2\n' });
    assert.equal(totalLine(fetchOurs.stderr), totalLine(fetchGit.stderr.toString()), `a fetch, preferring ${preferred}`);
  }
});

test('a clone of a repository repacked with a bitmap is its pack, byte for byte (git\'s whole-pack reuse); otherwise entry by entry', async () => {
  using dir = tempDir();
  const source = makeHistoryRepo(dir.path, 'sha1', 130);
  const repo = join(dir.path, 'whole.git');
  git(dir.path, ['clone', '-q', '--bare', '--no-local', source, repo]);
  git(repo, ['repack', '-adbq']);
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
});
