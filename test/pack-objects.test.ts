import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, readFileSync, readdirSync, statSync, symlinkSync, utimesSync, writeFileSync, openSync, readSync, writeSync, closeSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { casesFor, CLI, git, makeHistoryRepo, packwright, packwrightFails, runPackwright, tempDir, type Format, fileEndingIn } from './helpers/git.js';
import { spawnGit, execGit } from './helpers/spawn-client.js';
import { Repository } from '../src/repo/index.js';
import { RevArgs } from '../src/walk/index.js';
import { createPack } from '../src/create/index.js';
import { indexPack } from '../src/resolve/index.js';
import { walkObjects } from '../src/walk/index.js';
import { readMtimes } from '../src/idx/index.js';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { applyDelta, createDelta, DeltaIndex } from '../src/delta/index.js';
import { markPreferredBases } from '../src/create/preferred-bases.js';
import { Flag, ObjectTable, nameHash } from '../src/walk/object-table.js';
import fc from 'fast-check';
import { seededRandom } from './helpers/random.js';
import { indexIds } from './helpers/index-ids.js';

const FORMATS: Format[] = ['sha1', 'sha256'];


/** The ids of a pack, sorted, from the index `git index-pack` writes for it (having accepted it). */
function packIds(dir: string, pack: Buffer, format: Format): string[] {
  // In a repository of the format, which index-pack takes its hash from.
  const checks = checkRepo(dir, format);
  const path = join(checks, `check-${Math.random().toString(36).slice(2)}.pack`);
  writeFileSync(path, pack);
  git(checks, ['index-pack', path]);
  return indexIds(path.replace(/\.pack$/, '.idx'), format);
}

function checkRepo(dir: string, format: Format): string {
  const at = join(dir, `checks-${format}.git`);
  if (!existsSync(at)) git(dir, ['init', '-q', '--bare', `--object-format=${format}`, at]);
  return at;
}

/**
 * A fast-import commit `n` (mark n + 1, its own file f<n>, one second after commit n - 1) on
 * `ref`, from commit `from` when given: the small histories of the unreachable and cruft tests.
 */
function fastImportCommit(ref: string, n: number, from?: number): string {
  return `commit ${ref}\nmark :${n + 1}\ncommitter A <a@example.com> ${1700000000 + n} +0000\ndata 3\nc${n}\n${from !== undefined ? `from :${from + 1}\n` : ''}M 100644 inline f${n}\ndata 6\nblob${n}\n\n`;
}

test('pack-objects --threads=2 searches over 2,000 candidates on two threads that take each other\'s tails: a pack git accepts, whole, within --depth, as many deltas as one thread finds', async () => {
  using tmp = tempDir();
  const repo = join(tmp.path, 'many');
  git(tmp.path, ['init', '-q', repo]);
  // 300 files of ~2 KB, each changed a little in 8 commits: 2,400 blobs, deltas along each path.
  const random = seededRandom(41);
  const lines = Array.from({ length: 300 }, () => Array.from({ length: 40 }, () => random().toString(36).slice(2)));
  let script = '';
  for (let c = 0; c < 8; c++) {
    script += `commit refs/heads/main\ncommitter A <a@example.com> ${1700000000 + c} +0000\ndata 2\nc\n`;
    for (let f = 0; f < 300; f++) {
      (lines[f] as string[])[Math.floor(random() * 40)] = random().toString(36).slice(2);
      const text = `${(lines[f] as string[]).join('\n')}\n`;
      script += `M 100644 inline d${f % 7}/f${f}.txt\ndata ${Buffer.byteLength(text)}\n${text}\n`;
    }
  }
  git(repo, ['fast-import', '--quiet'], script);
  const want = revListIds(repo, ['--all']);
  const deltas = (pack: Buffer): number => {
    const path = join(checkRepo(tmp.path, 'sha1'), `t-${Math.random().toString(36).slice(2)}.pack`);
    writeFileSync(path, pack);
    git(checkRepo(tmp.path, 'sha1'), ['index-pack', path]);
    assert.deepEqual(indexIds(path.replace(/\.pack$/, '.idx'), 'sha1'), want);
    const verify = git(checkRepo(tmp.path, 'sha1'), ['verify-pack', '-v', path.replace(/\.pack$/, '.idx')]).toString();
    assert.ok(!/chain length = (1[1-9]|[2-9]\d)/.test(verify), 'chains within --depth=10');
    return verify.split('\n').filter((l) => /^[0-9a-f]{40} blob +\d+ \d+ \d+ \d+ [0-9a-f]{40}$/.test(l)).length;
  };
  const args = ['pack-objects', '--revs', '--all', '--stdout', '-q', '--no-reuse-delta', '--depth=10'];
  const one = deltas(await packwright(repo, [...args, '--threads=1'], ''));
  const two = deltas(await packwright(repo, [...args, '--threads=2'], ''));
  assert.ok(one > 2000, `one thread: ${one} deltas`);
  assert.ok(two > one * 0.95, `two threads: ${two} deltas, one: ${one}`);
});

test('--progress to stdout from a bitmapped repository shows the lines git shows: what pack reuse sends is not counted or compressed, and "Writing objects" only at --all-progress-implied', async () => {
  using tmp = tempDir();
  const repo = makeHistoryRepo(tmp.path, 'sha1');
  git(repo, ['repack', '-adbq']);
  // Each line's title and final counts ("Counting objects (102/102)"), and the Total line; not the speeds.
  const lines = (stderr: string): string[] => stderr.split(/[\r\n]/).filter((l) => l.endsWith(', done.') || l.startsWith('Total ')).map((l) => {
    const m = /^([A-Za-z ]+): (?:100% \((\d+\/\d+)\)|(\d+))/.exec(l);
    return m === null ? l : `${m[1]} (${m[2] ?? m[3]})`;
  });
  for (const extra of [[], ['--all-progress-implied']]) {
    const args = ['pack-objects', '--revs', '--stdout', '--thin', '--delta-base-offset', '--progress', '--threads=1', ...extra];
    const ours = await runPackwright(repo, args, { input: 'main\n^main~10\n' });
    assert.equal(ours.status, 0, ours.stderr);
    const theirs = lines(spawnGit(args, { cwd: repo, input: 'main\n^main~10\n' }).stderr.toString());
    assert.ok(theirs.some((l) => /pack-reused [1-9]/.test(l)), theirs.join('\n'));
    assert.deepEqual(lines(ours.stderr), theirs, extra.join(' '));
  }
});

function revListIds(repo: string, revs: string[]): string[] {
  return git(repo, ['rev-list', '--objects', ...revs]).toString().split('\n').filter(Boolean).map((l) => l.slice(0, l.indexOf(' ') < 0 ? l.length : l.indexOf(' '))).sort();
}

