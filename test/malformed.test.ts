import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync, readFileSync, mkdirSync, rmSync, chmodSync, readdirSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { deflateSync } from 'node:zlib';
import { join } from 'node:path';
import { CLI, tempDir, makeRepo, git, fileEndingIn, runPackwright } from './helpers/git.js';
import { spawnGit } from './helpers/spawn-client.js';
import { buildPack, makeDelta } from './helpers/pack-builder.js';
import { Repository } from '../src/repo/index.js';
import { encodeOfsDistance } from '../src/pack/entry-header.js';
import { PackFile, PackReader, DeltaBaseCache } from '../src/pack/index.js';
import { PackIndex } from '../src/idx/index.js';
import { readLoose } from '../src/loose/index.js';
import { Inflater } from '../src/zlib/index.js';
import { applyDelta, DeltaFormatError } from '../src/delta/index.js';
import { isPackwrightError, type ErrorCode } from '../src/errors/index.js';

const dir = tempDir();
after(() => dir[Symbol.dispose]());
let n = 0;

function openPack(pack: Buffer, refs: Map<string, number> = new Map()): { file: PackFile; reader: PackReader; path: string } {
  const path = join(dir.path, `p${n++}.pack`);
  writeFileSync(path, pack);
  const file = PackFile.open(path, { hashLength: 20 });
  const reader = new PackReader(file, new DeltaBaseCache(), (id) => refs.get(Buffer.from(id).toString('hex')) ?? -1);
  return { file, reader, path };
}

function rejects(fn: () => unknown, code: ErrorCode, mentions: (string | number)[] = []): void {
  assert.throws(fn, (e: unknown) => {
    assert.ok(isPackwrightError(e, code), `expected ${code}, got ${String(e)} ${(e as { code?: string }).code}`);
    for (const m of mentions) assert.ok(e.message.includes(String(m)), `message "${e.message}" should mention ${m}`);
    return true;
  });
}

const blob = Buffer.from('hello hello hello hello\n');

