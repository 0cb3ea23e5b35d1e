import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { inflateSync } from 'node:zlib';
import { createHash } from 'node:crypto';
import { CLI, fixture, git, tempDir } from './helpers/git.js';
import { spawnGit } from './helpers/spawn-client.js';

// Crash safety: packwright is killed (SIGKILL, no chance to clean up) at random points while it
// writes into a repository, and afterwards nothing half-written is visible under a final name,
// git fsck passes, and what was there before still reads back. PACKWRIGHT_CRASH_RUNS sets the
// kills per scenario (default 4, which keeps the suite's time; a long run: PACKWRIGHT_CRASH_RUNS=100 node --test ...), and
// PACKWRIGHT_CRASH_SEED where in each run the kills land (a long run with another seed tries new points).
const RUNS = Number(process.env['PACKWRIGHT_CRASH_RUNS'] ?? 4);
const SEED = Number(process.env['PACKWRIGHT_CRASH_SEED'] ?? 5);

/**
 * A bare repository of `commits` commits (fast-import, fixed content), fully packed, built once per
 * run: the first adds `files` files of 30 lines, each later one changes a tenth of them. The default
 * is 3,666 objects; unpack-objects, which writes a file per object (2.8 s for those here, as long as
 * git's), gets a smaller one.
 */
function makeSource(dir: string, commits = 40, files = 600): string {
  return fixture('crash-source', [commits, files], (at) => buildSource(at, commits, files), join(dir, `source-${commits}-${files}`));
}

function buildSource(dir: string, commits: number, fileCount: number): string {
  const repo = join(dir, 'source');
  git(dir, ['init', '-q', '--bare', repo]);
  const parts: string[] = [];
  let seed = 11;
  const random = (): number => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return seed / 2 ** 32;
  };
  for (let c = 0; c < commits; c++) {
    parts.push(`commit refs/heads/main\nmark :${c + 1}\ncommitter C <c@example.com> ${1700000000 + c} +0000\ndata 4\nc${String(c).padStart(2, '0')}\n`);
    if (c > 0) parts.push(`from :${c}\n`);
    const files = c === 0 ? fileCount : fileCount / 10;
    for (let i = 0; i < files; i++) {
      const f = c === 0 ? i : Math.floor(random() * fileCount);
      const body = Array.from({ length: 30 }, (_, l) => `file ${f} line ${l} rev ${c} ${Math.floor(random() * 1e6)}`).join('\n') + '\n';
      parts.push(`M 100644 inline d${f % 20}/f${f}.txt\ndata ${Buffer.byteLength(body)}\n${body}`);
    }
    parts.push('\n');
  }
  git(repo, ['fast-import', '--quiet'], parts.join(''));
  git(repo, ['repack', '-adq']);
  return repo;
}

/** Runs packwright in `cwd` and kills it after `ms` (or lets it finish first). */
function runAndKill(cwd: string, args: string[], input: Buffer | undefined, ms: number, env = process.env): Promise<{ killed: boolean; status: number | null }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [CLI, ...args], { cwd, env, stdio: [input === undefined ? 'ignore' : 'pipe', 'ignore', 'pipe'] });
    let killed = false;
    const timer = setTimeout(() => {
      killed = child.kill('SIGKILL');
    }, ms);
    child.stdin?.on('error', () => undefined);
    child.stdin?.end(input);
    child.on('close', (status) => {
      clearTimeout(timer);
      done({ killed, status });
    });
  });
}

