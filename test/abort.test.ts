import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { fileEndingIn, git, makeRepo, tempDir } from './helpers/git.js';
import { Repository } from '../src/repo/index.js';
import { indexPack, verifyPack } from '../src/resolve/index.js';
import { unpackObjects } from '../src/unpack/index.js';
import { createPack } from '../src/create/index.js';
import { walkObjectsSliced } from '../src/walk/walk-objects.js';
import { fsck } from '../src/fsck/index.js';
import { forEachObjectAsync, odbStats } from '../src/odb/index.js';
import { RevArgs } from '../src/walk/rev-args.js';
import { PackwrightError } from '../src/errors/index.js';

// One abort contract for the whole library: whichever entry point an AbortSignal is given to, its
// abort ends the call with a PackwrightError ABORTED whose cause is the signal's reason (never the
// reason itself, never another code), and with nothing left behind.
test('every entry point that takes a signal fails with ABORTED carrying the reason as its cause', async () => {
  using dir = tempDir();
  const repo = makeRepo(dir.path, 'sha1', 6);
  git(repo, ['repack', '-adq']);
  const packDir = join(repo, '.git', 'objects', 'pack');
  const packPath = join(packDir, fileEndingIn(packDir, '.pack'));
  const idxPath = packPath.replace(/\.pack$/, '.idx');
  const pack = readFileSync(packPath);
  const r = Repository.open(repo);
  try {
    const ids = git(repo, ['rev-list', '--objects', '--all']).toString().trim().split('\n').map((l) => Buffer.from(l.slice(0, 40), 'hex'));
    const tips = new RevArgs(r);
    tips.add('--all');
    const calls: [string, (signal: AbortSignal) => Promise<unknown>][] = [
      ['indexPack (a file)', (signal) => indexPack(packPath, { indexPath: join(dir.path, 'a.idx'), signal })],
      ['indexPack (a stream)', (signal) => indexPack(Readable.from([pack]), { packDir: dir.path, signal })],
      ['verifyPack', (signal) => verifyPack(idxPath, 'sha1', { signal })],
      ['unpackObjects', (signal) => unpackObjects(r.store, pack, { dryRun: true, signal })],
      ['createPack', (signal) => createPack({ objects: r.objects, tips: tips.tips, threads: 1, sink: () => {}, signal })],
      ['walkObjectsSliced', (signal) => walkObjectsSliced(r.objects, tips.tips, { signal })],
      ['fsck', (signal) => fsck(r, { signal })],
      ['odbStats', (signal) => odbStats(r.objects, { signal })],
      ['forEachObjectAsync', (signal) => forEachObjectAsync(r.objects, { signal }, () => {})],
      ['Store.headerMany', (signal) => r.store.headerMany(ids, { signal })],
      ['Store.readMany', async (signal) => { for await (const _ of r.store.readMany(ids, { signal })) { /* drain */ } }],
      ['Store.loadInfoTables', (signal) => r.store.loadInfoTables({ signal })],
    ];
    for (const [name, call] of calls) {
      const reason = new Error(`stop ${name}`);
      const controller = new AbortController();
      controller.abort(reason);
      await assert.rejects(call(controller.signal), (e: unknown) => {
        assert.ok(e instanceof PackwrightError, `${name}: a PackwrightError, not ${String(e)}`);
        assert.equal(e.code, 'ABORTED', `${name}: ${e.message}`);
        assert.equal(e.cause, reason, `${name}: the reason is the cause`);
        return true;
      }, name);
    }
    assert.deepEqual(readdirSync(dir.path).filter((f) => f.startsWith('tmp_') || f.endsWith('.idx') || f.endsWith('.pack')), [], 'nothing left behind');
  } finally {
    r.close();
  }
});

test('an abort midway through index-pack and createPack carries the reason too', async () => {
  using dir = tempDir();
  const repo = makeRepo(dir.path, 'sha1', 12);
  git(repo, ['repack', '-adq']);
  const packDir = join(repo, '.git', 'objects', 'pack');
  const packPath = join(packDir, fileEndingIn(packDir, '.pack'));
  const r = Repository.open(repo);
  try {
    const tips = new RevArgs(r);
    tips.add('--all');
    for (const [name, run] of [
      ['indexPack', (signal: AbortSignal, onProgress: () => void) => indexPack(packPath, { indexPath: join(dir.path, 'b.idx'), threads: 2, sliceMs: 1, onProgress, signal })],
      ['createPack', (signal: AbortSignal, onProgress: () => void) => createPack({ objects: r.objects, tips: tips.tips, threads: 2, reuseDelta: false, sink: () => {}, onProgress, signal })],
    ] as const) {
      const reason = new Error(`midway ${name}`);
      const controller = new AbortController();
      await assert.rejects(run(controller.signal, () => controller.abort(reason)), (e: unknown) => {
        assert.ok(e instanceof PackwrightError && e.code === 'ABORTED', `${name}: ${String(e)}`);
        assert.equal(e.cause, reason, name);
        return true;
      });
    }
  } finally {
    r.close();
  }
});