for (const format of FORMATS) {
  test(`rev-list --objects matches git line for line (${format})`, async () => {
    using tmp = tempDir();
    const repo = makeHistoryRepo(tmp.path, format);
    const cases = [
      ['--all'],
      ['main'],
      ['main', '^topic'],
      ['unmerged', '^main'],
      ['v0.5..main'],
      ['main', '--not', 'v0.5', 'oct-a'],
      ['--branches'],
      ['--tags'],
      ['--branches=oct*'],
      ['main^{tree}'],
      ['main:src', 'main~4:doc'],
      ['tree-tag', 'blob-tag'],
      ['loose', '^main~10'],
      ['main...topic'],
      ['unmerged...main'],
      ['oct-a...oct-b', '^v0.5'],
      ['loose...'],
    ];
    for (const revs of cases) {
      assert.equal((await packwright(repo, ['rev-list', '--objects', ...revs])).toString(), git(repo, ['rev-list', '--objects', ...revs]).toString(), revs.join(' '));
      assert.equal((await packwright(repo, ['rev-list', ...revs])).toString(), git(repo, ['rev-list', ...revs]).toString(), `commits of ${revs.join(' ')}`);
    }
    // --count, --[no-]object-names (the last one wins) and --end-of-options, as git prints them.
    git(repo, ['update-ref', 'refs/heads/--output=yikes', 'main']);
    for (const args of [['--count', 'main'], ['--count', '--objects', 'v0.5..main'], ['--objects', '--no-object-names', '--all'],
      ['--objects', '--no-object-names', '--object-names', 'main'], ['--end-of-options', '--output=yikes']]) {
      assert.equal((await packwright(repo, ['rev-list', ...args])).toString(), git(repo, ['rev-list', ...args]).toString(), args.join(' '));
    }
    // --header (raw commits, NUL after each) and --max-count in its four spellings, on commits
    // whose messages start and end with blank lines, carry trailing whitespace, lack a final
    // newline or are missing, with a multi-line header, and in Latin-1 (re-encoded, header dropped).
    const tree = git(repo, ['rev-parse', 'main^{tree}']).toString().trim();
    const who = 'author A <a@example.com> 1 +0000\ncommitter A <a@example.com> 1 +0000\n';
    let parent = git(repo, ['rev-parse', 'main']).toString().trim();
    for (const body of [
      Buffer.from('\n\n  \ntitle   \n\n\nbody line\t \n   \n\n'),
      Buffer.from('gpgsig -----BEGIN\n continued\n -----END\n\nno newline at end'),
      Buffer.from(''),
      Buffer.concat([Buffer.from('encoding ISO-8859-1\n\ncaf'), Buffer.from([0xe9]), Buffer.from(' \n')]),
      // Shift_JIS, with two-byte characters before the encoding header (in the author) and after it.
      Buffer.concat([Buffer.from('author '), Buffer.from([0x93, 0xfa, 0x96, 0x7b]), Buffer.from(' <j@example.com> 2 +0900\nencoding Shift_JIS\n\n'), Buffer.from([0x82, 0xa0, 0x82, 0xa2]), Buffer.from('\n')]),
    ]) {
      const text = Buffer.concat([Buffer.from(`tree ${tree}\nparent ${parent}\n${who}`), body]);
      parent = execGit(['hash-object', '-t', 'commit', '-w', '--literally', '--stdin'], { cwd: repo, input: text }).toString().trim();
    }
    for (const args of [['--header', parent], ['--header', '--max-count=3', parent], ['--header', '-n', '2', '--objects', parent],
      ['-n3', parent], ['-4', '--objects', 'main'], ['--max-count=0', 'main'], ['-n', '-1', 'main~3'], ['--header', '-2', 'v0.5..main'],
      // --first-parent: included commits' first parents only; an excluded one still excludes all of its parents.
      ['--first-parent', 'main'], ['--first-parent', '--objects', 'main', '^topic'], ['--first-parent', 'v0.5..main'], ['--first-parent', '-3', '--all'],
      ['--first-parent', 'main', '--not', 'oct-a'],
      // --bisect: the commit halfway (git's find_bisection: merges counted by walking, ties oldest first).
      ['--bisect', 'main'], ['--bisect', '--first-parent', 'main'], ['--bisect', 'main', '^topic'], ['--bisect', '--all'], ['--bisect', 'main', '--not', 'oct-a'],
      ['--bisect', 'main~1..main'], ['--bisect', 'main~2..main'], ['--bisect', 'main~3..main'], ['--bisect', '--objects', 'main~41..main~2'], ['--bisect', 'main..main']]) {
      assert.equal((await packwright(repo, ['rev-list', ...args])).toString('latin1'), git(repo, ['rev-list', ...args]).toString('latin1'), args.join(' '));
    }
  });

  test(`rev-list -- <paths>: history simplified to the commits that change them, trees listed only where they lead, as git (${format})`, async () => {
    using tmp = tempDir();
    const repo = makeHistoryRepo(tmp.path, format);
    // Path limiting does not depend on the hash (casesFor).
    const specs = casesFor(format, [['src'], ['src/lib/x.h'], ['doc', 'Makefile'], ['src/'], ['doc/api/'], ['README/'], ['*.h'], ['src/*'], ['src/[ab].c'], ['s*/lib'],
      ['moved'], ['vendor'], ['vendor/sub'], ['nothing-here'], ['.'], ['./src/../doc']]);
    const revs = [['main'], ['--all'], ['main', '^topic'], ['v0.5..main'], ['--first-parent', 'main'], ['-5', 'main'], ['main', '--not', 'oct-a']];
    for (const spec of specs) {
      for (const rev of revs) {
        // --count prints the length of the commit listing: checked on two ranges, not all seven.
        for (const extra of rev.length === 1 ? [[], ['--objects'], ['--count']] : [[], ['--objects']]) {
          const args = [...extra, ...rev, '--', ...spec];
          assert.equal((await packwright(repo, ['rev-list', ...args])).toString(), git(repo, ['rev-list', ...args]).toString(), args.join(' '));
        }
      }
    }
    // A merge that keeps the second parent's version of a path is followed down that parent only;
    // one that changes the path against both parents is listed.
    const work = join(tmp.path, 'merges');
    git(tmp.path, ['init', '-q', '-b', 'main', `--object-format=${format}`, work]);
    const commitAll = (message: string): void => {
      git(work, ['add', '-A']);
      git(work, ['commit', '-q', '--allow-empty', '-m', message]);
    };
    mkdirSync(join(work, 'dir'));
    writeFileSync(join(work, 'dir', 'f'), 'base\n');
    writeFileSync(join(work, 'other'), 'o\n');
    commitAll('base');
    git(work, ['checkout', '-q', '-b', 'side']);
    writeFileSync(join(work, 'dir', 'f'), 'side\n');
    commitAll('side changes f');
    writeFileSync(join(work, 'other'), 'side other\n');
    commitAll('side changes other');
    git(work, ['checkout', '-q', 'main']);
    writeFileSync(join(work, 'other'), 'main other\n');
    commitAll('main changes other');
    commitAll('empty');
    // dir/f as the side branch had it: the merge is TREESAME to its second parent there.
    git(work, ['merge', '-q', '-X', 'theirs', '--no-edit', 'side']);
    git(work, ['checkout', '-q', '-b', 'third', 'main~1']);
    writeFileSync(join(work, 'dir', 'f'), 'third\n');
    commitAll('third changes f');
    git(work, ['checkout', '-q', 'main']);
    // dir/f unlike either parent's.
    git(work, ['merge', '-q', '--no-commit', '-X', 'ours', 'third']);
    writeFileSync(join(work, 'dir', 'f'), 'both\n');
    commitAll('merge third, f changed');
    for (const args of [['main', '--', 'dir'], ['main', '--', 'other'], ['main', '--', 'dir/f', 'other'], ['--objects', 'main', '--', 'dir'], ['main', '--'],
      ['main', '--', '.'], ['side..main', '--', 'dir'], ['--first-parent', 'main', '--', 'other'], ['main', 'dir'], ['main', 'other', 'dir/f'], ['--objects', 'main', 'dir']]) {
      assert.equal((await packwright(work, ['rev-list', ...args])).toString(), git(work, ['rev-list', ...args]).toString(), args.join(' '));
    }
    // In a subdirectory, paths are taken from there; without `--`, an argument that is neither a
    // revision nor a path, or is both, is git's error.
    const sub = join(work, 'dir');
    assert.equal((await packwright(sub, ['rev-list', 'main', '--', 'f'])).toString(), git(sub, ['rev-list', 'main', '--', 'f']).toString());
    assert.equal((await packwright(sub, ['rev-list', 'main', 'f'])).toString(), git(sub, ['rev-list', 'main', 'f']).toString());
    writeFileSync(join(work, 'main'), 'a file named like the branch\n');
    // --stdin: revisions up to an empty line, paths after a `--` line (git 2.39 refuses other options there).
    for (const input of ['main\n--\ndir\n', 'main\n\n--\ndir\n', 'main\n--\ndir/f\nother\n', 'side\n--\n']) {
      assert.equal((await packwright(work, ['rev-list', '--stdin'], input)).toString(), git(work, ['rev-list', '--stdin'], input).toString(), JSON.stringify(input));
    }
    for (const [cwd, args, input] of [[work, ['main'], ''], [work, ['nosuch'], ''], [work, ['main', 'nosuch'], ''], [work, ['main', 'dir', '--objects'], ''], [work, ['main', '--', '../x'], ''],
      [work, ['main', '--', ''], ''], [work, ['--stdin'], '--not\nmain\n'], [work, ['--stdin'], 'main\n--\ndir\n\n']] as const) {
      const ours = await runPackwright(cwd, ['rev-list', ...args], { input });
      const theirs = spawnGit(['rev-list', ...args], { cwd, input });
      assert.equal(ours.status, theirs.status, args.join(' '));
      assert.equal(ours.stderr.toString().split('\n')[0], theirs.stderr.toString().split('\n')[0], args.join(' '));
    }
  });

  test(`rev-list and pack-objects --indexed-objects: the index's blobs, then its cache tree's valid trees, as git lists them (${format})`, async () => {
    using tmp = tempDir();
    const work = join(tmp.path, 'work');
    git(tmp.path, ['init', '-q', `--object-format=${format}`, work]);
    writeFileSync(join(work, 'one'), 'frotz\n');
    mkdirSync(join(work, 'two', 'deep'), { recursive: true });
    writeFileSync(join(work, 'two', 'three'), 'frotz\n');
    writeFileSync(join(work, 'two', 'deep', 'four'), 'four\n');
    git(work, ['add', '.']);
    git(work, ['commit', '-q', '-m', 'that']);
    // A new file invalidates the root's cache tree; two/ and two/deep/ stay valid.
    writeFileSync(join(work, 'only-in-index'), 'only\n');
    git(work, ['add', 'only-in-index']);
    const cases = [['--objects', '--indexed-objects'], ['--objects', 'HEAD', '--not', '--indexed-objects'], ['--objects', '--all', '--indexed-objects'], ['--indexed-objects', '--objects', '^HEAD']];
    for (const args of cases) assert.equal((await packwright(work, ['rev-list', ...args])).toString(), git(work, ['rev-list', ...args]).toString(), args.join(' '));
    // What git repack passes: the pack holds exactly what rev-list lists.
    const pack = await packwright(work, ['pack-objects', '--all', '--indexed-objects', '--stdout', '-q'], '');
    assert.deepEqual(packIds(tmp.path, pack, format), revListIds(work, ['--all', '--indexed-objects']));
  });

  test(`rev-list and pack-objects --reflog: both sides of every reflog entry, a pruned one warned about once a reflog, as git does (${format})`, async () => {
    using tmp = tempDir();
    const work = join(tmp.path, 'work');
    git(tmp.path, ['init', '-q', '-b', 'main', `--object-format=${format}`, work]);
    const commit = (file: string, text: string, at: number, extra: string[] = []): void => {
      writeFileSync(join(work, file), text);
      git(work, ['add', file]);
      execGit(['commit', '-q', '-m', `${file} ${text.trim()}`, ...extra], { cwd: work, env: { ...process.env, GIT_COMMITTER_DATE: `${1700000000 + at} +0000`, GIT_AUTHOR_DATE: `${1700000000 + at} +0000` } });
    };
    commit('a', 'one\n', 1);
    commit('b', 'two\n', 2);
    // Amended and dropped: the old commits are named by reflogs only.
    commit('b', 'amended\n', 3, ['--amend']);
    git(work, ['checkout', '-q', '-b', 'side']);
    commit('s', 'side\n', 4);
    git(work, ['checkout', '-q', 'main']);
    git(work, ['branch', '-q', '-D', 'side']);
    git(work, ['update-ref', '-m', 'tagged', '--create-reflog', 'refs/tags/v1', 'HEAD~1']);
    for (const args of [['--reflog'], ['--reflog', '--objects'], ['--objects', '--reflog', '--not', '--all'], ['main', '--not', '--reflog'], ['--reflog', '--count']]) {
      assert.equal((await packwright(work, ['rev-list', ...args])).toString(), git(work, ['rev-list', ...args]).toString(), args.join(' '));
    }
    // What git repack passes: the pack holds what rev-list lists.
    const pack = await packwright(work, ['pack-objects', '--all', '--reflog', '--indexed-objects', '--stdout', '-q'], '');
    assert.deepEqual(packIds(tmp.path, pack, format), revListIds(work, ['--all', '--reflog', '--indexed-objects']));
    // An entry naming an object that is gone (twice in one reflog: one warning for it).
    const gone = 'e'.repeat(format === 'sha1' ? 40 : 64);
    const zero = '0'.repeat(gone.length);
    writeFileSync(join(work, '.git', 'logs', 'HEAD'), `${zero} ${gone} A <a@example.com> 1700000009 +0000\tx\n${gone} ${gone} A <a@example.com> 1700000010 +0000\ty\n`, { flag: 'a' });
    const theirs = spawnGit(['rev-list', '--reflog'], { cwd: work });
    const ours = await runPackwright(work, ['rev-list', '--reflog']);
    assert.equal(ours.status, theirs.status);
    assert.equal(ours.stdout.toString(), theirs.stdout.toString());
    assert.equal(ours.stderr.toString(), theirs.stderr.toString());
    assert.match(ours.stderr.toString(), /^warning: reflog of 'HEAD' references pruned commits\n$/);
  });

  test(`pack-objects --revs: git accepts the pack, and it holds what rev-list lists, at 1 and 2 threads and without reuse (${format})`, async () => {
    using tmp = tempDir();
    const repo = makeHistoryRepo(tmp.path, format);
    const want = revListIds(repo, ['--all']);
    for (const flags of [['--threads=1'], ['--threads=2'], ['--no-reuse-delta'], ['--no-reuse-object', '--threads=2'], ['--window=0'], ['--depth=3']]) {
      const pack = await packwright(repo, ['pack-objects', '--revs', '--all', '--stdout', '-q', '--delta-base-offset', ...flags], '');
      assert.deepEqual(packIds(tmp.path, pack, format), want, flags.join(' '));
    }
    // Without --delta-base-offset every delta names its base by id (REF_DELTA), as old clients need.
    const refPack = await packwright(repo, ['pack-objects', '--revs', '--stdout', '-q'], 'main\n');
    assert.deepEqual(packIds(tmp.path, refPack, format), revListIds(repo, ['main']));
    const ofsPack = await packwright(repo, ['pack-objects', '--revs', '--stdout', '-q', '--delta-base-offset'], 'main\n');
    assert.ok(refPack.length > ofsPack.length, `REF_DELTA pack (${refPack.length}) larger than OFS_DELTA (${ofsPack.length})`);
    // --depth is a bound git checks with verify-pack's chain histogram.
    const shallowChains = await packwright(repo, ['pack-objects', '--revs', '--all', '--stdout', '-q', '--no-reuse-delta', '--depth=2'], '');
    const path = join(checkRepo(tmp.path, format), 'depth.pack');
    writeFileSync(path, shallowChains);
    git(checkRepo(tmp.path, format), ['index-pack', path]);
    const histogram = git(checkRepo(tmp.path, format), ['verify-pack', '-v', path.replace(/\.pack$/, '.idx')]).toString();
    assert.ok(!/chain length = [3-9]/.test(histogram), histogram);
  });

  test(`pack-objects <base-name> writes .pack and .idx (byte-identical to git index-pack's) and prints the hash (${format})`, async () => {
    using tmp = tempDir();
    const repo = makeHistoryRepo(tmp.path, format);
    const base = join(tmp.path, 'out', 'pack');
    execFileSync('mkdir', ['-p', join(tmp.path, 'out')]);
    const hash = (await packwright(repo, ['pack-objects', '--revs', '-q', '--rev-index', base], 'main\n^v0.5\n')).toString().trim();
    assert.match(hash, format === 'sha1' ? /^[0-9a-f]{40}$/ : /^[0-9a-f]{64}$/);
    const files = readdirSync(join(tmp.path, 'out')).sort();
    assert.deepEqual(files, [`pack-${hash}.idx`, `pack-${hash}.pack`, `pack-${hash}.rev`]);
    git(tmp.path, ['index-pack', `--object-format=${format}`, '--rev-index', '-o', join(tmp.path, 'git.idx'), `${base}-${hash}.pack`]);
    assert.ok(readFileSync(join(tmp.path, 'git.idx')).equals(readFileSync(`${base}-${hash}.idx`)), 'idx bytes');
    assert.ok(readFileSync(join(tmp.path, 'git.rev')).equals(readFileSync(`${base}-${hash}.rev`)), 'rev bytes');
    assert.deepEqual(packIds(tmp.path, readFileSync(`${base}-${hash}.pack`), format), revListIds(repo, ['main', '^v0.5']));
  });

  test(`a --thin pack is completed by git index-pack --fix-thin where the excluded history is (${format})`, async () => {
    using tmp = tempDir();
    const repo = makeHistoryRepo(tmp.path, format);
    const clone = join(tmp.path, 'clone.git');
    git(tmp.path, ['init', '-q', '--bare', `--object-format=${format}`, clone]);
    const old = git(repo, ['rev-parse', 'main~8']).toString().trim();
    const oldPack = await packwright(repo, ['pack-objects', '--revs', '--stdout', '-q'], `${old}\n`);
    git(clone, ['index-pack', '--stdin', '--fix-thin'], oldPack);
    const thin = await packwright(repo, ['pack-objects', '--revs', '--stdout', '-q', '--thin', '--delta-base-offset'], `main\n--not\n${old}\n`);
    assert.throws(() => git(clone, ['index-pack', '--stdin'], thin), /unresolved deltas|missing|bad/, 'the pack is thin');
    // --thin reads revisions from stdin without --revs, as git's (its use_internal_rev_list): the same objects.
    const implied = await packwright(repo, ['pack-objects', '--stdout', '-q', '--thin', '--delta-base-offset'], `main\n--not\n${old}\n`);
    const idsOf = (pack: Buffer): string => {
      const dir = join(tmp.path, `ids-${pack.length}`);
      git(tmp.path, ['init', '-q', '--bare', `--object-format=${format}`, dir]);
      git(dir, ['index-pack', '--stdin', '--fix-thin'], Buffer.concat([oldPack]));
      git(dir, ['index-pack', '--stdin', '--fix-thin'], pack);
      return git(dir, ['cat-file', '--batch-all-objects', '--batch-check=%(objectname)']).toString();
    };
    assert.equal(idsOf(implied), idsOf(thin));
    assert.equal(git(repo, ['pack-objects', '--stdout', '-q', '--thin'], `main\n--not\n${old}\n`).length > 0, true, 'git takes the same input');
    git(clone, ['index-pack', '--stdin', '--fix-thin'], thin);
    git(clone, ['update-ref', 'refs/heads/main', git(repo, ['rev-parse', 'main']).toString().trim()]);
    git(clone, ['fsck', '--full', '--no-dangling']);
  });

  test(`a --thin pack deltas new loose objects against the excluded boundary's trees, and --fix-thin completes it (${format})`, async () => {
    using tmp = tempDir();
    const repo = makeHistoryRepo(tmp.path, format);
    // A new version of a file, loose: no stored delta to copy, so only the search can find one.
    const blob = git(repo, ['ls-tree', '-r', 'main']).toString().split('\n').find((l) => l.includes(' blob '))?.split(/\s/)[2] as string;
    const changed = Buffer.concat([git(repo, ['cat-file', 'blob', blob]), Buffer.from('one more line\n')]);
    const newBlob = git(repo, ['hash-object', '-w', '--stdin'], changed).toString().trim();
    const path = git(repo, ['ls-tree', '-r', '--name-only', 'main']).toString().split('\n').find((p) => git(repo, ['rev-parse', `main:${p}`]).toString().trim() === blob) as string;
    const index = join(tmp.path, 'index');
    const env = { GIT_INDEX_FILE: index };
    execGit(['read-tree', 'main'], { cwd: repo, env: { ...process.env, ...env } });
    execGit(['update-index', '--cacheinfo', `100644,${newBlob},${path}`], { cwd: repo, env: { ...process.env, ...env } });
    const tree = execGit(['write-tree'], { cwd: repo, env: { ...process.env, ...env } }).toString().trim();
    const commit = git(repo, ['commit-tree', tree, '-p', 'main', '-m', 'a change']).toString().trim();
    const r = Repository.open(repo);
    const revs = new RevArgs(r);
    revs.add(commit);
    revs.add('^main');
    const chunks: Buffer[] = [];
    const result = await createPack({ objects: r.objects, tips: revs.tips, thin: true, sink: (c) => void chunks.push(c) });
    r.close();
    // New deltas, not stored ones: git's Total line counts them apart from what it reused.
    assert.ok(result.stats.newThinDeltas >= 1 && result.stats.thinDeltas === 0, JSON.stringify(result.stats));
    const clone = join(tmp.path, 'clone.git');
    git(tmp.path, ['clone', '-q', '--bare', '--no-local', repo, clone]);
    git(clone, ['index-pack', '--stdin', '--fix-thin'], Buffer.concat(chunks));
    assert.ok(git(clone, ['cat-file', 'blob', newBlob]).equals(changed));
    git(clone, ['update-ref', 'refs/heads/changed', commit]);
    git(clone, ['fsck', '--full', '--no-dangling']);
  });

  test(`a thin pack from a repository packed whole finds git's deltas against the receiver's objects, and --progress counts what git's "Compressing objects" counts (${format})`, async () => {
    using tmp = tempDir();
    // Its history's objects sent here are stored whole, in one of its packs (makeHistoryRepo).
    const repo = makeHistoryRepo(tmp.path, format);
    const args = ['pack-objects', '--revs', '--stdout', '--thin', '--delta-base-offset', '--progress', '--threads=1'];
    const compressing = (stderr: string): string | undefined => /Compressing objects: 100% \((\d+\/\d+)\)/.exec(stderr.replace(/\r/g, '\n'))?.[1];
    for (const revs of ['main\n^main~10\n', 'main\n^v0.5\n']) {
      const ours = await runPackwright(repo, args, { input: revs });
      assert.equal(ours.status, 0, ours.stderr);
      const theirs = spawnGit(args, { cwd: repo, input: revs });
      const want = compressing(theirs.stderr.toString());
      assert.ok(want !== undefined && want !== '0/0', theirs.stderr.toString());
      assert.equal(compressing(ours.stderr), want, JSON.stringify(revs));
      // Over the last ten commits, the same deltas as git's, new ones among them: pairs with the
      // thin bases are tried even where every object sent is stored whole in one pack (git's
      // try_delta). (Over a longer range the two searches end with a few deltas apart.)
      if (revs === 'main\n^main~10\n') {
        const total = (stderr: string): string | undefined => /Total \d+ \(delta \d+\), reused \d+ \(delta \d+\)/.exec(stderr)?.[0];
        assert.equal(total(ours.stderr), total(theirs.stderr.toString()), JSON.stringify(revs));
      }
    }
  });

  test(`a thin pack's bases come from the boundary trees along the paths that changed, not from what did not change (${format})`, () => {
    using tmp = tempDir();
    const repo = join(tmp.path, 'r');
    git(tmp.path, ['init', '-q', `--object-format=${format}`, repo]);
    for (const [path, text] of [['a/x.txt', 'x\n'], ['b/y.txt', 'y\n'], ['c/d/z.txt', 'z\n'], ['top.txt', 't\n']] as const) {
      mkdirSync(join(repo, path, '..'), { recursive: true });
      writeFileSync(join(repo, path), text);
    }
    git(repo, ['add', '.']);
    git(repo, ['commit', '-q', '-m', 'one']);
    writeFileSync(join(repo, 'c/d/z.txt'), 'z changed\n');
    git(repo, ['commit', '-q', '-am', 'two']);
    const id = (rev: string): Buffer => Buffer.from(git(repo, ['rev-parse', rev]).toString().trim(), 'hex');
    const r = Repository.open(repo);
    try {
      const mark = (along: boolean): ObjectTable => {
        const table = new ObjectTable(r.objects.hashLength);
        markPreferredBases(r.objects, table, [table.intern(id('HEAD~:'))], along ? [table.intern(id('HEAD:'))] : undefined);
        return table;
      };
      const preferred = (table: ObjectTable, rev: string): boolean => { const n = table.find(id(rev)); return n >= 0 && table.is(n, Flag.PREFERRED); };
      const along = mark(true);
      // The old version of the changed file, and the trees down to it, are bases (git's
      // add_pbase_object adds the boundary's entry at the path of each object sent).
      for (const rev of ['HEAD~:', 'HEAD~:c/d/z.txt', 'HEAD~:c/d', 'HEAD~:c']) assert.ok(preferred(along, rev), rev);
      // What did not change is not sent, so needs no base: neither it nor what it holds is marked.
      for (const rev of ['HEAD~:top.txt', 'HEAD~:b', 'HEAD~:b/y.txt', 'HEAD~:a', 'HEAD~:a/x.txt']) assert.ok(!preferred(along, rev), rev);
      // Without the packed trees to follow, all the boundary holds is marked.
      const all = mark(false);
      for (const rev of ['HEAD~:c/d/z.txt', 'HEAD~:b/y.txt', 'HEAD~:a/x.txt']) assert.ok(preferred(all, rev), rev);
      const file = along.find(id('HEAD~:c/d/z.txt'));
      assert.equal(along.nameHashes[file] as number, nameHash(Buffer.from('c/d/z.txt')), 'the path-name hash of where it sits');
    } finally {
      r.close();
    }
  });

  test(`--include-tag adds the tags of packed objects; the library call reports its counts (${format})`, async () => {
    using tmp = tempDir();
    const repo = makeHistoryRepo(tmp.path, format);
    const v05 = git(repo, ['rev-parse', 'v0.5']).toString().trim();
    const withTags = packIds(tmp.path, await packwright(repo, ['pack-objects', '--revs', '--stdout', '-q', '--include-tag'], 'main\n'), format);
    assert.ok(withTags.includes(v05));
    assert.ok(withTags.includes(git(repo, ['rev-parse', 'nested']).toString().trim()), 'a tag of an included tag');
    const r = Repository.open(repo);
    const revs = new RevArgs(r);
    revs.add('--all');
    const chunks: Buffer[] = [];
    const phases = new Set<string>();
    const result = await createPack({ objects: r.objects, tips: revs.tips, sink: (c) => void chunks.push(c), onProgress: (p) => void phases.add(p) });
    const s = result.stats;
    assert.equal(s.objects, revListIds(repo, ['--all']).length);
    assert.equal(s.copied + s.copiedDeltas + s.recompressed + s.newDeltas + s.thinDeltas + s.newThinDeltas, s.objects);
    assert.ok(s.copiedDeltas > 0 && s.recompressed > 0, JSON.stringify(s));
    assert.deepEqual([...phases].sort(), ['compressing', 'counting', 'writing']);
    assert.deepEqual(packIds(tmp.path, Buffer.concat(chunks), format), revListIds(repo, ['--all']));
    // With a delta cache of one byte every new delta is computed again when written: same pack.
    const packWith = async (deltaCacheSize: number): Promise<{ pack: Buffer; newDeltas: number }> => {
      const parts: Buffer[] = [];
      const made = await createPack({ objects: r.objects, tips: revs.tips, reuseDelta: false, deltaCacheSize, sink: (c) => void parts.push(c) });
      return { pack: Buffer.concat(parts), newDeltas: made.stats.newDeltas };
    };
    const cachedAll = await packWith(0);
    const cachedNone = await packWith(1);
    assert.ok(cachedAll.newDeltas > 0 && cachedNone.newDeltas === cachedAll.newDeltas);
    assert.ok(cachedNone.pack.equals(cachedAll.pack), 'recomputed deltas are the same bytes');
    // Counting on worker threads lists the same objects in the same order (so, without new deltas,
    // the same pack bytes), with and without excluded history.
    for (const revList of [['--all'], ['main', 'unmerged', '^v0.5']]) {
      const args = new RevArgs(r);
      for (const a of revList) args.add(a);
      const packOf = async (threads: number, countThreads: number): Promise<Buffer> => {
        const parts: Buffer[] = [];
        await createPack({ objects: r.objects, tips: args.tips, threads, countThreads, window: 0, sink: (c) => void parts.push(c) });
        return Buffer.concat(parts);
      };
      assert.ok((await packOf(1, 1)).equals(await packOf(2, 2)), revList.join(' '));
    }
    r.close();
  });

  test(`--filter: blob:none, blob:limit, tree:<depth>, object:type, sparse:oid and combine: pack-objects and rev-list keep (and rev-list reports omitted) what git's do, tips whatever the filter (${format})`, async () => {
    using tmp = tempDir();
    const repo = makeHistoryRepo(tmp.path, format, 60);
    // Blobs over and under the limits, one a near-copy of another (a small blob may be stored as a
    // delta against a large one that the filter leaves out).
    const big = Array.from({ length: 300 }, (_, i) => `big line ${i}`).join('\n');
    const work = join(tmp.path, `work-${format}`);
    git(tmp.path, ['clone', '-q', repo, work]);
    mkdirSync(join(work, 'deep', 'er', 'est'), { recursive: true });
    writeFileSync(join(work, 'deep', 'big.txt'), big);
    writeFileSync(join(work, 'deep', 'er', 'small.txt'), big.slice(0, 700));
    writeFileSync(join(work, 'deep', 'er', 'est', 'leaf.txt'), 'leaf\n');
    // A sparse-checkout specification for sparse:oid=: a directory, a negation under it, a
    // basename glob anywhere, a CRLF line, an escaped trailing space, a comment.
    writeFileSync(join(work, 'patterns'), '# sparse\ndeep/\n!deep/er/\n*.c\r\n/Makefile\\ \nest/leaf.txt\ndeep/**/l?af.t[x]t\n');
    git(work, ['add', '.']);
    git(work, ['-c', 'user.name=A', '-c', 'user.email=a@example.com', 'commit', '-q', '-m', 'deep']);
    git(work, ['push', '-q', 'origin', 'HEAD:main']);
    git(repo, ['tag', '-a', '-m', 'annotated', 'deep-tag', 'main']);
    // No bitmap: git's bitmap filters keep every tip (a tag's tree too), its walk does not (see filter-objects.ts).
    git(repo, ['-c', 'repack.writeBitmaps=false', 'repack', '-adq', '--window=50']);
    const revSets: [string[], string][] = [[['--all'], ''], [[], 'main\n^v0.5\n'], [[], 'main:deep\nmain:Makefile\nmain:src\nv0.5\n'], [[], 'deep-tag\n']];
    const filters = [
      ['--filter=blob:none'], ['--filter=blob:limit=1k'], ['--filter=blob:limit=0x300'], ['--filter=tree:0'], ['--filter=tree:1'],
      ['--filter=tree:2'], ['--filter=tree:3'], ['--filter=tree:100'], ['--filter=object:type=blob'], ['--filter=object:type=tree'],
      ['--filter=object:type=commit'], ['--filter=object:type=tag'], ['--filter=combine:tree:3+blob:limit=1k'],
      ['--filter=combine:blob%3Anone+object:type=tree'], ['--filter=tree:2', '--filter=object:type=blob'], ['--filter=object:type=blob', '--filter=tree:2'], ['--filter=tree:0', '--no-filter'],
      ['--filter=sparse:oid=main:patterns'], ['--filter=combine:tree:4+sparse:oid=main:patterns'],
    ];
    // The filters do not depend on the hash (casesFor): each is packed with each set of revisions.
    const packFilters = casesFor(format, filters);
    // git's pack indexed in this process: a git index-pack less for each (git 2.39 writes a filtered
    // pack to --stdout only). Our index-pack gives git's idx byte for byte (index-pack.test).
    let indexed = 0;
    const gitPackIds = async (args: string[], input: string): Promise<string[]> => {
      const pack = execGit(['pack-objects', '--revs', '--stdout', '-q', ...args], { cwd: repo, input, maxBuffer: 1 << 30 });
      const indexPath = join(tmp.path, `git-filtered-${indexed++}.idx`);
      await indexPack(pack, { indexPath, objectFormat: format, threads: 1 });
      return indexIds(indexPath, format);
    };
    for (const [revArgs, revs] of revSets) {
      for (const filter of packFilters) {
        const flags = [...revArgs, ...filter];
        const what = `${flags.join(' ')} with ${JSON.stringify(revs)}`;
        const ours = await packwright(repo, ['pack-objects', '--revs', '--stdout', '-q', '--delta-base-offset', ...flags], revs);
        // packIds runs git index-pack without --fix-thin: a delta against a left-out base fails there.
        assert.deepEqual(packIds(tmp.path, ours, format), await gitPackIds(flags, revs), what);
      }
    }
    // rev-list --filter: what it lists and (--filter-print-omitted) leaves out, as git's, sorted
    // ids: where the filter depends on paths, git names an object by the path where it was kept,
    // packwright by the first where it was listed. Left out: tree:<n> combined with another
    // filter, which git judges visit by visit (a blob one sub-filter has seen is not shown when
    // met again nearer the root) where packwright takes each filter's verdict over the whole walk.
    for (const filter of filters.filter((f) => !(f.length > 1 || f[0]?.startsWith('--filter=combine:tree')) || f.includes('--no-filter'))) {
      for (const extra of [[], ['--filter-provided-objects']]) {
        const args = ['rev-list', '--objects', '--filter-print-omitted', ...extra, ...filter, 'main', '^v0.5', 'main:deep'];
        const ids = (out: string): string[] => out.split('\n').filter((l) => l !== '').map((l) => l.split(' ')[0] as string).sort();
        assert.deepEqual(ids((await packwright(repo, args)).toString()), ids(git(repo, args).toString()), args.join(' '));
      }
    }
    // --include-tag adds a tag only when what it points at is in the filtered pack (object:type=blob drops the commits).
    for (const flags of [['--filter=object:type=blob'], ['--filter=tree:0']]) {
      const args = ['--include-tag', ...flags];
      assert.deepEqual(packIds(tmp.path, await packwright(repo, ['pack-objects', '--revs', '--stdout', '-q', ...args], 'main\n'), format), await gitPackIds(args, 'main\n'), args.join(' '));
    }
    // Bad specs: git's messages, its exit status.
    for (const spec of ['tree:x', 'tree:-1', 'blob:limit=5q', 'object:type=bob', 'combine:', 'combine:tree:1+blob none', 'sparse:path=x', 'nope', 'combine:tree:2+', 'sparse:oid=main:nope', 'sparse:oid=main']) {
      const ours = await packwrightFails(repo, ['pack-objects', '--revs', '--stdout', '-q', `--filter=${spec}`], 'main\n');
      const theirs = spawnGit(['pack-objects', '--revs', '--stdout', '-q', `--filter=${spec}`], { cwd: repo, input: 'main\n' });
      assert.equal(ours.status, theirs.status, spec);
      assert.equal(ours.stderr.trim(), theirs.stderr.toString().trim(), spec);
    }
  });

  test(`bad input: unknown revs, missing objects, corrupt stored data (${format})`, async () => {
    using tmp = tempDir();
    const repo = makeHistoryRepo(tmp.path, format);
    const out = join(tmp.path, 'out');
    execFileSync('mkdir', ['-p', out]);
    const bad = await packwrightFails(repo, ['pack-objects', '--revs', '-q', join(out, 'p')], 'no-such-branch\n');
    assert.equal(bad.status, 128);
    assert.match(bad.stderr, /bad revision 'no-such-branch'/);
    assert.deepEqual(readdirSync(out), [], 'nothing written');
    assert.match((await packwrightFails(repo, ['pack-objects', '--revs', '--stdout'], '--bogus\n')).stderr, /not a rev '--bogus'/);
    // A missing blob (the loose one): an error naming it, or left out with --missing=allow-any.
    const blob = git(repo, ['rev-parse', 'loose:loose.txt']).toString().trim();
    rmSync(join(repo, 'objects', blob.slice(0, 2), blob.slice(2)));
    const missing = await packwrightFails(repo, ['pack-objects', '--revs', '-q', join(out, 'p')], 'loose\n');
    // git's pack-objects dies of it as it writes ("unable to read"); its rev-list names it missing.
    assert.equal(missing.stderr, `fatal: unable to read ${blob}\n`);
    assert.match((await packwrightFails(repo, ['rev-list', '--objects', 'loose'])).stderr, new RegExp(`missing blob object '${blob}'`));
    assert.deepEqual(readdirSync(out), []);
    const allowed = packIds(tmp.path, await packwright(repo, ['pack-objects', '--revs', '--stdout', '-q', '--missing=allow-any'], 'loose\n'), format);
    assert.ok(!allowed.includes(blob) && allowed.length === revListIds(repo, ['main']).length + 2);
    assert.equal((await packwright(repo, ['rev-list', '--objects', '--missing=print', 'loose', '^main'])).toString().trim().split('\n').pop(), `?${blob}`);
    // A malformed tree (written with --literally) reached by a commit: a clear error naming it.
    const badTree = git(repo, ['hash-object', '-t', 'tree', '--literally', '-w', '--stdin'], '100644 no-nul-after-this-name').toString().trim();
    const badCommit = git(repo, ['commit-tree', badTree, '-m', 'bad tree']).toString().trim();
    const malformed = await packwrightFails(repo, ['pack-objects', '--revs', '--stdout', '-q'], `${badCommit}\n`);
    assert.equal(malformed.status, 128);
    assert.match(malformed.stderr, new RegExp(`tree ${badTree} is malformed`));
    // A missing tree: git's own words (process_tree), as git's t5317 greps for them.
    const lostTree = git(repo, ['mktree'], `100644 blob ${git(repo, ['hash-object', '-w', '--stdin'], 'in a lost tree\n').toString().trim()}\tf\n`).toString().trim();
    const lostCommit = git(repo, ['commit-tree', lostTree, '-m', 'lost tree']).toString().trim();
    rmSync(join(repo, 'objects', lostTree.slice(0, 2), lostTree.slice(2)));
    const lost = await packwrightFails(repo, ['pack-objects', '--revs', '--stdout', '-q'], `${lostCommit}\n`);
    assert.equal(lost.status, 128);
    assert.equal(lost.stderr, `fatal: bad tree object ${lostTree}\n`);
  });

  test(`a stored entry whose CRC does not match is recompressed from the object; a corrupt object is a clear error (${format})`, async () => {
    using tmp = tempDir();
    const repo = makeHistoryRepo(tmp.path, format);
    git(repo, ['repack', '-adq']);
    const packDir = join(repo, 'objects', 'pack');
    const idx = join(packDir, fileEndingIn(packDir, '.idx'));
    const H = format === 'sha1' ? 20 : 32;
    const n = readFileSync(idx).readUInt32BE(8 + 255 * 4);
    // Flip the first CRC in the index: the entry is fine, its checksum is not.
    const data = readFileSync(idx);
    const crcAt = 8 + 256 * 4 + n * H;
    data[crcAt] = (data[crcAt] as number) ^ 0xff;
    chmodSync(idx, 0o644);
    writeFileSync(idx, data);
    const pack = await packwright(repo, ['pack-objects', '--revs', '--all', '--stdout', '-q'], '');
    assert.deepEqual(packIds(tmp.path, pack, format), revListIds(repo, ['--all']));
    // Now damage the compressed bytes of a whole blob in the pack: nothing can rebuild it.
    const packPath = idx.replace(/\.idx$/, '.pack');
    const big = git(repo, ['ls-tree', '-r', 'main']).toString().split('\n').find((l) => l.includes(' blob '))?.split(/\s/)[2] as string;
    const offset = Number(git(repo, ['show-index'], readFileSync(idx)).toString().split('\n').find((l) => l.includes(big))?.split(' ')[0]);
    const content = git(repo, ['cat-file', 'blob', big]);
    const fd = openSync(packPath, 'r+');
    const b = Buffer.alloc(1);
    readSync(fd, b, 0, 1, offset + 8);
    b[0] = (b[0] as number) ^ 0x55;
    writeSync(fd, b, 0, 1, offset + 8);
    closeSync(fd);
    const failed = await packwrightFails(repo, ['pack-objects', '--revs', '--all', '--stdout', '-q'], '');
    assert.equal(failed.status, 128);
    assert.match(failed.stderr, new RegExp(`object ${big} cannot be read for the pack`));
    // A loose copy of the object (git hash-object -w, with the pack hidden) lets the pack be made.
    execFileSync('mv', [idx, `${idx}.hidden`]);
    git(repo, ['hash-object', '-w', '--stdin'], content);
    execFileSync('mv', [`${idx}.hidden`, idx]);
    const recovered = await packwright(repo, ['pack-objects', '--revs', '--all', '--stdout', '-q'], '');
    assert.deepEqual(packIds(tmp.path, recovered, format), revListIds(repo, ['--all']));
  });

  test(`git clone --no-local and a fetch with packwright as uploadpack.packObjectsHook; fsck passes (${format})`, () => {
    using tmp = tempDir();
    const repo = makeHistoryRepo(tmp.path, format, 300);
    const hook = join(tmp.path, 'hook.sh');
    const log = join(tmp.path, 'hook.log');
    // git runs the hook with "git pack-objects <args>": drop "git", run packwright in its place.
    writeFileSync(hook, `#!/bin/sh\nshift\necho "$@" >> ${log}\nexec "${process.execPath}" "${CLI}" "$@"\n`);
    chmodSync(hook, 0o755);
    const globalConfig = join(tmp.path, 'gitconfig');
    writeFileSync(globalConfig, `[uploadpack]\n\tpackObjectsHook = ${hook}\n`);
    const env = { ...process.env, GIT_CONFIG_GLOBAL: globalConfig, GIT_CONFIG_NOSYSTEM: '1', GIT_COMMITTER_NAME: 'c', GIT_COMMITTER_EMAIL: 'c@x', GIT_AUTHOR_NAME: 'a', GIT_AUTHOR_EMAIL: 'a@x' };
    const run = (cwd: string, args: string[], input?: string): string => execGit(args, { cwd, env, input, stdio: ['pipe', 'pipe', 'pipe'] }).toString();
    const clone = join(tmp.path, 'clone');
    run(tmp.path, ['clone', '-q', '--no-local', '--mirror', repo, clone]);
    assert.ok(existsSync(log), 'the hook ran');
    run(clone, ['fsck', '--full', '--no-dangling']);
    assert.equal(run(clone, ['rev-parse', 'main']), run(repo, ['rev-parse', 'main']));
    // New history upstream, then an incremental fetch (a thin pack against what the clone has).
    const tree = run(repo, ['rev-parse', 'main^{tree}']).trim();
    const blob = run(repo, ['hash-object', '-w', '--stdin'], 'fetched later\n').trim();
    const newTree = run(repo, ['mktree'], run(repo, ['ls-tree', tree]) + `100644 blob ${blob}\tlater.txt\n`).trim();
    const next = run(repo, ['commit-tree', newTree, '-p', 'main', '-m', 'later']).trim();
    run(repo, ['update-ref', 'refs/heads/main', next]);
    const before = readFileSync(log, 'utf8').split('\n').length;
    run(clone, ['fetch', '-q', '--no-write-fetch-head', 'origin', '+refs/heads/*:refs/heads/*']);
    assert.ok(readFileSync(log, 'utf8').split('\n').length > before, 'the fetch used the hook');
    assert.match(readFileSync(log, 'utf8'), /--thin/);
    assert.equal(run(clone, ['rev-parse', 'main']).trim(), next);
    run(clone, ['fsck', '--full', '--no-dangling']);
    // A partial clone: upload-pack passes --filter=blob:none; the clone has commits and trees only.
    run(repo, ['config', 'uploadpack.allowFilter', 'true']);
    const partial = join(tmp.path, 'partial.git');
    run(tmp.path, ['clone', '-q', '--no-local', '--bare', '--filter=blob:none', `file://${repo}`, partial]);
    assert.match(readFileSync(log, 'utf8'), /--filter=blob:none/);
    // The same objects as git's own pack-objects sends (the blob a tag names is sent, as git does).
    const byGit = join(tmp.path, 'partial-by-git.git');
    execGit(['clone', '-q', '--no-local', '--bare', '--filter=blob:none', `file://${repo}`, byGit], { env: { ...env, GIT_CONFIG_GLOBAL: '/dev/null' }, stdio: 'pipe' });
    const objectsOf = (dir: string): string => run(dir, ['cat-file', '--batch-all-objects', '--batch-check=%(objectname) %(objecttype)']);
    assert.equal(objectsOf(partial), objectsOf(byGit));
    assert.ok(objectsOf(partial).split('\n').filter((l) => l.endsWith(' blob')).length < 3, 'blobs left out');
    run(partial, ['fsck', '--no-dangling']);
    // A shallow clone: upload-pack passes --shallow-file and --shallow lines.
    const shallow = join(tmp.path, 'shallow');
    run(tmp.path, ['clone', '-q', '--no-local', '--depth=3', `file://${repo}`, shallow]);
    run(shallow, ['fsck', '--no-dangling']);
    assert.equal(run(shallow, ['rev-list', '--count', 'HEAD']).trim(), '3');
  });
}

