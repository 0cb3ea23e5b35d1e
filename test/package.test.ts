import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { name: string; exports: Record<string, unknown>; bin: Record<string, string> };

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
