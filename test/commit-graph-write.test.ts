import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { git, makeHistoryRepo, packwright, runPackwright, tempDir } from './helpers/git.js';
import { spawnGit } from './helpers/spawn-client.js';

const graphPath = (repo: string): string => join(repo, 'objects', 'info', 'commit-graph');

/** packwright's file, then git's, for the same command; both must be the same bytes. */
async function sameGraph(repo: string, args: string[], input?: string, config: string[] = []): Promise<void> {
  rmSync(graphPath(repo), { force: true });
  await packwright(repo, [...config, 'commit-graph', 'write', ...args], input);
  const ours = readFileSync(graphPath(repo));
  rmSync(graphPath(repo));
  git(repo, [...config, 'commit-graph', 'write', '--no-progress', ...args], input);
  assert.ok(ours.equals(readFileSync(graphPath(repo))), `commit-graph write ${args.join(' ')} ${config.join(' ')}: ${ours.length} bytes, git's ${readFileSync(graphPath(repo)).length}`);
  assert.equal(readdirSync(join(repo, 'objects', 'info')).filter((f) => f.endsWith('.lock')).length, 0);
}

for (const format of ['sha1', 'sha256'] as const) {
  test(`commit-graph write gives git's bytes, ${format}: reachable, every packed commit, commits or packs on stdin, appended, generation v1`, async () => {
    using dir = tempDir();
    // Merges, an octopus merge (EDGE), repeated dates and clock skew.
    const repo = makeHistoryRepo(dir.path, format, 120);
    await sameGraph(repo, ['--reachable']);
    await sameGraph(repo, []);
    const some = git(repo, ['rev-list', '--all', '--max-count=20']).toString().split('\n').filter((l) => l !== '');
    await sameGraph(repo, ['--stdin-commits'], some.slice(5, 12).join('\n') + '\n');
    const packs = readdirSync(join(repo, 'objects', 'pack')).filter((f) => f.endsWith('.idx'));
    await sameGraph(repo, ['--stdin-packs'], `${packs[0]}\n`);
    // --append keeps what the graph has: a graph of a few commits, then the rest appended.
    git(repo, ['commit-graph', 'write', '--stdin-commits'], `${some[15]}\n`);
    const before = readFileSync(graphPath(repo));
    await packwright(repo, ['commit-graph', 'write', '--stdin-commits', '--append'], `${some[3]}\n`);
    const ours = readFileSync(graphPath(repo));
    rmSync(graphPath(repo));
    git(repo, ['commit-graph', 'write', '--stdin-commits'], `${some[15]}\n`);
    assert.ok(before.equals(readFileSync(graphPath(repo))));
    git(repo, ['commit-graph', 'write', '--stdin-commits', '--append'], `${some[3]}\n`);
    assert.ok(ours.equals(readFileSync(graphPath(repo))), '--append');
    await sameGraph(repo, ['--reachable'], undefined, ['-c', 'commitGraph.generationVersion=1']);
    // What packwright wrote, git verifies.
    await packwright(repo, ['commit-graph', 'write', '--reachable']);
    assert.equal(git(repo, ['commit-graph', 'verify']).length, 0);
    assert.equal((await packwright(repo, ['commit-graph', 'verify'])).length, 0);
  });
}

test('commit-graph write: corrected dates past 31 bits go to GDO2, as git writes them', async () => {
  using dir = tempDir();
  const repo = join(dir.path, 'skew.git');
  git(dir.path, ['init', '-q', '--bare', '-b', 'main', repo]);
  // A child dated long before its parent: its corrected date's offset needs the overflow chunk.
  const commit = (mark: number, time: number, from?: number): string =>
    `commit refs/heads/main\nmark :${mark}\ncommitter C <c@example.com> ${time} +0000\ndata 2\n${mark}\n` + (from !== undefined ? `from :${from}\n` : '') + `M 100644 inline f\ndata 2\n${mark}\n\n`;
  git(repo, ['fast-import', '--quiet'], commit(1, 4000000000) + commit(2, 100, 1) + commit(3, 200, 2));
  await sameGraph(repo, ['--reachable']);
  assert.ok(readFileSync(graphPath(repo)).includes(Buffer.from('GDO2')));
});