describe('malformed packs', () => {
  test('a truncated pack is PACK_TRUNCATED', () => {
    const path = join(dir.path, 'short.pack');
    writeFileSync(path, Buffer.from('PACK\0\0'));
    rejects(() => PackFile.open(path, { hashLength: 20 }), 'PACK_TRUNCATED', [path]);
  });
  test('a bad signature is PACK_SIGNATURE', () => {
    const { pack } = buildPack([{ type: 3, data: blob }]);
    pack.write('KCAP', 0, 'latin1');
    const path = join(dir.path, 'sig.pack');
    writeFileSync(path, pack);
    rejects(() => PackFile.open(path, { hashLength: 20 }), 'PACK_SIGNATURE', ['signature']);
  });
  test('pack version 4 is PACK_VERSION', () => {
    const path = join(dir.path, 'v4.pack');
    writeFileSync(path, buildPack([{ type: 3, data: blob }], { version: 4 }).pack);
    rejects(() => PackFile.open(path, { hashLength: 20 }), 'PACK_VERSION', ['version 4']);
  });
  for (const type of [0, 5]) {
    test(`object type ${type} is rejected with its offset`, () => {
      const { pack, offsets } = buildPack([{ type: 3, data: blob }, { raw: Buffer.from([type << 4 | 3, 0x78, 0x9c]) }]);
      const { reader } = openPack(pack);
      rejects(() => reader.read(offsets[1] as number), 'PACK_CORRUPT', [`type ${type}`, offsets[1] as number]);
    });
  }
  test('a declared size too large is PACK_CORRUPT', () => {
    const { pack, offsets } = buildPack([{ type: 3, data: blob, declaredSize: blob.length + 10 }]);
    rejects(() => openPack(pack).reader.read(offsets[0] as number), 'PACK_CORRUPT', ['shorter', offsets[0] as number]);
  });
  test('a declared size too small is PACK_CORRUPT', () => {
    const { pack, offsets } = buildPack([{ type: 3, data: blob, declaredSize: blob.length - 3 }]);
    rejects(() => openPack(pack).reader.read(offsets[0] as number), 'PACK_CORRUPT', ['longer', offsets[0] as number]);
  });
  test('corrupt zlib data is PACK_CORRUPT', () => {
    const { pack, offsets } = buildPack([{ raw: Buffer.concat([Buffer.from([0x30 | 5]), Buffer.from('not zlib at all')]) }]);
    rejects(() => openPack(pack).reader.read(offsets[0] as number), 'PACK_CORRUPT', [offsets[0] as number]);
  });
  test('an OFS base before the start of the pack is out of bound', () => {
    const { pack, offsets } = buildPack([{ type: 3, data: blob }, { ofsTo: 0, delta: makeDelta(blob.length, 1, [1, 0x41]), rawOffset: encodeOfsDistance(5000) }]);
    rejects(() => openPack(pack).reader.read(offsets[1] as number), 'PACK_CORRUPT', ['out of bound', offsets[1] as number]);
  });
  test('an overflowing OFS offset is rejected', () => {
    const { pack, offsets } = buildPack([{ type: 3, data: blob }, { ofsTo: 0, delta: makeDelta(blob.length, 1, [1, 0x41]), rawOffset: Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f]) }]);
    rejects(() => openPack(pack).reader.read(offsets[1] as number), 'PACK_CORRUPT', ['overflow', offsets[1] as number]);
  });
  test('an OFS base in the middle of an entry fails cleanly', () => {
    const { pack, offsets } = buildPack([{ type: 3, data: blob }, { ofsTo: 0, delta: makeDelta(blob.length, 1, [1, 0x41]), rawOffset: encodeOfsDistance(0) }]);
    // Distance 0 points at the delta itself; any distance inside the previous entry lands mid-stream.
    rejects(() => openPack(pack).reader.read(offsets[1] as number), 'PACK_CORRUPT');
    const mid = buildPack([{ type: 3, data: blob }, { ofsTo: 0, delta: makeDelta(blob.length, 1, [1, 0x41]) }]);
    const d = mid.offsets[1] as number;
    const bytes = Buffer.from(mid.pack);
    bytes[d + 1] = (bytes[d + 1] as number) - 3; // base now starts 3 bytes into entry 0
    // Read there, the bytes are no entry: PACK_CORRUPT, naming where the supposed base starts.
    rejects(() => openPack(bytes).reader.read(d), 'PACK_CORRUPT', [`offset ${(mid.offsets[0] as number) + 3}`]);
  });
  const deltaCases: [string, Buffer, string][] = [
    ['a wrong base size', makeDelta(blob.length + 1, 4, [0x90, 4]), 'expects a base'],
    ['a copy outside the base', makeDelta(blob.length, 4, [0x91, 100, 4]), 'outside'],
    ['opcode 0', makeDelta(blob.length, 4, [1, 0x41, 0]), 'opcode 0'],
    ['trailing garbage after the result', makeDelta(blob.length, 4, [0x90, 4, 1, 0x41]), 'past the declared result size'],
    ['too few literal bytes', makeDelta(blob.length, 4, [4, 0x41]), 'runs past the end'],
    ['a result shorter than declared', makeDelta(blob.length, 8, [0x90, 4]), 'declared 8'],
    // Sized from the header, the output would be 1 TiB: refused before anything is allocated.
    ['a result larger than the delta can make', makeDelta(blob.length, 2 ** 40, [0x90, 4]), 'more than its'],
  ];
  for (const [what, delta, says] of deltaCases) {
    test(`a delta with ${what} is DELTA_CORRUPT`, () => {
      const { pack, offsets } = buildPack([{ type: 3, data: blob }, { ofsTo: 0, delta }]);
      rejects(() => openPack(pack).reader.read(offsets[1] as number), 'DELTA_CORRUPT', [says, offsets[1] as number]);
    });
  }
  test('a REF_DELTA cycle is detected instead of looping', () => {
    const a = Buffer.alloc(20, 0xaa);
    const b = Buffer.alloc(20, 0xbb);
    const { pack, offsets } = buildPack([{ refTo: b, delta: makeDelta(1, 1, [1, 0x41]) }, { refTo: a, delta: makeDelta(1, 1, [1, 0x42]) }]);
    const refs = new Map([[a.toString('hex'), 0], [b.toString('hex'), 0]]);
    const { reader } = openPack(pack, refs);
    refs.set(a.toString('hex'), offsets[0] as number);
    refs.set(b.toString('hex'), offsets[1] as number);
    rejects(() => reader.read(offsets[0] as number), 'PACK_CORRUPT', ['loops']);
    rejects(() => reader.info(offsets[0] as number), 'PACK_CORRUPT', ['loops']);
  });
  test('a REF_DELTA with a missing base names the base id', () => {
    const missing = Buffer.alloc(20, 0xcd);
    const { pack, offsets } = buildPack([{ refTo: missing, delta: makeDelta(1, 1, [1, 0x41]) }]);
    rejects(() => openPack(pack).reader.read(offsets[0] as number), 'PACK_CORRUPT', [missing.toString('hex')]);
  });
  test('a pack that does not match its index is IDX_MISMATCH', () => {
    const repoDir = join(dir.path, 'mismatch');
    mkdirSync(repoDir);
    const repo = makeRepo(repoDir, 'sha1', 3);
    git(repo, ['repack', '-adq']);
    const packDir = join(repo, '.git', 'objects', 'pack');
    const packName = fileEndingIn(packDir, '.pack');
    const bytes = readFileSync(join(packDir, packName));
    bytes.writeUInt32BE(bytes.readUInt32BE(8) + 1, 8);
    writeFileSync(join(packDir, packName), bytes);
    const store = Repository.open(repo).objects;
    const head = git(repo, ['rev-parse', 'HEAD']).toString().trim();
    rejects(() => store.read(Buffer.from(head, 'hex')), 'IDX_MISMATCH', [packName]);
    store.close();
  });
});

