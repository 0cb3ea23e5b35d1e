import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { git, gitObjects, packwright, packwrightFails, tempDir, makeRepo, type Format } from './helpers/git.js';
import { Store, MidxSource } from '../src/odb/index.js';

function packDirOf(repo: string): string {
  return join(repo, '.git', 'objects', 'pack');
}

/** A repository with several packs holding duplicate copies: incremental packs, then `repack -a` keeping them. */
function repoWithDuplicates(dir: string, format: Format): string {
  const repo = makeRepo(dir, format, 8);
  git(repo, ['repack', '-dq']);
  for (let i = 0; i < 3; i++) {
    git(repo, ['commit', '-q', '--allow-empty', '-m', `pack ${i}`]);
    git(repo, ['repack', '-q']);
  }
  // One pack of everything beside the others (no -d): every object is in two packs.
  git(repo, ['-c', 'pack.threads=1', 'repack', '-aq']);
  return repo;
}

/** Runs git's and packwright's `multi-pack-index <args>` in the same directory (same readdir order) and returns both files. */
async function bothWrite(repo: string, args: string[], prepare?: () => void): Promise<{ git: Buffer; ours: Buffer }> {
  const path = join(packDirOf(repo), 'multi-pack-index');
  const saved = existsSync(path) ? readFileSync(path) : undefined;
  prepare?.();
  git(repo, ['multi-pack-index', ...args]);
  const theirs = readFileSync(path);
  rmSync(path);
  if (saved !== undefined) writeFileSync(path, saved);
  prepare?.();
  await packwright(repo, ['multi-pack-index', ...args]);
  return { git: theirs, ours: readFileSync(path) };
}

