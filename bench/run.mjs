#!/usr/bin/env node
// npm run bench [-- filter] [--pairs=N] [--scale]
// filter: a case runs when its name contains the filter, or one of several given as 'a|b|c'.
// Runs each case for packwright and for git alternately on the same input (A B A B ...), checks
// that both printed the same bytes (or produced the same files), and reports the median wall time,
// the ratio packwright/git and peak RSS. Writes bench/report/report.md and report.json.
import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { lineChart } from './svg.mjs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..');
const cli = join(root, 'dist', 'bin', 'packwright.cjs');
const shared = join(root, '..', 'shared', 'corpus');
const work = join(tmpdir(), 'packwright-bench');
const args = process.argv.slice(2);
const pairs = Number(args.find((a) => a.startsWith('--pairs='))?.slice(8) ?? 3);
const filters = (args.find((a) => !a.startsWith('--')) ?? '').split('|').filter((f) => f !== '');
// --scale adds the 10M-object and ~5 GiB synthetic packs (minutes each, and ~6 GiB of disk).
const scale = args.includes('--scale');

/**
 * Runs one command under /usr/bin/time, hashing its stdout as it streams (outputs reach 2 GB);
 * returns wall seconds, peak RSS (MB) and the digest.
 */
function measure(cmd, argv, cwd, stdinFile) {
  const timeFile = join(work, 'time.txt');
  mkdirSync(work, { recursive: true });
  const stdin = stdinFile === undefined ? 'ignore' : openSync(stdinFile, 'r');
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn('/usr/bin/time', ['-o', timeFile, '-f', '%e %M', cmd, ...argv], { cwd, stdio: [stdin, 'pipe', 'pipe'] });
    if (typeof stdin === 'number') closeSync(stdin);
    const hash = createHash('sha256');
    let bytes = 0;
    let stderr = '';
    child.stdout.on('data', (d) => { hash.update(d); bytes += d.length; });
    child.stderr.on('data', (d) => { stderr += d; });
    child.on('close', (status) => {
      if (status !== 0) return reject(new Error(`${cmd} ${argv.join(' ')} failed (${status}): ${stderr}`));
      // Wall time from here (to the millisecond; /usr/bin/time rounds to 10 ms), RSS from time.
      const wall = (performance.now() - started) / 1000;
      const rssKb = Number(readFileSync(timeFile, 'utf8').trim().split('\n').at(-1).split(' ')[1]);
      resolve({ wall, rss: rssKb / 1024, digest: hash.digest('hex'), bytes });
    });
  });
}

/** Pairs for cases whose first pair takes under 2 s. */
const MIN_PAIRS_SHORT = 15;
/**
 * A case whose first pair takes over this many seconds is not repeated: the scale cases take
 * minutes a run, and their noise is small against their length.
 */
const ONE_PAIR_OVER = 120;
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/**
 * A corpus repository, with a commit-graph as `git gc` leaves one (gc.writeCommitGraph): every
 * case runs on it with the graph there for both sides.
 */
function ensureRepo(name) {
  const out = join(work, name);
  if (!existsSync(join(out, 'packed-refs'))) {
    mkdirSync(work, { recursive: true });
    execFileSync('sh', [join(shared, 'make-repo.sh'), name, out], { stdio: 'ignore' });
  }
  return withCommitGraph(out);
}

function withCommitGraph(repo) {
  if (!existsSync(join(repo, 'objects', 'info', 'commit-graph'))) execFileSync('git', ['commit-graph', 'write', '--reachable'], { cwd: repo, stdio: 'ignore' });
  return repo;
}

/** The generated repository of 25,000 commits (bench/make-deep-history-repo.mjs), with its commit-graph. */
function deepHistory() {
  const repo = join(work, 'deep-history');
  if (!existsSync(join(repo, 'objects', 'pack'))) execFileSync(process.execPath, [join(here, 'make-deep-history-repo.mjs'), repo], { stdio: 'ignore' });
  return withCommitGraph(repo);
}

const cases = [];
if (existsSync(join(shared, 'gitoxide.pack'))) {
  for (const [label, extra] of [['--batch-check', ['--batch-check']], ['--batch', ['--batch']], ['--batch --unordered', ['--batch', '--unordered']]]) {
    cases.push({
      name: `cat-file --batch-all-objects ${label} (gitoxide)`,
      setup: () => ensureRepo('gitoxide'),
      packwright: (repo) => [process.execPath, [cli, 'cat-file', '--batch-all-objects', ...extra], repo],
      git: (repo) => ['git', ['cat-file', '--batch-all-objects', ...extra], repo],
    });
  }
  // A list of names on stdin, as scripts feed `rev-list --objects` to cat-file: every 226th
  // object in id order (1001 of gitoxide's 226k), so lookups land all over the pack.
  const names = (repo) => {
    const file = join(work, 'names-1k.txt');
    if (!existsSync(file)) {
      const all = execFileSync('git', ['cat-file', '--batch-all-objects', '--batch-check=%(objectname)'], { cwd: repo, maxBuffer: 1 << 30 }).toString().trim().split('\n');
      writeFileSync(file, all.filter((_, i) => i % 226 === 0).join('\n') + '\n');
    }
    return file;
  };
  for (const [label, extra] of [['--batch-check', ['--batch-check']], ['--batch', ['--batch']]]) {
    cases.push({
      name: `cat-file ${label} < 1001 names (gitoxide)`,
      setup: () => ensureRepo('gitoxide'),
      packwright: (repo) => [process.execPath, [cli, 'cat-file', ...extra], repo, names(repo)],
      git: (repo) => ['git', ['cat-file', ...extra], repo, names(repo)],
    });
  }
  // Every object, in a random order (seeded): reads that jump all over the pack.
  const shuffled = (repo) => {
    const file = join(work, 'names-shuffled.txt');
    if (!existsSync(file)) {
      const all = execFileSync('git', ['cat-file', '--batch-all-objects', '--batch-check=%(objectname)'], { cwd: repo, maxBuffer: 1 << 30 }).toString().trim().split('\n');
      let seed = 7;
      for (let i = all.length - 1; i > 0; i--) {
        seed = (seed * 1103515245 + 12345) >>> 0;
        const j = seed % (i + 1);
        [all[i], all[j]] = [all[j], all[i]];
      }
      writeFileSync(file, all.join('\n') + '\n');
    }
    return file;
  };
  cases.push({
    name: 'cat-file --batch < every object in a random order (gitoxide)',
    setup: () => ensureRepo('gitoxide'),
    packwright: (repo) => [process.execPath, [cli, 'cat-file', '--batch'], repo, shuffled(repo)],
    git: (repo) => ['git', ['cat-file', '--batch'], repo, shuffled(repo)],
  });
  // Every object's header: odb stats (counts by type, chains, sizes) against the cat-file run that
  // answers the same question. Different outputs: the counts are compared in test/odb-cli.test.ts.
  for (const threads of [1, 2]) {
    cases.push({
      name: `odb stats --threads=${threads} vs cat-file --batch-all-objects --batch-check (gitoxide)`,
      setup: () => ensureRepo('gitoxide'),
      differentOutput: true,
      packwright: (repo) => [process.execPath, [cli, 'odb', 'stats', `--threads=${threads}`], repo],
      git: (repo) => ['git', ['cat-file', '--batch-all-objects', '--batch-check'], repo],
    });
  }
} else {
  console.error(`skipping corpus cases: ${shared} is absent`);
}

