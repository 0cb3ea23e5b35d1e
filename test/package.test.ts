import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
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
  for (const name of ['ObjectStore', 'forEachObject', 'indexPack', 'verifyPack', 'resolveRevision', 'isPackwrightError']) {
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
