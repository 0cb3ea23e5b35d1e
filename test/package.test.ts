import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileEndingIn, git, makeRepo, packwrightProcess, tempDir } from './helpers/git.js';

const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { name: string; version: string; exports: Record<string, unknown>; bin: Record<string, string> };

test('every subpath export of the package resolves and exports something', async () => {
  for (const subpath of Object.keys(pkg.exports)) {
    const specifier = subpath === '.' ? pkg.name : `${pkg.name}/${subpath.slice(2)}`;
    const mod = (await import(specifier)) as Record<string, unknown>;
    assert.ok(Object.keys(mod).length > 0, `${specifier} exports nothing`);
  }
});

test('the main entry has the everyday API', async () => {
  const mod = (await import(pkg.name)) as Record<string, unknown>;
  for (const name of ['Store', 'StoreHandle', 'forEachObject', 'indexPack', 'verifyPack', 'resolveRevision', 'isPackwrightError']) {
    assert.equal(typeof mod[name], 'function', name);
  }
});

test('the bin is the bundled CLI, and it starts', () => {
  const bin = new URL(`../../${pkg.bin['packwright']}`, import.meta.url).pathname;
  assert.ok(readFileSync(bin, 'utf8').startsWith('#!/usr/bin/env node\n'));
  const r = spawnSync(process.execPath, [bin, '--help'], { encoding: 'utf8' });
  assert.equal(r.status, 0);
  assert.match(r.stderr, /^usage: packwright/);
  // Like `git --version`, from package.json.
  const v = spawnSync(process.execPath, [bin, '--version'], { encoding: 'utf8' });
  assert.equal(v.status, 0);
  assert.equal(v.stdout, `packwright version ${pkg.version}\n`);
});

test('one-shot commands that inflate nothing start without loading zlib, streams, crypto or child processes', () => {
  // Each costs milliseconds of a start measured against `node -e 0` (issue 42's start-up line);
  // a static import of one of them anywhere in the bundle brings it back for every command.
  using dir = tempDir();
  const repo = makeRepo(dir.path, 'sha1');
  git(repo, ['repack', '-adq']);
  const bin = new URL(`../../${pkg.bin['packwright']}`, import.meta.url).pathname;
  for (const argv of [['cat-file', '-t', 'HEAD'], ['rev-parse', 'HEAD'], ['show-ref', '--heads']]) {
    // The bin run as `node <bin> <argv>` would run it, reporting at exit which of Node's modules it
    // loaded (the list taken before anything here touches process.stderr, which loads streams).
    const probe = `process.argv.splice(1, 0, ${JSON.stringify(bin)}); process.on('exit', () => { const list = JSON.stringify(process.moduleLoadList); require('node:fs').writeSync(2, list); }); require(${JSON.stringify(bin)});`;
    const r = spawnSync(process.execPath, ['-e', probe, ...argv], { cwd: repo, encoding: 'utf8', env: { ...process.env, PACKWRIGHT_HUGE_PAGES: '0' } });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, git(repo, argv).toString(), argv.join(' '));
    const loaded = JSON.parse(r.stderr) as string[];
    for (const name of ['NativeModule zlib', 'NativeModule stream', 'NativeModule crypto', 'NativeModule child_process']) assert.ok(!loaded.includes(name), `${argv.join(' ')} loaded ${name}`);
  }
});

test('the executable keeps V8\'s young generation at its first size, except for commands that start and exit', () => {
  // Each page of a grown young generation is a fault on first touch (young-generation.ts); a
  // command's peak RSS was 25-40 MB larger without this. The probe churns short-lived arrays with
  // some survivors after the command, which grows the young generation to 32 MiB under V8's defaults.
  using dir = tempDir();
  const repo = makeRepo(dir.path, 'sha1');
  const bin = new URL(`../../${pkg.bin['packwright']}`, import.meta.url).pathname;
  // A ring of 20,000 live arrays (Array#shift on one that long made this take seconds).
  const churn = 'const keep = new Array(20000); for (let i = 0; i < 200000; i++) keep[i % 20000] = new Array(16).fill(i);';
  const size = 'require(\'node:v8\').getHeapSpaceStatistics().find((s) => s.space_name === \'new_space\').space_size';
  const youngAfter = (argv: string[]): number => {
    const probe = `process.argv.splice(1, 0, ${JSON.stringify(bin)}); process.on('exit', () => { ${churn} require('node:fs').writeSync(2, String(${size})); }); require(${JSON.stringify(bin)});`;
    const r = spawnSync(process.execPath, ['-e', probe, ...argv], { cwd: repo, encoding: 'utf8', env: { ...process.env, PACKWRIGHT_HUGE_PAGES: '0' } });
    assert.equal(r.status, 0, r.stderr);
    return Number(r.stderr);
  };
  assert.ok(youngAfter(['rev-list', '--objects', '--all']) <= 4 << 20, 'rev-list');
  assert.ok(youngAfter(['cat-file', '--batch-all-objects', '--batch-check']) <= 4 << 20, 'cat-file --batch-all-objects');
  // A one-shot command leaves V8 as it is (node:v8 would load streams), so the churn grows it:
  // the check above can fail.
  assert.ok(youngAfter(['rev-parse', 'HEAD']) > 4 << 20, 'rev-parse');
});