// index-pack: packwright vs git at 1 and 2 threads; the idx each wrote is compared byte for byte.
function indexPackCases(label, packPath) {
  for (const threads of [1, 2]) {
    cases.push({
      name: `index-pack --threads=${threads} (${label})`,
      setup: () => packPath(),
      outputFile: (p) => p + `.bench.idx`,
      packwright: (p) => [process.execPath, [cli, 'index-pack', `--threads=${threads}`, '-o', p + '.bench.idx', p], work],
      git: (p) => ['git', ['index-pack', `--threads=${threads}`, '-o', p + '.bench.idx', p], work],
    });
  }
}
for (const name of ['gitoxide', 'isomorphic-git']) {
  const pack = join(shared, `${name}.pack`);
  if (existsSync(pack)) indexPackCases(`${name}.pack`, () => pack);
}
// The same with collision detection (sha1dc), which git always does: the fair comparison; its cost
// against plain SHA-1 is the difference from the cases above.
for (const name of ['gitoxide', 'isomorphic-git']) {
  const pack = join(shared, `${name}.pack`);
  if (!existsSync(pack)) continue;
  for (const threads of [1, 2]) {
    cases.push({
      name: `index-pack --collision-detection --threads=${threads} (${name}.pack)`,
      setup: () => pack,
      outputFile: (p) => p + `.bench.idx`,
      packwright: (p) => [process.execPath, [cli, 'index-pack', '--collision-detection', `--threads=${threads}`, '-o', p + '.bench.idx', p], work],
      git: (p) => ['git', ['index-pack', `--threads=${threads}`, '-o', p + '.bench.idx', p], work],
    });
  }
}
// Synthetic packs (bench/make-pack.mjs), written once into the work directory.
function syntheticPack(name, options) {
  const pack = join(work, `${name}.pack`);
  if (!existsSync(pack)) {
    mkdirSync(work, { recursive: true });
    console.log(`writing ${pack} (${options.join(' ')})`);
    execFileSync(process.execPath, [join(here, 'make-pack.mjs'), pack, ...options], { stdio: 'inherit' });
  }
  return pack;
}
/** A bare repository holding a synthetic pack (indexed by git), for the store's cases. */
function syntheticRepo(name, pack) {
  const repo = join(work, `${name}.git`);
  const packDir = join(repo, 'objects', 'pack');
  if (!existsSync(join(packDir, 'pack-synthetic.idx'))) {
    execFileSync('git', ['init', '-q', '--bare', repo]);
    execFileSync('cp', [pack, join(packDir, 'pack-synthetic.pack')]);
    execFileSync('git', ['index-pack', join(packDir, 'pack-synthetic.pack')], { stdio: 'ignore' });
  }
  return repo;
}
// Every object of a synthetic pack through cat-file, in pack order, under the default ceiling.
function catFileCases(label, name, makePack) {
  for (const extra of [['--batch-check'], ['--batch']]) {
    cases.push({
      name: `cat-file --batch-all-objects ${extra[0]} --unordered (${label})`,
      setup: () => syntheticRepo(name, makePack()),
      packwright: (repo) => [process.execPath, [cli, 'cat-file', '--batch-all-objects', ...extra, '--unordered'], repo],
      git: (repo) => ['git', ['cat-file', '--batch-all-objects', ...extra, '--unordered'], repo],
    });
  }
}
// 1M objects, 355 MB: 100k incompressible 3.2 KB blobs, each the base of a chain of 9 deltas (OFS, every 5th REF).
const synthetic1m = () => syntheticPack('synthetic-1m', ['--groups=100000', '--chain=10', '--size=3200', '--random', '--level=0', '--ref-every=5']);
indexPackCases('synthetic, 1M objects, 355 MB', synthetic1m);
catFileCases('synthetic, 1M objects, 355 MB', 'synthetic-1m', synthetic1m);
if (scale) {
  // 10M small objects (2M chains of 5, every 4th delta REF), and ~5 GiB of 16 MiB incompressible
  // blobs with deltas on bases from both sides of the 4 GiB mark.
  const synthetic10m = () => syntheticPack('synthetic-10m', ['--groups=2000000', '--chain=5', '--size=120', '--ref-every=4', '--level=1']);
  indexPackCases('synthetic, 10M objects', synthetic10m);
  catFileCases('synthetic, 10M objects', 'synthetic-10m', synthetic10m);
  indexPackCases('synthetic, 5 GiB', () => syntheticPack('synthetic-5g', ['--groups=320', '--chain=2', '--size=16777216', '--random', '--level=0', '--tail-deltas=200', '--ref-every=1']));
}
// The memory ceiling (--max-memory) against time, on gitoxide.pack at --threads=2 (0: none); git
// has no such option, so its side is the same run each time.
if (existsSync(join(shared, 'gitoxide.pack'))) {
  for (const ceiling of ['64m', '128m', '256m', '512m', '0']) {
    cases.push({
      name: `index-pack --threads=2 --max-memory=${ceiling} (gitoxide.pack)`,
      setup: () => join(shared, 'gitoxide.pack'),
      outputFile: () => join(work, 'ceiling.bench.idx'),
      packwright: (p) => [process.execPath, [cli, 'index-pack', '--threads=2', `--max-memory=${ceiling}`, '-o', join(work, 'ceiling.bench.idx'), p], work],
      git: (p) => ['git', ['index-pack', '--threads=2', '-o', join(work, 'ceiling.bench.idx'), p], work],
    });
  }
  // verify-pack -v: the listing in pack order and the chain histogram, byte for byte.
  cases.push({
    name: 'verify-pack -v (gitoxide.pack)',
    setup: () => {
      const dir = join(work, 'verify');
      if (!existsSync(join(dir, 'p.idx'))) {
        mkdirSync(dir, { recursive: true });
        execFileSync('cp', [join(shared, 'gitoxide.pack'), join(dir, 'p.pack')]);
        execFileSync('git', ['index-pack', join(dir, 'p.pack')], { stdio: 'ignore' });
      }
      return join(dir, 'p.idx');
    },
    packwright: (idx) => [process.execPath, [cli, 'verify-pack', '-v', idx], work],
    git: (idx) => ['git', ['verify-pack', '-v', idx], work],
  });
}
// index-pack --stdin, the way fetch and receive-pack run it: the pack arrives on stdin and is
// written to <pack-file> (which must not exist yet, for git). Collision detection is on, by default.
// Into an empty repository (a clone's first pack), and into one that already has objects (a
// fetch's), where each incoming object is looked up among the stored ones, as git does.
if (existsSync(join(shared, 'gitoxide.pack'))) {
  for (const [kind, repoName] of [['', 'stdin-repo'], [' into a non-empty repository', 'stdin-repo-full']]) {
    for (const threads of [1, 2]) {
      const received = join(work, 'stdin-received.pack');
      const run = (p) => {
        rmSync(received, { force: true });
        return [['index-pack', '--stdin', `--threads=${threads}`, '-o', join(work, 'stdin.bench.idx'), received], join(work, repoName), p];
      };
      cases.push({
        name: `index-pack --stdin --threads=${threads}${kind} (gitoxide.pack)`,
        setup: () => {
          // git wants a repository for --stdin (for its object format and for thin packs).
          const repo = join(work, repoName);
          if (!existsSync(repo)) {
            execFileSync('git', ['init', '-q', '--bare', repo]);
            // A commit of 100 files of its own, in a pack (fast-import writes one): the lookups
            // then go to a pack index, as in a fetch.
            if (kind !== '') {
              let stream = '';
              for (let i = 1; i <= 100; i++) stream += `blob\nmark :${i}\ndata <<END\nstored file ${i}\nEND\n`;
              stream += 'commit refs/heads/main\ncommitter A <a@example.com> 0 +0000\ndata 4\nbase\n';
              for (let i = 1; i <= 100; i++) stream += `M 100644 :${i} file-${i}\n`;
              execFileSync('git', ['fast-import', '--quiet'], { cwd: repo, input: stream + '\n' });
            }
          }
          return join(shared, 'gitoxide.pack');
        },
        outputFile: () => join(work, 'stdin.bench.idx'),
        packwright: (p) => { const [argv, cwd, input] = run(p); return [process.execPath, [cli, ...argv], cwd, input]; },
        git: (p) => { const [argv, cwd, input] = run(p); return ['git', argv, cwd, input]; },
      });
    }
  }
}
// Reference: isomorphic-git's indexPack (pure JS), on the same pack, alternating with the others.
{
  const pack = join(shared, 'isomorphic-git.pack');
  const iso = cases.find((c) => c.name === 'index-pack --threads=1 (isomorphic-git.pack)');
  if (iso && existsSync(pack)) {
    const dir = join(work, 'isogit');
    iso.reference = {
      label: 'isomorphic-git',
      setup: () => { mkdirSync(dir, { recursive: true }); execFileSync('cp', [pack, join(dir, 'p.pack')]); },
      run: () => [process.execPath, [join(here, 'isogit-index-pack.mjs'), dir, 'p.pack'], dir],
      output: () => join(dir, 'p.idx'),
    };
  }
}
for (const revs of [250, 1000, 4000]) {
  indexPackCases(`deep chain of ${revs} revisions`, () => {
    const repo = join(work, `deep-${revs}`);
    if (!existsSync(join(repo, 'objects', 'pack'))) execFileSync('sh', [join(shared, 'make-deep-chain.sh'), repo, String(revs)], { stdio: 'ignore' });
    const dir = join(repo, 'objects', 'pack');
    return join(dir, readdirSync(dir).find((f) => f.endsWith('.pack')));
  });
}