/** Every file under a final name in the object directory is whole: packs and indexes verify, loose objects hash to their names. */
function assertNothingHalfWritten(repo: string, context: string): void {
  const objects = existsSync(join(repo, 'objects')) ? join(repo, 'objects') : join(repo, '.git', 'objects');
  const packDir = join(objects, 'pack');
  // Packs with an index, and the multi-pack-index, are verified whole by the git fsck below (it
  // checks every pack's trailer and objects, and runs multi-pack-index verify).
  for (const f of readdirSync(packDir)) {
    if (f.endsWith('.idx') || f === 'multi-pack-index') continue;
    if (f.endsWith('.rev') || f.endsWith('.pack')) {
      // A .pack is renamed into place whole, before its .idx; a .rev before the .idx too.
      const base = f.replace(/\.(rev|pack)$/, '');
      if (existsSync(join(packDir, `${base}.idx`))) continue;
      if (f.endsWith('.pack')) {
        const bytes = readFileSync(join(packDir, f));
        const body = bytes.subarray(0, bytes.length - 20);
        assert.ok(createHash('sha1').update(body).digest().equals(bytes.subarray(bytes.length - 20)), `${context}: ${f} under its final name is not whole`);
      }
    } else {
      // Temporary files may stay behind a SIGKILL (git's too: gc removes old ones); never under a final name.
      // So may the multi-pack-index's lock, as git's does (no process can remove its lock when killed
      // outright); the next write then fails with git's "Unable to create ... File exists".
      assert.match(f, /^tmp_|^pack-[0-9a-f]+\.(keep|promisor|bitmap)$|^multi-pack-index\.lock$/, `${context}: unexpected file ${f} in the pack directory`);
    }
  }
  for (const d of readdirSync(objects)) {
    if (!/^[0-9a-f]{2}$/.test(d)) continue;
    for (const f of readdirSync(join(objects, d))) {
      if (!/^[0-9a-f]{38}$/.test(f)) continue;
      const data = inflateSync(readFileSync(join(objects, d, f)));
      assert.equal(createHash('sha1').update(data).digest('hex'), d + f, `${context}: loose object ${d}${f} is not whole`);
    }
  }
  const fsck = spawnGit(['fsck', '--no-dangling', '--no-progress'], { cwd: repo, encoding: 'utf8' });
  assert.equal(fsck.status, 0, `${context}: git fsck fails: ${fsck.stdout}${fsck.stderr}`);
}

/** How long the operation takes when left alone, so kills land all along it. */
function timed(cwd: string, args: string[], input: Buffer | undefined, env = process.env): number {
  const t = performance.now();
  const r = spawnSync(process.execPath, [CLI, ...args], { cwd, input, env, stdio: [input === undefined ? 'ignore' : 'pipe', 'ignore', 'pipe'] });
  assert.equal(r.status, 0, r.stderr?.toString());
  return performance.now() - t;
}

interface Scenario {
  name: string;
  args: string[];
  /** Prepares a fresh target repository; returns it, and the input for stdin if any. */
  prepare(at: string): { repo: string; input?: Buffer };
}

test('SIGKILL at random points while writing leaves no half-written file, and git fsck passes', { timeout: Math.max(600_000, RUNS * 100_000) }, async () => {
  using dir = tempDir();
  const source = makeSource(dir.path);
  const pack = git(source, ['pack-objects', '--all', '--stdout', '-q']);
  const smallPack = git(makeSource(dir.path, 12, 200), ['pack-objects', '--all', '--stdout', '-q']);
  const list = join(dir.path, 'files.txt');
  const files: string[] = [];
  for (let i = 0; i < 1500; i++) {
    const name = join(dir.path, `file-${i}.txt`);
    writeFileSync(name, `hashed file ${i}\n`.repeat(1 + (i % 40)));
    files.push(name);
  }
  writeFileSync(list, files.join('\n') + '\n');
  let fresh = 0;
  const emptyRepo = (at: string): string => {
    const repo = join(at, `target-${fresh++}`);
    git(at, ['init', '-q', '--bare', repo]);
    return repo;
  };
  const scenarios: Scenario[] = [
    { name: 'index-pack --stdin', args: ['index-pack', '--stdin', '--rev-index'], prepare: (at) => ({ repo: emptyRepo(at), input: pack }) },
    { name: 'unpack-objects', args: ['unpack-objects', '-q'], prepare: (at) => ({ repo: emptyRepo(at), input: smallPack }) },
    { name: 'hash-object -w --stdin-paths', args: ['hash-object', '-w', '--stdin-paths'], prepare: (at) => ({ repo: emptyRepo(at), input: readFileSync(list) }) },
    {
      name: 'multi-pack-index write',
      args: ['multi-pack-index', 'write'],
      prepare: (at) => {
        const repo = join(at, `target-${fresh++}`);
        cpSync(source, repo, { recursive: true });
        // A second pack for the index to cover.
        git(repo, ['hash-object', '-w', '--stdin'], 'one more\n');
        git(repo, ['repack', '-dq']);
        return { repo };
      },
    },
    {
      name: 'pack-objects <base-name>',
      args: ['pack-objects', '--all', '-q', 'objects/pack/pack'],
      prepare: (at) => {
        const repo = join(at, `target-${fresh++}`);
        cpSync(source, repo, { recursive: true });
        return { repo };
      },
    },
  ];
  let seed = SEED;
  const random = (): number => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return seed / 2 ** 32;
  };
  // The runs' temporary directory: nothing may be left there either (no git prune looks at it).
  const osTmp = join(dir.path, 'os-tmp');
  mkdirSync(osTmp);
  const env = { ...process.env, TMPDIR: osTmp };
  const counts: string[] = [];
  for (const s of scenarios) {
    const probe = s.prepare(dir.path);
    const full = timed(probe.repo, s.args, probe.input, env);
    assertNothingHalfWritten(probe.repo, `${s.name} left alone`);
    let kills = 0;
    for (let i = 0; i < RUNS; i++) {
      const { repo, input } = s.prepare(dir.path);
      // Something written before, that must still read back afterwards.
      git(repo, ['hash-object', '-w', '--stdin'], 'written before\n');
      // From process start to a little past the end: the kill lands anywhere in the run.
      const at = random() * full * 1.1;
      const r = await runAndKill(repo, s.args, input, at, env);
      if (r.killed) kills++;
      else assert.equal(r.status, 0, `${s.name} finished, but failed`);
      assertNothingHalfWritten(repo, `${s.name} killed after ${at.toFixed(0)} ms`);
      assert.deepEqual(readdirSync(osTmp), [], `${s.name} killed after ${at.toFixed(0)} ms: nothing left in the temporary directory`);
      assert.equal(git(repo, ['cat-file', '-p', git(repo, ['hash-object', '--stdin'], 'written before\n').toString().trim()]).toString(), 'written before\n');
    }
    counts.push(`${s.name}: ${kills} killed of ${RUNS} (runs take ${full.toFixed(0)} ms)`);
  }
  console.log(counts.join('\n'));
});