test('a walk over most of the store charges its tables against the store ceiling, reads the packs through windows, and gives the charge back when collected', async () => {
  using tmp = tempDir();
  const repo = makeHistoryRepo(tmp.path, 'sha1', 20);
  // More tips than a walk takes to be a small one: the walk covers the store.
  const head = git(repo, ['rev-parse', 'main']).toString().trim();
  git(repo, ['update-ref', '--stdin'], Array.from({ length: 300 }, (_, i) => `create refs/tags/many-${i} ${head}\n`).join(''));
  const r = Repository.open(repo);
  const store = r.objects.store;
  // The indexes are charged when loaded: load them first, so what changes below is the walk's.
  r.objects.preferDenseReads();
  const before = store.windows.budget;
  let objects = 0;
  for (const p of r.objects.packs()) objects += p.tryIndex()?.count ?? 0;
  const revs = new RevArgs(r);
  revs.add('--all');
  let walked: ReturnType<typeof walkObjects> | undefined = walkObjects(r.objects, revs.tips);
  const listed = walked.order.length;
  const during = store.windows.budget;
  assert.ok(before - during >= objects * 16, `windows ${before} -> ${during} for ${objects} objects`);
  // It read scattered trees and commits through recycled windows, not each pack whole.
  for (const p of r.objects.packs()) assert.equal(p.open().file.wholeBytes(), undefined);
  assert.equal(listed, git(repo, ['rev-list', '--objects', '--all']).toString().trim().split('\n').length, 'every object listed, as git lists them');
  walked = undefined;
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  // Finalizers run some time after a collection: try for up to ~4 s on a loaded machine.
  for (let i = 0; i < 200 && store.windows.budget !== before; i++) {
    gc();
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  assert.equal(store.windows.budget, before, 'given back');
  r.close();
});

test('createPack stops with ABORTED when its signal fires, at 1 and 2 threads, and leaves no file behind', async () => {
  using tmp = tempDir();
  const repo = makeHistoryRepo(tmp.path, 'sha1');
  const r = Repository.open(repo);
  const revs = new RevArgs(r);
  revs.add('--all');
  for (const threads of [1, 2]) {
    for (const phase of ['counting', 'compressing', 'writing']) {
      const controller = new AbortController();
      const out = join(tmp.path, `out-${threads}-${phase}`);
      execFileSync('mkdir', ['-p', out]);
      await assert.rejects(
        createPack({
          objects: r.objects, tips: revs.tips, threads, reuseDelta: false, packBase: join(out, 'pack'),
          onProgress: (p) => { if (p === phase) controller.abort(); },
          signal: controller.signal,
        }),
        (e: Error & { code?: string }) => e.code === 'ABORTED',
        `${phase} at ${threads} threads`,
      );
      assert.deepEqual(readdirSync(out), [], 'no temporary file left');
    }
  }
  r.close();
});

test('createDelta: applyDelta rebuilds the target from the base, and the delta is small for similar inputs', () => {
  const bytes = fc.uint8Array({ maxLength: 3000 });
  fc.assert(
    fc.property(bytes, fc.array(fc.tuple(fc.nat(3000), fc.nat(200), bytes.map((b) => b.subarray(0, 50))), { maxLength: 8 }), (base, edits) => {
      let target = Buffer.from(base);
      for (const [at, cut, insert] of edits) {
        const p = Math.min(at, target.length);
        target = Buffer.concat([target.subarray(0, p), insert, target.subarray(Math.min(target.length, p + cut))]);
      }
      const delta = createDelta(base, target);
      if (target.length === 0) return assert.equal(delta, undefined);
      assert.ok(delta !== undefined);
      const out = Buffer.alloc(target.length + 1);
      assert.equal(applyDelta(base, 0, base.length, delta, 0, delta.length, out, 0), target.length);
      assert.ok(out.subarray(0, target.length).equals(target));
    }),
    { numRuns: 300 },
  );
  // Long runs: copies longer than 64 KiB are split, repeated blocks stay cheap.
  const base = Buffer.alloc(300_000, 'abcdefghijklmnopqrstuvwxyz0123456789');
  const target = Buffer.concat([Buffer.from('head'), base, Buffer.from('tail')]);
  const index = new DeltaIndex(base);
  const delta = index.createDelta(target) as Buffer;
  assert.ok(delta.length < 100, `delta of ${delta.length} bytes`);
  const out = Buffer.alloc(target.length + 1);
  applyDelta(base, 0, base.length, delta, 0, delta.length, out, 0);
  assert.ok(out.subarray(0, target.length).equals(target));
  assert.equal(index.createDelta(Buffer.from(Array.from({ length: 4000 }, (_, i) => i & 0xff)), 100), undefined, 'over the size limit');
});

test('createDelta: long copies end exactly where the bytes first differ, wherever that falls in a compared chunk', () => {
  // Random bytes with a few single-byte changes: each copy runs through the doubling chunks and
  // ends at a change, at any offset in a chunk; the delta is then a handful of copies and literals.
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 2 ** 31 - 1 }), fc.integer({ min: 200, max: 300_000 }), fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 1, maxLength: 6 }), (seed, size, cuts) => {
      let s = seed;
      const base = Buffer.alloc(size);
      for (let i = 0; i < size; i++) {
        s = (Math.imul(s, 1103515245) + 12345) >>> 0;
        base[i] = s >>> 24;
      }
      const target = Buffer.from(base);
      for (const c of cuts) {
        const at = Math.min(size - 1, Math.floor(c * size));
        target[at] = (target[at] as number) ^ 0x5a;
      }
      const delta = new DeltaIndex(base).createDelta(target) as Buffer;
      const out = Buffer.alloc(target.length + 1);
      assert.equal(applyDelta(base, 0, base.length, delta, 0, delta.length, out, 0), target.length);
      assert.ok(out.subarray(0, target.length).equals(target));
      // Each change costs a literal run of at most a block and a copy instruction or two.
      assert.ok(delta.length <= 16 + cuts.length * 48 + 8 * Math.ceil(size / 0x10000), `delta of ${delta.length} bytes for ${cuts.length} changes in ${size}`);
    }),
    { numRuns: 60 },
  );
});

