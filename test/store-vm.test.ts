import { test } from 'node:test';
import { tempDir } from './helpers/git.js';
import { testSeed } from './helpers/random.js';
import { runStoreVm } from './helpers/store-vm.js';
import type { RefreshPolicy } from '../src/odb/index.js';

// PACKWRIGHT_VM_STEPS sets the steps of each run (scripts/store-vm.mjs runs many more);
// PACKWRIGHT_SEED replays a failing seed exactly.
const steps = Number(process.env['PACKWRIGHT_VM_STEPS'] ?? 1500);
const policies: RefreshPolicy[] = ['on-miss', { afterMs: 1000 }];

for (const policy of policies) {
  test(`store VM: ${steps} random steps under ${JSON.stringify(policy)}`, () => {
    using dir = tempDir('packwright-vm-');
    runStoreVm(dir.path, testSeed(), steps, policy);
  });
}
