#!/usr/bin/env node
// npm run store-vm [-- --steps N] [-- --runs R] [-- --seed S]: the store's fuzz VM
// (test/helpers/store-vm.ts) for R runs of N steps under each refresh policy, new seeds each run
// unless --seed replays one. A failure prints its seed and last steps; replay it with --seed.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { steps: { type: 'string', default: '20000' }, runs: { type: 'string', default: '5' }, seed: { type: 'string' } } });
const steps = Number(values.steps);
const runs = values.seed !== undefined ? 1 : Number(values.runs);
if (!(steps > 0) || !(runs > 0)) {
  process.stderr.write('usage: npm run store-vm -- [--steps N] [--runs R] [--seed S]\n');
  process.exit(129);
}
const { runStoreVm } = await import(new URL('../dist-test/test/helpers/store-vm.js', import.meta.url).href);
for (let run = 0; run < runs; run++) {
  for (const policy of ['on-miss', { afterMs: 1000 }]) {
    const seed = values.seed !== undefined ? Number(values.seed) >>> 0 : (Math.random() * 2 ** 32) >>> 0;
    const dir = mkdtempSync(join(tmpdir(), 'packwright-vm-'));
    try {
      const r = runStoreVm(dir, seed, steps, policy);
      process.stdout.write(`seed ${seed} ${JSON.stringify(policy)}: ${r.steps} steps, ${r.lookups} lookups (${r.found} found), ${r.scans} listings, held locations read ${r.heldRead} (${r.heldGone} gone)\n`);
    } catch (e) {
      process.stderr.write(`${e.message}\n`);
      process.exit(1);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
}