test('commit-graph write refuses what git refuses and writes nothing; core.commitGraph=false warns and writes nothing', async () => {
  using dir = tempDir();
  const repo = makeHistoryRepo(dir.path, 'sha1', 30);
  // Bad input: git's error line and its status, 1.
  const gitStatus = (args: string[], input: string): number => spawnGit(args, { cwd: repo, input }).status ?? -1;
  for (const [args, input, message] of [
    [['commit-graph', 'write', '--stdin-commits'], 'not-an-id\n', /^error: unexpected non-hex object ID: not-an-id$/m],
    [['commit-graph', 'write', '--stdin-commits'], `${'e'.repeat(40)}\n`, /^error: invalid object: e{40}$/m],
    [['commit-graph', 'write', '--stdin-packs'], 'pack-nothere.idx\n', /^error: error adding pack .*pack-nothere\.idx$/m],
  ] as const) {
    const ours = await runPackwright(repo, [...args], { input });
    assert.equal(ours.status, gitStatus([...args], input), args.join(' '));
    assert.match(ours.stderr, message);
  }
  const both = await runPackwright(repo, ['commit-graph', 'write', '--reachable', '--stdin-packs']);
  assert.equal(both.status, 128);
  assert.match(both.stderr, /use at most one of --reachable, --stdin-commits, or --stdin-packs/);
  assert.ok(!existsSync(graphPath(repo)));
  const off = await runPackwright(repo, ['-c', 'core.commitGraph=false', 'commit-graph', 'write', '--reachable']);
  assert.equal(off.status, 0);
  assert.match(off.stderr, /'core.commitGraph' is disabled/);
  assert.ok(!existsSync(graphPath(repo)));
});

test('commit-graph verify as git: a parent position past the graph is fatal (128); no commits write no file', async () => {
  using dir = tempDir();
  const empty = join(dir.path, 'empty.git');
  git(dir.path, ['init', '-q', '--bare', empty]);
  await packwright(empty, ['commit-graph', 'write']);
  assert.ok(!existsSync(graphPath(empty)));
  const repo = makeHistoryRepo(dir.path, 'sha1', 30);
  await packwright(repo, ['commit-graph', 'write', '--reachable']);
  const file = graphPath(repo);
  const bytes = readFileSync(file);
  // The first commit's first parent slot (in CDAT, after its tree id) points far away.
  let cdat = -1;
  for (let row = 8; bytes.readUInt32BE(row) !== 0; row += 12) if (bytes.toString('latin1', row, row + 4) === 'CDAT') cdat = Number(bytes.readBigUInt64BE(row + 4));
  const firstParent = cdat + 20;
  const first = bytes.readUInt32BE(firstParent);
  bytes[firstParent] = 0x01;
  rmSync(file);
  writeFileSync(file, bytes);
  const ours = await runPackwright(repo, ['commit-graph', 'verify']);
  const theirs = spawnGit(['commit-graph', 'verify'], { cwd: repo, encoding: 'utf8' });
  assert.equal(ours.status, theirs.status);
  if (first !== 0x70000000) assert.match(ours.stderr, /^fatal: invalid parent position \d+$/m);
  assert.equal(ours.stderr.split('\n').filter((l) => l.startsWith('fatal:')).join('\n'), theirs.stderr.split('\n').filter((l) => l.startsWith('fatal:')).join('\n'));
});