test('--max-pack-size and pack.packSizeLimit split the pack as git does: the same number of packs, no delta across them', async () => {
  using dir = tempDir();
  const repo = join(dir.path, 'repo');
  git(dir.path, ['init', '-q', repo]);
  // Incompressible blobs of ~300 KB, and small edits of them (deltas), in a few commits.
  let seed = 3;
  const bytes = (n: number): Buffer => {
    const b = Buffer.alloc(n);
    for (let i = 0; i < n; i++) {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      b[i] = seed >>> 24;
    }
    return b;
  };
  const blobs = Array.from({ length: 6 }, () => bytes(300_000));
  for (let c = 0; c < 3; c++) {
    blobs.forEach((b, i) => {
      b[c * 1000 + i] = (b[c * 1000 + i] as number) ^ 0xff;
      writeFileSync(join(repo, `blob-${i}.bin`), b);
    });
    git(repo, ['add', '.']);
    git(repo, ['commit', '-q', '-m', `c${c}`]);
  }
  git(repo, ['repack', '-adq']);
  const list = git(repo, ['rev-list', '--objects', '--all']);
  const packsOf = (prefix: string): string[] => readdirSync(dir.path).filter((f) => f.startsWith(`${prefix}-`) && f.endsWith('.pack')).sort();
  const objectsOf = (prefix: string): string[] => packsOf(prefix).flatMap((f) =>
    git(dir.path, ['show-index'], readFileSync(join(dir.path, f.replace(/\.pack$/, '.idx')))).toString().trim().split('\n').map((l) => l.split(' ')[1] as string)).sort();
  for (const [name, args] of [['flag', ['--max-pack-size=1m']], ['config', ['-c', 'pack.packSizeLimit=1']]] as const) {
    const g = `${dir.path}/git-${name}`;
    const p = `${dir.path}/pw-${name}`;
    const config = args[0] === '-c' ? args.slice(0, 2) : [];
    const flags = args[0] === '-c' ? [] : [...args];
    const gitNames = execGit([...config, 'pack-objects', ...flags, g], { cwd: repo, input: list, stdio: ['pipe', 'pipe', 'pipe'] }).toString().trim().split('\n');
    const r = await runPw(repo, [...config, 'pack-objects', ...flags, p], list);
    assert.equal(r.status, 0, r.stderr);
    const ourNames = r.stdout.trim().split('\n');
    assert.ok(gitNames.length > 1, 'git split the pack');
    assert.equal(ourNames.length, gitNames.length, `${name}: as many packs as git's`);
    assert.deepEqual(packsOf(`pw-${name}`), ourNames.map((h) => `pw-${name}-${h}.pack`).sort(), 'each name printed is a pack written');
    if (config.length > 0) assert.match(r.stderr, /^warning: minimum pack size limit is 1 MiB$/m);
    // Every pack verifies on its own (a delta on a base in another pack would not), and together
    // they hold every object once.
    for (const f of packsOf(`pw-${name}`)) {
      execGit(['verify-pack', join(dir.path, f.replace(/\.pack$/, '.idx'))]);
      assert.ok(readFileSync(join(dir.path, f)).length <= 1 << 20 || git(dir.path, ['show-index'], readFileSync(join(dir.path, f.replace(/\.pack$/, '.idx')))).toString().trim().split('\n').length === 1, `${f} is within the limit or holds one object`);
    }
    assert.deepEqual(objectsOf(`pw-${name}`), objectsOf(`git-${name}`));
  }
  const stdout = await packwrightFails(repo, ['pack-objects', '--stdout', '--max-pack-size=1m'], list);
  assert.match(stdout.stderr, /--max-pack-size cannot be used to build a pack for transfer/);
});

