import { spawnSync } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run } from '../../src/cli/run.js';
import { memoryIO } from '../../src/cli/command-io.js';
import { execSync } from './spawn-client.js';

/** The executable as shipped (the bundle `npm run build` makes; npm test builds first). */
export const CLI = new URL('../../../dist/bin/packwright.cjs', import.meta.url).pathname;

// Servers in tests listen on 127.0.0.1: a proxy from the machine's environment must not stand
// between them and the clients (git's or packwright's), which would both read it.
for (const name of ['http_proxy', 'HTTP_PROXY', 'https_proxy', 'HTTPS_PROXY', 'all_proxy', 'ALL_PROXY']) delete process.env[name];

export const GIT_ENV = {
  ...process.env,
  GIT_AUTHOR_NAME: 'A U Thor', GIT_AUTHOR_EMAIL: 'author@example.com', GIT_AUTHOR_DATE: '1700000000 +0000',
  GIT_COMMITTER_NAME: 'C O Mitter', GIT_COMMITTER_EMAIL: 'committer@example.com', GIT_COMMITTER_DATE: '1700000000 +0000',
  GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', HOME: tmpdir(),
};

export function git(cwd: string, args: string[], input?: Buffer | string): Buffer {
  return execSync('git', args, { cwd, env: GIT_ENV, input });
}

/** An object as git reads it. */
export interface GitObject {
  type: string;
  data: Buffer;
}

/** Every object of a repository as git reads it (id → type and bytes): one `git cat-file --batch`, not a process per object. */
export function gitObjects(repo: string): Map<string, GitObject> {
  const out = git(repo, ['cat-file', '--batch-all-objects', '--batch']);
  const objects = new Map<string, GitObject>();
  for (let at = 0; at < out.length;) {
    const eol = out.indexOf(0x0a, at);
    const [id, type, size] = out.toString('latin1', at, eol).split(' ') as [string, string, string];
    const start = eol + 1;
    objects.set(id, { type, data: out.subarray(start, start + Number(size)) });
    at = start + Number(size) + 1;
  }
  return objects;
}

/** Runs the real bin in a process of its own (for tests of the process: start-up, relaunch, signals); its outcome. */
export function packwrightProcess(cwd: string, args: string[], input?: Buffer | string): CommandOutcome {
  const r = spawnSync(process.execPath, [CLI, ...args], { cwd, input, maxBuffer: 1 << 30, stdio: ['pipe', 'pipe', 'pipe'] });
  if (r.error !== undefined) throw r.error;
  return { status: r.status ?? 128, stdout: r.stdout, stderr: r.stderr.toString() };
}

/** What one packwright command did: its exit status and what it wrote. */
export interface CommandOutcome {
  status: number;
  stdout: Buffer;
  stderr: string;
}

/**
 * Runs a packwright command in this process, as the bin would run it (the same `run`, with `cwd`
 * as its directory and this process's environment unless `env` is given), and resolves to its
 * outcome. A command costs milliseconds this way where a process costs ~0.1 s; tests of the
 * process itself (start-up, signals, exit of a bug) spawn `CLI`.
 */
export async function runPackwright(cwd: string, args: string[], options: { input?: Buffer | string | undefined; env?: Record<string, string | undefined> } = {}): Promise<CommandOutcome> {
  const io = memoryIO({ cwd, env: options.env ?? { ...process.env }, stdin: options.input });
  const status = await run(args, io);
  return { status, stdout: io.stdout.bytes(), stderr: io.stderr.text() };
}