describe('malformed indexes', () => {
  let idx: Buffer;
  before(() => {
    const repoDir = join(dir.path, 'idx');
    mkdirSync(repoDir);
    const repo = makeRepo(repoDir, 'sha1', 3);
    git(repo, ['repack', '-adq']);
    const packDir = join(repo, '.git', 'objects', 'pack');
    idx = readFileSync(join(packDir, fileEndingIn(packDir, '.idx')));
  });
  test('version 3 is IDX_VERSION', () => {
    const b = Buffer.from(idx);
    b.writeUInt32BE(3, 4);
    rejects(() => new PackIndex(b, 20, 'v3.idx'), 'IDX_VERSION', ['v3.idx', 'version 3']);
  });
  test('a decreasing fan-out is IDX_CORRUPT', () => {
    const b = Buffer.from(idx);
    b.writeUInt32BE(0xffff, 8 + 4 * 10);
    rejects(() => new PackIndex(b, 20, 'fan.idx'), 'IDX_CORRUPT', ['fan-out']);
  });
  test('a truncated index is IDX_CORRUPT', () => {
    rejects(() => new PackIndex(idx.subarray(0, idx.length - 7), 20, 'cut.idx'), 'IDX_CORRUPT', ['cut.idx']);
    rejects(() => new PackIndex(idx.subarray(0, 100), 20, 'cut.idx'), 'IDX_CORRUPT', ['too small']);
  });
  test('a bad checksum is IDX_CHECKSUM', () => {
    const b = Buffer.from(idx);
    b.writeUInt8((b.at(-1) as number) ^ 1, b.length - 1);
    rejects(() => new PackIndex(b, 20, 'sum.idx').verifyChecksum(), 'IDX_CHECKSUM', ['sum.idx']);
  });
  test('a 31-bit offset pointing past the 64-bit table is IDX_CORRUPT', () => {
    const b = Buffer.from(idx);
    const index = new PackIndex(b, 20, 'large.idx');
    const offsetTable = 8 + 1024 + index.count * 24;
    b.writeUInt32BE(0x80000005, offsetTable);
    rejects(() => new PackIndex(b, 20, 'large.idx').offset(0), 'IDX_CORRUPT', ['64-bit']);
  });
});

