import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { git, gitObjects, packwright, packwrightFails, tempDir, makeRepo, type Format, fileEndingIn } from './helpers/git.js';
import { seededRandom } from './helpers/random.js';
import { WindowPool } from '../src/pack/index.js';
import { writeObjectsPack } from './helpers/pack-builder.js';
import { Store, MidxSource, forEachObject, planStoreMemory, type RefreshPolicy } from '../src/odb/index.js';
import { ARENA_FACTOR } from '../src/pack/delta-base-cache.js';
import { DEFAULT_MAX_MEMORY, RUNTIME_BYTES, SLACK_BYTES } from '../src/memory/ceiling.js';
import { hashObject } from '../src/hash/index.js';
import { isPackwrightError } from '../src/errors/index.js';
import { MultiPackIndex } from '../src/midx/index.js';

const BLOB = 3;

/** A repository of `revisions` commits in two packs (all but the last commit, then the last). */
function twoPacks(dir: string, format: Format, revisions: number): string {
  const repo = makeRepo(dir, format, revisions);
  git(repo, ['repack', '-dq']);
  git(repo, ['commit', '-q', '--allow-empty', '-m', 'second pack']);
  git(repo, ['repack', '-q']);
  return repo;
}

function packDirOf(repo: string): string {
  return join(repo, '.git', 'objects', 'pack');
}

function blob(text: string): { type: number; data: Buffer } {
  return { type: BLOB, data: Buffer.from(text) };
}

/** A clock the test moves by hand. */
function fakeClock(): { now: () => number; advance(ms: number): void } {
  let t = 0;
  return { now: () => t, advance: (ms) => { t += ms; } };
}

describe('store: opening and lazy loading', () => {
  test('opening lists nothing; the first lookup lists once; hits load no further indexes', () => {
    using dir = tempDir();
    const repo = makeRepo(dir.path, 'sha1', 3);
    git(repo, ['repack', '-adq']);
    const objects = gitObjects(repo);
    const store = Store.open(join(repo, '.git'), { refresh: 'never' });
    assert.equal(store.counters.scans, 0);
    const h = store.handle();
    assert.equal(store.counters.scans, 0);
    for (const [id, o] of objects) assert.deepEqual(h.read(Buffer.from(id, 'hex')).data, o.data);
    assert.equal(store.counters.scans, 1);
    h.close();
    store.close();
  });

  test('many handles share one load of each index and pack', () => {
    using dir = tempDir();
    const repo = makeRepo(dir.path, 'sha1', 3);
    git(repo, ['repack', '-adq']);
    const store = Store.open(join(repo, '.git'));
    const handles = [store.handle(), store.handle(), store.handle()];
    const head = Buffer.from(git(repo, ['rev-parse', 'HEAD']).toString().trim(), 'hex');
    for (const h of handles) h.read(head);
    const packs = handles.map((h) => h.packs());
    assert.equal(packs[0]?.length, 1);
    assert.ok(packs.every((p) => p[0] === packs[0]?.[0]), 'one StorePack for all handles');
    store.close();
  });
});

