import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { casesFor, cloneBothWays, git, GIT_ENV, runPackwright, tempDir, type Format } from './helpers/git.js';
import { spawnGit } from './helpers/spawn-client.js';

/**
 * A history of eight commits on main, each tagged (t1..t8, and an annotated a3 on the third), and
 * a branch `side` off the sixth: tags sit on commits a shallow clone leaves out, which a deepening
 * fetch must then follow (git's backfill_tags).
 */
function makeSource(dir: string, format: Format): string {
  const src = join(dir, 'src.git');
  git(dir, ['init', '-q', '--bare', `--object-format=${format}`, '-b', 'main', src]);
  const tree = git(src, ['mktree'], '').toString().trim();
  let parent: string | undefined;
  for (let i = 1; i <= 8; i++) {
    parent = git(src, ['commit-tree', tree, ...(parent !== undefined ? ['-p', parent] : []), '-m', `c${i}`]).toString().trim();
    git(src, ['tag', `t${i}`, parent]);
  }
  git(src, ['update-ref', 'refs/heads/main', parent as string]);
  git(src, ['tag', '-a', '-m', 'annotated', 'a3', 'main~5']);
  git(src, ['update-ref', 'refs/heads/side', git(src, ['commit-tree', tree, '-p', 'main~2', '-m', 'side']).toString().trim()]);
  return src;
}

/** What a clone or fetch leaves that git's leaves the same: files, refs, reflogs and the objects. */
function state(gitDir: string): string {
  const files = (rel: string): string[] => {
    const path = join(gitDir, rel);
    if (!existsSync(path)) return [];
    return readdirSync(path, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(rel, e.name)) : [`${join(rel, e.name)}:\n${readFileSync(join(gitDir, rel, e.name), 'utf8')}`]));
  };
  const read = (name: string): string => (existsSync(join(gitDir, name)) ? `${name}:\n${readFileSync(join(gitDir, name), 'utf8')}` : `${name}: none`);
  return [
    read('config'), read('HEAD'), read('shallow'), read('packed-refs'), read('FETCH_HEAD'),
    ...files('refs').sort(), ...files('logs').sort().map((l) => l.replace(/\d{10} [+-]\d{4}/g, '<date>')),
    git(gitDir, ['cat-file', '--batch-all-objects', '--batch-check']).toString(),
  ].join('\n');
}

for (const format of ['sha1', 'sha256'] as Format[]) {
  test(`shallow clones and deepening fetches leave what git's leave (${format}): --depth, --branch, --shallow-exclude, --shallow-since, --deepen, --unshallow, tags followed`, async () => {
    using dir = tempDir();
    const src = makeSource(dir.path, format);
    const url = `file://${src}`;
    const clones: string[][] = [
      ['--bare', '--depth', '2'],
      ['-n', '--depth=1', '--branch', 'side'],
      ['--bare', '--shallow-exclude=t3'],
      ['--bare', `--shallow-since=@${git(src, ['log', '-1', '--format=%ct', 'main']).toString().trim()}`],
      ['--bare', '--depth', '2', '--no-single-branch'],
    ];
    // SHA-256 takes a third of the clones and of the fetches (casesFor).
    for (const [k, args] of casesFor(format, clones).entries()) {
      const { ours, theirs } = await cloneBothWays(dir.path, args, url, k);
      assert.equal(state(ours), state(theirs), `clone ${args.join(' ')}`);
      git(ours, ['fsck', '--full']);
    }

    // Fetches into a shallow clone with a work tree's layout, after the server moved on.
    const base = join(dir.path, 'base');
    git(dir.path, ['clone', '-q', '-n', '--depth=1', url, base]);
    const tree = git(src, ['mktree'], '').toString().trim();
    git(src, ['update-ref', 'refs/heads/main', git(src, ['commit-tree', tree, '-p', 'main', '-m', 'c9']).toString().trim()]);
    git(src, ['tag', 't9', 'main']);
    for (const args of casesFor(format, [['--deepen=2'], [], ['--depth=3'], ['--unshallow'], ['--shallow-exclude=t2']])) {
      const ours = join(dir.path, `fetch-ours-${args.join('')}`);
      const theirs = join(dir.path, `fetch-theirs-${args.join('')}`);
      cpSync(base, ours, { recursive: true });
      cpSync(base, theirs, { recursive: true });
      const r = await runPackwright(ours, ['fetch', ...args], { env: GIT_ENV });
      assert.equal(r.status, 0, r.stderr);
      // git's report (on stderr) word for word.
      const theirRun = spawnGit(['fetch', ...args], { cwd: theirs, env: GIT_ENV });
      assert.equal(theirRun.status, 0);
      assert.equal(r.stderr, theirRun.stderr.toString(), `fetch ${args.join(' ')}: the report`);
      assert.equal(state(join(ours, '.git')), state(join(theirs, '.git')), `fetch ${args.join(' ')}`);
      git(ours, ['fsck', '--full']);
    }

    // From a shallow server: refs whose history needs its boundary are left alone, unless
    // --update-shallow takes the boundary in (git's update_shallow).
    const shallowServer = join(dir.path, 'shallow-server.git');
    git(dir.path, ['clone', '-q', '--bare', '--depth=2', url, shallowServer]);
    git(shallowServer, ['update-ref', 'refs/heads/orphan', git(shallowServer, ['commit-tree', tree, '-m', 'orphan']).toString().trim()]);
    for (const args of [[], ['--update-shallow']]) {
      const ours = join(dir.path, `from-shallow-ours${args.join('')}`);
      const theirs = join(dir.path, `from-shallow-theirs${args.join('')}`);
      for (const d of [ours, theirs]) git(dir.path, ['init', '-q', `--object-format=${format}`, d]);
      const r = await runPackwright(ours, ['fetch', '-q', ...args, `file://${shallowServer}`, 'refs/heads/*:refs/remotes/s/*'], { env: GIT_ENV });
      assert.equal(r.status, 0, r.stderr);
      git(theirs, ['fetch', '-q', ...args, `file://${shallowServer}`, 'refs/heads/*:refs/remotes/s/*']);
      assert.equal(state(join(ours, '.git')), state(join(theirs, '.git')), `fetch from a shallow server ${args.join(' ')}`);
    }

    // git's refusals, in git's words.
    const complete = join(dir.path, 'complete');
    git(dir.path, ['clone', '-q', '-n', url, complete]);
    const refused = await runPackwright(complete, ['fetch', '--unshallow']);
    assert.notEqual(refused.status, 0);
    assert.match(refused.stderr, /--unshallow on a complete repository does not make sense/);
    assert.match((await runPackwright(complete, ['fetch', '--depth=0'])).stderr, /depth 0 is not a positive number/);
    assert.match((await runPackwright(complete, ['fetch', '--depth=1', '--deepen=1'])).stderr, /--deepen and --depth are mutually exclusive/);
    assert.match((await runPackwright(dir.path, ['clone', '--bare', '--depth', '1', '--branch', 'nope', url, 'nope.git'])).stderr, /Remote branch nope not found in upstream origin/);
    assert.equal(existsSync(join(dir.path, 'nope.git')), false, 'a failed clone leaves nothing');
  });
}