describe('malformed loose objects', () => {
  const inflater = new Inflater();
  const loose = (content: Buffer, extra = Buffer.alloc(0)): string => {
    const path = join(dir.path, `loose${n++}`);
    writeFileSync(path, Buffer.concat([deflateSync(content), extra]));
    return path;
  };
  test('a good one reads', () => {
    const obj = readLoose(loose(Buffer.from('blob 3\0abc')), inflater);
    assert.equal(obj.type, 3);
    assert.equal(obj.data.toString(), 'abc');
  });
  test('a non-canonical size is LOOSE_CORRUPT', () => {
    rejects(() => readLoose(loose(Buffer.from('blob 03\0abc')), inflater), 'LOOSE_CORRUPT', ['leading zero']);
  });
  test('a bogus type is LOOSE_CORRUPT', () => {
    rejects(() => readLoose(loose(Buffer.from('bogus 3\0abc')), inflater), 'LOOSE_CORRUPT', ['bogus']);
  });
  test('a wrong size is LOOSE_CORRUPT', () => {
    rejects(() => readLoose(loose(Buffer.from('blob 5\0abc')), inflater), 'LOOSE_CORRUPT');
    rejects(() => readLoose(loose(Buffer.from('blob 2\0abc')), inflater), 'LOOSE_CORRUPT');
  });
  test('corrupt zlib is LOOSE_CORRUPT', () => {
    const path = join(dir.path, `loose${n++}`);
    writeFileSync(path, Buffer.from('definitely not zlib'));
    rejects(() => readLoose(path, inflater), 'LOOSE_CORRUPT', [path]);
  });
  test('garbage after the zlib stream is LOOSE_CORRUPT', () => {
    rejects(() => readLoose(loose(Buffer.from('blob 3\0abc'), Buffer.from('junk')), inflater), 'LOOSE_CORRUPT', ['garbage']);
  });
  test('a header without NUL within 32 bytes is LOOSE_CORRUPT', () => {
    rejects(() => readLoose(loose(Buffer.from('blob 1' + '0'.repeat(40))), inflater), 'LOOSE_CORRUPT');
  });
});

describe('delta application', () => {
  test('copy size 0 means 0x10000', () => {
    const base = Buffer.alloc(0x10000, 7);
    const delta = makeDelta(0x10000, 0x10000, [0x80]);
    const out = Buffer.alloc(0x10000);
    assert.equal(applyDelta(base, 0, base.length, delta, 0, delta.length, out, 0), 0x10000);
    assert.ok(out.every((b) => b === 7));
  });
  test('a delta shorter than 4 bytes is rejected', () => {
    assert.throws(() => applyDelta(Buffer.alloc(1), 0, 1, Buffer.from([1, 1]), 0, 2, Buffer.alloc(4), 0), DeltaFormatError);
  });
  test('long and short copies and inserts produce the target', () => {
    const base = Buffer.from('0123456789'.repeat(20));
    const delta = makeDelta(200, 3 + 100 + 2, [3, 0x61, 0x62, 0x63, 0x91, 50, 100, 0x91, 1, 2]);
    const out = Buffer.alloc(105);
    applyDelta(base, 0, 200, delta, 0, delta.length, out, 0);
    assert.equal(out.toString(), 'abc' + base.toString('latin1', 50, 150) + '12');
  });
});