// Pack generation on the corpus repositories (partial clones: a few blobs are missing, so both
// sides run with --missing=allow-any). rev-list prints the same bytes; the packs differ (git's
// own write order and delta choices), so their sizes are reported, and the tests check that git
// accepts packwright's (test/pack-objects.test.ts).
for (const [label, name] of [['gitoxide', 'gitoxide'], ['isomorphic-git', 'isomorphic-git']]) {
  if (!existsSync(join(shared, `${name}.pack`))) continue;
  cases.push({
    name: `rev-list --objects --all (${label})`,
    setup: () => ensureRepo(name),
    packwright: (repo) => [process.execPath, [cli, 'rev-list', '--objects', '--all', '--missing=allow-any'], repo],
    git: (repo) => ['git', ['rev-list', '--objects', '--all', '--missing=allow-any'], repo],
  });
  const pack = (extra) => ['pack-objects', '--revs', '--all', '--stdout', '-q', '--delta-base-offset', '--missing=allow-any', ...extra];
  cases.push({
    name: `pack-objects --revs --all --stdout, reusing stored data (${label})`,
    setup: () => ensureRepo(name),
    differentOutput: true,
    packwright: (repo) => [process.execPath, [cli, ...pack([])], repo, '/dev/null'],
    git: (repo) => ['git', pack([]), repo, '/dev/null'],
  });
  for (const threads of [1, 2]) {
    cases.push({
      name: `pack-objects --no-reuse-delta --threads=${threads} (${label})`,
      setup: () => ensureRepo(name),
      differentOutput: true,
      packwright: (repo) => [process.execPath, [cli, ...pack(['--no-reuse-delta', `--threads=${threads}`])], repo, '/dev/null'],
      git: (repo) => ['git', pack(['--no-reuse-delta', `--threads=${threads}`]), repo, '/dev/null'],
    });
  }
}

// Walks of the commits alone, read from the commit-graph (start-up included: these are short).
{
  const repos = [['deep history: 25k commits', deepHistory]];
  for (const name of ['gitoxide', 'isomorphic-git']) if (existsSync(join(shared, `${name}.pack`))) repos.push([name, () => ensureRepo(name)]);
  for (const [label, setup] of repos) {
    for (const extra of [[], ['--count']]) {
      const argv = ['rev-list', ...extra, '--all'];
      cases.push({
        name: `${argv.join(' ')} (${label})`,
        setup,
        packwright: (repo) => [process.execPath, [cli, ...argv], repo],
        git: (repo) => ['git', argv, repo],
      });
    }
  }
  // commit-graph write --reachable: the same file from both (compared by digest, then removed;
  // the next case's setup writes it again).
  for (const [label, setup] of repos) {
    cases.push({
      name: `commit-graph write --reachable (${label})`,
      setup,
      outputFile: (repo) => join(repo, 'objects', 'info', 'commit-graph'),
      packwright: (repo) => [process.execPath, [cli, 'commit-graph', 'write', '--reachable', '--no-progress'], repo],
      git: (repo) => ['git', ['commit-graph', 'write', '--reachable', '--no-progress'], repo],
    });
  }
  cases.push({
    name: 'rev-list --objects --all (deep history: 25k commits)',
    setup: deepHistory,
    packwright: (repo) => [process.execPath, [cli, 'rev-list', '--objects', '--all'], repo],
    git: (repo) => ['git', ['rev-list', '--objects', '--all'], repo],
  });
}

// Start-up of one-shot commands, against git's and against Node's own (`node -e 0`, the reference).
if (existsSync(join(shared, 'gitoxide.pack'))) {
  for (const argv of [['cat-file', '-t', 'HEAD'], ['rev-parse', 'HEAD'], ['show-ref', '--heads']]) {
    cases.push({
      name: `start-up: ${argv.join(' ')} (gitoxide)`,
      setup: () => ensureRepo('gitoxide'),
      packwright: (repo) => [process.execPath, [cli, ...argv], repo],
      git: (repo) => ['git', argv, repo],
      reference: { label: 'node -e 0', setup: () => {}, run: () => [process.execPath, ['-e', '0'], tmpdir()] },
    });
  }
}