/** Runs packwright in-process expecting success; resolves to its stdout. */
export async function packwright(cwd: string, args: string[], input?: Buffer | string): Promise<Buffer> {
  const r = await runPackwright(cwd, args, { input });
  if (r.status !== 0) throw new Error(`packwright ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return r.stdout;
}

/** Runs packwright in-process expecting failure; resolves to its exit status and stderr. */
export async function packwrightFails(cwd: string, args: string[], input?: Buffer | string): Promise<{ status: number; stderr: string }> {
  const r = await runPackwright(cwd, args, { input });
  if (r.status === 0) throw new Error(`packwright ${args.join(' ')} succeeded but should have failed`);
  return { status: r.status, stderr: r.stderr };
}

/** The name of the first file in `dir` ending in `ext` (a pack directory's `.pack` or `.idx`). */
export function fileEndingIn(dir: string, ext: string): string {
  const name = readdirSync(dir).find((f) => f.endsWith(ext));
  if (name === undefined) throw new Error(`${dir} has no file ending in ${ext}`);
  return name;
}

export function tempDir(prefix = 'packwright-'): { path: string; [Symbol.dispose](): void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, [Symbol.dispose]: () => rmSync(path, { recursive: true, force: true }) };
}

export type Format = 'sha1' | 'sha256';

/**
 * The cases of a matrix that does not depend on the hash which `format` runs: every one in SHA-1,
 * every third (the first among them) in SHA-256, which runs the same code with longer ids (the
 * suite's time).
 */
export function casesFor<T>(format: Format, cases: readonly T[]): T[] {
  return cases.filter((_, i) => format === 'sha1' || i % 3 === 0);
}

/**
 * Fixtures made once per test run and shared by every test file (each file runs in a process of
 * its own under one `node --test`): built by git into `<tmp>/packwright-fixtures-<runner pid>/`,
 * keyed by their recipe (the builder's name and its arguments), then copied for each test. A fixture is built under a temporary name and
 * renamed into place, so two files that build the same one at once both end with a whole copy.
 * Directories of runs whose runner has exited are removed by the next run.
 */
const runDir = join(tmpdir(), `packwright-fixtures-${process.ppid}`);
let cleaned = false;

/**
 * A copy at `copyTo` of what `build` makes (given a scratch directory, it returns the path of what
 * it built there), built once per test run for each `name` and `args`.
 */
export function fixture(name: string, args: readonly (string | number)[], build: (dir: string) => string, copyTo: string): string {
  if (!cleaned) {
    cleaned = true;
    for (const entry of readdirSync(tmpdir())) {
      const m = /^packwright-fixtures-(\d+)$/.exec(entry);
      if (m === null || Number(m[1]) === process.ppid) continue;
      let alive = true;
      try {
        process.kill(Number(m[1]), 0);
      } catch {
        // No such process (or not ours to signal, so no runner of ours): its fixtures are stale.
        alive = false;
      }
      if (!alive) rmSync(join(tmpdir(), entry), { recursive: true, force: true });
    }
  }
  const key = `${name}-${args.join('-')}`;
  const built = join(runDir, key);
  if (!existsSync(built)) {
    mkdirSync(runDir, { recursive: true });
    const scratch = mkdtempSync(join(runDir, `.${key}-`));
    const repo = build(scratch);
    try {
      renameSync(repo, built);
    } catch (e) {
      // Another test file built it first: theirs is whole, ours goes.
      if (!existsSync(built)) throw e;
    }
    rmSync(scratch, { recursive: true, force: true });
  }
  cpSync(built, copyTo, { recursive: true, verbatimSymlinks: true });
  return copyTo;
}

/**
 * A repository with history worth packing: several revisions of text files (so repacking makes
 * deltas), a symlink, an executable, a submodule entry, an annotated tag, a nested tree. Built
 * once per test run for each format and size, then copied (its ids are the same every time:
 * dates and names are fixed).
 */
export function makeRepo(dir: string, format: Format, revisions = 12): string {
  return fixture('repo', [format, revisions], (at) => buildRepo(at, format, revisions), join(dir, 'repo'));
}

function buildRepo(dir: string, format: Format, revisions: number): string {
  git(dir, ['init', '-q', `--object-format=${format}`, '-b', 'main', 'repo']);
  const repo = join(dir, 'repo');
  let text = Array.from({ length: 300 }, (_, i) => `line ${i} of a file that changes a little every revision`).join('\n');
  mkdirSync(join(repo, 'dir', 'sub'), { recursive: true });
  for (let r = 0; r < revisions; r++) {
    text = text.replace(`line ${r * 7} `, `changed ${r} `) + `\nappended in revision ${r}`;
    writeFileSync(join(repo, 'file.txt'), text);
    writeFileSync(join(repo, 'dir', 'sub', 'other.txt'), text.split('\n').reverse().join('\n'));
    writeFileSync(join(repo, 'dir', `rev-${r % 3}.txt`), `revision ${r}\n`);
    if (r === 0) {
      writeFileSync(join(repo, 'run.sh'), '#!/bin/sh\necho hi\n');
      chmodSync(join(repo, 'run.sh'), 0o755);
      symlinkSync('file.txt', join(repo, 'link'));
    }
    git(repo, ['add', '-A']);
    if (r === 1) {
      // A submodule entry (mode 160000) pointing at a commit that is not in this repository.
      const fake = format === 'sha1' ? '1'.repeat(40) : '1'.repeat(64);
      git(repo, ['update-index', '--add', '--cacheinfo', `160000,${fake},vendor/lib`]);
    }
    git(repo, ['commit', '-q', '-m', `revision ${r}\n\nbody of ${r}`]);
  }
  git(repo, ['tag', '-a', '-m', 'a tag', 'v1.0', 'HEAD~2']);
  git(repo, ['tag', 'light', 'HEAD~1']);
  return repo;
}

/**
 * A fast-import stream: one text file rewritten `revs` times with five line edits each (the shape of
 * ../shared/corpus/make-deep-chain.mjs). Repacked with a large --depth it becomes one delta chain
 * about as deep as `revs`: lines are edited in place at a fixed width and each revision appends
 * one, so each version is larger than the one before, git's delta search (largest first, in a
 * window) meets them in history's order, and each takes the one before as its base.
 */
export function deepChainStream(revs: number, lines = 300): string {
  let seed = 12345;
  const random = (): number => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
  const word = (): string => Math.floor(random() * 1e9).toString(36);
  const content = Array.from({ length: lines }, (_, i) => `line ${i} ${word()} lorem ipsum`.padEnd(40));
  const parts: string[] = [];
  for (let rev = 0; rev < revs; rev++) {
    for (let k = 0; k < 5; k++) content[Math.floor(random() * lines)] = `edit ${rev}.${k} ${word()}`.padEnd(40);
    content.push(`rev ${rev}`);
    const data = content.join('\n') + '\n';
    const msg = `rev ${rev}\n`;
    parts.push(`commit refs/heads/main\nmark :${rev + 1}\ncommitter A U Thor <author@example.com> ${1700000000 + rev} +0000\n` +
      `data ${Buffer.byteLength(msg)}\n${msg}` + (rev ? `from :${rev}\n` : '') +
      `M 100644 inline big.txt\ndata ${Buffer.byteLength(data)}\n${data}\n`);
  }
  return parts.join('');
}

export function makeDeepChainRepo(dir: string, revs: number, format: Format = 'sha1'): string {
  return fixture('deep-chain', [revs, format], (at) => buildDeepChainRepo(at, revs, format), join(dir, 'deep.git'));
}

function buildDeepChainRepo(dir: string, revs: number, format: Format): string {
  const repo = join(dir, 'deep.git');
  git(dir, ['init', '-q', '--bare', `--object-format=${format}`, repo]);
  git(repo, ['fast-import', '--quiet'], deepChainStream(revs));
  git(repo, ['-c', 'pack.threads=1', 'repack', '-adfq', '--depth=4095', '--window=10']);
  return repo;
}

/**
 * A repository with the shapes pack generation must get right, made with fast-import (fast, and the
 * same ids every time): `commits` commits on main with side branches merged back (and one octopus
 * merge), one branch left unmerged, renames and deletions, a submodule entry, dates that repeat
 * and a few that go backwards (clock skew), annotated tags (of commits, of a tag, of a tree and of
 * a blob) and a lightweight one. Stored in two packs and some loose objects.
 */
export function makeHistoryRepo(dir: string, format: Format, commits = 120): string {
  return fixture('history', [format, commits], (at) => buildHistoryRepo(at, format, commits), join(dir, `history-${format}.git`));
}

/**
 * A bare copy of `source` at `dir/name` (git clone --no-local: its own objects), repacked by git
 * with the `repack` arguments given (none: as cloned).
 */
export function repackedClone(source: string, dir: string, name: string, repack: string[] = []): string {
  const repo = join(dir, name);
  git(dir, ['clone', '-q', '--bare', '--no-local', source, repo]);
  if (repack.length > 0) git(repo, repack);
  return repo;
}

function buildHistoryRepo(dir: string, format: Format, commits: number): string {
  const repo = join(dir, `history-${format}.git`);
  git(dir, ['init', '-q', '--bare', `--object-format=${format}`, '-b', 'main', repo]);
  let seed = 7;
  const random = (): number => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
  const files = new Map<string, string[]>();
  const names = ['README', 'src/a.c', 'src/b.c', 'src/lib/x.h', 'src/lib/y.h', 'doc/guide.txt', 'doc/api/index.txt', 'test/t1.sh', 'test/t2.sh', 'Makefile'];
  for (const n of names) files.set(n, Array.from({ length: 40 }, (_, i) => `${n} line ${i} ${Math.floor(random() * 1e6)}`));
  const parts: string[] = [];
  let mark = 0;
  let time = 1600000000;
  const fakeSub = format === 'sha1' ? '2'.repeat(40) : '2'.repeat(64);
  const commit = (ref: string, from: number | undefined, merges: number[], msg: string): number => {
    mark++;
    // Mostly forward in time, sometimes the same second, now and then backwards.
    const r = random();
    time += r < 0.2 ? 0 : r < 0.25 ? -5000 : Math.floor(random() * 3000);
    const ops: string[] = [];
    const keys = [...files.keys()];
    for (let k = 0; k < 1 + Math.floor(random() * 3); k++) {
      const name = keys[Math.floor(random() * keys.length)] as string;
      const lines = files.get(name) as string[];
      lines[Math.floor(random() * lines.length)] = `edit ${mark}.${k} ${Math.floor(random() * 1e9)}`;
      if (random() < 0.3) lines.push(`appended ${mark}`);
      ops.push(`M 100644 inline ${name}\ndata <<EOF\n${lines.join('\n')}\nEOF\n`);
    }
    if (mark % 17 === 0) {
      // A rename: the same content under a new path.
      const from = keys[Math.floor(random() * keys.length)] as string;
      const to = `moved/${mark}-${from.replace(/\//g, '-')}`;
      files.set(to, files.get(from) as string[]);
      files.delete(from);
      ops.push(`D ${from}\nM 100644 inline ${to}\ndata <<EOF\n${(files.get(to) as string[]).join('\n')}\nEOF\n`);
    }
    if (mark === 5) ops.push(`M 160000 ${fakeSub} vendor/sub\n`);
    parts.push(`commit ${ref}\nmark :${mark}\ncommitter C O Mitter <c@example.com> ${time} +0000\ndata <<EOF\n${msg}\nEOF\n` +
      (from !== undefined ? `from :${from}\n` : '') + merges.map((m) => `merge :${m}\n`).join('') + ops.join(''));
    return mark;
  };
  let head = commit('refs/heads/main', undefined, [], 'root');
  for (let i = 1; i < commits; i++) {
    if (i % 25 === 0) {
      // A side branch of a few commits, merged back.
      let side = commit('refs/heads/topic', head, [], `topic ${i}`);
      side = commit('refs/heads/topic', side, [], `topic ${i} more`);
      head = commit('refs/heads/main', head, [side], `merge topic ${i}`);
    } else if (i === 60) {
      const a = commit('refs/heads/oct-a', head, [], 'octopus a');
      const b = commit('refs/heads/oct-b', head, [], 'octopus b');
      head = commit('refs/heads/main', head, [a, b], 'octopus merge');
    } else {
      head = commit('refs/heads/main', head, [], `commit ${i}\n\nwith a body`);
    }
    if (i === Math.floor(commits / 2)) {
      parts.push(`tag v0.5\nfrom :${head}\ntagger T <t@example.com> ${time} +0000\ndata <<EOF\nhalfway\nEOF\n`);
      commit('refs/heads/unmerged', head, [], 'left alone');
    }
  }
  parts.push(`tag v1.0\nfrom :${head}\ntagger T <t@example.com> ${time} +0000\ndata <<EOF\nrelease\nEOF\n`);
  git(repo, ['fast-import', '--quiet'], parts.join(''));
  git(repo, ['tag', '-a', '-m', 'a tag of a tag', 'nested', 'v1.0']);
  git(repo, ['tag', '-a', '-m', 'a tree', 'tree-tag', 'main^{tree}']);
  const someBlob = git(repo, ['ls-tree', '-r', 'main']).toString().split('\n').find((l) => l.includes(' blob '))?.split(/\s/)[2] as string;
  git(repo, ['tag', '-a', '-m', 'a blob', 'blob-tag', someBlob]);
  git(repo, ['tag', 'light', 'main~3']);
  // Loose objects on top of the pack: a commit made by hand.
  const blob = git(repo, ['hash-object', '-w', '--stdin'], 'a loose file\n').toString().trim();
  const tree = git(repo, ['mktree'], `100644 blob ${blob}\tloose.txt\n`).toString().trim();
  const loose = git(repo, ['commit-tree', tree, '-p', 'main', '-m', 'loose commit']).toString().trim();
  git(repo, ['update-ref', 'refs/heads/loose', loose]);
  return repo;
}

/**
 * The same `clone -q <args> <url>` by packwright (in-process) and by git, into `ours<k>` and
 * `theirs<k>` under `dir`; their git directories, to compare what each left.
 */
export async function cloneBothWays(dir: string, args: readonly string[], url: string, k: number): Promise<{ ours: string; theirs: string }> {
  const ours = join(dir, `ours${k}`);
  const theirs = join(dir, `theirs${k}`);
  const r = await runPackwright(dir, ['clone', '-q', ...args, url, ours], { env: GIT_ENV });
  if (r.status !== 0) throw new Error(`packwright clone ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  git(dir, ['clone', '-q', ...args, url, theirs]);
  const gitDir = (d: string): string => (args.includes('-n') ? join(d, '.git') : d);
  return { ours: gitDir(ours), theirs: gitDir(theirs) };
}