describe('store: refresh policies', () => {
  const cases: { policy: RefreshPolicy; scansAfterMisses: number[] }[] = [
    // Misses at t = 0, 10, 500, 1000 and 1001 ms after the first listing.
    { policy: 'on-miss', scansAfterMisses: [2, 3, 4, 5, 6] },
    { policy: 'never', scansAfterMisses: [1, 1, 1, 1, 1] },
    { policy: { afterMs: 1000 }, scansAfterMisses: [1, 1, 1, 2, 2] },
    { policy: { afterMs: 0 }, scansAfterMisses: [2, 3, 4, 5, 6] },
  ];
  for (const { policy, scansAfterMisses } of cases) {
    test(`${JSON.stringify(policy)}: directory listings on misses`, () => {
      using dir = tempDir();
      const packDir = join(dir.path, 'objects', 'pack');
      const { ids } = writeObjectsPack(packDir, 'sha1', [blob('one')]);
      const clock = fakeClock();
      const store = Store.open(join(dir.path, 'objects'), { refresh: policy, now: clock.now });
      const h = store.handle();
      assert.ok(h.has(ids[0] as Buffer));
      const missing = Buffer.alloc(20, 0xee);
      const times = [0, 10, 490, 500, 1];
      const seen: number[] = [];
      for (const dt of times) {
        clock.advance(dt);
        assert.equal(h.has(missing), false);
        seen.push(store.counters.scans);
      }
      assert.deepEqual(seen, scansAfterMisses);
      store.close();
    });
  }

  test('a pack that appears is found at the next miss under on-miss, never under never, and after refresh()', () => {
    using dir = tempDir();
    const packDir = join(dir.path, 'objects', 'pack');
    writeObjectsPack(packDir, 'sha1', [blob('first')]);
    const onMiss = Store.open(join(dir.path, 'objects'), { refresh: 'on-miss' });
    const never = Store.open(join(dir.path, 'objects'), { refresh: 'never' });
    assert.equal(onMiss.objects.has(hashObject('sha1', BLOB, Buffer.from('first'))), true);
    assert.equal(never.objects.has(hashObject('sha1', BLOB, Buffer.from('first'))), true);
    const { ids } = writeObjectsPack(packDir, 'sha1', [blob('second')]);
    const id = ids[0] as Buffer;
    assert.equal(onMiss.objects.has(id), true);
    assert.equal(never.objects.has(id), false);
    never.refresh();
    assert.equal(never.objects.has(id), true);
    onMiss.close();
    never.close();
  });

  test('inside the window a vanished pack makes the next miss rescan at once', () => {
    using dir = tempDir();
    const packDir = join(dir.path, 'objects', 'pack');
    const a = writeObjectsPack(packDir, 'sha1', [blob('a')]);
    const clock = fakeClock();
    const store = Store.open(join(dir.path, 'objects'), { refresh: { afterMs: 60_000 }, now: clock.now });
    const h = store.handle();
    assert.equal(h.packs().length, 1);
    // git repack: the objects move to a new pack, the old one is deleted before it was ever opened.
    const b = writeObjectsPack(packDir, 'sha1', [blob('a'), blob('b')]);
    rmSync(`${a.base}.pack`);
    rmSync(`${a.base}.idx`);
    assert.deepEqual(h.read(a.ids[0] as Buffer).data, Buffer.from('a'));
    assert.deepEqual(h.read(b.ids[1] as Buffer).data, Buffer.from('b'));
    store.close();
  });

  test('packwright.refreshAfter in git config sets the policy', async () => {
    using dir = tempDir();
    const repo = makeRepo(dir.path, 'sha1', 3);
    git(repo, ['config', 'packwright.refreshAfter', 'never']);
    const { Repository } = await import('../src/repo/index.js');
    const r = Repository.open(repo);
    assert.equal(r.store.policy, 'never');
    git(repo, ['config', 'packwright.refreshAfter', '250']);
    const r2 = Repository.open(repo);
    assert.deepEqual(r2.store.policy, { afterMs: 250 });
    r.close();
    r2.close();
  });

  test('core.deltaBaseCacheLimit in git config sizes the delta-base cache, as in git', async () => {
    using dir = tempDir();
    const repo = makeRepo(dir.path, 'sha1', 3);
    const { Repository } = await import('../src/repo/index.js');
    // Under the default ceiling (256 MiB) the cache's arena gets a quarter of what the runtime leaves.
    const before = Repository.open(repo);
    assert.ok(before.store.cache.limit > 16 * 1024 * 1024 && before.store.cache.limit < 96 * 1024 * 1024, String(before.store.cache.limit));
    before.close();
    // Without a ceiling, git's 96 MiB.
    git(repo, ['config', 'packwright.maxMemory', '0']);
    const unbounded = Repository.open(repo);
    assert.equal(unbounded.store.cache.limit, 96 * 1024 * 1024);
    unbounded.close();
    git(repo, ['config', 'core.deltaBaseCacheLimit', '8m']);
    const r = Repository.open(repo);
    assert.equal(r.store.cache.limit, 8 * 1024 * 1024);
    // Every object still reads back as git's.
    for (const [id, { data }] of gitObjects(repo)) assert.deepEqual(r.objects.read(Buffer.from(id, 'hex')).data, data, id);
    r.close();
  });
});

