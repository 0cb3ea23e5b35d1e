import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLI, git, makeRepo, tempDir, fileEndingIn } from './helpers/git.js';

/** A pack git made, to feed a receiving index-pack --stdin. */
function somePack(dir: string): Buffer {
  mkdirSync(join(dir, 'src'));
  const repo = makeRepo(join(dir, 'src'), 'sha1', 6);
  git(repo, ['-c', 'pack.threads=1', 'repack', '-adfq']);
  const packDir = join(repo, '.git', 'objects', 'pack');
  return readFileSync(join(packDir, fileEndingIn(packDir, '.pack')));
}

/**
 * Starts `index-pack --stdin` in a fresh bare repository, sends it the first half of `pack`, and
 * resolves once its temporary pack exists (it is receiving), with the child and its pack directory.
 */
async function receiving(dir: string, name: string, pack: Buffer, env: NodeJS.ProcessEnv = process.env, waitForTmp = true) {
  git(dir, ['init', '-q', '--bare', `${name}.git`]);
  const repo = join(dir, `${name}.git`);
  const packDir = join(repo, 'objects', 'pack');
  const child = spawn(process.execPath, [CLI, 'index-pack', '--stdin'], { cwd: repo, env, stdio: ['pipe', 'ignore', 'pipe'] });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  child.stdin.write(pack.subarray(0, pack.length >> 1));
  if (!waitForTmp) return { child, exited, packDir };
  const deadline = Date.now() + 10_000;
  while (!readdirSync(packDir).some((f) => f.startsWith('tmp_pack_')) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  assert.ok(readdirSync(packDir).some((f) => f.startsWith('tmp_pack_')), 'index-pack started receiving');
  return { child, exited, packDir };
}

test('^C during index-pack --stdin removes the temporary pack and ends the process by SIGINT, as git', async () => {
  const dir = tempDir();
  try {
    const pack = somePack(dir.path);
    const { child, exited, packDir } = await receiving(dir.path, 'int', pack);
    child.kill('SIGINT');
    const { code, signal } = await exited;
    assert.deepEqual([code, signal], [null, 'SIGINT']);
    assert.deepEqual(readdirSync(packDir), [], 'no temporary file left');
  } finally {
    dir[Symbol.dispose]();
  }
});

test('a relaunched index-pack whose parent has gone aborts, cleans up and ends by SIGTERM', async () => {
  const dir = tempDir();
  try {
    const pack = somePack(dir.path);
    // PACKWRIGHT_PARENT_PID names a parent that is not this process's: as if it had died. (The
    // watchdog may fire before or after the temporary pack appears; either way none may remain.)
    const { exited, packDir } = await receiving(dir.path, 'orphan', pack, { ...process.env, PACKWRIGHT_PARENT_PID: '1' }, false);
    const { code, signal } = await exited;
    assert.deepEqual([code, signal], [null, 'SIGTERM']);
    assert.deepEqual(readdirSync(packDir), [], 'no temporary file left');
  } finally {
    dir[Symbol.dispose]();
  }
});
