#!/usr/bin/env node
// npm run repack-race [-- --repo DIR] [-- --repacks N] [-- --threads T]: runs
// `packwright odb stats --extra-header-lookup --threads T` over and over on a repository while
// another process runs `git repack -ad` in a loop (each time after writing a new blob, so every
// repack publishes a new pack, reusing the stored deltas, and deletes the old one). Every run must find every object with
// its type and size: prints the runs, repacks and failures, and exits 1 on any failure.
// Without --repo it copies ../shared/corpus's isomorphic-git repository when there is one, else
// makes a repository of 300 commits.
import { spawn, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, cpSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { repo: { type: 'string' }, repacks: { type: 'string', default: '20' }, threads: { type: 'string', default: '4' } } });
const cli = new URL('../dist/bin/packwright.cjs', import.meta.url).pathname;
const work = mkdtempSync(join(tmpdir(), 'packwright-race-'));
let repo = join(work, 'repo.git');
const corpus = new URL('../../shared/corpus/make-repo.sh', import.meta.url).pathname;
if (values.repo !== undefined) {
  cpSync(values.repo, repo, { recursive: true });
} else if (existsSync(corpus)) {
  execFileSync('sh', [corpus, 'isomorphic-git', repo], { stdio: 'ignore' });
} else {
  repo = join(work, 'made');
  execFileSync('git', ['init', '-q', repo]);
  for (let i = 0; i < 300; i++) {
    writeFileSync(join(repo, `f${i % 17}`), `revision ${i}\n`.repeat(50 + i));
    execFileSync('git', ['-C', repo, 'add', '.']);
    execFileSync('git', ['-C', repo, '-c', 'user.name=a', '-c', 'user.email=a@b', 'commit', '-qm', String(i)]);
  }
  execFileSync('git', ['-C', repo, 'repack', '-adq']);
  repo = join(repo, '.git');
}
const repacks = Number(values.repacks);
const loop = spawn('sh', ['-c', `i=0; while [ $i -lt ${repacks} ]; do echo "race $i $$" | git --git-dir="$1" hash-object -w --stdin >/dev/null; git --git-dir="$1" repack -adq; i=$((i+1)); done`, 'sh', repo], { stdio: 'ignore' });
let running = true;
loop.on('exit', () => { running = false; });
let runs = 0;
let failures = 0;
// Each run is awaited, so the event loop sees the repack loop's exit.
const statsRun = () => new Promise((resolve) => {
  const child = spawn(process.execPath, [cli, `--git-dir=${repo}`, 'odb', 'stats', '--extra-header-lookup', '--json', '--threads', values.threads], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => { stderr += d; });
  child.on('close', (status) => resolve({ status, stderr }));
});
while (running) {
  const r = await statsRun();
  runs++;
  if (r.status !== 0) {
    failures++;
    process.stderr.write(`run ${runs} failed (${r.status}):\n${r.stderr.split('\n').slice(0, 5).join('\n')}\n`);
  }
}
process.stdout.write(`${runs} runs of odb stats --extra-header-lookup --threads ${values.threads} during ${repacks} repacks: ${failures} failed\n`);
rmSync(work, { recursive: true, force: true });
process.exit(failures > 0 ? 1 : 0);