describe('store: files changing underneath (git repack -ad, gc, multi-pack-index)', () => {
  for (const format of ['sha1', 'sha256'] as Format[]) {
    test(`${format}: every state of a repack, step by step, with two handles`, () => {
      using dir = tempDir();
      const repo = twoPacks(dir.path, format, 6);
      const objects = gitObjects(repo);
      const ids = [...objects.keys()];
      const packDir = packDirOf(repo);
      const before = readdirSync(packDir).filter((f) => f.endsWith('.pack')).map((f) => join(packDir, f.slice(0, -5)));
      assert.equal(before.length, 2);
      const store = Store.open(join(repo, '.git'), { refresh: 'on-miss' });
      const early = store.handle();
      const late = store.handle();
      // `early` opens every pack; `late` only lists them.
      const held = ids.map((id) => early.locate(Buffer.from(id, 'hex')));
      assert.ok(held.every((l) => l !== undefined));
      late.packs();
      const check = (what: string): void => {
        for (const h of [early, late]) {
          for (const [id, o] of objects) {
            const got = h.read(Buffer.from(id, 'hex'));
            assert.deepEqual(got.data, o.data, `${what}: ${id}`);
          }
        }
      };
      // The new pack is written next to the old ones (git writes .pack, .rev, then .idx).
      const scratch = join(dir.path, 'scratch');
      git(repo, ['clone', '-q', '--bare', '--no-local', repo, scratch]);
      git(scratch, ['repack', '-adq']);
      const newPack = fileEndingIn(join(scratch, 'objects', 'pack'), '.pack');
      const newBase = newPack.slice(0, -5);
      writeFileSync(join(packDir, `${newBase}.pack`), readFileSync(join(scratch, 'objects', 'pack', `${newBase}.pack`)));
      check('a new pack without its index');
      writeFileSync(join(packDir, `${newBase}.idx`), readFileSync(join(scratch, 'objects', 'pack', `${newBase}.idx`)));
      check('the new pack beside the old');
      // Old packs removed: first one's .pack (an index without its pack), then its .idx.
      rmSync(`${before[0]}.pack`);
      check('an index without its pack');
      rmSync(`${before[0]}.idx`);
      rmSync(`${before[1]}.idx`);
      check('a pack without its index');
      rmSync(`${before[1]}.pack`);
      check('only the new pack');
      // Locations taken before the repack read the same bytes.
      for (let k = 0; k < ids.length; k++) {
        assert.deepEqual(early.readAt(held[k] as NonNullable<(typeof held)[number]>).data, objects.get(ids[k] as string)?.data);
      }
      const fresh = Store.open(join(repo, '.git'));
      for (const [id, o] of objects) assert.deepEqual(fresh.objects.read(Buffer.from(id, 'hex')).data, o.data);
      fresh.close();
      store.close();
    });
  }

  test('a multi-pack-index is used, objects in packs it does not name are found, a stale one is passed over', () => {
    using dir = tempDir();
    const repo = twoPacks(dir.path, 'sha1', 6);
    git(repo, ['multi-pack-index', 'write']);
    git(repo, ['commit', '-q', '--allow-empty', '-m', 'third pack, not in the midx']);
    git(repo, ['repack', '-q']);
    git(repo, ['commit', '-q', '--allow-empty', '-m', 'loose']);
    const objects = gitObjects(repo);
    const store = Store.open(join(repo, '.git'), { refresh: 'on-miss' });
    const h = store.handle();
    const sources = h.sources();
    assert.ok(sources[0] instanceof MidxSource, 'the midx is searched first');
    assert.equal(sources.length, 2, 'the midx and the pack it does not name');
    for (const [id, o] of objects) assert.deepEqual(h.read(Buffer.from(id, 'hex')).data, o.data, id);
    const seen: string[] = [];
    forEachObject(h, {}, (id) => seen.push(id.toString('hex')));
    assert.deepEqual(seen, [...objects.keys()]);
    // git repack -ad without rewriting the midx: it names packs that are gone.
    git(repo, ['-c', 'repack.writeBitmaps=false', 'repack', '-adq', '--no-write-midx']);
    const midxPath = join(packDirOf(repo), 'multi-pack-index');
    if (existsSync(midxPath)) {
      const h2 = store.handle();
      h2.refresh();
      assert.ok(!(h2.sources()[0] instanceof MidxSource), 'a midx naming missing packs is not used');
      assert.ok(store.warnings.some((w) => w.includes('not there')));
      for (const [id, o] of objects) assert.deepEqual(h2.read(Buffer.from(id, 'hex')).data, o.data, id);
    }
    store.close();
  });

  test('a location held after its pack was deleted and every handle let go of it reads the object where it is now', () => {
    using dir = tempDir();
    const packDir = join(dir.path, 'objects', 'pack');
    const old = writeObjectsPack(packDir, 'sha1', [blob('kept'), blob('other')]);
    const store = Store.open(join(dir.path, 'objects'), { refresh: 'on-miss' });
    const h = store.handle();
    const location = h.locate(old.ids[0] as Buffer);
    assert.ok(location !== undefined && location.kind === 'pack');
    // git repack -ad: a new pack, the old one deleted; the handles move on and let go of it.
    writeObjectsPack(packDir, 'sha1', [blob('kept'), blob('other'), blob('new')]);
    rmSync(`${old.base}.pack`);
    rmSync(`${old.base}.idx`);
    h.refresh();
    store.objects.refresh();
    assert.ok(!h.packs().includes(location.pack), 'the old pack left the view');
    assert.deepEqual(h.readAt(location).data, Buffer.from('kept'));
    assert.equal(h.infoAt(location).size, 4);
    store.close();
  });

  test('an index corrupted, then restored', () => {
    using dir = tempDir();
    const packDir = join(dir.path, 'objects', 'pack');
    const { base, ids } = writeObjectsPack(packDir, 'sha1', [blob('x'), blob('y')]);
    const good = readFileSync(`${base}.idx`);
    const bad = Buffer.from(good);
    bad.writeUInt32BE(3, 4);
    writeFileSync(`${base}.idx`, bad);
    const store = Store.open(join(dir.path, 'objects'), { refresh: 'on-miss' });
    const h = store.handle();
    assert.equal(h.has(ids[0] as Buffer), false);
    assert.equal(h.packs()[0]?.error?.code, 'IDX_VERSION');
    // Unchanged, it is not read again.
    assert.equal(h.has(ids[1] as Buffer), false);
    writeFileSync(`${base}.idx.tmp`, good);
    renameSync(`${base}.idx.tmp`, `${base}.idx`);
    assert.deepEqual(h.read(ids[0] as Buffer).data, Buffer.from('x'));
    store.close();
  });

  test('a store grows to 2,000 packs, and a repack into one retires them all', () => {
    using dir = tempDir();
    const packDir = join(dir.path, 'objects', 'pack');
    mkdirSync(packDir, { recursive: true });
    const store = Store.open(join(dir.path, 'objects'), { refresh: 'on-miss' });
    const h = store.handle();
    const all: Buffer[] = [];
    const bases: string[] = [];
    for (let i = 0; i < 2000; i++) {
      const { base, ids } = writeObjectsPack(packDir, 'sha1', [blob(`object ${i}`)]);
      bases.push(base);
      all.push(ids[0] as Buffer);
      if (i % 400 === 0) assert.equal(h.has(ids[0] as Buffer), true);
    }
    for (let i = 0; i < all.length; i += 37) assert.deepEqual(h.read(all[i] as Buffer).data, Buffer.from(`object ${i}`));
    assert.equal(h.packs().length, 2000);
    let n = 0;
    forEachObject(h, {}, () => n++);
    assert.equal(n, 2000);
    writeObjectsPack(packDir, 'sha1', all.map((_, i) => blob(`object ${i}`)));
    for (const b of bases) {
      rmSync(`${b}.pack`);
      rmSync(`${b}.idx`);
    }
    h.refresh();
    assert.equal(h.packs().length, 1);
    for (let i = 0; i < all.length; i += 37) assert.deepEqual(h.read(all[i] as Buffer).data, Buffer.from(`object ${i}`));
    store.close();
  });
});

