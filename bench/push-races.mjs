#!/usr/bin/env node
// node bench/push-races.mjs [PUSHES] [CLIENTS] [REFS]   (defaults 1000 8 3)
//
// Issue 39's race check at full size: PUSHES forced pushes from CLIENTS concurrent git clients to
// REFS refs of one repository, half of the clients through a `packwright serve
// --enable=receive-pack` on 127.0.0.1 (one process, many pushes at once), half through `git push
// --receive-pack='packwright receive-pack'` (a process each, racing on the lock files). Then:
// each ref is at the value of the last push told "ok" (its reflog holds the first value and
// exactly the pushes told "ok"), every push that lost was told "failed to update ref" as git
// tells it, no lock file or quarantine is left, and git fsck is clean. Prints the counts; exits 1
// when a check fails. The server stops by itself (--max-requests, --idle-timeout).
import { execFile, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';

const execFileAsync = promisify(execFile);
const cli = fileURLToPath(new URL('../dist/bin/packwright.cjs', import.meta.url));
const [pushes = 1000, clients = 8, refCount = 3] = process.argv.slice(2).map(Number);
const env = { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', GIT_AUTHOR_NAME: 'A', GIT_AUTHOR_EMAIL: 'a@example.com', GIT_COMMITTER_NAME: 'C', GIT_COMMITTER_EMAIL: 'c@example.com' };
const git = (cwd, args, input) => execFileSync('git', args, { cwd, env, input, maxBuffer: 1 << 28 }).toString().trim();

const dir = mkdtempSync(join(tmpdir(), 'push-races-'));
const src = join(dir, 'src.git');
const target = join(dir, 'target.git');
git(dir, ['init', '-q', '--bare', '-b', 'main', src]);
const blob = git(src, ['hash-object', '-w', '--stdin'], 'hello\n');
const tree = git(src, ['mktree'], `100644 blob ${blob}\tREADME\n`);
const base = git(src, ['commit-tree', tree, '-m', 'base']);
git(src, ['update-ref', 'refs/heads/main', base]);
git(dir, ['init', '-q', '--bare', target]);
git(target, ['config', 'core.logAllRefUpdates', 'true']);
git(target, ['config', 'receive.autogc', 'false']);
const refs = Array.from({ length: refCount }, (_, i) => `refs/heads/r${i}`);
git(src, ['push', '-q', target, ...refs.map((r) => `main:${r}`)]);
// One commit per push, each with a blob of its own (a pack to receive, not only a ref to move).
const commits = [];
for (let i = 0; i < pushes; i++) {
  const b = git(src, ['hash-object', '-w', '--stdin'], `push ${i}\n`);
  const t = git(src, ['mktree'], `100644 blob ${blob}\tREADME\n100644 blob ${b}\tpush-${i}\n`);
  commits.push(git(src, ['commit-tree', t, '-p', base, '-m', `push ${i}`]));
}

// Every push is two requests over HTTP.
const served = pushes * 4;
const server = spawn(process.execPath, [cli, 'serve', `--base-path=${dir}`, '--export-all', '--enable=receive-pack', `--max-requests=${served}`, '--idle-timeout=60'], { env, stdio: ['ignore', 'pipe', 'inherit'] });
const url = await new Promise((resolve) => server.stdout.once('data', (d) => resolve(d.toString().trim().replace(/\/$/, ''))));
const receivePack = `${process.execPath} ${cli} receive-pack`;

const outcomes = [];
let next = 0;
const started = Date.now();
await Promise.all(Array.from({ length: clients }, async (_, c) => {
  for (let i = next++; i < pushes; i = next++) {
    const commit = commits[i];
    const ref = refs[i % refs.length];
    const via = c % 2 === 0 ? [`${url}/target.git`] : [`--receive-pack=${receivePack}`, `file://${target}`];
    let stdout = '';
    let stderr = '';
    try {
      ({ stdout, stderr } = await execFileAsync('git', ['push', '--porcelain', ...via, `+${commit}:${ref}`], { cwd: src, env }));
    } catch (e) {
      ({ stdout = '', stderr = '' } = e);
    }
    const line = stdout.split('\n').find((l) => l.includes(`${commit}:${ref}`)) ?? '';
    outcomes.push({ ref, commit, ok: /^[+* ]\t/.test(line), reason: line.split('\t')[2] ?? stderr.trim() });
  }
}));
const seconds = (Date.now() - started) / 1000;
server.kill('SIGTERM');

const failures = [];
const lost = outcomes.filter((o) => !o.ok);
const reasons = new Map();
for (const o of lost) reasons.set(o.reason, (reasons.get(o.reason) ?? 0) + 1);
for (const [reason, n] of reasons) if (reason !== '[remote rejected] (failed to update ref)') failures.push(`${n} pushes lost with: ${reason}`);
for (const ref of refs) {
  const log = readFileSync(join(target, 'logs', ref), 'utf8').trim().split('\n').map((l) => l.split(' ')[1]);
  const ok = outcomes.filter((o) => o.ref === ref && o.ok).map((o) => o.commit).sort();
  if (JSON.stringify(log.slice(1).sort()) !== JSON.stringify(ok)) failures.push(`${ref}: its reflog is not the pushes told ok`);
  if (git(target, ['rev-parse', ref]) !== log.at(-1)) failures.push(`${ref}: not at its reflog's last value`);
}
const files = (d) => readdirSync(d, { recursive: true });
const locks = files(join(target, 'refs')).filter((f) => String(f).endsWith('.lock'));
if (locks.length > 0) failures.push(`lock files left: ${locks.join(', ')}`);
const quarantines = readdirSync(join(target, 'objects')).filter((f) => f.startsWith('tmp_objdir'));
if (quarantines.length > 0) failures.push(`quarantines left: ${quarantines.join(', ')}`);
try {
  git(target, ['fsck', '--full', '--no-dangling']);
} catch (e) {
  failures.push(`git fsck: ${e.message}`);
}
console.log(JSON.stringify({ pushes, clients, refs: refCount, seconds, ok: outcomes.length - lost.length, lost: lost.length, reasons: Object.fromEntries(reasons), failures }, null, 2));
if (failures.length === 0) rmSync(dir, { recursive: true, force: true });
process.exitCode = failures.length === 0 ? 0 : 1;