test('two index-packs of the same pack into one repository at once end with one good pack', async () => {
  using dir = tempDir();
  const source = makeSource(dir.path);
  const pack = git(source, ['pack-objects', '--all', '--stdout', '-q']);
  const repo = join(dir.path, 'target');
  git(dir.path, ['init', '-q', '--bare', repo]);
  const both = await Promise.all([0, 1].map(() => runAndKill(repo, ['index-pack', '--stdin'], pack, 60_000)));
  for (const r of both) assert.equal(r.status, 0);
  const idx = readdirSync(join(repo, 'objects', 'pack')).filter((f) => f.endsWith('.idx'));
  assert.equal(idx.length, 1);
  assertNothingHalfWritten(repo, 'two index-packs at once');
  assert.equal(git(repo, ['count-objects', '-v']).toString().match(/in-pack: (\d+)/)?.[1], git(source, ['count-objects', '-v']).toString().match(/in-pack: (\d+)/)?.[1]);
});

test('a file-size limit (as a full disk) fails index-pack and pack-objects with one line, and leaves nothing', () => {
  using dir = tempDir();
  const source = makeSource(dir.path);
  const pack = git(source, ['pack-objects', '--all', '--stdout', '-q']);
  const runs: [string, string[], Buffer | undefined, (repo: string) => void][] = [
    ['index-pack --stdin', ['index-pack', '--stdin'], pack, (repo) => git(dir.path, ['init', '-q', '--bare', repo])],
    ['pack-objects <base-name>', ['pack-objects', '--all', '-q', 'objects/pack/pack'], Buffer.alloc(0), (repo) => cpSync(source, repo, { recursive: true })],
  ];
  for (const [name, args, input, prepare] of runs) {
    const repo = join(dir.path, name.replace(/\W+/g, '-'));
    prepare(repo);
    const before = readdirSync(join(repo, 'objects', 'pack')).sort();
    // 64 blocks of 512 bytes: far less than the pack. Node ignores SIGXFSZ, so the write fails.
    const r = spawnSync('sh', ['-c', `ulimit -f 64; exec "${process.execPath}" "${CLI}" "$@"`, 'sh', ...args], { cwd: repo, input });
    const err = r.stderr.toString().trim().split('\n');
    assert.equal(r.status, 128, `${name}: ${err.join('\n')}`);
    assert.equal(err.length, 1, `${name}: one line: ${err.join('\n')}`);
    assert.match(err[0] as string, /^fatal: unable to write .*tmp_pack_\S+: file too large$/i);
    assert.deepEqual(readdirSync(join(repo, 'objects', 'pack')).sort(), before, `${name}: nothing left behind`);
    assertNothingHalfWritten(repo, name);
  }
});