describe('store: alternates', () => {
  test('added and removed while the store is open; nesting deeper than 5 and missing directories are warnings', () => {
    using dir = tempDir();
    const main = join(dir.path, 'main', 'objects');
    mkdirSync(join(main, 'info'), { recursive: true });
    const dirs: string[] = [];
    const ids: Buffer[] = [];
    for (let i = 0; i < 8; i++) {
      const d = join(dir.path, `alt${i}`, 'objects');
      ids.push(writeObjectsPack(join(d, 'pack'), 'sha1', [blob(`alt ${i}`)]).ids[0] as Buffer);
      dirs.push(d);
    }
    const store = Store.open(main, { refresh: 'on-miss' });
    const h = store.handle();
    assert.equal(h.has(ids[0] as Buffer), false);
    // A chain main -> alt0 -> alt1 -> ... with a comment, a relative path and a cycle back to main.
    writeFileSync(join(main, 'info', 'alternates'), `# comment\n../../alt0/objects\n`);
    for (let i = 0; i < 7; i++) {
      mkdirSync(join(dirs[i] as string, 'info'), { recursive: true });
      writeFileSync(join(dirs[i] as string, 'info', 'alternates'), `${dirs[i + 1]}\n${main}\n`);
    }
    for (let i = 0; i <= 5; i++) assert.equal(h.has(ids[i] as Buffer), true, `alt${i}`);
    assert.equal(h.has(ids[6] as Buffer), false, 'alt6 is nested too deep');
    assert.ok(store.warnings.some((w) => w.includes('nesting too deep')));
    appendFileSync(join(main, 'info', 'alternates'), `${join(dir.path, 'nowhere')}\n`);
    store.refresh();
    assert.ok(store.warnings.some((w) => w.includes('does not exist')));
    writeFileSync(join(main, 'info', 'alternates'), '');
    h.refresh();
    assert.equal(h.has(ids[0] as Buffer), false);
    store.close();
  });
});

describe('store: loose writes and prefixes', () => {
  for (const format of ['sha1', 'sha256'] as Format[]) {
    test(`${format}: writeLoose makes what git hash-object -w makes, and never rewrites an object`, () => {
      using dir = tempDir();
      const repo = makeRepo(dir.path, format, 3);
      const store = Store.open(join(repo, '.git'));
      const data = Buffer.from('written by packwright\n');
      const id = store.writeLoose(BLOB, data);
      assert.equal(id.toString('hex'), git(repo, ['hash-object', '--stdin'], data).toString().trim());
      assert.deepEqual(git(repo, ['cat-file', 'blob', id.toString('hex')]), data);
      const hex = id.toString('hex');
      const path = join(repo, '.git', 'objects', hex.slice(0, 2), hex.slice(2));
      const before = statSync(path);
      assert.deepEqual(store.writeLoose(BLOB, data), id);
      assert.equal(statSync(path).mtimeMs, before.mtimeMs);
      assert.deepEqual(readdirSync(join(repo, '.git', 'objects', hex.slice(0, 2))), [hex.slice(2)], 'no temporary file is left');
      assert.deepEqual(store.objects.read(id).data, data);
      store.close();
    });
  }

  test('isEmpty: a new repository is; one loose object, a pack, or an alternate with objects is not', () => {
    using dir = tempDir();
    const repo = join(dir.path, 'new.git');
    git(dir.path, ['init', '-q', '--bare', repo]);
    const open = (): boolean => {
      const store = Store.open(repo, { refresh: 'on-miss' });
      try {
        return store.objects.isEmpty();
      } finally {
        store.close();
      }
    };
    assert.equal(open(), true);
    // A stray file in a fan-out directory is no object.
    mkdirSync(join(repo, 'objects', 'ab'));
    writeFileSync(join(repo, 'objects', 'ab', 'not-an-object'), '');
    assert.equal(open(), true);
    const id = git(repo, ['hash-object', '-w', '--stdin'], 'one\n').toString().trim();
    assert.equal(open(), false);
    // Unreachable, so packed by hand (repack would leave it loose), then its loose copy pruned.
    git(repo, ['pack-objects', '-q', join(repo, 'objects', 'pack', 'pack')], `${id}\n`);
    git(repo, ['prune-packed']);
    assert.equal(existsSync(join(repo, 'objects', id.slice(0, 2), id.slice(2))), false, 'the object is only packed now');
    assert.equal(open(), false);
    const borrower = join(dir.path, 'borrower.git');
    git(dir.path, ['init', '-q', '--bare', borrower]);
    writeFileSync(join(borrower, 'objects', 'info', 'alternates'), `${join(repo, 'objects')}\n`);
    const store = Store.open(borrower);
    assert.equal(store.objects.isEmpty(), false);
    store.close();
  });

  test('resolvePrefix: unique, ambiguous and missing, as git rev-parse sees them', () => {
    using dir = tempDir();
    const repo = makeRepo(dir.path, 'sha1', 12);
    git(repo, ['repack', '-dq']);
    git(repo, ['commit', '-q', '--allow-empty', '-m', 'loose']);
    const store = Store.open(join(repo, '.git'), { refresh: 'never' });
    const h = store.handle();
    const all = [...gitObjects(repo).keys()];
    for (const id of all.slice(0, 40)) {
      for (const len of [4, 5, 7]) {
        const prefix = id.slice(0, len);
        const matches = all.filter((x) => x.startsWith(prefix));
        const got = h.resolvePrefix(prefix);
        if (matches.length === 1) assert.deepEqual(got, { kind: 'unique', id: Buffer.from(id, 'hex') });
        else assert.deepEqual(got.kind === 'ambiguous' ? got.candidates.map((c) => c.toString('hex')) : got, matches);
      }
    }
    assert.deepEqual(h.resolvePrefix('0000000000'), { kind: 'missing' });
    store.close();
  });
});