// fsck --full (the default) against git's, on the gitoxide corpus repository and on a generated one
// of ~74k objects and 300 commits (bench/make-wide-repo.mjs). git checks objects on one thread;
// packwright verifies each pack and checks its objects on --threads.
{
  const wide = () => {
    const repo = join(work, 'wide');
    if (!existsSync(join(repo, 'objects', 'pack'))) execFileSync(process.execPath, [join(here, 'make-wide-repo.mjs'), repo], { stdio: 'ignore' });
    return repo;
  };
  const repos = [['wide: 74k objects, 300 commits', wide]];
  if (existsSync(join(shared, 'gitoxide.pack'))) repos.unshift(['gitoxide', () => ensureRepo('gitoxide')]);
  for (const [label, setup] of repos) {
    for (const threads of [1, 2]) {
      cases.push({
        name: `fsck --threads=${threads} (${label})`,
        setup,
        packwright: (repo) => [process.execPath, [cli, 'fsck', '--no-progress', `--threads=${threads}`], repo],
        git: (repo) => ['git', ['fsck', '--no-progress'], repo],
      });
    }
  }
}

// Counting from a reachability bitmap (the wide repository's pack has one, as git gc leaves in a
// bare repository): rev-list --use-bitmap-index, and pack-objects --stdout, which both git and
// packwright count from the bitmap by default.
{
  const wide = () => {
    const repo = join(work, 'wide');
    if (!existsSync(join(repo, 'objects', 'pack'))) execFileSync(process.execPath, [join(here, 'make-wide-repo.mjs'), repo], { stdio: 'ignore' });
    return repo;
  };
  cases.push({
    name: 'rev-list --objects --all --use-bitmap-index (wide, bitmapped)',
    setup: wide,
    packwright: (repo) => [process.execPath, [cli, 'rev-list', '--objects', '--all', '--use-bitmap-index'], repo],
    git: (repo) => ['git', ['rev-list', '--objects', '--all', '--use-bitmap-index'], repo],
  });
  const pack = ['pack-objects', '--revs', '--all', '--stdout', '-q', '--delta-base-offset'];
  cases.push({
    name: 'pack-objects --revs --all --stdout, counted from the bitmap (wide, bitmapped)',
    setup: wide,
    differentOutput: true,
    packwright: (repo) => [process.execPath, [cli, ...pack], repo, '/dev/null'],
    git: (repo) => ['git', pack, repo, '/dev/null'],
  });
}

// Writing loose objects: hash-object -w of 10k files named on stdin, and unpack-objects of the
// isomorphic-git pack, each run into a fresh repository (an object already there is not written).
{
  let fresh = 0;
  let previous;
  const freshRepo = () => {
    // The run before this one is over: its repository goes (an unpack writes ~470 MB of files).
    if (previous !== undefined) rmSync(previous, { recursive: true, force: true });
    const repo = (previous = join(work, `fresh-${process.pid}-${fresh++}`));
    rmSync(repo, { recursive: true, force: true });
    execFileSync('git', ['init', '-q', '--bare', repo]);
    return repo;
  };
  const files = () => {
    const dir = join(work, 'files-10k');
    const list = join(work, 'files-10k.txt');
    if (!existsSync(list)) {
      mkdirSync(dir, { recursive: true });
      let seed = 7;
      const names = [];
      for (let i = 0; i < 10000; i++) {
        seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
        const lines = 20 + (seed % 200);
        const body = Array.from({ length: lines }, (_, l) => `file ${i} line ${l} ${(seed >>> (l % 24)) & 0xffff}`).join('\n') + '\n';
        const name = join(dir, `f${i}.txt`);
        writeFileSync(name, body);
        names.push(name);
      }
      writeFileSync(list, names.join('\n') + '\n');
    }
    return list;
  };
  cases.push({
    name: 'hash-object -w --stdin-paths, 10k files into an empty repository',
    setup: files,
    packwright: (list) => [process.execPath, [cli, 'hash-object', '-w', '--stdin-paths'], freshRepo(), list],
    git: (list) => ['git', ['hash-object', '-w', '--stdin-paths'], freshRepo(), list],
  });
  if (existsSync(join(shared, 'isomorphic-git.pack'))) {
    cases.push({
      name: 'unpack-objects of isomorphic-git.pack into an empty repository',
      setup: () => join(shared, 'isomorphic-git.pack'),
      packwright: (pack) => [process.execPath, [cli, 'unpack-objects', '-q'], freshRepo(), pack],
      git: (pack) => ['git', ['unpack-objects', '-q'], freshRepo(), pack],
    });
  }
}

// Serving clones and fetches (issue 38). The corpus repositories are partial clones, which no
// server can send whole: make-complete-repo.mjs replays their history into complete ones (git's
// own history from its snapshot too, when it was fetched). Wall time is the whole clone, the
// same git client on both sides; the server's peak RSS is reported apart.
function completeRepo(name, source, ref, extra = []) {
  const out = join(work, name);
  if (!existsSync(join(out, 'objects', 'pack')) && source() !== undefined) execFileSync(process.execPath, [join(here, 'make-complete-repo.mjs'), source(), out, ref, ...extra], { stdio: 'ignore' });
  return out;
}
/**
 * The branches and tags of `source` (a partial clone) as a complete repository of their own:
 * the snapshot lacks only objects its pull requests' refs reach, so these need nothing it lacks.
 * Repacked through alternates, which reuses the snapshot's deltas; git's repack also copies the
 * snapshot's promisor pack, which goes. Checked with fsck before it is named `name`.
 */
function branchesAndTags(name, source) {
  const out = join(work, name);
  if (existsSync(out)) return out;
  const tmp = `${out}.tmp`;
  rmSync(tmp, { recursive: true, force: true });
  execFileSync('git', ['init', '-q', '--bare', tmp]);
  const objects = execFileSync('git', ['rev-parse', '--path-format=absolute', '--git-path', 'objects'], { cwd: source }).toString().trim();
  writeFileSync(join(tmp, 'objects', 'info', 'alternates'), `${objects}\n`);
  const refs = execFileSync('git', ['for-each-ref', '--format=create %(refname) %(objectname)', 'refs/heads', 'refs/tags'], { cwd: source, maxBuffer: 1 << 26 });
  execFileSync('git', ['update-ref', '--stdin'], { cwd: tmp, input: refs });
  execFileSync('git', ['symbolic-ref', 'HEAD', execFileSync('git', ['symbolic-ref', 'HEAD'], { cwd: source }).toString().trim()], { cwd: tmp });
  execFileSync('git', ['pack-refs', '--all'], { cwd: tmp });
  execFileSync('git', ['repack', '-a', '-d', '-b', '-q'], { cwd: tmp });
  rmSync(join(tmp, 'objects', 'info', 'alternates'));
  const packs = join(tmp, 'objects', 'pack');
  for (const f of readdirSync(packs).filter((f) => f.endsWith('.promisor'))) {
    for (const ext of ['.pack', '.idx', '.bitmap', '.rev', '.promisor']) rmSync(join(packs, f.replace(/\.promisor$/, ext)), { force: true });
  }
  execFileSync('git', ['fsck', '--connectivity-only', '--no-dangling'], { cwd: tmp, stdio: 'ignore' });
  renameSync(tmp, out);
  return out;
}
/** A copy of `repo` after `git repack -adb` (bitmaps, as a server's gc leaves them). */
function bitmapped(repo) {
  const out = `${repo}-bitmapped`;
  if (!existsSync(out)) {
    execFileSync('cp', ['-a', repo, out]);
    execFileSync('git', ['repack', '-adbq'], { cwd: out });
  }
  return out;
}
/**
 * The repository repacked with a bitmap, then one commit pushed on top (loose): what a server
 * holds between repacks. No longer the pack as it is: git sends the bitmap's whole words of the
 * pack verbatim and the rest object by object.
 */
