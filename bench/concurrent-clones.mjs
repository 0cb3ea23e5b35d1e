#!/usr/bin/env node
// node bench/concurrent-clones.mjs packwright|git REPO N RESULT-FILE [--fsck]
//
// N bare clones of REPO at once: from one `packwright serve` on 127.0.0.1 (its event-loop delay
// and peak RSS from --stats-file), or from N of git's upload-pack (git clone --no-local over
// file://, git's own server side, one process each). With --fsck every clone is checked by `git
// fsck`. Writes RESULT-FILE: the clones' wall time, whether all succeeded (and were clean), and
// the server's figures.
import { execFile, spawn } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const [who, repo, count, resultFile] = process.argv.slice(2);
const fsck = process.argv.includes('--fsck');
const n = Number(count);
const cli = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'bin', 'packwright.cjs');
const out = `${resultFile}.clones`;
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
let url = `file://${repo}`;
let server;
const statsFile = `${resultFile}.server`;
if (who === 'packwright') {
  rmSync(statsFile, { force: true });
  server = spawn(process.execPath, [cli, 'serve', `--base-path=${dirname(repo)}`, '--export-all', '--idle-timeout=600', `--stats-file=${statsFile}`], { stdio: ['ignore', 'pipe', 'inherit'] });
  const base = await new Promise((resolve) => server.stdout.once('data', (d) => resolve(d.toString().trim())));
  url = `${base}${basename(repo)}`;
}
const started = performance.now();
const clones = await Promise.allSettled(Array.from({ length: n }, (_, i) => run('git', ['clone', '-q', '--bare', ...(who === 'git' ? ['--no-local'] : []), url, join(out, `c${i}`)], { maxBuffer: 1 << 24 })));
const wall = (performance.now() - started) / 1000;
let clean = clones.every((c) => c.status === 'fulfilled');
if (fsck && clean) {
  for (let i = 0; i < n; i += 2) {
    const checks = await Promise.allSettled([i, i + 1].filter((k) => k < n).map((k) => run('git', ['fsck', '--no-dangling'], { cwd: join(out, `c${k}`) })));
    if (checks.some((c) => c.status !== 'fulfilled')) clean = false;
  }
}
let serverStats;
if (server !== undefined) {
  const exited = new Promise((resolve) => server.once('exit', resolve));
  server.kill('SIGTERM');
  await exited;
  serverStats = JSON.parse(readFileSync(statsFile, 'utf8'));
}
rmSync(out, { recursive: true, force: true });
writeFileSync(resultFile, JSON.stringify({ who, clones: n, wall, succeeded: clones.filter((c) => c.status === 'fulfilled').length, clean: fsck ? clean : undefined, server: serverStats }));
if (!clones.every((c) => c.status === 'fulfilled')) {
  console.error(clones.find((c) => c.status === 'rejected')?.reason?.message);
  process.exit(1);
}