describe('multi-pack-index: bad input', () => {
  let midx: Buffer;
  test('git-made file parses and agrees with the packs', () => {
    using dir = tempDir();
    const repo = twoPacks(dir.path, 'sha1', 6);
    git(repo, ['multi-pack-index', 'write']);
    midx = readFileSync(join(packDirOf(repo), 'multi-pack-index'));
    const m = MultiPackIndex.fromBytes('m', midx, 20);
    const ids = [...gitObjects(repo).keys()];
    assert.equal(m.count, ids.length);
    for (let i = 0; i < m.count; i++) assert.equal(m.id(i).toString('hex'), ids[i]);
    assert.equal(m.packNames.length, 2);
  });
  const edits: { what: string; edit: (b: Buffer) => Buffer; words: string[] }[] = [
    { what: 'signature', edit: (b) => { b.write('MIDY', 0, 'latin1'); return b; }, words: ['signature'] },
    { what: 'version', edit: (b) => { b[4] = 2; return b; }, words: ['version 2'] },
    { what: 'hash version', edit: (b) => { b[5] = 2; return b; }, words: ['hash version 2'] },
    { what: 'chunk count', edit: (b) => { b[6] = 200; return b; }, words: ['chunk'] },
    { what: 'a chunk count past the end', edit: (b) => { b[6] = 255; return b.subarray(0, 1000); }, words: ['table of contents'] },
    { what: 'base count', edit: (b) => { b[7] = 1; return b; }, words: ['base'] },
    { what: 'pack count', edit: (b) => { b.writeUInt32BE(9, 8); return b; }, words: ['pack-name chunk holds 2 names'] },
    { what: 'truncated', edit: (b) => b.subarray(0, 30), words: ['too small'] },
    { what: 'a missing chunk', edit: (b) => { b.writeUInt32BE(0x58585858, 12); return b; }, words: ['missing required pack-name'] },
    { what: 'a bad chunk offset', edit: (b) => { b.writeUInt32BE(0xffff, 12 + 12 + 8); return b; }, words: ['improper chunk offset'] },
    { what: 'unsorted names', edit: (b) => swapPackNames(b), words: ['out of order'] },
    { what: 'a bad fan-out', edit: (b) => { const f = chunkStart(b, 0x4f494446); b.writeUInt32BE(0xffffff, f + 4 * 3); return b; }, words: ['fanout out of order'] },
  ];
  for (const { what, edit, words } of edits) {
    test(`${what} is MIDX_CORRUPT`, () => {
      const b = edit(Buffer.from(midx));
      assert.throws(() => MultiPackIndex.fromBytes('m', b, 20), (e: unknown) => isPackwrightError(e, 'MIDX_CORRUPT') && words.every((w) => (e as Error).message.includes(w)));
    });
  }
  test('a bad pack id is MIDX_CORRUPT when its entry is read', () => {
    const b = Buffer.from(midx);
    b.writeUInt32BE(7, chunkStart(b, 0x4f4f4646));
    const m = MultiPackIndex.fromBytes('m', b, 20);
    assert.throws(() => m.packOf(0), (e: unknown) => isPackwrightError(e, 'MIDX_CORRUPT') && (e as Error).message.includes('bad pack-int-id'));
  });
  test('a corrupt multi-pack-index in a repository: a warning, and every object found through the packs', () => {
    using dir = tempDir();
    const repo = twoPacks(dir.path, 'sha1', 6);
    git(repo, ['multi-pack-index', 'write']);
    const objects = gitObjects(repo);
    const path = join(packDirOf(repo), 'multi-pack-index');
    const b = readFileSync(path);
    // git dies here ("multi-pack-index version 9 not recognized"); the packs it covers are all
    // there, with their own indexes, so packwright warns and reads through those.
    b[4] = 9;
    writeFileSync(path, b);
    const store = Store.open(join(repo, '.git'));
    for (const [id, o] of objects) assert.deepEqual(store.objects.read(Buffer.from(id, 'hex')).data, o.data);
    assert.ok(store.warnings.some((w) => w.includes('version 9')));
    store.close();
  });
});

function chunkStart(b: Buffer, id: number): number {
  for (let row = 0; row < b[6]!; row++) {
    const at = 12 + row * 12;
    if (b.readUInt32BE(at) === id) return Number(b.readBigUInt64BE(at + 4));
  }
  throw new Error('no chunk');
}

