import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { git, tempDir, fileEndingIn } from './helpers/git.js';
import { PackIndex } from '../src/idx/index.js';
import { buildInfoTable, objectSize, BIG_SIZE } from '../src/pack/pack-info-table.js';
import { OBJ_OFS_DELTA } from '../src/pack/entry-header.js';
import { EntryHeader, PackFile, parseEntryHeader } from '../src/pack/index.js';
import { writeIndex } from '../src/idx/index.js';
import { buildPack, makeDelta } from './helpers/pack-builder.js';
import { readFileSync } from 'node:fs';

test('the info table is the same whatever the read window, with deltas whose streams need hundreds of bytes to start', () => {
  const dir = tempDir();
  try {
    const repo = join(dir.path, 'r');
    mkdirSync(repo);
    git(repo, ['init', '-q', '-b', 'main']);
    // Each revision replaces a block of lines with new text: deltas with long inserts, which
    // zlib codes with dynamic-Huffman blocks whose headers take a hundred bytes or more.
    let seed = 11;
    // Words over all 256 byte values: long code-length tables, so the first output byte of a
    // delta's stream can be a few hundred bytes in.
    const word = (): string => {
      let w = '';
      for (let i = 0; i < 12; i++) {
        seed = (seed * 1103515245 + 12345) >>> 0;
        w += String.fromCharCode((seed >>> 16) & 0xff);
      }
      return w;
    };
    const lines = Array.from({ length: 600 }, (_, i) => `line ${i} ${word()} ${word()}`);
    for (let r = 0; r < 30; r++) {
      for (let i = 0; i < 25; i++) lines[(r * 37 + i) % lines.length] = `rev ${r} ${word()} ${word()} ${word()} ${word()}`;
      writeFileSync(join(repo, 'f.txt'), Buffer.from(lines.join('\n'), 'latin1'));
      git(repo, ['add', '-A']);
      git(repo, ['commit', '-q', '-m', `r${r}`]);
    }
    git(repo, ['repack', '-adfq']);
    const packDir = join(repo, '.git', 'objects', 'pack');
    const base = join(packDir, fileEndingIn(packDir, '.idx').slice(0, -4));
    const index = PackIndex.open(`${base}.idx`, 20);
    // The test means something only if some delta starts with a dynamic block.
    const pack = readFileSync(`${base}.pack`);
    const h = new EntryHeader();
    const { offsets } = index.packOrder();
    let dynamic = 0;
    for (const off of offsets) {
      const n = parseEntryHeader(pack, off, pack.length - 20, off, 20, h);
      if (h.type >= OBJ_OFS_DELTA && (((pack[off + n + 2] as number) >> 1) & 3) === 2) dynamic++;
    }
    assert.ok(dynamic > 5, `only ${dynamic} deltas start with a dynamic block`);
    const packFile = PackFile.open(`${base}.pack`, { hashLength: 20 });
    const expected = buildInfoTable(packFile, index);
    // git agrees with the default table.
    const check = git(repo, ['cat-file', '--batch-all-objects', '--batch-check=%(objectname) %(objecttype) %(objectsize)']).toString().trim().split('\n');
    const names = ['', 'commit', 'tree', 'blob', 'tag'];
    check.forEach((line, i) => {
      assert.equal(line, `${index.id(i).toString('hex')} ${names[expected.types[i] as number]} ${objectSize(expected, i)}`);
    });
    // Windows so small that entries straddle their ends, at many alignments.
    for (let window = 700; window < 4000; window += 23) {
      const t = buildInfoTable(packFile, index, window);
      assert.deepEqual(t.types, expected.types, `types, window ${window}`);
      assert.deepEqual(t.sizes, expected.sizes, `sizes, window ${window}`);
      assert.deepEqual(t.basePositions, expected.basePositions, `bases, window ${window}`);
    }
    packFile.close();
  } finally {
    dir[Symbol.dispose]();
  }
});

test('sizes that need more than 32 bits come back exactly from the table build (headers and delta varints)', () => {
  // No test can hold a 4 GiB object, but the table never inflates a non-delta and reads a delta's
  // sizes from its first bytes: entries that declare such sizes go through the real build.
  const base = 2 ** 33 + 1;
  const middle = 2 ** 40 + 3;
  const { pack, offsets } = buildPack([
    // A blob whose header declares 8 GiB (its stream holds 5 bytes: the table does not inflate it).
    { type: 3, data: Buffer.from('small'), declaredSize: base },
    // A delta of it to 1 TiB, whose size its child states (so it is not inflated either)...
    { ofsTo: 0, delta: makeDelta(base, middle, [0x90, 1]) },
    // ...and the child, small again.
    { ofsTo: 1, delta: makeDelta(middle, 5, [0x90, 5]) },
    // A delta with no children, whose own varints give 32 GiB.
    { ofsTo: 0, delta: makeDelta(base, 2 ** 35, [0x90, 1]) },
  ]);
  const dir = tempDir();
  try {
    const path = join(dir.path, 'big.pack');
    writeFileSync(path, pack);
    // Made-up ids in pack order (sorted by construction): the table is keyed by idx position.
    const n = offsets.length;
    const ids = new Uint8Array(n * 20);
    for (let i = 0; i < n; i++) ids[i * 20] = i + 1;
    const packHash = pack.subarray(pack.length - 20);
    const index = new PackIndex(writeIndex('sha1', { ids, offsets: Float64Array.from(offsets), crc32: new Uint32Array(n) }, packHash), 20);
    const packFile = PackFile.open(path, { hashLength: 20 });
    const table = buildInfoTable(packFile, index);
    packFile.close();
    assert.deepEqual([0, 1, 2, 3].map((i) => objectSize(table, i)), [base, middle, 5, 2 ** 35]);
    assert.deepEqual([...table.sizes], [BIG_SIZE, BIG_SIZE, 5, BIG_SIZE], 'big sizes live in the map, small ones in the array');
    assert.deepEqual([...table.types], [3, 3, 3, 3]);
    assert.deepEqual([...table.basePositions], [-1, 0, 1, 0]);
  } finally {
    dir[Symbol.dispose]();
  }
});
