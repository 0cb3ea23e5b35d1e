import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { GitConfig } from '../config/git-config.js';
import { FsckRules } from './fsck-messages.js';
import { PackwrightError } from '../errors/packwright-error.js';

/** The fsck rules a repository's configuration sets: `fsck.<id>` and `fsck.skipList` (git's git_fsck_config, `~/` from `home`), over the defaults or `--strict`'s. */
export function fsckRulesFromConfig(config: GitConfig, hexLength: number, strict: boolean, home = process.env['HOME'] ?? ''): FsckRules {
  const rules = FsckRules.defaults(strict);
  for (const entry of config.entries) {
    if (!entry.key.startsWith('fsck.') || entry.key.indexOf('.', 5) >= 0) continue;
    const id = entry.key.slice(5);
    if (id === 'skiplist') {
      if (entry.value === null) continue;
      addSkipListFile(rules, entry.value.startsWith('~/') ? join(home, entry.value.slice(2)) : entry.value, hexLength);
      continue;
    }
    rules.set(id, entry.value ?? '');
  }
  return rules;
}


/**
 * Adds the object ids of a skip list file (`fsck.skipList`, or `skiplist=<file>` in --strict=),
 * failing as git's oidset_parse_file does when it cannot be read. A relative name is taken from
 * `baseDir` (default: the working directory).
 */
export function addSkipListFile(rules: FsckRules, file: string, hexLength: number, baseDir?: string): void {
  let text: string;
  try {
    // Relative to `baseDir` when given (a receive-pack in this process: git's runs in the git directory); errors name the file as given.
    text = readFileSync(baseDir !== undefined ? resolve(baseDir, file) : file, 'utf8');
  } catch (e) {
    // git 2.39's oidset_parse_file, word for word (the system's reason is not part of it).
    throw new PackwrightError('CONFIG_INVALID', `could not open object name list: ${file}`, { file, cause: e });
  }
  rules.addSkipList(text, file, hexLength);
}

/**
 * Sets severities from git's `--strict=<msg-types>` form (what receive-pack and fetch-pack pass
 * index-pack and unpack-objects): `id=type` pairs separated by spaces, commas or bars, and
 * `skiplist=<file>` (relative to `baseDir`, default the working directory).
 */
export function setFsckMessageTypes(rules: FsckRules, values: string, hexLength: number, baseDir?: string): void {
  for (const part of values.split(/[ ,|]/)) {
    if (part === '') continue;
    const eq = part.search(/[=:]/);
    if (eq < 0) throw new PackwrightError('INVALID_ARGUMENT', `Missing '=': '${part}'`);
    const id = part.slice(0, eq);
    const type = part.slice(eq + 1);
    if (id.toLowerCase() === 'skiplist') addSkipListFile(rules, type, hexLength, baseDir);
    else rules.set(id, type);
  }
}
