#!/usr/bin/env node
// npm test's runner: node's test runner over dist-test/test/*.test.js on two files at a time,
// the longest files first. Files run in the order given, so one of the long ones started last
// would run alone at the end; longest first, the short ones fill in beside the long ones (on 2
// cores this took 10-20 s off the suite's wall time). Arguments go to node --test.
//
// The tests' temporary directories go to memory (/dev/shm) where it is a tmpfs with room, as git's
// own suite does with --root: they create and delete ~100k files, and on this project's ext4 disk
// (mounted without a journal) every create scanned for recently deleted inodes, 7 % of the
// suite's CPU in perf. A TMPDIR set by the caller is kept.
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statfsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const dir = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist-test', 'test');
/** The longest files, longest first (by their time alone on 2 cores). A file not named here runs after them. */
const LONGEST = ['pack-objects', 'receive-pack', 'upload-pack', 'index-pack', 'store', 'fsck', 'plumbing', 'crash-safety', 'bitmap-write', 'serve-http', 'bitmap', 'cat-file', 'shallow', 'multi-pack-index'];
const files = readdirSync(dir).filter((f) => f.endsWith('.test.js')).sort((a, b) => {
  const rank = (f) => { const i = LONGEST.indexOf(f.slice(0, -'.test.js'.length)); return i < 0 ? LONGEST.length : i; };
  return rank(a) - rank(b) || a.localeCompare(b);
});

const TMPFS_MAGIC = 0x01021994;

/** A directory under /dev/shm when that is a tmpfs with at least 4 GiB free, else undefined. */
function memoryTempDir() {
  if (process.env.TMPDIR !== undefined && process.env.TMPDIR !== '') return undefined;
  try {
    const fs = statfsSync('/dev/shm');
    if (fs.type !== TMPFS_MAGIC || fs.bavail * fs.bsize < 4 * 2 ** 30) return undefined;
    return mkdtempSync('/dev/shm/packwright-test-');
  } catch {
    return undefined;
  }
}

const temp = memoryTempDir();
// git's automatic maintenance off for every git the tests run: git commit, fetch and receive-pack
// each start a `git maintenance run --auto` or `git gc --auto` afterwards, another process (~13 ms
// of CPU here) that finds nothing to do in the tests' small repositories. No test asks for it.
// receive.autogc=false keeps git's receive-pack and packwright's from starting that `git gc --auto`
// at all (~100 a run).
const quiet = {
  GIT_CONFIG_COUNT: '3', GIT_CONFIG_KEY_0: 'maintenance.auto', GIT_CONFIG_VALUE_0: 'false', GIT_CONFIG_KEY_1: 'gc.auto', GIT_CONFIG_VALUE_1: '0',
  GIT_CONFIG_KEY_2: 'receive.autogc', GIT_CONFIG_VALUE_2: 'false',
};
const env = { ...process.env, ...(process.env.GIT_CONFIG_COUNT === undefined ? quiet : {}), ...(temp === undefined ? {} : { TMPDIR: temp }) };
const child = spawn(process.execPath, ['--test', '--test-concurrency=2', '--test-reporter=spec', ...process.argv.slice(2), ...files.map((f) => join(dir, f))], { stdio: 'inherit', env });
const cleanUp = () => { if (temp !== undefined) rmSync(temp, { recursive: true, force: true }); };
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => { cleanUp(); process.exitCode = code ?? (signal ? 1 : 0); });
