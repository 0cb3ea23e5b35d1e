import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { GIT_ENV, git, makeHistoryRepo, repackedClone, runPackwright, tempDir } from './helpers/git.js';
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
  // The selection's counts while the bitmap is built, then the lookup table's region as it is written.
  assert.deepEqual(got.map((e) => e['event']), ['version', 'start', 'cmd_name', 'data', 'data', 'region_enter', 'region_leave', 'exit', 'atexit']);
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
  // And as many maximal commits (git's bitmap builder's count, which its t5310 checks).
  for (const key of ['num_selected_commits', 'num_maximal_commits']) {
    const value = (list: Record<string, unknown>[]): unknown => list.find((e) => e['key'] === key)?.['value'];
    assert.ok(value(events(theirs)) !== undefined, key);
    assert.equal(value(got), value(events(theirs)), key);
  }
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


test('the bitmap builder\'s counts in the trace are git\'s: first-parent lines that fork below the selected commits meet at a maximal commit, and commits the repository\'s bitmap has are not walked past', async () => {
  using dir = tempDir();
  // 200 commits on main, a side line of 40 from main's 50th, a twig of 3 from the side's 11th:
  // more than 100 commits, so not all are selected, and the fork points are not.
  const commit = (ref: string, mark: number, from: number, t: number): string =>
    `commit ${ref}\nmark :${mark}\ncommitter C <c@example.com> ${1700000000 + t} +0000\ndata 2\nc\n${from > 0 ? `from :${from}\n` : ''}M 100644 inline f${mark % 7}\ndata ${String(mark).length + 1}\n${mark}\n\n`;
  let stream = '';
  for (let i = 1; i <= 200; i++) stream += commit('refs/heads/main', i, i - 1, i * 10);
  for (let i = 0; i < 40; i++) stream += commit('refs/heads/side', 1000 + i, i === 0 ? 50 : 999 + i, 505 + i * 10);
  for (let i = 0; i < 3; i++) stream += commit('refs/heads/twig', 2000 + i, i === 0 ? 1010 : 1999 + i, 905 + i);
  const repo = join(dir.path, 'r.git');
  git(dir.path, ['init', '-q', '--bare', repo]);
  git(repo, ['fast-import', '--quiet'], stream);
  const counts = (path: string): Record<string, unknown> =>
    Object.fromEntries(events(path).filter((e) => e['category'] === 'pack-bitmap-write' && /^num_/.test(String(e['key']))).map((e) => [e['key'], e['value']]));
  const compare = async (name: string): Promise<Record<string, unknown>> => {
    const theirs = join(dir.path, `${name}-git.trace`);
    const copy = join(dir.path, `${name}-copy.git`);
    cpSync(repo, copy, { recursive: true });
    spawnGit(['repack', '-adb'], { cwd: copy, env: { ...GIT_ENV, GIT_TRACE2_EVENT: theirs, GIT_TRACE2_EVENT_NESTING: '10' } });
    const ours = join(dir.path, `${name}-pw.trace`);
    const run = await runPackwright(repo, ['pack-objects', '--all', '--write-bitmap-index', '-q', join(dir.path, name)], { input: '', env: { ...GIT_ENV, GIT_TRACE2_EVENT: ours } });
    assert.equal(run.status, 0, run.stderr);
    assert.deepEqual(counts(ours), counts(theirs), name);
    return counts(ours);
  };
  const first = await compare('first');
  assert.equal(first['num_selected_commits'], '107');
  assert.equal(first['num_maximal_commits'], '108', 'main and the side line meet at main\'s 50th');
  // With a bitmap in the repository, its commits are reused: nothing is walked past them.
  git(repo, ['repack', '-adb']);
  assert.equal((await compare('again'))['num_maximal_commits'], '0');
});