/** A packwright command run in this process; its status and output as text. */
async function runPw(cwd: string, args: string[], input: Buffer): Promise<{ status: number; stdout: string; stderr: string }> {
  const r = await runPackwright(cwd, args, { input });
  return { status: r.status, stdout: r.stdout.toString(), stderr: r.stderr };
}

test('--keep-pack, --honor-pack-keep, --incremental and --local leave out what git leaves out', async () => {
  using dir = tempDir();
  const base = join(dir.path, 'base.git');
  const repo = join(dir.path, 'repo.git');
  git(dir.path, ['init', '-q', '--bare', '-b', 'main', base]);
  git(base, ['fast-import', '--quiet'], 'commit refs/heads/main\ncommitter A <a@example.com> 1700000000 +0000\ndata 2\nc0\nM 100644 inline a\ndata 4\none\n\n');
  git(base, ['repack', '-adq']);
  // The repository borrows base's objects (an alternate) and adds two packs of its own.
  git(dir.path, ['clone', '-q', '--bare', '--shared', base, repo]);
  const packOf = (input: string): string => {
    git(repo, ['fast-import', '--quiet'], input);
    const loose = git(repo, ['rev-list', '--objects', '--all']).toString().split('\n').filter(Boolean).map((l) => l.slice(0, 40));
    const name = git(repo, ['pack-objects', '--incremental', '-q', 'objects/pack/pack'], loose.join('\n') + '\n').toString().trim();
    git(repo, ['prune-packed']);
    return `pack-${name}.pack`;
  };
  const first = packOf('commit refs/heads/main\ncommitter A <a@example.com> 1700000001 +0000\ndata 2\nc1\nfrom refs/heads/main^0\nM 100644 inline b\ndata 4\ntwo\n\n');
  packOf('commit refs/heads/main\ncommitter A <a@example.com> 1700000002 +0000\ndata 2\nc2\nfrom refs/heads/main^0\nM 100644 inline c\ndata 6\nthree\n\n');
  git(repo, ['hash-object', '-w', '--stdin'], 'loose only\n');
  const all = git(repo, ['rev-list', '--objects', '--all']).toString() + git(repo, ['hash-object', '--stdin'], 'loose only\n').toString();
  writeFileSync(join(repo, 'objects', 'pack', first.replace(/\.pack$/, '.keep')), '');
  const idsOf = (pack: Buffer): string[] => packIds(dir.path, pack, 'sha1');
  for (const flags of [[`--keep-pack=${first}`], ['--honor-pack-keep'], ['--incremental'], ['--local'], ['--local', `--keep-pack=${first}`], ['--keep-pack=pack-nothing.pack']]) {
    const ours = await packwright(repo, ['pack-objects', '--stdout', '-q', ...flags], all);
    const theirs = execGit(['pack-objects', '--stdout', '-q', ...flags], { cwd: repo, input: all });
    assert.deepEqual(idsOf(ours), idsOf(theirs), flags.join(' '));
  }
  // --non-empty with nothing left to pack (every object listed is in a pack): no bytes and no
  // file, as git (git repack passes it).
  const packed = git(repo, ['rev-list', '--objects', '--all']).toString();
  for (const out of [['--stdout'], [join(dir.path, 'empty')]]) {
    const ours = await packwright(repo, ['pack-objects', '--non-empty', '--incremental', '-q', ...out], packed);
    const theirs = execGit(['pack-objects', '--non-empty', '--incremental', '-q', ...out], { cwd: repo, input: packed });
    assert.equal(ours.length, 0);
    assert.equal(theirs.length, 0);
  }
  assert.deepEqual(readdirSync(dir.path).filter((f) => f.startsWith('empty')), []);
  assert.ok((await packwright(repo, ['pack-objects', '--incremental', '-q', '--stdout'], packed)).length > 0, 'without --non-empty: an empty pack');
});

