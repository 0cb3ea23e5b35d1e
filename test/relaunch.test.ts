import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { git, makeRepo, packwrightProcess, tempDir, fileEndingIn } from './helpers/git.js';

// The CLI starts itself again (huge pages, see src/cli/huge-pages.ts) for big work only;
// PACKWRIGHT_HUGE_PAGES=1 makes it do so for any command, so the relaunch path runs here on small
// repositories: output, standard input, exit codes and errors must pass through unchanged. (On a
// machine without transparent huge pages on request it runs in one process, and must still pass.)
test('relaunched, the CLI prints what git prints, reads stdin, and fails like git', () => {
  const dir = tempDir();
  const saved = process.env['PACKWRIGHT_HUGE_PAGES'];
  process.env['PACKWRIGHT_HUGE_PAGES'] = '1';
  try {
    const repo = makeRepo(dir.path, 'sha1', 6);
    git(repo, ['repack', '-adq']);
    assert.deepEqual(
      packwrightProcess(repo, ['cat-file', '--batch-all-objects', '--batch']).stdout,
      git(repo, ['cat-file', '--batch-all-objects', '--batch']),
    );
    assert.deepEqual(packwrightProcess(repo, ['cat-file', '--batch'], 'HEAD\nHEAD:file.txt\nnope\n').stdout, git(repo, ['cat-file', '--batch'], 'HEAD\nHEAD:file.txt\nnope\n'));
    const packDir = join(repo, '.git', 'objects', 'pack');
    const pack = join(packDir, fileEndingIn(packDir, '.pack'));
    const copy = join(dir.path, 'copy.pack');
    copyFileSync(pack, copy);
    const out = packwrightProcess(dir.path, ['index-pack', '-o', 'pw.idx', 'copy.pack']).stdout;
    assert.deepEqual(out, git(dir.path, ['index-pack', '-o', 'git.idx', 'copy.pack']));
    assert.deepEqual(readFileSync(join(dir.path, 'pw.idx')), readFileSync(join(dir.path, 'git.idx')));
    // A damaged pack: exit 128 and one fatal line, as without the relaunch.
    const bad = readFileSync(copy);
    bad[bad.length - 1] = (bad[bad.length - 1] as number) ^ 0xff;
    writeFileSync(join(dir.path, 'bad.pack'), bad);
    const r = packwrightProcess(dir.path, ['index-pack', '-o', 'bad.idx', 'bad.pack']);
    assert.equal(r.status, 128);
    assert.match(r.stderr, /^fatal: .*\n$/);
  } finally {
    if (saved === undefined) delete process.env['PACKWRIGHT_HUGE_PAGES'];
    else process.env['PACKWRIGHT_HUGE_PAGES'] = saved;
    dir[Symbol.dispose]();
  }
});