function swapPackNames(b: Buffer): Buffer {
  const start = chunkStart(b, 0x504e414d);
  const first = b.indexOf(0, start);
  const second = b.indexOf(0, first + 1);
  const a = Buffer.from(b.subarray(start, first));
  const c = Buffer.from(b.subarray(first + 1, second));
  if (a.length !== c.length) throw new Error('names differ in length');
  c.copy(b, start);
  a.copy(b, first + 1);
  return b;
}

describe('store: installing a pack, and headers', () => {
  test('a pack index-pack writes into the store is visible at once through store.addPack, even under never', async () => {
    using dir = tempDir();
    const repo = makeRepo(dir.path, 'sha1', 4);
    const other = join(dir.path, 'other');
    git(dir.path, ['init', '-q', '--bare', other]);
    const store = Store.open(other, { refresh: 'never' });
    const head = Buffer.from(git(repo, ['rev-parse', 'HEAD']).toString().trim(), 'hex');
    assert.equal(store.objects.has(head), false);
    const pack = git(repo, ['pack-objects', '--stdout', '--revs', '-q'], 'HEAD\n');
    const { indexPack } = await import('../src/resolve/index.js');
    const r = await indexPack(pack, { packDir: join(other, 'objects', 'pack') });
    store.addPack(r.indexPath as string);
    assert.equal(store.objects.has(head), true);
    assert.equal(store.counters.scans, 1);
    assert.deepEqual(store.objects.read(head).data, git(repo, ['cat-file', 'commit', 'HEAD']));
    store.close();
  });

  test('header gives type, size and the delta depth verify-pack -v shows, without applying deltas', () => {
    using dir = tempDir();
    const repo = makeRepo(dir.path, 'sha1', 12);
    git(repo, ['-c', 'pack.threads=1', 'repack', '-adfq']);
    const packDir = packDirOf(repo);
    const idx = join(packDir, fileEndingIn(packDir, '.idx'));
    const lines = git(repo, ['verify-pack', '-v', idx]).toString().split('\n').filter((l) => /^[0-9a-f]{40} /.test(l));
    const sizes = new Map(git(repo, ['cat-file', '--batch-all-objects', '--batch-check=%(objectname) %(objectsize)']).toString().trim().split('\n').map((l) => l.split(' ') as [string, string]));
    const store = Store.open(join(repo, '.git'));
    for (const line of lines) {
      const f = line.split(/\s+/);
      const h = store.objects.header(Buffer.from(f[0] as string, 'hex'));
      assert.equal(h.type, f[1]);
      // verify-pack's size column is the delta's own size for a delta; the object's is cat-file's.
      assert.equal(h.size, Number(sizes.get(f[0] as string)));
      // verify-pack -v: "<id> <type> <size> <size-in-pack> <offset> [<depth> <base>]".
      assert.equal(h.deltaDepth, f.length > 6 ? Number(f[5]) : 0, line);
      assert.equal(h.location.kind, 'pack');
    }
    store.close();
  });
});

describe('store: streams', () => {
  test('readStream gives a large blob in chunks, loose and packed, and small and delta objects whole', async () => {
    using dir = tempDir();
    const repo = makeRepo(dir.path, 'sha1', 3);
    const big = Buffer.alloc(3 * 1024 * 1024 + 17);
    for (let i = 0; i < big.length; i++) big[i] = (i * 2654435761) >>> 24;
    writeFileSync(join(repo, 'big.bin'), big);
    git(repo, ['add', 'big.bin']);
    git(repo, ['commit', '-qm', 'big']);
    const id = Buffer.from(git(repo, ['rev-parse', 'HEAD:big.bin']).toString().trim(), 'hex');
    const collect = async (s: NodeJS.ReadableStream): Promise<{ data: Buffer; chunks: number }> => {
      const parts: Buffer[] = [];
      for await (const c of s) parts.push(c as Buffer);
      return { data: Buffer.concat(parts), chunks: parts.length };
    };
    for (const stage of ['loose', 'packed']) {
      if (stage === 'packed') git(repo, ['repack', '-adq']);
      const store = Store.open(join(repo, '.git'));
      const s = store.objects.readStream(id);
      assert.equal(s.type, 'blob');
      assert.equal(s.size, big.length);
      const got = await collect(s.stream);
      assert.ok(got.data.equals(big), stage);
      assert.ok(got.chunks > 4, `${stage}: came in ${got.chunks} chunks`);
      const head = Buffer.from(git(repo, ['rev-parse', 'HEAD']).toString().trim(), 'hex');
      const c = store.objects.readStream(head);
      assert.deepEqual((await collect(c.stream)).data, git(repo, ['cat-file', 'commit', 'HEAD']));
      store.close();
    }
  });

  test('a loose object whose stream is cut fails at the end of the stream with OBJECT_CORRUPT', async () => {
    using dir = tempDir();
    const objects = join(dir.path, 'objects');
    mkdirSync(objects);
    const store = Store.open(objects);
    const id = store.writeLoose(BLOB, Buffer.alloc(200_000, 7));
    const hex = id.toString('hex');
    const path = join(objects, hex.slice(0, 2), hex.slice(2));
    const bytes = readFileSync(path);
    rmSync(path);
    writeFileSync(path, bytes.subarray(0, bytes.length - 40));
    const s = store.objects.readStream(id);
    await assert.rejects(async () => { for await (const _ of s.stream) { /* drain */ } }, (e: unknown) => isPackwrightError(e, 'OBJECT_CORRUPT'));
    store.close();
  });
});