describe('a damaged pack entry is read from another copy, as git recovers (t5303)', () => {
  // Three blobs, each a delta on the one before (git picks the first, biggest, as the base).
  const setup = (dir: string, refDelta: boolean): { repo: string; pack: string; ids: string[]; files: string[] } => {
    const repo = join(dir, `repo-${refDelta ? 'ref' : 'ofs'}`);
    git(dir, ['init', '-q', repo]);
    let seed = 3;
    const random = (n: number): string => {
      let s = '';
      for (let i = 0; i < n; i++) {
        seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
        s += String.fromCharCode(97 + ((seed >>> 16) % 26));
      }
      return s;
    };
    const common = random(1800);
    const contents = [`${common}${random(200)} base\n`, `${common} delta1\n${random(150)}`, `${common} delta delta2\n${random(100)}`];
    const files = contents.map((c, i) => {
      const f = join(repo, `file_${i + 1}`);
      writeFileSync(f, c);
      return f;
    });
    const ids = files.map((f) => git(repo, ['hash-object', '-w', f]).toString().trim());
    const name = git(repo, ['pack-objects', ...(refDelta ? [] : ['--delta-base-offset']), join(repo, '.git', 'objects', 'pack', 'pack')], ids.join('\n') + '\n').toString().trim();
    git(repo, ['prune-packed']);
    return { repo, pack: join(repo, '.git', 'objects', 'pack', `pack-${name}`), ids, files };
  };
  const offsetOf = (repo: string, pack: string, id: string): number =>
    Number(git(repo, ['show-index'], readFileSync(`${pack}.idx`)).toString().split('\n').find((l) => l.includes(id))?.split(' ')[0]);
  /** `cat-file blob` of each id, by git and by packwright: the same exit status and bytes. */
  const same = async (repo: string, ids: string[], context: string): Promise<boolean[]> => {
    const out: boolean[] = [];
    for (const id of ids) {
      const g = spawnGit(['cat-file', 'blob', id], { cwd: repo });
      const p = await runPackwright(repo, ['cat-file', 'blob', id]);
      assert.equal(p.status === 0, g.status === 0, `${context}: cat-file blob ${id}: ${p.stderr}`);
      if (g.status === 0) assert.ok(p.stdout.equals(g.stdout), `${context}: ${id} bytes`);
      out.push(g.status === 0);
    }
    return out;
  };
  /** A loose copy of `file`, written while the pack's index is away (so hash-object writes it). */
  const looseCopy = (repo: string, pack: string, file: string): void => {
    const idx = readFileSync(`${pack}.idx`);
    rmSync(`${pack}.idx`, { force: true });
    git(repo, ['hash-object', '-w', file]);
    writeFileSync(`${pack}.idx`, idx, { mode: 0o444 });
  };
  const corrupt = (pack: string, at: number, bytes: Buffer): void => {
    chmodSync(`${pack}.pack`, 0o644);
    const data = readFileSync(`${pack}.pack`);
    bytes.copy(data, at);
    writeFileSync(`${pack}.pack`, data);
  };

  for (const refDelta of [false, true]) {
    test(`a corrupt base header, then a loose base or a loose first delta (${refDelta ? 'REF' : 'OFS'} deltas)`, async () => {
      using dir = tempDir();
      const { repo, pack, ids, files } = setup(dir.path, refDelta);
      const base = ids.find((id) => !git(repo, ['verify-pack', '-v', `${pack}.idx`]).toString().split('\n').some((l) => l.startsWith(id) && l.split(/\s+/).length > 6)) as string;
      corrupt(pack, offsetOf(repo, pack, base), Buffer.from([0]));
      assert.deepEqual(await same(repo, ids, 'corrupt base'), [false, false, false], 'no copy of the base: nothing built on it reads');
      // The base loose: everything reads again.
      looseCopy(repo, pack, files[ids.indexOf(base)] as string);
      assert.deepEqual(await same(repo, ids, 'loose base'), [true, true, true]);
      // Only a delta loose: it and what is based on it read, the base does not.
      git(repo, ['prune-packed']);
      const others = ids.filter((id) => id !== base);
      looseCopy(repo, pack, files[ids.indexOf(others[0] as string)] as string);
      await same(repo, ids, 'loose delta');
    });
  }

  test('a REF_DELTA naming a base that is not there, and a loose copy of the object', async () => {
    using dir = tempDir();
    const { repo, pack, ids, files } = setup(dir.path, true);
    // The first delta's base id (right after its entry header) made wrong.
    const lines = git(repo, ['verify-pack', '-v', `${pack}.idx`]).toString().split('\n').map((l) => l.split(/\s+/));
    const delta = lines.find((f) => f.length > 6 && ids.includes(f[0] as string)) as string[];
    const at = Number(delta[4]);
    const raw = readFileSync(`${pack}.pack`);
    let header = 1;
    while (((raw[at + header - 1] as number) & 0x80) !== 0) header++;
    corrupt(pack, at + header, Buffer.from([0x00]));
    await same(repo, ids, 'bad REF base');
    looseCopy(repo, pack, files[ids.indexOf(delta[0] as string)] as string);
    assert.deepEqual(await same(repo, ids, 'loose copy of the delta'), [true, true, true]);
  });
});

