import { test } from 'node:test';
import { tempDir } from './helpers/git.js';
import { testSeed } from './helpers/random.js';
import { runStoreVm } from './helpers/store-vm.js';
import type { RefreshPolicy } from '../src/odb/index.js';

// PACKWRIGHT_VM_STEPS sets the steps of each run (scripts/store-vm.mjs runs many more);
// PACKWRIGHT_SEED replays a failing seed exactly.
const steps = Number(process.env['PACKWRIGHT_VM_STEPS'] ?? 3000);
const policies: RefreshPolicy[] = ['on-miss', { afterMs: 1000 }];

for (const policy of policies) {
  test(`store VM: ${steps} random steps under ${JSON.stringify(policy)}`, () => {
    using dir = tempDir('packwright-vm-');
    runStoreVm(dir.path, testSeed(), steps, policy);
  });
}

// Seeds the VM failed with, kept as named tests (each was a bug, fixed in the same commit).
const regressions: { seed: number; steps: number; policy: RefreshPolicy; what: string }[] = [
  { seed: 2769958727, steps: 60, policy: 'on-miss', what: 'iteration lost an object whose multi-pack-index copy was in a deleted pack, though another source had it' },
  { seed: 1712563965, steps: 100, policy: { afterMs: 1000 }, what: 'a stale multi-pack-index chose copies in packs whose indexes were gone; other packs it covers had them' },
];
for (const r of regressions) {
  test(`store VM seed ${r.seed}: ${r.what}`, () => {
    using dir = tempDir('packwright-vm-');
    runStoreVm(dir.path, r.seed, r.steps, r.policy);
  });
}
