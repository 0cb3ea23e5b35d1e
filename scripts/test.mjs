#!/usr/bin/env node
// npm test's runner: node's test runner over dist-test/test/*.test.js on two files at a time,
// the longest files first. Files run in the order given, so one of the long ones started last
// would run alone at the end; longest first, the short ones fill in beside the long ones (on 2
// cores this took 10-20 s off the suite's wall time). Arguments go to node --test.
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const dir = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist-test', 'test');
/** The longest files, longest first (by their time alone on 2 cores). A file not named here runs after them. */
const LONGEST = ['pack-objects', 'receive-pack', 'upload-pack', 'store', 'plumbing', 'index-pack', 'crash-safety', 'bitmap', 'fsck', 'bitmap-write', 'fuzz-parsers'];
const files = readdirSync(dir).filter((f) => f.endsWith('.test.js')).sort((a, b) => {
  const rank = (f) => { const i = LONGEST.indexOf(f.slice(0, -'.test.js'.length)); return i < 0 ? LONGEST.length : i; };
  return rank(a) - rank(b) || a.localeCompare(b);
});
const child = spawn(process.execPath, ['--test', '--test-concurrency=2', '--test-reporter=spec', ...process.argv.slice(2), ...files.map((f) => join(dir, f))], { stdio: 'inherit' });
child.on('exit', (code, signal) => { process.exitCode = code ?? (signal ? 1 : 0); });