/**
 * A bare repository whose one pack is a few MB of random text with deltas: 48 files of 112 KiB,
 * each rewritten four times with a few lines changed.
 */
function incompressibleRepo(dir: string, format: Format): string {
  const repo = join(dir, `wide-${format}.git`);
  git(dir, ['init', '-q', '--bare', `--object-format=${format}`, repo]);
  const random = seededRandom(7);
  // Lines of 55 random base-36 characters (deflate keeps ~65 % of them), made byte by byte: by
  // Number.toString(36) they took a second a format.
  const DIGITS = '0123456789abcdefghijklmnopqrstuvwxyz';
  const text = Buffer.allocUnsafe(48 * 2048 * 56);
  for (let i = 0; i < text.length; i++) text[i] = i % 56 === 55 ? 10 : DIGITS.charCodeAt(Math.floor(random() * 36));
  const files = Array.from({ length: 48 }, (_, f) => Array.from({ length: 2048 }, (_, l) => text.toString('latin1', (f * 2048 + l) * 56, (f * 2048 + l + 1) * 56)));
  const parts: string[] = [];
  for (let rev = 0; rev < 3; rev++) {
    const msg = `rev ${rev}\n`;
    parts.push(`commit refs/heads/main\nmark :${rev + 1}\ncommitter A U Thor <author@example.com> ${1700000000 + rev} +0000\ndata ${msg.length}\n${msg}` + (rev ? `from :${rev}\n` : ''));
    files.forEach((lines, f) => {
      if (rev > 0) for (let k = 0; k < 3; k++) lines[Math.floor(random() * lines.length)] = `edit ${rev}.${k}\n`;
      const data = lines.join('');
      parts.push(`M 100644 inline f${f}.txt\ndata ${data.length}\n${data}\n`);
    });
  }
  // fast-import would try each large blob as a delta of the last one at its path; repack -f
  // searches anyway.
  git(repo, ['fast-import', '--quiet', '--big-file-threshold=64k'], parts.join(''));
  git(repo, ['repack', '-adfq']);
  return repo;
}

describe('store: a memory ceiling', () => {
  // Made once per format on first use (fast-import and a repack of ~3.5 MB of random text).
  const shared = tempDir();
  const repos = new Map<Format, string>();
  const wideRepo = (format: Format): string => {
    let repo = repos.get(format);
    if (repo === undefined) {
      repo = incompressibleRepo(shared.path, format);
      repos.set(format, repo);
    }
    return repo;
  };
  after(() => shared[Symbol.dispose]());

  test('the window pool evicts the least recently used window of any pack, and reuses only buffers no one can hold', () => {
    const dropped: string[] = [];
    const owner = (name: string): { dropWindow(): void } => ({ dropWindow: () => { dropped.push(name); } });
    const a = owner('a');
    const b = owner('b');
    const pool = new WindowPool(100);
    const wa = { start: 0, bytes: pool.allocate(40), used: 0, owner: a, recyclable: true };
    pool.add(wa);
    const wb = { start: 0, bytes: pool.allocate(40), used: 0, owner: b, recyclable: false };
    pool.add(wb);
    pool.touch(wa);
    assert.equal(pool.heldBytes, 80);
    assert.ok(pool.fits(20, a) && !pool.fits(61, b) && pool.fits(60, b));
    // b's window is the older one now: it goes, and its buffer (not recyclable) is not handed out.
    const third = pool.allocate(40);
    assert.deepEqual(dropped, ['b']);
    assert.notEqual(third.buffer, wb.bytes.buffer);
    pool.add({ start: 40, bytes: third, used: 0, owner: b, recyclable: true });
    // a's window goes next; its buffer is the next of that size.
    const fourth = pool.allocate(40);
    assert.deepEqual(dropped, ['b', 'a']);
    assert.equal(fourth, wa.bytes);
    assert.equal(pool.heldBytes, 40);
  });

  for (const format of ['sha1', 'sha256'] as const) {
    test(`${format}: a pack larger than its window budget reads every object as git does, in any order, within the budget`, () => {
      const repo = wideRepo(format);
      const packDir = join(repo, 'objects', 'pack');
      const packSize = statSync(join(packDir, fileEndingIn(packDir, '.pack'))).size;
      assert.ok(packSize > 3 << 20, `pack of ${packSize} bytes`);
      const expected = git(repo, ['cat-file', '--batch-all-objects', '--batch']);
      // Room for one large window (1 MiB, the least) and a small cache: the pack is never held whole.
      const store = Store.open(repo, { maxMemory: Infinity, windowBudget: 1 << 20, deltaBaseCacheLimit: 256 << 10 });
      try {
        const h = store.handle();
        const read = (order: Buffer[]): Map<string, Buffer> => {
          const out = new Map<string, Buffer>();
          for (const id of order) {
            const o = h.read(id);
            out.set(id.toString('hex'), o.data);
            // The budget, less the tables charged, may be below one window of the least size (1 MiB): then one is held.
            assert.ok(store.windows.heldBytes <= Math.max(store.windows.budget, 1 << 20), `${store.windows.heldBytes} bytes of windows held`);
          }
          return out;
        };
        const sorted: Buffer[] = [];
        forEachObject(h, {}, (id) => sorted.push(Buffer.from(id)));
        const packOrder: Buffer[] = [];
        forEachObject(h, { unordered: true }, (id) => packOrder.push(Buffer.from(id)));
        const random = seededRandom(11);
        const shuffled = [...sorted].sort(() => random() - 0.5);
        for (const order of [packOrder, sorted, shuffled]) {
          const got = read(order);
          const lines: Buffer[] = [];
          for (const id of sorted) {
            const data = got.get(id.toString('hex')) as Buffer;
            const type = h.info(id).type;
            lines.push(Buffer.from(`${id.toString('hex')} ${type} ${data.length}\n`), data, Buffer.from('\n'));
          }
          assert.ok(Buffer.concat(lines).equals(expected));
        }
        assert.equal(h.packs()[0]?.open().file.wholeBytes(), undefined);
      } finally {
        store.close();
      }
    });
  }

  test('the default ceiling keeps room for a pack of 45% of it whole, after the runtime a walk grows to and the cache', () => {
    // gitoxide.pack (106 MiB) must stay whole under 256 MiB: read through windows instead, sorted
    // cat-file --batch-all-objects --batch took a third longer.
    const plan = planStoreMemory(DEFAULT_MAX_MEMORY, 96 << 20);
    assert.ok(plan.windowBudget >= 0.45 * DEFAULT_MAX_MEMORY, `windows ${plan.windowBudget}`);
    assert.ok(plan.cacheLimit >= 16 << 20, `cache ${plan.cacheLimit}`);
    // What the store may hold, with the runtime at start, the 24 MiB a long walk adds to it, and slack.
    assert.ok(plan.windowBudget + plan.cacheLimit * ARENA_FACTOR <= DEFAULT_MAX_MEMORY - RUNTIME_BYTES - (24 << 20) - SLACK_BYTES);
    // Without a ceiling, nothing is cut.
    assert.deepEqual(planStoreMemory(Infinity, 96 << 20), { cacheLimit: 96 << 20, windowBudget: Infinity });
  });

  test('cat-file --max-memory and packwright.maxMemory bound the store, with the same output', async () => {
    const repo = wideRepo('sha1');
    const expected = git(repo, ['cat-file', '--batch-all-objects', '--batch', '--unordered']);
    assert.ok((await packwright(repo, ['cat-file', '--batch-all-objects', '--batch', '--unordered', '--max-memory=80m'])).equals(expected));
    assert.ok((await packwright(repo, ['-c', 'packwright.maxMemory=80m', 'cat-file', '--batch-all-objects', '--batch', '--unordered'])).equals(expected));
    assert.ok((await packwright(repo, ['cat-file', '--batch-all-objects', '--batch', '--max-memory=0'])).equals(git(repo, ['cat-file', '--batch-all-objects', '--batch'])));
    const bad = await packwrightFails(repo, ['cat-file', '--batch-all-objects', '--batch', '--max-memory=lots']);
    assert.equal(bad.status, 129);
    assert.match(bad.stderr, /max-memory/);
  });
});