describe('multi-pack-index write, byte-identical to git', () => {
  for (const format of ['sha1', 'sha256'] as Format[]) {
    test(`${format}: duplicates across packs with the same mtime, then with different mtimes`, async () => {
      using dir = tempDir();
      const repo = repoWithDuplicates(dir.path, format);
      let r = await bothWrite(repo, ['write']);
      assert.ok(r.git.equals(r.ours), 'same second');
      const packs = readdirSync(packDirOf(repo)).filter((f) => f.endsWith('.pack'));
      packs.forEach((p, i) => utimesSync(join(packDirOf(repo), p), 1_700_000_000 + 1000 * ((i * 7) % packs.length), 1_700_000_000 + 1000 * ((i * 7) % packs.length)));
      rmSync(join(packDirOf(repo), 'multi-pack-index'));
      r = await bothWrite(repo, ['write']);
      assert.ok(r.git.equals(r.ours), 'different mtimes');
    });

    test(`${format}: --preferred-pack, by .pack and by .idx name`, async () => {
      using dir = tempDir();
      const repo = repoWithDuplicates(dir.path, format);
      const packs = readdirSync(packDirOf(repo)).filter((f) => f.endsWith('.pack')).sort();
      for (const preferred of [packs[0] as string, (packs[1] as string).replace(/\.pack$/, '.idx')]) {
        const r = await bothWrite(repo, ['write', `--preferred-pack=${preferred}`], () => rmSync(join(packDirOf(repo), 'multi-pack-index'), { force: true }));
        assert.ok(r.git.equals(r.ours), preferred);
      }
    });
  }

  test('rewriting over an existing file keeps its choices and adds the new pack', async () => {
    using dir = tempDir();
    const repo = repoWithDuplicates(dir.path, 'sha1');
    git(repo, ['multi-pack-index', 'write']);
    git(repo, ['commit', '-q', '--allow-empty', '-m', 'one more']);
    git(repo, ['-c', 'pack.threads=1', 'repack', '-aq']);
    const r = await bothWrite(repo, ['write']);
    assert.ok(r.git.equals(r.ours));
    // Nothing new: git writes nothing, and neither does packwright.
    const before = readFileSync(join(packDirOf(repo), 'multi-pack-index'));
    await packwright(repo, ['multi-pack-index', 'write']);
    assert.ok(readFileSync(join(packDirOf(repo), 'multi-pack-index')).equals(before));
  });

  test('expire deletes the packs no object is chosen from, keeps .keep packs, and rewrites as git does', async () => {
    using dir = tempDir();
    const repo = repoWithDuplicates(dir.path, 'sha1');
    const packDir = packDirOf(repo);
    git(repo, ['multi-pack-index', 'write']);
    // A newer pack of everything: written over the existing file, its copies win (the file's own count as old).
    git(repo, ['commit', '-q', '--allow-empty', '-m', 'newest']);
    git(repo, ['-c', 'pack.threads=1', 'repack', '-aq']);
    git(repo, ['multi-pack-index', 'write']);
    const kept = readdirSync(packDir).filter((f) => f.endsWith('.pack')).sort()[0] as string;
    writeFileSync(join(packDir, kept.replace(/\.pack$/, '.keep')), '');
    const filesBefore = readdirSync(packDir).sort();
    const saved = new Map(filesBefore.map((f) => [f, readFileSync(join(packDir, f))]));
    git(repo, ['multi-pack-index', 'expire']);
    const gitFiles = readdirSync(packDir).sort();
    const gitMidx = readFileSync(join(packDir, 'multi-pack-index'));
    assert.ok(gitFiles.length < filesBefore.length, 'git expired something');
    for (const f of readdirSync(packDir)) rmSync(join(packDir, f));
    for (const [f, bytes] of saved) writeFileSync(join(packDir, f), bytes);
    await packwright(repo, ['multi-pack-index', 'expire']);
    assert.deepEqual(readdirSync(packDir).sort(), gitFiles);
    assert.ok(readFileSync(join(packDir, 'multi-pack-index')).equals(gitMidx));
    assert.equal((await packwright(repo, ['multi-pack-index', 'verify'])).toString(), '');
  });

  test('verify finds what git finds: a bad checksum and a wrong offset', async () => {
    using dir = tempDir();
    const repo = repoWithDuplicates(dir.path, 'sha1');
    git(repo, ['multi-pack-index', 'write']);
    const path = join(packDirOf(repo), 'multi-pack-index');
    const good = readFileSync(path);
    assert.equal((await packwright(repo, ['multi-pack-index', 'verify'])).toString(), '');
    const bad = Buffer.from(good);
    bad.writeUInt8((bad[bad.length - 1] as number) ^ 1, bad.length - 1);
    writeFileSync(path, bad);
    let r = await packwrightFails(repo, ['multi-pack-index', 'verify']);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /incorrect checksum/);
    // The first object's offset, one off (git's t5319 "incorrect object offset").
    const wrong = Buffer.from(good);
    const toc = (id: number): number => { for (let row = 0; row < wrong[6]!; row++) if (wrong.readUInt32BE(12 + row * 12) === id) return Number(wrong.readBigUInt64BE(16 + row * 12)); return -1; };
    const ooff = toc(0x4f4f4646);
    wrong.writeUInt32BE(wrong.readUInt32BE(ooff + 4) + 1, ooff + 4);
    writeFileSync(path, wrong);
    r = await packwrightFails(repo, ['multi-pack-index', 'verify']);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /incorrect object offset for oid\[0\]/);
  });

  test('the store searches a file it wrote itself and finds every object', async () => {
    using dir = tempDir();
    const repo = repoWithDuplicates(dir.path, 'sha1');
    const store = Store.open(join(repo, '.git'));
    const h = store.handle();
    assert.ok(!(h.sources()[0] instanceof MidxSource));
    await packwright(repo, ['multi-pack-index', 'write']);
    h.refresh();
    assert.ok(h.sources()[0] instanceof MidxSource);
    const objects = gitObjects(repo);
    for (const id of objects.keys()) assert.ok(h.has(Buffer.from(id, 'hex')), id);
    for (const [id, { data }] of [...objects].slice(0, 50)) assert.deepEqual(h.read(Buffer.from(id, 'hex')).data, data);
    store.close();
  });
});

describe('multi-pack-index: offsets past 4 GiB', () => {
  test('LOFF is written only when an offset needs 64 bits, then for every offset past 2^31 - 1, and reads back', async () => {
    const { writeMultiPackIndex, MultiPackIndex } = await import('../src/midx/index.js');
    const id = (b: number): Uint8Array => Buffer.alloc(20, b);
    const packOf = (offsets: number[], first: number) => ({
      name: `pack-${String(first).padStart(40, '0')}.idx`, mtime: 1,
      index: { count: offsets.length, id: (i: number) => id(first + i), offset: (i: number) => offsets[i] as number },
    });
    // Below 4 GiB: an offset between 2^31 and 2^32 is stored raw, with no LOFF.
    const small = writeMultiPackIndex({ format: 'sha1', packs: [packOf([12, 2 ** 31 + 5], 1)], preferred: -1 });
    const s = MultiPackIndex.fromBytes('s', small, 20);
    assert.equal(small[6], 4, 'four chunks');
    assert.deepEqual([s.offset(0), s.offset(1)], [12, 2 ** 31 + 5]);
    // Past 4 GiB: LOFF holds both offsets above 2^31 - 1.
    const large = writeMultiPackIndex({ format: 'sha1', packs: [packOf([12, 2 ** 31 + 5, 5 * 2 ** 30 + 3], 1)], preferred: -1 });
    const l = MultiPackIndex.fromBytes('l', large, 20);
    assert.equal(large[6], 5, 'five chunks');
    assert.deepEqual([l.offset(0), l.offset(1), l.offset(2)], [12, 2 ** 31 + 5, 5 * 2 ** 30 + 3]);
  });
});