test('commit-graph write --changed-paths gives git\'s filters: renames, deletions, a submodule, non-ASCII names, too many paths', async () => {
  using dir = tempDir();
  const repo = makeHistoryRepo(dir.path, 'sha1', 120);
  // A commit with names whose bytes pass 0x7f (git 2.39's murmur3 sign-extends them) and one
  // changing more than 512 paths (the all-ones filter).
  const tree = git(repo, ['rev-parse', 'main^{tree}']).toString().trim();
  const blob = git(repo, ['hash-object', '-w', '--stdin'], 'x\n').toString().trim();
  const listing = git(repo, ['ls-tree', tree]).toString();
  const wide = Array.from({ length: 520 }, (_, i) => `100644 blob ${blob}\twide/f${i}\n`).join('');
  const withNames = git(repo, ['mktree'], `${listing}100644 blob ${blob}\tcafé ünï.txt\n`).toString().trim();
  const subtree = git(repo, ['mktree'], wide.replace(/wide\//g, '')).toString().trim();
  const withWide = git(repo, ['mktree'], `${listing}100644 blob ${blob}\tcafé ünï.txt\n040000 tree ${subtree}\twide\n`).toString().trim();
  let tip = git(repo, ['rev-parse', 'main']).toString().trim();
  for (const t of [withNames, withWide]) tip = git(repo, ['commit-tree', t, '-p', tip, '-m', 'more'], '').toString().trim();
  git(repo, ['update-ref', 'refs/heads/main', tip]);
  await sameGraph(repo, ['--reachable', '--changed-paths']);
  // Kept when the graph there has filters, and not with --no-changed-paths.
  await sameGraph(repo, ['--reachable']);
  await sameGraph(repo, ['--reachable', '--no-changed-paths']);
  await sameGraph(repo, ['--reachable', '--changed-paths'], undefined, []);
});

test('commit-graph write --split: layers, merges, no-merge, replace, --size-multiple, --max-commits, filters, as git leaves them', async () => {
  using dir = tempDir();
  const make = (name: string): string => {
    const repo = join(dir.path, name);
    git(dir.path, ['init', '-q', '--bare', '-b', 'main', repo]);
    return repo;
  };
  const ours = make('ours.git');
  const theirs = make('theirs.git');
  let mark = 0;
  const more = (n: number): void => {
    const parts: string[] = [];
    for (let i = 0; i < n; i++) {
      mark++;
      parts.push(`commit refs/heads/main\nmark :${mark}\ncommitter C <c@example.com> ${1700000000 + mark} +0000\ndata 2\n${mark % 10}\n` +
        (mark > 1 ? `from :${mark - 1}\n` : '') + `M 100644 inline d${mark % 3}/f${mark % 5}\ndata 3\n${mark % 100}\n\n`);
    }
    // The same stream into both: the same commits.
    const stream = `feature done\n${parts.join('')}done\n`;
    for (const r of [ours, theirs]) git(r, ['fast-import', '--quiet', '--export-marks=marks', ...(mark > n ? ['--import-marks=marks'] : [])], stream);
  };
  const info = (repo: string): string => {
    const layers = join(repo, 'objects', 'info', 'commit-graphs');
    const files = existsSync(layers) ? readdirSync(layers).sort() : [];
    return [existsSync(graphPath(repo)) ? `single ${readFileSync(graphPath(repo)).toString('hex')}` : 'no single', ...files.map((f) => `${f} ${readFileSync(join(layers, f)).toString('hex')}`)].join('\n');
  };
  const step = async (args: string[]): Promise<void> => {
    git(theirs, ['commit-graph', 'write', '--no-progress', ...args]);
    await packwright(ours, ['commit-graph', 'write', ...args]);
    assert.equal(info(ours), info(theirs), args.join(' '));
  };
  more(5);
  await step(['--reachable']);
  more(3);
  await step(['--reachable', '--split']);
  more(4);
  await step(['--reachable', '--split']);
  more(1);
  await step(['--reachable', '--split=no-merge']);
  more(17);
  await step(['--reachable', '--split', '--size-multiple=3']);
  more(2);
  await step(['--reachable', '--split', '--changed-paths']);
  more(3);
  await step(['--reachable', '--split=no-merge']);
  await step(['--reachable', '--split=replace']);
  more(5);
  await step(['--reachable', '--split', '--max-commits=2']);
  await step(['--reachable']);
  assert.equal((await packwright(ours, ['commit-graph', 'verify'])).length, 0);
});

test('commit-graph write --max-new-filters computes filters in git\'s order and backfills them on later writes', async () => {
  using dir = tempDir();
  const repo = makeHistoryRepo(dir.path, 'sha1', 40);
  // Commits from packs (pack order), and from refs (generation, then date).
  await sameGraph(repo, ['--changed-paths', '--max-new-filters=5']);
  await sameGraph(repo, ['--reachable', '--changed-paths', '--max-new-filters=7']);
  await sameGraph(repo, ['--reachable', '--changed-paths'], undefined, ['-c', 'commitGraph.maxNewFilters=3']);
  // A graph with some filters: the next write fills in more, as git's does.
  git(repo, ['commit-graph', 'write', '--reachable', '--changed-paths', '--max-new-filters=4']);
  const start = readFileSync(graphPath(repo));
  await packwright(repo, ['commit-graph', 'write', '--reachable', '--changed-paths', '--max-new-filters=6']);
  const ours = readFileSync(graphPath(repo));
  rmSync(graphPath(repo));
  writeFileSync(graphPath(repo), start);
  git(repo, ['commit-graph', 'write', '--reachable', '--changed-paths', '--max-new-filters=6']);
  assert.ok(ours.equals(readFileSync(graphPath(repo))));
});
