import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { GIT_ENV, makeHistoryRepo, repackedClone, runPackwright, tempDir } from './helpers/git.js';
import { spawnGit } from './helpers/spawn-client.js';

/** The events of a GIT_TRACE2_EVENT file, parsed. */
function events(path: string): Record<string, unknown>[] {
  return readFileSync(path, 'utf8').split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as Record<string, unknown>);
}

test('GIT_TRACE2_EVENT: version, start, cmd_name, exit and atexit around a command, with the regions and data git reports (the same values as git\'s own trace)', async () => {
  using dir = tempDir();
  const source = makeHistoryRepo(dir.path, 'sha1', 120);
  const repo = repackedClone(source, dir.path, 'traced.git', ['-c', 'repack.writeBitmaps=false', 'repack', '-adq']);
  const ours = join(dir.path, 'ours.trace');
  const run = await runPackwright(repo, ['-c', 'pack.writeBitmapLookupTable=true', 'multi-pack-index', 'write', '--bitmap'], { env: { ...GIT_ENV, GIT_TRACE2_EVENT: ours } });
  assert.equal(run.status, 0, run.stderr);
  const got = events(ours);
  // The selection's count while the bitmap is built, then the lookup table's region as it is written.
  assert.deepEqual(got.map((e) => e['event']), ['version', 'start', 'cmd_name', 'data', 'region_enter', 'region_leave', 'exit', 'atexit']);
  const sid = got[0]?.['sid'];
  assert.ok(typeof sid === 'string' && got.every((e) => e['sid'] === sid && e['thread'] === 'main'));
  assert.deepEqual(got[1]?.['argv'], ['packwright', '-c', 'pack.writeBitmapLookupTable=true', 'multi-pack-index', 'write', '--bitmap']);
  assert.equal(got[2]?.['name'], 'multi-pack-index');
  assert.ok(got.some((e) => e['event'] === 'region_enter' && e['category'] === 'pack-bitmap-write' && e['label'] === 'writing_lookup_table'));
  assert.equal(got.at(-2)?.['code'], 0);
  // git's own trace of the same write names as many selected commits.
  const theirs = join(dir.path, 'theirs.trace');
  const copy = repackedClone(source, dir.path, 'copy.git', ['-c', 'repack.writeBitmaps=false', 'repack', '-adq']);
  // git reports it three regions deep: past the default nesting.
  spawnGit(['multi-pack-index', 'write', '--bitmap'], { cwd: copy, env: { ...GIT_ENV, GIT_TRACE2_EVENT: theirs, GIT_TRACE2_EVENT_NESTING: '10' } });
  const selected = (list: Record<string, unknown>[]): unknown => list.find((e) => e['key'] === 'num_selected_commits')?.['value'];
  assert.ok(selected(events(theirs)) !== undefined);
  assert.equal(selected(got), selected(events(theirs)));
  // rev-list reading the bitmap says where the order came from, as git's does.
  const revList = join(dir.path, 'rev-list.trace');
  await runPackwright(repo, ['rev-list', '--count', '--all', '--use-bitmap-index'], { env: { ...GIT_ENV, GIT_TRACE2_EVENT: revList } });
  assert.match(readFileSync(revList, 'utf8'), /"category":"load_midx_revindex","key":"source","value":"midx"/);
  // A failing command's exit code; the perf target into a directory, a file per process.
  const perfDir = join(dir.path, 'perf');
  mkdirSync(perfDir);
  const failed = await runPackwright(repo, ['rev-list', 'no-such-rev'], { env: { ...GIT_ENV, GIT_TRACE2_PERF: perfDir } });
  assert.equal(failed.status, 128);
  const [perfFile] = readdirSync(perfDir);
  assert.ok(perfFile !== undefined);
  const perf = readFileSync(join(perfDir, perfFile), 'utf8');
  assert.match(perf, /\| start +\|.*\| packwright rev-list no-such-rev\n/);
  assert.match(perf, /\| exit +\|.*\| code:128\n/);
  // Nothing asked: nothing written.
  const quiet = join(dir.path, 'quiet.trace');
  await runPackwright(repo, ['rev-list', '--count', '--all'], { env: { ...GIT_ENV } });
  assert.ok(!existsSync(quiet));
});

