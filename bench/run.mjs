#!/usr/bin/env node
// npm run bench [-- filter] [--pairs=N]
// Runs each case for packwright and for git alternately on the same input (A B A B ...), checks
// that both printed the same bytes (or produced the same files), and reports the median wall time,
// the ratio packwright/git and peak RSS. Writes bench/report/report.md and report.json.
import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..');
const cli = join(root, 'dist', 'cli', 'main.js');
const shared = join(root, '..', 'shared', 'corpus');
const work = join(tmpdir(), 'packwright-bench');
const args = process.argv.slice(2);
const pairs = Number(args.find((a) => a.startsWith('--pairs='))?.slice(8) ?? 3);
const filter = args.find((a) => !a.startsWith('--')) ?? '';

/**
 * Runs one command under /usr/bin/time, hashing its stdout as it streams (outputs reach 2 GB);
 * returns wall seconds, peak RSS (MB) and the digest.
 */
function measure(cmd, argv, cwd) {
  const timeFile = join(work, 'time.txt');
  mkdirSync(work, { recursive: true });
  return new Promise((resolve, reject) => {
    const child = spawn('/usr/bin/time', ['-o', timeFile, '-f', '%e %M', cmd, ...argv], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    const hash = createHash('sha256');
    let bytes = 0;
    let stderr = '';
    child.stdout.on('data', (d) => { hash.update(d); bytes += d.length; });
    child.stderr.on('data', (d) => { stderr += d; });
    child.on('close', (status) => {
      if (status !== 0) return reject(new Error(`${cmd} ${argv.join(' ')} failed (${status}): ${stderr}`));
      const [wall, rssKb] = readFileSync(timeFile, 'utf8').trim().split('\n').at(-1).split(' ').map(Number);
      resolve({ wall, rss: rssKb / 1024, digest: hash.digest('hex'), bytes });
    });
  });
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

function ensureRepo(name) {
  const out = join(work, name);
  if (!existsSync(join(out, 'packed-refs'))) {
    mkdirSync(work, { recursive: true });
    execFileSync('sh', [join(shared, 'make-repo.sh'), name, out], { stdio: 'ignore' });
  }
  return out;
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
for (const revs of [250, 1000, 4000]) {
  indexPackCases(`deep chain of ${revs} revisions`, () => {
    const repo = join(work, `deep-${revs}`);
    if (!existsSync(join(repo, 'objects', 'pack'))) execFileSync('sh', [join(shared, 'make-deep-chain.sh'), repo, String(revs)], { stdio: 'ignore' });
    const dir = join(repo, 'objects', 'pack');
    return join(dir, readdirSync(dir).find((f) => f.endsWith('.pack')));
  });
}

const results = [];
for (const c of cases) {
  if (filter && !c.name.includes(filter)) continue;
  const input = c.setup();
  const pw = [];
  const gt = [];
  for (let i = 0; i < pairs; i++) {
    const out = c.outputFile?.(input);
    const fileDigest = () => { const d = createHash('sha256').update(readFileSync(out)).digest('hex'); rmSync(out); return d; };
    const a = await measure(...c.packwright(input));
    if (out) a.digest = fileDigest();
    const b = await measure(...c.git(input));
    if (out) b.digest = fileDigest();
    if (a.digest !== b.digest) throw new Error(`${c.name}: packwright's output differs from git's (${a.bytes} vs ${b.bytes} bytes)`);
    pw.push(a);
    gt.push(b);
  }
  const r = {
    name: c.name,
    pairs,
    packwright: { wall: median(pw.map((x) => x.wall)), rss: Math.max(...pw.map((x) => x.rss)) },
    git: { wall: median(gt.map((x) => x.wall)), rss: Math.max(...gt.map((x) => x.rss)) },
  };
  r.ratio = r.packwright.wall / r.git.wall;
  r.rssRatio = r.packwright.rss / r.git.rss;
  results.push(r);
  console.log(`${r.name}: packwright ${r.packwright.wall.toFixed(2)} s ${r.packwright.rss.toFixed(0)} MB, git ${r.git.wall.toFixed(2)} s ${r.git.rss.toFixed(0)} MB, ratio ${r.ratio.toFixed(2)}, RSS ratio ${r.rssRatio.toFixed(2)}`);
}

const reportDir = join(here, 'report');
mkdirSync(reportDir, { recursive: true });
const gitVersion = execFileSync('git', ['--version']).toString().trim();
writeFileSync(join(reportDir, 'report.json'), JSON.stringify({ date: new Date().toISOString(), node: process.version, git: gitVersion, results }, null, 2));
let md = `# packwright benchmarks\n\n${new Date().toISOString()}, Node ${process.version}, ${gitVersion}, median of ${pairs} alternating pairs; outputs checked identical.\n\n`;
md += '| case | packwright s | git s | ratio | packwright RSS MB | git RSS MB | RSS ratio |\n|---|---|---|---|---|---|---|\n';
for (const r of results) md += `| ${r.name} | ${r.packwright.wall.toFixed(2)} | ${r.git.wall.toFixed(2)} | **${r.ratio.toFixed(2)}** | ${r.packwright.rss.toFixed(0)} | ${r.git.rss.toFixed(0)} | ${r.rssRatio.toFixed(2)} |\n`;
writeFileSync(join(reportDir, 'report.md'), md);
console.log(`report: ${join(reportDir, 'report.md')}`);