function bitmappedThenPushed(repo) {
  const out = `${repo}-bitmapped-pushed`;
  if (!existsSync(out)) {
    execFileSync('cp', ['-a', bitmapped(repo), out]);
    const head = execFileSync('git', ['symbolic-ref', 'HEAD'], { cwd: out }).toString().trim();
    const tip = execFileSync('git', ['commit-tree', '-p', head, '-m', 'pushed since the repack', `${head}^{tree}`], { cwd: out }).toString().trim();
    execFileSync('git', ['update-ref', head, tip], { cwd: out });
  }
  return out;
}
const maxRss = (file) => (existsSync(file) ? Math.max(0, ...readFileSync(file, 'utf8').split('\n').map(Number).filter((n) => n > 0)) / 1024 : NaN);
const gitMirror = join(root, '..', '.mirror', 'git+git', 'repo');
const served = [];
if (existsSync(join(shared, 'gitoxide.pack'))) served.push(['gitoxide, complete', () => completeRepo('gitoxide-complete', () => ensureRepo('gitoxide'), 'main')]);
if (existsSync(gitMirror)) served.push(['git, 60k commits, 190 MB', () => completeRepo('git-complete', () => gitMirror, 'refs/heads/master', ['--every-commit'])]);
// Counting where directories are wide: git.git lists ~50M tree entries (a 17 KB root tree in
// each of 60k commits), where the corpus repositories' small trees hold few (walk/tree-shapes.ts).
if (existsSync(gitMirror)) {
  const gitComplete = () => completeRepo('git-complete', () => gitMirror, 'refs/heads/master', ['--every-commit']);
  cases.push({
    name: 'rev-list --objects --all (git, 60k commits: wide directories)',
    setup: gitComplete,
    packwright: (repo) => [process.execPath, [cli, 'rev-list', '--objects', '--all'], repo],
    git: (repo) => ['git', ['rev-list', '--objects', '--all'], repo],
  });
  cases.push({
    name: 'pack-objects --revs --all --stdout without a bitmap (git, 60k commits: wide directories)',
    setup: gitComplete,
    differentOutput: true,
    packwright: (repo) => [process.execPath, [cli, 'pack-objects', '--revs', '--all', '--stdout', '-q', '--delta-base-offset', '--no-use-bitmap-index'], repo],
    git: (repo) => ['git', ['pack-objects', '--revs', '--all', '--stdout', '-q', '--delta-base-offset', '--no-use-bitmap-index'], repo],
  });
}
// The HTTP cases' two servers: packwright serve, and git http-backend behind a Node CGI bridge.
const servers = {};
const start = (argv) => {
  const child = spawn(process.execPath, argv, { stdio: ['ignore', 'pipe', 'ignore'] });
  return new Promise((resolve) => child.stdout.once('data', (d) => resolve({ child, url: d.toString().trim() })));
};
/** Both servers over the bench's directory, serving `repo` (each stops at teardown, or by itself when idle). */
const startServers = async (repo) => {
  servers.name = repo.slice(work.length + 1);
  servers.packwright = await start([cli, 'serve', `--base-path=${work}`, '--export-all', '--idle-timeout=900', `--stats-file=${join(work, 'serve-http-pw.json')}`]);
  servers.git = await start([join(here, 'cgi-bridge.mjs'), work, join(work, 'serve-http-git.json')]);
  return repo;
};
const stopServers = async () => {
  for (const side of ['packwright', 'git']) {
    const exited = new Promise((resolve) => servers[side].child.once('exit', resolve));
    servers[side].child.kill('SIGTERM');
    await exited;
  }
};
const viaGit = () => `${servers.git.url.replace(/\/$/, '')}/${servers.name}`;
/** packwright's clone --bare against git's (and isomorphic-git's) from git http-backend: issue 41's clone line. */
function clientClone(label, make) {
  const dst = join(work, 'served-clone.git');
  cases.push({
    name: `client: clone --bare over HTTP from git http-backend, packwright clone vs git clone (${label})`,
    setup: () => startServers(make()),
    packwright: () => ['sh', ['-c', `rm -rf ${dst} && ${process.execPath} ${cli} clone -q --bare ${viaGit()} ${dst}`], work],
    git: () => ['sh', ['-c', `rm -rf ${dst} && git clone -q --bare ${viaGit()} ${dst}`], work],
    reference: { label: 'isomorphic-git clone (noCheckout)', setup: () => {}, run: () => [process.execPath, [join(here, 'isogit-clone.mjs'), viaGit(), join(work, 'isogit-clone')], work] },
    teardown: stopServers,
  });
}
for (const [label, make] of served) {
  for (const [kind, prepare] of [['', (r) => r], ['after repack -adb, ', bitmapped], ['after repack -adb and a push, ', bitmappedThenPushed]]) {
    const pwRss = join(work, 'serve-pw.rss');
    const gitRss = join(work, 'serve-git.rss');
    const dst = join(work, 'served-clone.git');
    const clone = (uploadPack) => (repo) => ['sh', ['-c', `rm -rf ${dst} && git clone -q --bare --no-local --upload-pack='${uploadPack}' file://${repo} ${dst}`], work];
    cases.push({
      name: `clone --bare --no-local, upload-pack over stdio, ${kind}(${label})`,
      setup: () => { rmSync(pwRss, { force: true }); rmSync(gitRss, { force: true }); return prepare(make()); },
      packwright: clone(`/usr/bin/time -a -f %M -o ${pwRss} ${process.execPath} ${cli} upload-pack`),
      git: clone(`/usr/bin/time -a -f %M -o ${gitRss} git upload-pack`),
      extra: () => ({ label: 'server peak RSS MB (upload-pack and what it ran)', packwright: maxRss(pwRss), git: maxRss(gitRss) }),
    });
  }
  // An incremental fetch: a clone of main~10, then main's last 10 commits.
  const base = join(work, 'fetch-base.git');
  const fetchWork = join(work, 'fetch-work.git');
  /** The repository, with a clone of main~10 at `base` for a fetch to bring up to date. */
  const withFetchBase = () => {
    const repo = make();
    execFileSync('git', ['branch', '-f', 'bench-base', 'main~10'], { cwd: repo });
    rmSync(base, { recursive: true, force: true });
    execFileSync('git', ['clone', '-q', '--bare', '--no-local', '--single-branch', '--branch', 'bench-base', `file://${repo}`, base]);
    return repo;
  };
  const fetch = (uploadPack) => () => ['sh', ['-c', `rm -rf ${fetchWork} && cp -a ${base} ${fetchWork} && git -C ${fetchWork} fetch -q --upload-pack='${uploadPack}' origin main`], work];
  cases.push({
    name: `fetch of 10 new commits, upload-pack over stdio (${label})`,
    setup: withFetchBase,
    packwright: fetch(`${process.execPath} ${cli} upload-pack`),
    git: fetch('git upload-pack'),
  });
  // Over HTTP: packwright serve against git http-backend behind a Node CGI bridge.
  const httpClone = (side) => () => ['sh', ['-c', `rm -rf ${dst} && git clone -q --bare ${servers[side].url.replace(/\/$/, '')}/${servers.name} ${dst}`], work];
  const dst = join(work, 'served-clone.git');
  cases.push({
    name: `clone --bare over HTTP: packwright serve vs git http-backend behind a Node CGI bridge (${label})`,
    setup: () => startServers(make()),
    packwright: httpClone('packwright'),
    git: httpClone('git'),
    teardown: stopServers,
    extra: () => {
      const pw = JSON.parse(readFileSync(join(work, 'serve-http-pw.json'), 'utf8'));
      const gt = JSON.parse(readFileSync(join(work, 'serve-http-git.json'), 'utf8'));
      return { label: 'server peak RSS MB (git: the bridge; its largest http-backend in the note)', packwright: pw.peakRssMB, git: gt.peakRssMB, note: `http-backend and its children: ${gt.childPeakRssMB} MB; packwright serve event-loop delay p99 ${pw.eventLoopDelayMs.p99} ms` };
    },
  });
  // The same fetch over HTTP: a long-lived packwright serve against a CGI per request.
  const httpFetch = (side) => () => ['sh', ['-c', `rm -rf ${fetchWork} && cp -a ${base} ${fetchWork} && git -C ${fetchWork} fetch -q ${servers[side].url.replace(/\/$/, '')}/${servers.name} main`], work];
  cases.push({
    name: `fetch of 10 new commits over HTTP: packwright serve vs git http-backend behind a Node CGI bridge (${label})`,
    setup: () => startServers(withFetchBase()),
    packwright: httpFetch('packwright'),
    git: httpFetch('git'),
    teardown: stopServers,
  });
  // A push of 10 commits over HTTP (issue 39): the same two servers, a repository at main~10 to
  // push to (http.receivepack on, which both honour), made afresh before each push.
  const pushTarget = join(work, 'push-target.git');
  const httpPush = (side) => () => ['sh', ['-c', `rm -rf ${pushTarget} && cp -a ${base} ${pushTarget} && git -C ${pushTarget} config http.receivepack true && git -C ${servers.repo} push -q ${servers[side].url.replace(/\/$/, '')}/push-target.git main:refs/heads/bench-base`], work];
  cases.push({
    name: `push of 10 new commits over HTTP: packwright serve vs git http-backend behind a Node CGI bridge (${label})`,
    setup: async () => {
      const repo = withFetchBase();
      servers.repo = repo;
      return startServers(repo);
    },
    packwright: httpPush('packwright'),
    git: httpPush('git'),
    teardown: stopServers,
  });
  // The client (issue 41): packwright's clone, fetch and push against git's, both talking to git
  // http-backend behind the CGI bridge (the same server for both clients).
  clientClone(label, make);
  cases.push({
    name: `client: fetch of 10 new commits over HTTP from git http-backend, packwright fetch vs git fetch (${label})`,
    setup: () => startServers(withFetchBase()),
    packwright: () => ['sh', ['-c', `rm -rf ${fetchWork} && cp -a ${base} ${fetchWork} && ${process.execPath} ${cli} --git-dir=${fetchWork} fetch -q ${viaGit()} main`], work],
    git: () => ['sh', ['-c', `rm -rf ${fetchWork} && cp -a ${base} ${fetchWork} && git -C ${fetchWork} fetch -q ${viaGit()} main`], work],
    teardown: stopServers,
  });
  const clientPush = (command) => () => ['sh', ['-c', `rm -rf ${pushTarget} && cp -a ${base} ${pushTarget} && git -C ${pushTarget} config http.receivepack true && ${command} push -q ${servers.git.url.replace(/\/$/, '')}/push-target.git main:refs/heads/bench-base`], work];
  cases.push({
    name: `client: push of 10 new commits over HTTP to git http-backend, packwright push vs git push (${label})`,
    setup: async () => {
      const repo = withFetchBase();
      servers.repo = repo;
      return startServers(repo);
    },
    packwright: () => clientPush(`${process.execPath} ${cli} --git-dir=${servers.repo}`)(),
    git: () => clientPush(`git -C ${servers.repo}`)(),
    teardown: stopServers,
  });
  // 16 clones at once: one packwright serve against 16 of git's upload-pack.
  const result = (side) => join(work, `concurrent-${side}.json`);
  cases.push({
    name: `16 clones at once: one packwright serve vs 16 git upload-packs (${label})`,
    setup: make,
    packwright: (repo) => [process.execPath, [join(here, 'concurrent-clones.mjs'), 'packwright', repo, '16', result('packwright')], work],
    git: (repo) => [process.execPath, [join(here, 'concurrent-clones.mjs'), 'git', repo, '16', result('git')], work],
    extra: async (repo) => {
      // One more round, checked: every clone fsck clean, and the server's figures.
      execFileSync(process.execPath, [join(here, 'concurrent-clones.mjs'), 'packwright', repo, '16', result('checked'), '--fsck']);
      const r = JSON.parse(readFileSync(result('checked'), 'utf8'));
      return { label: 'packwright serve peak RSS MB (of the checked round)', packwright: r.server.peakRssMB, git: NaN, note: `${r.succeeded}/16 clones, fsck ${r.clean ? 'clean' : 'NOT clean'}, event-loop delay p99 ${r.server.eventLoopDelayMs.p99} ms, max ${r.server.eventLoopDelayMs.max} ms` };
    },
  });
}