test('the CLI uses only the package\'s entry points, so a library user can do all it does', () => {
  const cliDir = new URL('../../src/cli/', import.meta.url);
  const entryPoints = new Set(Object.keys(pkg.exports).map((s) => (s === '.' ? '../index.js' : `../${s.slice(2)}/index.js`)));
  const offending: string[] = [];
  for (const file of readdirSync(cliDir).filter((f) => f.endsWith('.ts'))) {
    const text = readFileSync(new URL(file, cliDir), 'utf8');
    for (const m of text.matchAll(/(?:^|\n)\s*(?:import|export)[^'"]*?from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g)) {
      const spec = (m[1] ?? m[2]) as string;
      // node: builtins and the CLI's own files are fine; anything else must be an entry point.
      if (spec.startsWith('node:') || spec.startsWith('./')) continue;
      if (!entryPoints.has(spec)) offending.push(`${file}: ${spec}`);
    }
  }
  assert.deepEqual(offending, [], 'imports past the public API');
  // The scan sees imports at all (a broken pattern would pass vacuously).
  assert.match(readFileSync(new URL('cat-file.ts', cliDir), 'utf8'), /from '\.\.\/odb\/index\.js'/);
});

test('the bundled executable starts each of its worker scripts: index-pack, odb stats, fsck and pack-objects on two threads, as git answers', () => {
  using dir = tempDir();
  const repo = makeRepo(dir.path, 'sha1', 8);
  git(repo, ['repack', '-adq']);
  const packDir = join(repo, '.git', 'objects', 'pack');
  const pack = join(packDir, fileEndingIn(packDir, '.pack'));
  // resolve-worker: index-pack resolves on a second thread only when asked (the pack is small).
  const indexed = packwrightProcess(dir.path, ['index-pack', '--threads=2', '-o', join(dir.path, 'pw.idx'), pack]);
  assert.equal(indexed.status, 0, indexed.stderr);
  assert.deepEqual(readFileSync(join(dir.path, 'pw.idx')), readFileSync(pack.replace(/\.pack$/, '.idx')));
  // store-worker: every id looked up again from the worker threads.
  const stats = packwrightProcess(repo, ['odb', 'stats', '--extra-header-lookup', '--threads=2', '--json']);
  assert.equal(stats.status, 0, stats.stderr);
  const objects = git(repo, ['cat-file', '--batch-all-objects', '--batch-check']).toString().trim().split('\n').length;
  assert.equal((JSON.parse(stats.stdout.toString()) as { lookedUp: number }).lookedUp, objects);
  // fsck-worker: the pack checked on two threads, git's (empty) findings.
  const checked = packwrightProcess(repo, ['fsck', '--no-progress', '--threads=2']);
  assert.equal(checked.status, 0, checked.stderr);
  assert.equal(checked.stdout.toString(), git(repo, ['fsck', '--no-progress']).toString());
  // create-worker: new deltas searched on two threads; git index-pack accepts the pack.
  const packed = packwrightProcess(repo, ['pack-objects', '--revs', '--all', '--stdout', '-q', '--no-reuse-delta', '--threads=2'], '');
  assert.equal(packed.status, 0, packed.stderr);
  writeFileSync(join(dir.path, 'pw.pack'), packed.stdout);
  git(dir.path, ['index-pack', '-o', join(dir.path, 'git.idx'), join(dir.path, 'pw.pack')]);
});