test('the default refresh policy finds an object git gc packed a moment after it was read loose (no false "not found" inside the window)', () => {
  using dir = tempDir();
  const repo = join(dir.path, 'r');
  git(dir.path, ['init', '-q', repo]);
  writeFileSync(join(repo, 'f'), 'content\n');
  git(repo, ['add', 'f']);
  git(repo, ['commit', '-q', '-m', 'loose']);
  const head = Buffer.from(git(repo, ['rev-parse', 'HEAD']).toString().trim(), 'hex');
  const store = Store.open(join(repo, '.git'));
  try {
    const h = store.handle();
    assert.equal(h.read(head).type, 'commit');
    // Within the default one-second window: the loose file is gone, a new pack holds it.
    git(repo, ['gc', '-q', '--prune=now']);
    assert.equal(h.read(head).type, 'commit');
    assert.equal(store.handle().read(head).type, 'commit');
    // Still inside the window, each change git makes: a new object packed into a pack of its own
    // (repack), every pack replaced by one (repack -ad), a loose object packed and pruned
    // (repack -d, prune-packed), and pruned for good (git prune): each read is right the first time.
    const commit = (message: string): Buffer => {
      git(repo, ['commit', '-q', '--allow-empty', '-m', message]);
      return Buffer.from(git(repo, ['rev-parse', 'HEAD']).toString().trim(), 'hex');
    };
    const second = commit('second');
    git(repo, ['repack', '-q']);
    assert.equal(h.read(second).type, 'commit');
    git(repo, ['repack', '-adq']);
    assert.equal(h.read(second).type, 'commit');
    assert.equal(h.read(head).type, 'commit');
    const third = commit('third');
    assert.equal(h.read(third).type, 'commit');
    git(repo, ['repack', '-dq']);
    git(repo, ['prune-packed']);
    assert.equal(h.read(third).type, 'commit');
    const dangling = Buffer.from(git(repo, ['hash-object', '-w', '--stdin'], 'dangling\n').toString().trim(), 'hex');
    assert.equal(h.read(dangling).type, 'blob');
    git(repo, ['prune', '--expire=now']);
    assert.equal(h.has(dangling), false, 'a pruned object is gone');
    assert.throws(() => h.read(dangling), (e) => isPackwrightError(e, 'OBJECT_NOT_FOUND'));
    assert.equal(h.read(third).type, 'commit');
  } finally {
    store.close();
  }
});