// Issue 41's clone of a repository of 300 MB or more: git.git's branches and tags as its snapshot
// holds them, repacked from the snapshot's own deltas (85k commits, 419k objects, a 318 MB pack
// with a bitmap, as a server's gc leaves it).
if (existsSync(gitMirror)) clientClone('git, branches and tags, 85k commits, 318 MB', () => branchesAndTags('git-full.git', gitMirror));

// Receiving pushes (issue 39): a whole history pushed into an empty repository, the same git
// client on both sides, git's receive-pack (with its index-pack) against packwright's. The
// server's peak RSS (receive-pack and what it ran) is reported apart.
const pushed = [];
if (existsSync(join(shared, 'isomorphic-git.pack'))) pushed.push(['isomorphic-git, complete', () => completeRepo('isomorphic-git-complete', () => ensureRepo('isomorphic-git'), 'main', ['--every-commit'])]);
if (existsSync(join(shared, 'gitoxide.pack'))) pushed.push(['gitoxide, complete, 130k objects', () => completeRepo('gitoxide-complete', () => ensureRepo('gitoxide'), 'main')]);
for (const [label, make] of pushed) {
  const pwRss = join(work, 'push-pw.rss');
  const gitRss = join(work, 'push-git.rss');
  const dst = join(work, 'pushed.git');
  const push = (receivePack) => (repo) => ['sh', ['-c', `rm -rf ${dst} && git init -q --bare ${dst} && git -C ${repo} push -q --receive-pack='${receivePack}' ${dst} 'refs/heads/*:refs/heads/*'`], work];
  cases.push({
    name: `push of the whole history into an empty repository, receive-pack over stdio (${label})`,
    setup: () => { rmSync(pwRss, { force: true }); rmSync(gitRss, { force: true }); return make(); },
    packwright: push(`/usr/bin/time -a -f %M -o ${pwRss} ${process.execPath} ${cli} receive-pack`),
    git: push(`/usr/bin/time -a -f %M -o ${gitRss} git receive-pack`),
    extra: () => ({ label: 'server peak RSS MB (receive-pack and what it ran)', packwright: maxRss(pwRss), git: maxRss(gitRss) }),
  });
}

