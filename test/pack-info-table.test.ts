import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { git, tempDir } from './helpers/git.js';
import { PackIndex } from '../src/idx/index.js';
import { buildInfoTable, objectSize, BIG_SIZE, type PackInfoTable } from '../src/pack/pack-info-table.js';
import { OBJ_OFS_DELTA } from '../src/pack/entry-header.js';
import { EntryHeader, PackFile, parseEntryHeader } from '../src/pack/index.js';
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
    const base = join(packDir, (readdirSync(packDir).find((f) => f.endsWith('.idx')) as string).slice(0, -4));
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

test('sizes that need more than 32 bits are kept exactly', () => {
  const table: PackInfoTable = {
    types: Uint8Array.of(3, 3, 3),
    sizes: Uint32Array.of(7, BIG_SIZE, BIG_SIZE - 1),
    bigSizes: new Map([[1, 2 ** 40 + 3]]),
    basePositions: Int32Array.of(-1, -1, -1),
    isBase: new Uint8Array(3),
  };
  assert.equal(objectSize(table, 0), 7);
  assert.equal(objectSize(table, 1), 2 ** 40 + 3);
  assert.equal(objectSize(table, 2), 2 ** 32 - 2);
});
