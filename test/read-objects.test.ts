import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { git, tempDir, type Format } from './helpers/git.js';
import { Repository } from '../src/repo/index.js';
import { formatPerson, parsePerson } from '../src/objects/index.js';
import { isPackwrightError } from '../src/errors/index.js';
import { listTree } from '../src/odb/index.js';

const FORMATS: Format[] = ['sha1', 'sha256'];

/** Writes an object as it is (`hash-object --literally`); its id. */
function write(repo: string, type: string, text: string | Buffer): string {
  return git(repo, ['hash-object', '-t', type, '-w', '--literally', '--stdin'], text).toString().trim();
}

const SIGNATURE = '-----BEGIN PGP SIGNATURE-----\n\niQEzBAABCAAdFiEE\n=abcd\n-----END PGP SIGNATURE-----\n';

for (const format of FORMATS) {
  test(`readCommit, readTag, readTree and readBlob give what git's cat-file and log say (${format}): zones, encodings, signatures, mergetags, odd names`, async () => {
    using dir = tempDir();
    const path = join(dir.path, 'r.git');
    git(dir.path, ['init', '-q', '--bare', `--object-format=${format}`, path]);
    const blob = write(path, 'blob', 'hello\n');
    const latin = Buffer.from('caf\xe9 \xfc.txt', 'latin1');
    const utf = Buffer.from('café ünï.txt', 'utf8');
    const sub = write(path, 'tree', Buffer.concat([Buffer.from('100644 inner\0'), Buffer.from(blob, 'hex')]));
    // In git's order: names compared as bytes (UTF-8's 0xc3 before latin-1's 0xe9).
    const tree = write(path, 'tree', Buffer.concat([
      Buffer.from('100644 '), utf, Buffer.from('\0'), Buffer.from(blob, 'hex'),
      Buffer.from('120000 '), latin, Buffer.from('\0'), Buffer.from(blob, 'hex'),
      Buffer.from('100755 run.sh\0'), Buffer.from(blob, 'hex'),
      Buffer.from('40000 sub\0'), Buffer.from(sub, 'hex'),
    ]));
    const first = write(path, 'commit', `tree ${tree}\nauthor A U Thor <a@example.com> 1700000000 +1400\ncommitter C O Mitter <c@example.com> 1700000001 -0000\n\nfirst\n`);
    const signed = write(path, 'commit', `tree ${tree}\nparent ${first}\nauthor A <a@example.com> 1700000100 +0530\ncommitter C <c@example.com> 1700000200 -0800\ngpgsig ${SIGNATURE.trimEnd().split('\n').join('\n ')}\n\nsigned\n\nbody line\n`);
    const tag = write(path, 'tag', `object ${signed}\ntype commit\ntag v1\ntagger T Agger <t@example.com> 1700000300 +0000\n\nrelease\n${SIGNATURE}`);
    const merge = write(path, 'commit', Buffer.concat([
      Buffer.from(`tree ${tree}\nparent ${first}\nparent ${signed}\nauthor M\xfcller <m@example.com> 1700000400 +0100\ncommitter M\xfcller <m@example.com> 1700000400 +0100\nencoding ISO-8859-1\nmergetag object ${signed}\n type commit\n tag v1\n tagger T <t@example.com> 1700000300 +0000\n \n release\nx-custom value\n\nMerge f\xfcr alle\n`, 'latin1'),
    ]));
    git(path, ['update-ref', 'refs/heads/main', merge]);
    git(path, ['update-ref', 'refs/tags/v1', tag]);
    using holder = { repo: Repository.openGitDir(path), [Symbol.dispose]() { this.repo.close(); } };
    const repo = holder.repo;

    for (const id of [first, signed, merge]) {
      const c = await repo.readCommit(id);
      const f = (fmt: string): string => git(path, ['log', '-1', '--date=raw', `--format=${fmt}`, id]).toString().replace(/\n$/, '');
      assert.equal(c.id, id);
      assert.equal(c.tree, f('%T'));
      assert.deepEqual(c.parents, f('%P') === '' ? [] : f('%P').split(' '));
      assert.equal(`${c.author.name} <${c.author.email}> ${c.author.timestamp}`, `${f('%an')} <${f('%ae')}> ${f('%at')}`);
      // The zones as stored (git log prints -0000 as +0000; cat-file shows the line).
      const raw = git(path, ['cat-file', 'commit', id]).toString('latin1');
      const stored = (who: string): string => (new RegExp(`^${who} .*> (.*)$`, 'm').exec(raw) as RegExpExecArray)[1] as string;
      assert.equal(formatPerson(c.author).replace(/^.*> /, ''), stored('author'));
      assert.equal(formatPerson(c.committer).replace(/^.*> /, ''), stored('committer'));
      // The message as stored, decoded by its encoding (the merge's is checked below).
      if (id !== merge) assert.equal(c.message, raw.slice(raw.indexOf('\n\n') + 2));
    }
    const m = await repo.readCommit('main');
    assert.equal(m.encoding, 'ISO-8859-1');
    assert.equal(m.author.name, 'Müller');
    assert.equal(m.message, 'Merge für alle\n');
    assert.deepEqual(m.extraHeaders.map((h) => h.name), ['mergetag', 'x-custom']);
    assert.equal(m.extraHeaders[0]?.value, `object ${signed}\ntype commit\ntag v1\ntagger T <t@example.com> 1700000300 +0000\n\nrelease`);
    const s = await repo.readCommit(signed);
    assert.equal(s.gpgsig, SIGNATURE.trimEnd());
    assert.equal(s.message, 'signed\n\nbody line\n');
    const first1 = await repo.readCommit(first);
    assert.equal(first1.author.timezoneOffset, -840);
    assert.ok(Object.is(first1.committer.timezoneOffset, -0), '-0000 is -0');
    assert.equal(first1.gpgsig, undefined);
    // A tag ref peels to its commit for readCommit; readTag reads the tag.
    assert.equal((await repo.readCommit('v1')).id, signed);
    const t = await repo.readTag('v1');
    assert.deepEqual({ ...t, tagger: t.tagger && formatPerson(t.tagger) }, { id: tag, object: signed, type: 'commit', tag: 'v1', tagger: 'T Agger <t@example.com> 1700000300 +0000', message: 'release\n', gpgsig: SIGNATURE });
    await assert.rejects(repo.readTag('main'), (e) => isPackwrightError(e, 'INVALID_ARGUMENT'));

    const entries = await repo.readTree('main');
    const lsTree = git(path, ['ls-tree', '-z', 'main']).toString('latin1').split('\0').filter((l) => l !== '');
    assert.deepEqual(entries.map((e) => `${e.mode.toString(8).padStart(6, '0')} ${e.type} ${e.id}\t${e.pathBytes.toString('latin1')}`), lsTree);
    assert.deepEqual(entries.map((e) => e.path), ['café ünï.txt', 'caf\ufffd \ufffd.txt', 'run.sh', 'sub']);
    assert.deepEqual((await repo.readTree('main:sub')).map((e) => e.path), ['inner']);
    // The store level names types too, and listTree's paths are UTF-8 with their bytes beside them.
    const lsTreeR = git(path, ['ls-tree', '-r', '-z', 'main']).toString('latin1').split('\0').filter((l) => l !== '');
    const listed = [...listTree(repo.objects, Buffer.from(tree, 'hex'), { recursive: true })];
    assert.deepEqual(listed.map((e) => `${e.mode.toString(8).padStart(6, '0')} ${e.type} ${e.id.toString('hex')}\t${e.pathBytes.toString('latin1')}`), lsTreeR);
    assert.deepEqual(listed.map((e) => e.path), ['café ünï.txt', 'caf\ufffd \ufffd.txt', 'run.sh', 'sub/inner']);
    assert.deepEqual([...listTree(repo.objects, Buffer.from(tree, 'hex'), { paths: ['café ünï.txt', latin] })].map((e) => e.name), ['café ünï.txt', 'caf\ufffd \ufffd.txt']);
    const objects = repo.objects;
    for (const [id, type] of [[merge, 'commit'], [tree, 'tree'], [blob, 'blob'], [tag, 'tag']] as const) {
      const bytes = Buffer.from(id, 'hex');
      assert.equal(objects.read(bytes).type, type);
      assert.equal(objects.header(bytes).type, type);
      assert.equal(objects.info(bytes).type, type);
      const stream = objects.readStream(bytes);
      assert.equal(stream.type, type);
      stream.stream.destroy();
      assert.equal(objects.typeAt(objects.locateOrThrow(bytes)), type);
    }

    assert.equal((await repo.readBlob({ commit: 'main', path: 'sub/inner' })).toString(), 'hello\n');
    assert.equal((await repo.readBlob('main:run.sh')).toString(), 'hello\n');
    await assert.rejects(repo.readBlob({ commit: 'main', path: 'sub/nope' }), (e) => isPackwrightError(e, 'PATH_NOT_FOUND') && e.message === "path 'sub/nope' does not exist in 'main'");
    await assert.rejects(repo.readBlob({ commit: 'main', path: 'run.sh/x' }), (e) => isPackwrightError(e, 'PATH_NOT_FOUND'));
    await assert.rejects(repo.readBlob({ commit: 'main', path: 'sub' }), (e) => isPackwrightError(e, 'INVALID_ARGUMENT'));
    await assert.rejects(repo.readCommit('main^{tree}'), (e) => isPackwrightError(e, 'INVALID_ARGUMENT'));
    await assert.rejects(repo.readCommit('no-such-branch'), (e) => isPackwrightError(e, 'REF_NOT_FOUND'));
  });
}

