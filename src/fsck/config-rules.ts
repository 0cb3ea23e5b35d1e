import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { GitConfig } from '../config/git-config.js';
import { FsckRules } from '../objects/fsck-messages.js';

/** The fsck rules a repository's configuration sets: `fsck.<id>` and `fsck.skipList` (git's git_fsck_config), over the defaults or `--strict`'s. */
export function fsckRulesFromConfig(config: GitConfig, hexLength: number, strict: boolean): FsckRules {
  const rules = FsckRules.defaults(strict);
  for (const entry of config.entries) {
    if (!entry.key.startsWith('fsck.') || entry.key.indexOf('.', 5) >= 0) continue;
    const id = entry.key.slice(5);
    if (id === 'skiplist') {
      if (entry.value === null) continue;
      const file = entry.value.startsWith('~/') ? join(process.env['HOME'] ?? '', entry.value.slice(2)) : entry.value;
      rules.addSkipList(readFileSync(file, 'utf8'), file, hexLength);
      continue;
    }
    rules.set(id, entry.value ?? '');
  }
  return rules;
}

