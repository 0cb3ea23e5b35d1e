import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';

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
