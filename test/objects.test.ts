import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { git, makeRepo, tempDir, type Format } from './helpers/git.js';
import { Repository } from '../src/repo/index.js';
import { TreeCursor, formatTree, parseCommit, parseTag, parseTree, OBJ_TREE, OBJ_COMMIT, OBJ_BLOB, modeObjectType } from '../src/objects/index.js';
import { isPackwrightError } from '../src/errors/index.js';
import { fromHex, idFromHexBytes } from '../src/hash/hex.js';
import fc from 'fast-check';

for (const format of ['sha1', 'sha256'] as Format[]) {
  test(`${format}: commits, trees and tags parse to what git says of them, ids as bytes`, () => {
    const dir = tempDir();
    try {
      mkdirSync(join(dir.path, 'r'));
      const repo = makeRepo(join(dir.path, 'r'), format);
      const store = Repository.open(repo).objects;
      const H = store.hashLength;
      // Commits: `rev-list --parents` gives each commit and its parents, `%T` its tree.
      const lines = git(repo, ['log', '--format=%H %T %P', 'main']).toString().trim().split('\n');
      for (const line of lines) {
        const [id, tree, ...parents] = line.split(' ') as [string, string, ...string[]];
        const data = store.read(Buffer.from(id, 'hex')).data;
        const c = parseCommit(data, H, id);
        assert.equal(c.tree.toString('hex'), tree);
        // The id length comes from the tree line when it is not given.
        assert.deepEqual(parseCommit(data), c);
        assert.deepEqual(c.parents.map((p) => p.toString('hex')), parents.filter((p) => p !== ''));
      }
      // Trees: every entry as `ls-tree` lists it (mode, type, id, name), walked without objects.
      const cursor = new TreeCursor(H);
      const trees = git(repo, ['cat-file', '--batch-all-objects', '--batch-check=%(objectname) %(objecttype)']).toString().trim().split('\n')
        .filter((l) => l.endsWith(' tree')).map((l) => l.split(' ')[0] as string);
      assert.ok(trees.length > 10);
      for (const id of trees) {
        const data = store.read(Buffer.from(id, 'hex')).data;
        const expected = git(repo, ['ls-tree', id]).toString();
        const names = { [OBJ_TREE]: 'tree', [OBJ_COMMIT]: 'commit', [OBJ_BLOB]: 'blob' } as Record<number, string>;
        let listed = '';
        cursor.reset(data, id);
        while (cursor.next()) {
          const entryId = Buffer.from(data.subarray(cursor.idStart, cursor.idStart + H)).toString('hex');
          const name = Buffer.from(data.subarray(cursor.nameStart, cursor.nameEnd)).toString('utf8');
          listed += `${cursor.mode.toString(8).padStart(6, '0')} ${names[cursor.objectType]} ${entryId}\t${name}\n`;
        }
        assert.equal(listed, expected, `tree ${id}`);
        assert.equal(formatTree(data, H).toString(), expected);
        const parsed = parseTree(data, H);
        assert.equal(parsed.map((e) => `${e.mode.toString(8).padStart(6, '0')} ${e.type} ${e.id.toString('hex')}\t${e.name}\n`).join(''), expected);
        assert.ok(parsed.every((e) => e.nameBytes.toString('utf8') === e.name));
      }
      // The annotated tag.
      const tagId = git(repo, ['rev-parse', 'v1.0']).toString().trim();
      const tagData = store.read(Buffer.from(tagId, 'hex')).data;
      const tag = parseTag(tagData, H, tagId);
      assert.deepEqual(parseTag(tagData), tag);
      assert.equal(tag.object.toString('hex'), git(repo, ['rev-parse', 'v1.0^{}']).toString().trim());
      assert.equal(tag.type, 'commit');
      assert.equal(tag.name, 'v1.0');
      store.close();
    } finally {
      dir[Symbol.dispose]();
    }
  });
}

test('a tree with a non-canonical mode prints as git prints it (100664 is shown as 100644)', () => {
  const dir = tempDir();
  try {
    git(dir.path, ['init', '-q', '--bare', 'r.git']);
    const repo = join(dir.path, 'r.git');
    const blob = git(repo, ['hash-object', '-w', '--stdin'], 'x\n').toString().trim();
    const raw = Buffer.concat([Buffer.from('100664 odd\0'), Buffer.from(blob, 'hex'), Buffer.from('100755 run\0'), Buffer.from(blob, 'hex')]);
    const tree = git(repo, ['hash-object', '-w', '-t', 'tree', '--literally', '--stdin'], raw).toString().trim();
    assert.equal(formatTree(raw, 20).toString(), git(repo, ['cat-file', '-p', tree]).toString());
    assert.equal(parseTree(raw)[0]?.mode, 0o100664, 'parseTree keeps the stored mode');
    assert.equal(modeObjectType(0o160000), OBJ_COMMIT);
  } finally {
    dir[Symbol.dispose]();
  }
});