test('a pack whose header does not match its index: its objects are listed "missing" and read from another copy, as git does (t5313)', () => {
  using dir = tempDir();
  const repo = makeRepo(dir.path, 'sha1', 3);
  git(repo, ['repack', '-adq']);
  const packDir = join(repo, '.git', 'objects', 'pack');
  const name = fileEndingIn(packDir, '.pack');
  const backup = readFileSync(join(packDir, name));
  const idx = readFileSync(join(packDir, name.replace(/\.pack$/, '.idx')));
  chmodSync(join(packDir, name), 0o644);
  const bad = Buffer.from(backup);
  Buffer.from([0xff, 0, 0, 0]).copy(bad, 8);
  writeFileSync(join(packDir, name), bad);
  const run = (cmd: string, args: string[]): { status: number | null; out: string } => {
    const r = spawnSync(cmd, args, { cwd: repo });
    return { status: r.status, out: r.stdout.toString() };
  };
  const both = (args: string[]): void => {
    const g = run('git', args);
    const p = run(process.execPath, [CLI, ...args]);
    assert.deepEqual(p, g, args.join(' '));
  };
  both(['cat-file', '--batch-all-objects', '--batch-check']);
  const head = git(repo, ['rev-parse', 'HEAD']).toString().trim();
  both(['cat-file', '-t', head]);
  // The same objects in a sound second pack: read from there.
  writeFileSync(join(packDir, 'pack-copy.pack'), backup);
  writeFileSync(join(packDir, 'pack-copy.idx'), idx);
  both(['cat-file', '-t', head]);
  both(['cat-file', 'commit', head]);
});

test('index-pack dies of a REF delta its base would resolve twice (the base twice in the pack), as git does (t5309)', async () => {
  const { buildPack } = await import('./helpers/pack-builder.js');
  const { createDelta } = await import('../src/delta/index.js');
  const { createHash } = await import('node:crypto');
  using dir = tempDir();
  const repo = join(dir.path, 'repo');
  git(dir.path, ['init', '-q', repo]);
  const a = Buffer.from('object A\n'.repeat(20));
  const b = Buffer.from('object B\n'.repeat(20));
  const id = (data: Buffer): Buffer => createHash('sha1').update(`blob ${data.length}\0`).update(data).digest();
  const delta = (base: Buffer, target: Buffer): Buffer => createDelta(base, target) as Buffer;
  const { pack } = buildPack([{ refTo: id(b), delta: delta(b, a) }, { refTo: id(a), delta: delta(a, b) }, { type: 3, data: a }]);
  const g = spawnGit(['index-pack', '--fix-thin', '--stdin'], { cwd: repo, input: pack });
  const p = spawnSync(process.execPath, [CLI, 'index-pack', '--fix-thin', '--stdin'], { cwd: repo, input: pack });
  assert.equal(g.status, 128);
  assert.equal(p.status, g.status, p.stderr.toString());
  assert.match(p.stderr.toString(), /^fatal: REF_DELTA at offset \d+ already resolved \(duplicate base [0-9a-f]{40}\?\)$/m);
  assert.deepEqual(readdirSync(join(repo, '.git', 'objects', 'pack')).filter((f) => !f.startsWith('tmp_')), []);
});