// The repository API against isomorphic-git (issue 40), on the gitoxide corpus history made
// complete: git's commands for the same work as `git`, isomorphic-git as the reference, each a
// process of its own (bench/api.mjs). The work alone, in-process after loading, is in the note.
if (existsSync(join(shared, 'gitoxide.pack'))) {
  const repoOf = () => completeRepo('gitoxide-complete', () => ensureRepo('gitoxide'), 'main');
  const api = join(here, 'api.mjs');
  const inProcess = (repo, op) => () => {
    const run = (lib) => JSON.parse(execFileSync(process.execPath, [api, lib, op, repo]).toString());
    const [pw, iso] = [run('packwright'), run('isomorphic-git')];
    if (pw.digest !== iso.digest) throw new Error(`bench/api.mjs ${op}: packwright and isomorphic-git found different things`);
    return { label: 'in-process ms (packwright, isomorphic-git)', packwright: pw.ms, git: iso.ms, note: `isomorphic-git / packwright ${(iso.ms / pw.ms).toFixed(1)}x; ${pw.count} found, same as isomorphic-git` };
  };
  const ops = [
    ['log', 'log of 1000 commits, each parsed', ['sh', ['-c', 'git log -n 1000 --format=%H%n%an%n%B main']]],
    ['tree-blobs', 'readTree + readBlob of every file at main', ['sh', ['-c', "git ls-tree -r --format='%(objectname)' main | git cat-file --batch"]]],
    ['diffs', 'diffTrees of 100 consecutive commits', ['sh', ['-c', 'git log -n 100 --first-parent --raw --no-abbrev --format=%H main']]],
  ];
  for (const [op, what, [cmd, argv]] of ops) {
    cases.push({
      name: `library: ${what} (gitoxide, complete; reference: isomorphic-git)`,
      setup: repoOf,
      packwright: (repo) => [process.execPath, [api, 'packwright', op, repo], repo],
      git: (repo) => [cmd, argv, repo],
      reference: { label: 'isomorphic-git', setup: () => {}, run: () => [process.execPath, [api, 'isomorphic-git', op, repoOf()], tmpdir()] },
      differentOutput: true,
      extra: (repo) => inProcess(repo, op)(),
    });
  }
}