test('malformed trees, commits and tags are OBJECT_CORRUPT, saying where', () => {
  const id = Buffer.alloc(20, 7);
  const corrupt = (what: RegExp) => (e: unknown): boolean => isPackwrightError(e, 'OBJECT_CORRUPT') && what.test(e.message);
  const walk = (data: Buffer): void => {
    const c = new TreeCursor(20).reset(data, 'x');
    while (c.next()) { /* walk */ }
  };
  // git's words (tree-walk.c's decode_tree_entry), with where the bad entry starts.
  assert.throws(() => walk(Buffer.concat([Buffer.from('100644 a\0'), id.subarray(0, 19)])), corrupt(/byte 0: too-short tree object/));
  assert.throws(() => walk(Buffer.concat([Buffer.from('100644 a\0'), id, Buffer.from('10x644 b\0'), id])), corrupt(/byte 29: malformed mode in tree entry/));
  assert.throws(() => walk(Buffer.concat([Buffer.from('100644 a\0'), id, Buffer.from(' b\0'), id])), corrupt(/byte 29: malformed mode in tree entry/));
  assert.throws(() => walk(Buffer.from('100644 no-nul')), corrupt(/too-short tree object/));
  assert.throws(() => walk(Buffer.concat([Buffer.from('100644 \0'), id])), corrupt(/empty filename in tree entry/));
  const tree = 'a'.repeat(40);
  assert.throws(() => parseCommit(Buffer.from(`parent ${tree}\ntree ${tree}\n\n`), 20), corrupt(/does not start with a tree line/));
  assert.throws(() => parseCommit(Buffer.from(`tree ${tree.slice(1)}z\n\n`), 20), corrupt(/bad tree line/));
  assert.throws(() => parseCommit(Buffer.from(`tree ${tree}\nparent 123\n\n`), 20), corrupt(/bad parent line/));
  assert.throws(() => parseCommit(Buffer.from(''), 20), corrupt(/no tree line/));
  assert.deepEqual(parseCommit(Buffer.from(`tree ${tree}\nauthor x\n\nparent ${tree}\n`), 20).parents, [], 'parents come right after the tree');
  assert.throws(() => parseTag(Buffer.from(`object ${tree}\ntype spoon\n\n`), 20), corrupt(/valid object or type/));
});

test('idFromHexBytes reads what Node\'s hex decoder reads, in either case, and refuses any other byte', () => {
  fc.assert(fc.property(fc.uint8Array({ minLength: 20, maxLength: 20 }), fc.boolean(), fc.nat(39), fc.integer({ min: 0, max: 255 }), (id, upper, at, byte) => {
    let hex = Buffer.from(id).toString('hex');
    if (upper) hex = hex.toUpperCase();
    const bytes = Buffer.from(`xx${hex}`, 'latin1');
    assert.deepEqual(idFromHexBytes(bytes, 2, 20), Buffer.from(id));
    bytes[2 + at] = byte;
    const valid = /[0-9a-fA-F]/.test(String.fromCharCode(byte));
    assert.equal(idFromHexBytes(bytes, 2, 20) === undefined, !valid);
    // fromHex: the same id from a string, or INVALID_ARGUMENT, never undefined.
    const text = bytes.toString('latin1', 2);
    if (valid) assert.deepEqual(fromHex(text), idFromHexBytes(bytes, 2, 20));
    else assert.throws(() => fromHex(text), (e) => isPackwrightError(e, 'INVALID_ARGUMENT'));
  }));
  const sha256 = 'ab'.repeat(32);
  assert.equal(fromHex(sha256).length, 32);
  assert.throws(() => fromHex(sha256, 20), (e) => isPackwrightError(e, 'INVALID_ARGUMENT'));
  for (const bad of ['', 'abc', 'zz'.repeat(20), 'a'.repeat(41)]) assert.throws(() => fromHex(bad), (e) => isPackwrightError(e, 'INVALID_ARGUMENT'));
});

test('typeName of a number that is no object type is INVALID_ARGUMENT (a PackwrightError), not a plain error', async () => {
  const { typeName } = await import('../src/objects/index.js');
  assert.equal(typeName(3), 'blob');
  assert.throws(() => typeName(5), { name: 'PackwrightError', code: 'INVALID_ARGUMENT' });
});