test('people: zones both ways (+1400, -0000, +0000), and lines git tolerates (no date, no zone, no email)', () => {
  for (const line of ['A <a@x> 1 +1400', 'A <a@x> 1 -0000', 'A <a@x> 1 +0000', 'A B  <a@x> 7 -0130']) {
    assert.equal(formatPerson(parsePerson(line)), line.replace('B  <', 'B <'));
  }
  assert.deepEqual(parsePerson('A <a@x>'), { name: 'A', email: 'a@x', timestamp: 0, timezoneOffset: 0 });
  assert.deepEqual(parsePerson('A <a@x> 5'), { name: 'A', email: 'a@x', timestamp: 5, timezoneOffset: 0 });
  assert.deepEqual(parsePerson('nobody'), { name: 'nobody', email: '', timestamp: 0, timezoneOffset: 0 });
});

test('errors of the repository API: a missing directory and one that is no repository told apart at open, an id of the wrong length is INVALID_ARGUMENT', () => {
  using dir = tempDir();
  assert.throws(() => Repository.openGitDir(join(dir.path, 'nowhere')), (e) => isPackwrightError(e, 'REPO_NOT_FOUND') && /^no such directory: /.test(e.message));
  assert.throws(() => Repository.openGitDir(dir.path), (e) => isPackwrightError(e, 'REPO_NOT_FOUND') && /^not a git repository/.test(e.message));
  const path = join(dir.path, 'r.git');
  git(dir.path, ['init', '-q', '--bare', path]);
  using holder = { repo: Repository.openGitDir(path), [Symbol.dispose]() { this.repo.close(); } };
  assert.throws(() => holder.repo.objects.read(Buffer.alloc(5)), (e) => isPackwrightError(e, 'INVALID_ARGUMENT'));
  assert.throws(() => holder.repo.objects.read(Buffer.alloc(20, 1)), (e) => isPackwrightError(e, 'OBJECT_NOT_FOUND'));
});