describe('multi-pack-index repack, as git chooses and combines packs', () => {
  /** Five packs of growing age, each from one more commit; their mtimes a second apart (oldest first). */
  const fivePacks = (dir: string, format: Format): string => {
    const repo = makeRepo(dir, format, 3);
    git(repo, ['repack', '-adq']);
    for (let i = 0; i < 4; i++) {
      writeFileSync(join(repo, `f${i}.txt`), `file ${i}\n`.repeat(50 + i * 40));
      git(repo, ['add', '.']);
      git(repo, ['commit', '-q', '-m', `c${i}`]);
      git(repo, ['repack', '-q']);
    }
    const packs = readdirSync(packDirOf(repo)).filter((f) => f.endsWith('.pack'));
    const now = Date.now() / 1000;
    packs.forEach((f, i) => {
      for (const ext of ['.pack', '.idx']) utimesSync(join(packDirOf(repo), f.replace(/\.pack$/, ext)), now - 100 + i, now - 100 + i);
    });
    git(repo, ['multi-pack-index', 'write']);
    return repo;
  };
  /** Each pack's object ids (sorted), after a command: what git and packwright must agree on. */
  const packContents = (repo: string): string[] => readdirSync(packDirOf(repo)).filter((f) => f.endsWith('.idx')).map((f) =>
    git(repo, ['show-index'], readFileSync(join(packDirOf(repo), f))).toString().trim().split('\n').map((l) => l.split(' ')[1]).sort().join(',')).sort();

  for (const format of ['sha1', 'sha256'] as Format[]) {
    test(`--batch-size=0, a batch size, and a size too small: the packs git makes, then expire (${format})`, async () => {
      using dir = tempDir();
      const base = fivePacks(dir.path, format);
      const sizes = readdirSync(packDirOf(base)).filter((f) => f.endsWith('.pack')).map((f) => readFileSync(join(packDirOf(base), f)).length).sort((a, b) => a - b);
      for (const batch of ['0', String((sizes[2] as number) + 1), String(sizes[0]), '2m']) {
        const ours = join(dir.path, `ours-${batch}`);
        const theirs = join(dir.path, `theirs-${batch}`);
        for (const [to, run] of [[ours, packwright], [theirs, git]] as const) {
          execCopy(base, to);
          await run(to, ['multi-pack-index', 'repack', `--batch-size=${batch}`]);
          await run(to, ['multi-pack-index', 'verify']);
        }
        assert.deepEqual(packContents(ours), packContents(theirs), `repack --batch-size=${batch}`);
        for (const repo of [ours, theirs]) git(repo, ['multi-pack-index', 'expire']);
        assert.deepEqual(packContents(ours), packContents(theirs), `expire after --batch-size=${batch}`);
        assert.equal(git(ours, ['fsck', '--no-dangling']).toString(), '');
      }
    });
  }

  test('kept packs are left alone unless repack.packKeptObjects, and a bad --batch-size is a usage error', async () => {
    using dir = tempDir();
    const repo = fivePacks(dir.path, 'sha1');
    for (const f of readdirSync(packDirOf(repo)).filter((n) => n.endsWith('.pack'))) writeFileSync(join(packDirOf(repo), f.replace(/\.pack$/, '.keep')), '');
    const before = packContents(repo);
    await packwright(repo, ['multi-pack-index', 'repack', '--batch-size=0']);
    assert.deepEqual(packContents(repo), before);
    await packwright(repo, ['-c', 'repack.packKeptObjects=true', 'multi-pack-index', 'repack', '--batch-size=0']);
    assert.equal(packContents(repo).length, before.length + 1);
    const bad = await packwrightFails(repo, ['multi-pack-index', 'repack', '--batch-size=lots']);
    assert.equal(bad.status, 129);
    assert.match(bad.stderr, /expects a non-negative integer value with an optional k\/m\/g suffix/);
  });
});

/** A copy of a repository with its files' times (mtimes choose the packs). */
function execCopy(from: string, to: string): void {
  rmSync(to, { recursive: true, force: true });
  execFileSync('cp', ['-a', from, to]);
}