const results = [];
for (const c of cases) {
  if (filters.length > 0 && !filters.some((f) => c.name.includes(f))) continue;
  const input = await c.setup();
  const pw = [];
  const gt = [];
  // Sub-second cases move by more than their difference between runs: give them more pairs.
  let want = pairs;
  for (let i = 0; i < want; i++) {
    const out = c.outputFile?.(input);
    const fileDigest = () => { const d = createHash('sha256').update(readFileSync(out)).digest('hex'); rmSync(out); return d; };
    const a = await measure(...c.packwright(input));
    if (out) a.digest = fileDigest();
    const b = await measure(...c.git(input));
    if (out) b.digest = fileDigest();
    if (c.reference) {
      c.reference.setup();
      const r = await measure(...c.reference.run());
      if (c.reference.output !== undefined) r.same = createHash('sha256').update(readFileSync(c.reference.output())).digest('hex') === b.digest;
      (c.refRuns ??= []).push(r);
    }
    if (!c.differentOutput && a.digest !== b.digest) throw new Error(`${c.name}: packwright's output differs from git's (${a.bytes} vs ${b.bytes} bytes)`);
    pw.push(a);
    gt.push(b);
    if (i === 0 && a.wall + b.wall < 2) want = Math.max(pairs, MIN_PAIRS_SHORT);
    if (i === 0 && a.wall + b.wall > ONE_PAIR_OVER) want = 1;
  }
  const r = {
    name: c.name,
    pairs: want,
    packwright: { wall: median(pw.map((x) => x.wall)), rss: Math.max(...pw.map((x) => x.rss)) },
    git: { wall: median(gt.map((x) => x.wall)), rss: Math.max(...gt.map((x) => x.rss)) },
  };
  r.ratio = r.packwright.wall / r.git.wall;
  if (c.refRuns) {
    r.reference = { label: c.reference.label, wall: median(c.refRuns.map((x) => x.wall)), rss: Math.max(...c.refRuns.map((x) => x.rss)) };
    if (c.reference.output !== undefined) r.reference.sameOutput = c.refRuns.every((x) => x.same);
    r.reference.packwrightRatio = r.packwright.wall / r.reference.wall;
    console.log(`  reference ${r.reference.label}: ${r.reference.wall.toFixed(3)} s ${r.reference.rss.toFixed(0)} MB (packwright/reference ${r.reference.packwrightRatio.toFixed(2)}${c.reference.output !== undefined ? `; idx identical to git's: ${r.reference.sameOutput}` : ''})`);
  }
  r.rssRatio = r.packwright.rss / r.git.rss;
  if (c.teardown) await c.teardown();
  if (c.extra) {
    r.extra = await c.extra(input);
    console.log(`  ${r.extra.label}: packwright ${r.extra.packwright}, git ${r.extra.git}${r.extra.note ? ` (${r.extra.note})` : ''}`);
  }
  if (c.differentOutput) r.bytes = { packwright: pw[0].bytes, git: gt[0].bytes };
  results.push(r);
  console.log(`${r.name}: packwright ${r.packwright.wall.toFixed(2)} s ${r.packwright.rss.toFixed(0)} MB, git ${r.git.wall.toFixed(2)} s ${r.git.rss.toFixed(0)} MB, ratio ${r.ratio.toFixed(2)}, RSS ratio ${r.rssRatio.toFixed(2)}`);
}

const reportDir = join(here, 'report');
mkdirSync(reportDir, { recursive: true });
const gitVersion = execFileSync('git', ['--version']).toString().trim();
writeFileSync(join(reportDir, 'report.json'), JSON.stringify({ date: new Date().toISOString(), node: process.version, git: gitVersion, results }, null, 2));
let md = `# packwright benchmarks\n\n${new Date().toISOString()}, Node ${process.version}, ${gitVersion}, ${cpus().length} CPUs, median of ${pairs} alternating pairs (${MIN_PAIRS_SHORT} for cases under a second); wall time measured by the harness, peak RSS by /usr/bin/time; outputs checked identical.\n\n`;
md += '| case | packwright s | git s | ratio | packwright RSS MB | git RSS MB | RSS ratio |\n|---|---|---|---|---|---|---|\n';
for (const r of results) {
  md += `| ${r.name} | ${r.packwright.wall.toFixed(2)} | ${r.git.wall.toFixed(2)} | **${r.ratio.toFixed(2)}** | ${r.packwright.rss.toFixed(0)} | ${r.git.rss.toFixed(0)} | ${r.rssRatio.toFixed(2)} |\n`;
  if (r.bytes) md += `| ↳ output bytes | ${r.bytes.packwright} | ${r.bytes.git} | ${(r.bytes.packwright / r.bytes.git).toFixed(3)} | | | |\n`;
  if (r.extra) md += `| ↳ ${r.extra.label}${r.extra.note ? `; ${r.extra.note}` : ''} | ${Number.isNaN(r.extra.packwright) ? '' : Math.round(r.extra.packwright)} | ${Number.isNaN(r.extra.git) ? '' : Math.round(r.extra.git)} | | | | |\n`;
  if (r.reference) md += `| ↳ ${r.reference.label} (reference) | ${r.reference.wall.toFixed(2)} | | ${(r.reference.wall / r.git.wall).toFixed(2)} | ${r.reference.rss.toFixed(0)} | | ${(r.reference.rss / r.git.rss).toFixed(2)} |\n`;
}

// index-pack: time against threads, scaling efficiency T1 / (N · TN), RSS against revisions.
const ip = results.filter((r) => r.name.startsWith('index-pack') && !r.name.includes('--stdin') && !r.name.includes('--max-memory'));
const parse = (r) => ({ threads: Number(/threads=(\d+)/.exec(r.name)?.[1]), input: /\((.*)\)/.exec(r.name)?.[1] ?? '' });
const inputs = [...new Set(ip.map((r) => parse(r).input))];
if (ip.length > 0) {
  md += '\n## index-pack scaling\n\n| input | packwright T1/(2·T2) | git T1/(2·T2) |\n|---|---|---|\n';
  for (const input of inputs) {
    const one = ip.find((r) => parse(r).input === input && parse(r).threads === 1);
    const two = ip.find((r) => parse(r).input === input && parse(r).threads === 2);
    if (one && two) md += `| ${input} | ${(one.packwright.wall / (2 * two.packwright.wall)).toFixed(2)} | ${(one.git.wall / (2 * two.git.wall)).toFixed(2)} |\n`;
  }
  const real = inputs.filter((i) => i.endsWith('.pack'));
  if (real.length > 0) {
    writeFileSync(join(reportDir, 'index-pack-threads.svg'), lineChart({
      title: 'index-pack wall time against threads', xLabel: 'threads', yLabel: 'seconds',
      series: real.flatMap((input) => ['packwright', 'git'].map((who) => ({
        name: `${who} ${input.replace('.pack', '')}`,
        points: ip.filter((r) => parse(r).input === input).map((r) => [parse(r).threads, r[who].wall]),
      }))),
    }));
    md += '\n![index-pack time against threads](index-pack-threads.svg)\n';
  }
  const deep = ip.filter((r) => parse(r).input.startsWith('deep chain'));
  if (deep.length > 0) {
    const revs = (r) => Number(/of (\d+) revisions/.exec(r.name)?.[1]);
    writeFileSync(join(reportDir, 'index-pack-rss.svg'), lineChart({
      title: 'index-pack peak RSS against revisions (deep chains)', xLabel: 'revisions', yLabel: 'MB',
      series: [1, 2].flatMap((t) => ['packwright', 'git'].map((who) => ({
        name: `${who} --threads=${t}`,
        points: deep.filter((r) => parse(r).threads === t).map((r) => [revs(r), r[who].rss]),
      }))),
    }));
    md += '\n![index-pack RSS against revisions](index-pack-rss.svg)\n';
  }
}
// index-pack under a memory ceiling: time and peak RSS against --max-memory (0, none, drawn at 1024).
const ceil = results.filter((r) => r.name.includes('--max-memory='));
if (ceil.length > 0) {
  const mb = (r) => { const v = /--max-memory=(\d+)([mg]?)/.exec(r.name); const n = Number(v[1]) * (v[2] === 'g' ? 1024 : 1); return n === 0 ? 1024 : n; };
  md += '\n## index-pack under a memory ceiling (gitoxide.pack, --threads=2)\n\n| --max-memory | packwright s | ratio to git | packwright RSS MB |\n|---|---|---|---|\n';
  for (const r of ceil) md += `| ${/--max-memory=(\S+)/.exec(r.name)[1]} | ${r.packwright.wall.toFixed(2)} | ${r.ratio.toFixed(2)} | ${r.packwright.rss.toFixed(0)} |\n`;
  writeFileSync(join(reportDir, 'index-pack-ceiling.svg'), lineChart({
    title: 'index-pack on gitoxide.pack against --max-memory (1024: none)', xLabel: '--max-memory, MB', yLabel: 'seconds / 100 MB',
    series: [
      { name: 'packwright time (s)', points: ceil.map((r) => [mb(r), r.packwright.wall]) },
      { name: 'git time (s)', points: ceil.map((r) => [mb(r), r.git.wall]) },
      { name: 'packwright RSS (100 MB)', points: ceil.map((r) => [mb(r), r.packwright.rss / 100]) },
    ],
  }));
  md += '\n![index-pack time against the memory ceiling](index-pack-ceiling.svg)\n';
}
// pack-objects --no-reuse-delta: time against threads, both tools, each corpus repository.
const po = results.filter((r) => r.name.startsWith('pack-objects --no-reuse-delta'));
if (po.length > 0) {
  const poInputs = [...new Set(po.map((r) => parse(r).input))];
  md += '\n## pack-objects --no-reuse-delta scaling\n\n| input | packwright T1/(2·T2) | git T1/(2·T2) | packwright pack / git pack (1 thread, 2 threads) |\n|---|---|---|---|\n';
  for (const input of poInputs) {
    const one = po.find((r) => parse(r).input === input && parse(r).threads === 1);
    const two = po.find((r) => parse(r).input === input && parse(r).threads === 2);
    if (one && two) md += `| ${input} | ${(one.packwright.wall / (2 * two.packwright.wall)).toFixed(2)} | ${(one.git.wall / (2 * two.git.wall)).toFixed(2)} | ${(one.bytes.packwright / one.bytes.git).toFixed(3)}, ${(two.bytes.packwright / two.bytes.git).toFixed(3)} |\n`;
  }
  writeFileSync(join(reportDir, 'pack-objects-threads.svg'), lineChart({
    title: 'pack-objects --no-reuse-delta wall time against threads', xLabel: 'threads', yLabel: 'seconds',
    series: poInputs.flatMap((input) => ['packwright', 'git'].map((who) => ({
      name: `${who} ${input}`,
      points: po.filter((r) => parse(r).input === input).map((r) => [parse(r).threads, r[who].wall]),
    }))),
  }));
  md += '\n![pack-objects time against threads](pack-objects-threads.svg)\n';
}
// The store's in-process figures (bench/store.mjs), on the gitoxide repository made above.
if ((filters.length === 0 || filters.includes('store')) && existsSync(join(work, 'gitoxide'))) {
  const store = execFileSync(process.execPath, [join(here, 'store.mjs'), join(work, 'gitoxide')], { maxBuffer: 1 << 26 }).toString();
  console.log(store);
  md += store;
}
writeFileSync(join(reportDir, 'report.md'), md);
console.log(`report: ${join(reportDir, 'report.md')}`);
