#!/usr/bin/env node
// npm run fuzz [-- --seconds N]: the parser and index-pack properties of test/fuzz-parsers.test.ts,
// each for its share of N seconds (default 60) instead of the suite's fixed case counts. Run
// after `npm run build` and the test compile (the npm script does both).
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const args = process.argv.slice(2);
const at = args.indexOf('--seconds');
const seconds = at >= 0 ? Number(args[at + 1]) : Number(args.find((a) => a.startsWith('--seconds='))?.slice(10) ?? 60);
if (!Number.isFinite(seconds) || seconds <= 0) {
  process.stderr.write('usage: npm run fuzz -- --seconds <N>\n');
  process.exit(129);
}
const test = fileURLToPath(new URL('../dist-test/test/fuzz-parsers.test.js', import.meta.url));
const r = spawnSync(process.execPath, ['--test', '--test-reporter=spec', '--test-timeout=0', test], {
  stdio: 'inherit',
  env: { ...process.env, PACKWRIGHT_FUZZ_SECONDS: String(seconds) },
});
process.exit(r.status ?? 1);