test('--window-memory: the oldest objects leave the window once it holds more bytes, down to one, as in git\'s find_deltas', async () => {
  const { searchSegment } = await import('../src/create/delta-window.js');
  const text = (seed: number): Buffer => Buffer.from(Array.from({ length: 80 }, (_, i) => `line ${i} of ${seed}\n`).join(''));
  const a = text(1);
  // c is a with one line changed; b is unrelated: only a makes c a good delta.
  const c = Buffer.from(a.toString().replace('line 40 of 1', 'line 40 of X'));
  const b = text(2);
  const data = [a, b, c];
  const segment = (windowMemory: number) => ({
    types: new Uint8Array([3, 3, 3]), sizes: Float64Array.from(data.map((d) => d.length)), storedWhole: new Uint8Array(3), packs: new Int32Array([-1, -1, -1]),
    heights: new Uint16Array(3), window: 10, windowMemory, warm: 0, baseOnly: new Uint8Array(3), maxDepth: 50, hashLength: 20, compression: -1,
  });
  const run = (windowMemory: number) => searchSegment(segment(windowMemory), (i) => data[i] as Buffer, () => false);
  const unlimited = run(0);
  assert.deepEqual([...unlimited.targets], [2]);
  assert.deepEqual([...unlimited.bases], [0], 'c is a delta of a');
  // Room for about two objects and an index: a has left the window by the time c is tried.
  const tight = run(a.length + b.length);
  assert.ok(![...tight.bases].includes(0), 'a is gone from the window');
  // A limit under one object still tries the object just before.
  const tiny = run(1);
  assert.ok(tiny.targets.every((t, i) => tiny.bases[i] === t - 1));
});

for (const format of FORMATS) {
  test(`--unpack-unreachable, --keep-unreachable and --pack-loose-unreachable do what git's do, as repack -A and -k ask (${format})`, async () => {
    using dir = tempDir();
    const origin = join(dir.path, 'origin.git');
    git(dir.path, ['init', '-q', '--bare', '-b', 'main', `--object-format=${format}`, origin]);
    git(origin, ['fast-import', '--quiet'], fastImportCommit('refs/heads/main', 0) + fastImportCommit('refs/heads/main', 1, 0) + fastImportCommit('refs/heads/side', 2, 1) + fastImportCommit('refs/heads/gone', 3, 1));
    git(origin, ['repack', '-adq']);
    // A pack with a .keep holding an object that is unreachable too: it is never loosened.
    const keptBlob = git(origin, ['hash-object', '-w', '--stdin'], 'kept and unreachable\n').toString().trim();
    const kept = git(origin, ['pack-objects', '-q', 'objects/pack/pack'], `${keptBlob}\n`).toString().trim();
    writeFileSync(join(origin, 'objects', 'pack', `pack-${kept}.keep`), '');
    git(origin, ['prune-packed']);
    // side and gone become unreachable (no reflogs in a bare repository), gone's objects in an old pack.
    git(origin, ['update-ref', '-d', 'refs/heads/side']);
    git(origin, ['update-ref', '-d', 'refs/heads/gone']);
    const old = (Date.now() / 1000) - 400 * 86400;
    for (const f of readdirSync(join(origin, 'objects', 'pack'))) if (f.endsWith('.pack')) utimesSync(join(origin, 'objects', 'pack', f), old, old);
    // A loose unreachable blob, and a recent loose tree that names gone's blob (so that one is kept).
    git(origin, ['hash-object', '-w', '--stdin'], 'loose and unreachable\n');
    const goneFile = git(origin, ['hash-object', '--stdin'], 'blob3\n').toString().trim();
    git(origin, ['mktree'], `100644 blob ${goneFile}\tkeepme\n`);

    const looseFiles = (repo: string): string[] => readdirSync(join(repo, 'objects')).filter((d) => /^[0-9a-f]{2}$/.test(d))
      .flatMap((d) => readdirSync(join(repo, 'objects', d)).map((f) => `${d}${f} ${Math.floor(statSync(join(repo, 'objects', d, f)).mtimeMs / 1000) === Math.floor(old) ? 'old' : 'new'}`)).sort();
    const packedIds = (repo: string, prefix: string): string[] => readdirSync(join(repo, 'objects', 'pack')).filter((f) => f.startsWith(`${prefix}-`) && f.endsWith('.idx'))
      .flatMap((f) => git(repo, ['show-index', `--object-format=${format}`], readFileSync(join(repo, 'objects', 'pack', f))).toString().trim().split('\n').map((l) => l.split(' ')[1] as string)).sort();
    const cases: string[][] = [
      ['--unpack-unreachable'],
      ['--unpack-unreachable=1.year.ago'],
      ['--unpack-unreachable=never'],
      ['--unpack-unreachable=1.year.ago', '--honor-pack-keep', `--keep-pack=pack-${kept}.pack`],
      ['--keep-unreachable'],
      ['--keep-unreachable', '--pack-loose-unreachable'],
      ['--pack-loose-unreachable'],
    ];
    const loose: string[][] = [];
    const packed: string[][] = [];
    for (const [i, flags] of cases.entries()) {
      const g = join(dir.path, `git-${i}.git`);
      const p = join(dir.path, `pw-${i}.git`);
      cpSync(origin, g, { recursive: true, preserveTimestamps: true });
      cpSync(origin, p, { recursive: true, preserveTimestamps: true });
      const args = ['pack-objects', '--all', '--reflog', '--indexed-objects', '--non-empty', '-q', ...flags, 'objects/pack/new'];
      const gitOut = git(g, args, '').toString();
      const ours = await runPw(p, args, Buffer.alloc(0));
      assert.equal(ours.status, 0, `${flags.join(' ')}: ${ours.stderr}`);
      assert.equal(ours.stdout.length, gitOut.length, `${flags.join(' ')}: one pack name printed`);
      assert.deepEqual(packedIds(p, 'new'), packedIds(g, 'new'), `${flags.join(' ')}: the objects packed`);
      assert.deepEqual(looseFiles(p), looseFiles(g), `${flags.join(' ')}: the loose objects and their times`);
      execGit(['verify-pack', join(p, 'objects', 'pack', `new-${ours.stdout.trim()}.idx`)], { cwd: p });
      loose.push(looseFiles(p));
      packed.push(packedIds(p, 'new'));
    }
    // The cases differ where they should: side's and gone's objects loosened with the pack's
    // time, gone's old ones dropped past the date but for the blob a recent tree names; the kept
    // blob never loosened; with -k they are packed instead.
    const before = looseFiles(origin);
    assert.equal((loose[0] as string[]).length, before.length + 6, 'side and gone: a commit, a tree and a blob each');
    assert.ok((loose[0] as string[]).filter((l) => l.endsWith(' old')).length === 6);
    assert.equal((loose[1] as string[]).length, before.length + 1, 'past the date: only the blob the recent tree names');
    assert.deepEqual(loose[2], loose[0]);
    assert.ok((packed[4] as string[]).length === (packed[0] as string[]).length + 6, '-k packs them');
    assert.ok((packed[5] as string[]).length === (packed[4] as string[]).length + 2, 'and the loose ones with --pack-loose-unreachable');
    const both = await packwrightFails(origin, ['pack-objects', '--all', '--keep-unreachable', '--unpack-unreachable', '--stdout'], '');
    let gitBoth = '';
    try {
      git(origin, ['pack-objects', '--all', '--keep-unreachable', '--unpack-unreachable', '--stdout'], '');
    } catch (e) {
      gitBoth = (e as { stderr: Buffer }).stderr.toString();
    }
    assert.equal(both.stderr, gitBoth);
    assert.equal(both.status, 128);
  });
}

test("--local leaves out an alternate's loose objects; --honor-pack-keep counts only with a local .keep; an alternate that is the objects directory is none (as git)", async () => {
  using dir = tempDir();
  const repo = join(dir.path, 'repo');
  const alt = join(dir.path, 'alt');
  git(dir.path, ['init', '-q', '-b', 'main', repo]);
  const commit = (n: number, from?: number): string =>
    `commit refs/heads/main\nmark :${n + 1}\ncommitter A <a@example.com> ${1700000000 + n} +0000\ndata 3\nc${n}\n${from !== undefined ? `from :${from + 1}\n` : ''}M 100644 inline f${n}\ndata 6\nblob${n}\n\n`;
  git(repo, ['fast-import', '--quiet'], commit(0) + commit(1, 0) + commit(2, 1));
  const objects = join(repo, '.git', 'objects');
  // The alternate: a kept pack with c0's objects, and c1's blob as a loose object.
  mkdirSync(join(alt, 'pack'), { recursive: true });
  const c0 = git(repo, ['rev-list', '--objects', 'main~2']).toString();
  const kept = git(repo, ['pack-objects', '-q', join(alt, 'pack', 'pack')], c0).toString().trim();
  writeFileSync(join(alt, 'pack', `pack-${kept}.keep`), '');
  const blob1 = git(repo, ['rev-parse', 'main~1:f1']).toString().trim();
  mkdirSync(join(alt, blob1.slice(0, 2)), { recursive: true });
  cpSync(join(objects, blob1.slice(0, 2), blob1.slice(2)), join(alt, blob1.slice(0, 2), blob1.slice(2)));
  writeFileSync(join(objects, 'info', 'alternates'), `${alt}\n`);
  const run = async (args: string[], prefix: string): Promise<string[]> => {
    const name = (prefix === 'git' ? git(repo, ['pack-objects', '-q', ...args, `${prefix}`], '') : await packwright(repo, ['pack-objects', '-q', ...args, `${prefix}`], '')).toString().trim();
    return git(repo, ['show-index'], readFileSync(join(repo, `${prefix}-${name}.idx`))).toString().trim().split('\n').map((l) => l.split(' ')[1] as string).sort();
  };
  const cases: string[][] = [['--local'], ['--honor-pack-keep'], ['--local', '--honor-pack-keep']];
  for (const flags of cases) {
    const args = ['--all', '--reflog', '--indexed-objects', ...flags];
    assert.deepEqual(await run(args, 'pw'), await run(args, 'git'), flags.join(' '));
  }
  // A local kept pack makes --honor-pack-keep count, the alternate's kept pack included.
  const local = git(repo, ['pack-objects', '-q', join(objects, 'pack', 'pack')], git(repo, ['rev-list', '--objects', 'main', '^main~1']).toString()).toString().trim();
  writeFileSync(join(objects, 'pack', `pack-${local}.keep`), '');
  const honored = await run(['--all', '--honor-pack-keep'], 'pw2');
  assert.deepEqual(honored, await run(['--all', '--honor-pack-keep'], 'git2'));
  assert.ok(!honored.includes(git(repo, ['rev-parse', 'main~2']).toString().trim()), "the alternate's kept commit is left out");
  // The objects directory named as its own alternate through a symbolic link: not an alternate.
  rmSync(join(objects, 'pack', `pack-${local}.keep`));
  symlinkSync(objects, join(repo, '.git', 'same'));
  writeFileSync(join(objects, 'info', 'alternates'), `${join(repo, '.git', 'same')}\n`);
  const own = await run(['--all', '--local'], 'pw3');
  assert.deepEqual(own, await run(['--all', '--local'], 'git3'));
  assert.ok(own.length > 0);
});

for (const format of FORMATS) {
  test(`--cruft and --cruft-expiration: the objects and the .mtimes git writes for them (${format})`, async () => {
    using dir = tempDir();
    const origin = join(dir.path, 'origin.git');
    git(dir.path, ['init', '-q', '--bare', '-b', 'main', `--object-format=${format}`, origin]);
    git(origin, ['fast-import', '--quiet'], fastImportCommit('refs/heads/main', 0) + fastImportCommit('refs/heads/main', 1, 0) + fastImportCommit('refs/heads/gone', 2, 1) + fastImportCommit('refs/heads/old', 3, 1));
    git(origin, ['repack', '-adq']);
    const packDir = join(origin, 'objects', 'pack');
    const old = readdirSync(packDir).find((f) => f.endsWith('.pack')) as string;
    git(origin, ['update-ref', '-d', 'refs/heads/gone']);
    git(origin, ['update-ref', '-d', 'refs/heads/old']);
    // The repack's new pack of what is reachable, the old one to be deleted, an unreachable loose blob.
    const fresh = `pack-${git(origin, ['pack-objects', '--all', '-q', join(packDir, 'pack')], '').toString().trim()}.pack`;
    const loose = git(origin, ['hash-object', '-w', '--stdin'], 'loose and unreachable\n').toString().trim();
    const now = Math.floor(Date.now() / 1000);
    utimesSync(join(origin, 'objects', loose.slice(0, 2), loose.slice(2)), now - 100, now - 100);
    utimesSync(join(packDir, old), now - 10 * 86400, now - 10 * 86400);
    const input = `${fresh}\n-${old}\n`;
    const cruftOf = (repo: string, out: string): Map<string, number> => {
      const name = out.trim();
      const idx = join(repo, 'objects', 'pack', `cruft-${name}.idx`);
      const ids = git(repo, ['show-index', `--object-format=${format}`], readFileSync(idx)).toString().trim().split('\n').map((l) => l.split(' ')[1] as string).sort();
      const times = readMtimes(idx.replace(/\.idx$/, '.mtimes'), format, ids.length);
      return new Map(ids.map((id, i) => [id, times[i] as number]));
    };
    const results: Map<string, number>[] = [];
    for (const [i, flags] of [['--cruft'], ['--cruft-expiration=5.days.ago'], ['--cruft-expiration=never'], ['--cruft-expiration=1.minute.ago']].entries()) {
      const g = join(dir.path, `git-${i}.git`);
      const p = join(dir.path, `pw-${i}.git`);
      cpSync(origin, g, { recursive: true, preserveTimestamps: true });
      cpSync(origin, p, { recursive: true, preserveTimestamps: true });
      const args = ['pack-objects', '--honor-pack-keep', '--non-empty', '--max-pack-size=0', '-q', ...flags, 'objects/pack/cruft'];
      const theirs = git(g, args, input).toString();
      const ours = await runPw(p, args, Buffer.from(input));
      assert.equal(ours.status, 0, `${flags.join(' ')}: ${ours.stderr}`);
      if (theirs === '') {
        // Nothing recent enough: --non-empty writes nothing.
        assert.equal(ours.stdout, '', flags.join(' '));
        assert.deepEqual(readdirSync(join(p, 'objects', 'pack')).filter((f) => f.startsWith('cruft-')), []);
        results.push(new Map());
        continue;
      }
      const mine = cruftOf(p, ours.stdout);
      assert.deepEqual([...mine].sort(), [...cruftOf(g, theirs)].sort(), `${flags.join(' ')}: the objects and their times`);
      execGit(['verify-pack', join(p, 'objects', 'pack', `cruft-${ours.stdout.trim()}.idx`)], { cwd: p });
      results.push(mine);
    }
    // The cases differ where they should: all of it, then past the date only the recent loose blob.
    assert.equal(results[0]?.size, 7, 'gone and old: a commit, a tree and a blob each, and the loose blob');
    assert.deepEqual([...(results[1] as Map<string, number>).keys()], [loose]);
    assert.equal(results[2]?.size, 7);
    assert.equal(results[3]?.size, 0, 'past a minute ago: nothing');
    const bad = await packwrightFails(origin, ['pack-objects', '--cruft', '--all', 'objects/pack/x'], '');
    assert.match(bad.stderr, /cannot use internal rev list with --cruft/);
  });
}

test('--stdin-packs [--unpacked]: the objects of the packs named, less those of the ^excluded ones, as git packs them', async () => {
  using dir = tempDir();
  const repo = join(dir.path, 'repo.git');
  git(dir.path, ['init', '-q', '--bare', '-b', 'main', repo]);
  const packs: string[] = [];
  for (let n = 0; n < 3; n++) {
    git(repo, ['fast-import', '--quiet'], `commit refs/heads/main\ncommitter A <a@example.com> ${1700000000 + n} +0000\ndata 3\nc${n}\n${n > 0 ? 'from refs/heads/main^0\n' : ''}M 100644 inline f\ndata 6\nblob${n}\n\n`);
    const all = git(repo, ['rev-list', '--objects', '--all']).toString();
    packs.push(`pack-${git(repo, ['pack-objects', '-q', join(repo, 'objects', 'pack', 'pack')], all).toString().trim()}.pack`);
  }
  git(repo, ['hash-object', '-w', '--stdin'], 'loose\n');
  const ids = (out: Buffer, who: string): string[] => {
    const name = out.toString().trim();
    return git(repo, ['show-index'], readFileSync(join(repo, `${who}-${name}.idx`))).toString().trim().split('\n').map((l) => l.split(' ')[1] as string).sort();
  };
  for (const [input, flags] of [[`${packs[2]}\n^${packs[1]}\n`, []], [`${packs[2]}\n^${packs[0]}\n`, ['--unpacked']], [`${packs[0]}\n${packs[1]}\n`, []]] as const) {
    const args = ['pack-objects', '--stdin-packs', '-q', ...flags];
    const ours = ids(await packwright(repo, [...args, 'pw'], input), 'pw');
    assert.deepEqual(ours, ids(git(repo, [...args, 'git'], input), 'git'), input);
    assert.ok(ours.length > 0);
  }
  assert.match((await packwrightFails(repo, ['pack-objects', '--stdin-packs', '--stdout'], 'pack-nothing.pack\n')).stderr, /could not find pack 'pack-nothing.pack'/);
});

test('--exclude-promisor-objects in a partial clone: rev-list and pack-objects leave out what the promisor remote has, as git', async () => {
  using dir = tempDir();
  const origin = join(dir.path, 'origin');
  git(dir.path, ['init', '-q', '-b', 'main', origin]);
  git(origin, ['fast-import', '--quiet'], [0, 1, 2].map((n) => `commit refs/heads/main\nmark :${n + 1}\ncommitter A <a@example.com> ${1700000000 + n} +0000\ndata 3\nc${n}\n${n > 0 ? `from :${n}\n` : ''}M 100644 inline a\ndata 3\na${n}\nM 100644 inline b\ndata 3\nb${n}\nM 100644 inline d/c\ndata 3\nc${n}\n\n`).join(''));
  git(origin, ['config', 'uploadpack.allowFilter', 'true']);
  const clone = join(dir.path, 'clone');
  git(dir.path, ['clone', '-q', '--filter=blob:none', '--no-local', `file://${origin}`, clone]);
  // A local commit: its tree names blobs the clone never fetched (promisor objects, missing here).
  writeFileSync(join(clone, 'a'), 'local\n');
  git(clone, ['commit', '-qam', 'local']);
  const revList = ['rev-list', '--objects', '--all', '--exclude-promisor-objects'];
  assert.equal((await packwright(clone, revList)).toString(), git(clone, revList).toString());
  const args = ['pack-objects', '--all', '--reflog', '--indexed-objects', '--exclude-promisor-objects', '--stdout', '-q'];
  const ours = packIds(dir.path, await packwright(clone, args, ''), 'sha1');
  assert.deepEqual(ours, packIds(dir.path, git(clone, args, ''), 'sha1'));
  assert.equal(ours.length, 3, 'the local commit, its tree and its new blob');
  // Without the option the unfetched blobs are missing, as for git.
  assert.equal((await packwrightFails(clone, ['pack-objects', '--all', '--stdout', '-q'], '')).status, 128);
});

test('--sparse (pack.useSparse, git\'s default) marks the excluded side down changed paths only: a copied directory is sent, as git sends it; --no-sparse leaves it out', async () => {
  using dir = tempDir();
  const repo = join(dir.path, 'sparse');
  git(dir.path, ['init', '-q', '-b', 'main', repo]);
  for (const i of [1, 2, 3]) for (const j of [1, 2, 3]) {
    mkdirSync(join(repo, `f${i}`, `f${j}`), { recursive: true });
    writeFileSync(join(repo, `f${i}`, `f${j}`, 'data.txt'), `${i}.${j}\n`);
  }
  git(repo, ['add', '.']);
  git(repo, ['commit', '-q', '-m', 'trees']);
  // A copy of f1/f1 under f3: the same tree as one the excluded commit has, at another path.
  mkdirSync(join(repo, 'f3', 'f4'));
  writeFileSync(join(repo, 'f3', 'f4', 'data.txt'), '1.1\n');
  git(repo, ['add', '.']);
  git(repo, ['commit', '-q', '-m', 'copy']);
  const input = 'main\n^main~1\n';
  const objects = (pack: Buffer): string => {
    const file = join(dir.path, `p-${Math.random().toString(36).slice(2)}.pack`);
    writeFileSync(file, pack);
    git(dir.path, ['index-pack', file]);
    return git(dir.path, ['show-index'], readFileSync(file.replace(/\.pack$/, '.idx'))).toString().split('\n').filter((l) => l !== '').map((l) => l.split(' ')[1]).sort().join('\n');
  };
  for (const flag of ['--sparse', '--no-sparse']) {
    const ours = objects(await packwright(repo, ['pack-objects', '--revs', '--stdout', '-q', flag], input));
    const theirs = objects(git(repo, ['pack-objects', '--revs', '--stdout', '-q', flag], input));
    assert.equal(ours, theirs, flag);
  }
  assert.notEqual(objects(await packwright(repo, ['pack-objects', '--revs', '--stdout', '-q'], input)), objects(await packwright(repo, ['pack-objects', '--revs', '--stdout', '-q', '--no-sparse'], input)));
});

test('rev-list --objects and pack-objects on wide directories, listed against their previous versions: line for line git\'s, through added, removed and swapped entries', async () => {
  using tmp = tempDir();
  const repo = join(tmp.path, 'wide.git');
  git(tmp.path, ['init', '-q', '--bare', repo]);
  // Two directories of 200 entries (trees of ~8 KB, above what TreeLister keeps to list against)
  // and a root of as many; each commit changes a few entries, adds or removes some, turns a file
  // into a directory or back, on two branches merged now and then.
  const random = seededRandom(42);
  const pick = (n: number): number => Math.floor(random() * n);
  const parts: string[] = [];
  let mark = 0;
  const names = (prefix: string): string[] => Array.from({ length: 200 }, (_, i) => `${prefix}file-${String(i).padStart(3, '0')}.txt`);
  const files = [...names(''), ...names('dir-a/'), ...names('dir-a/sub/'), ...names('dir-b/')];
  const marks: Record<string, number> = { main: 0, side: 0 };
  for (let c = 0; c < 80; c++) {
    const branch = c % 5 === 4 ? 'side' : 'main';
    const lines: string[] = [];
    const inline = (path: string, content: string): string => `M 100644 inline ${path}\ndata ${Buffer.byteLength(content)}\n${content}\n`;
    if (c === 0) for (const f of files) lines.push(inline(f, `v0 ${f}`));
    for (let k = 0; k < 1 + pick(4); k++) {
      const f = files[pick(files.length)] as string;
      lines.push(inline(f, `v${c} ${f} ${k}`));
    }
    if (c % 7 === 3) lines.push(`D ${files[pick(files.length)] as string}\n`);
    if (c % 11 === 5) lines.push(inline(`new-${c}.txt`, 'new'));
    // A name that is a file in one commit and a directory in the next.
    if (c % 13 === 6) lines.push('D swap\n', inline('swap/inner', 'inner'));
    if (c % 13 === 7) lines.push('D swap\n', inline('swap', 'file'));
    mark++;
    const from = marks[branch] !== 0 ? `from :${marks[branch] as number}\n` : c > 0 ? `from :${marks.main as number}\n` : '';
    const merge = branch === 'main' && c % 10 === 9 && marks.side !== 0 ? `merge :${marks.side as number}\n` : '';
    parts.push(`commit refs/heads/${branch}\nmark :${mark}\ncommitter C <c@example.com> ${1700000000 + c} +0000\ndata 3\nc${c}\n${from}${merge}${lines.join('')}\n`);
    marks[branch] = mark;
  }
  git(repo, ['fast-import', '--quiet'], parts.join(''));
  git(repo, ['repack', '-adq', '--depth=50', '--window=10']);
  for (const revs of [['--all'], ['main'], ['main', '^side'], ['side', '^main~5']]) {
    assert.equal((await packwright(repo, ['rev-list', '--objects', ...revs])).toString(), git(repo, ['rev-list', '--objects', ...revs]).toString(), revs.join(' '));
  }
  for (const revs of ['--all\n', 'main\n^side\n']) {
    const args = ['pack-objects', '--revs', '--stdout', '-q', ...(revs.startsWith('--all') ? ['--all'] : [])];
    const input = revs.startsWith('--all') ? '' : revs;
    const theirs = execGit(args, { cwd: repo, input, maxBuffer: 1 << 30 });
    assert.deepEqual(packIds(tmp.path, await packwright(repo, args, input), 'sha1'), packIds(tmp.path, theirs, 'sha1'), revs);
  }
});
