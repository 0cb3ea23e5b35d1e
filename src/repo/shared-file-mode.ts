import type { GitConfig } from '../config/git-config.js';

/** git's PERM_GROUP and PERM_EVERYBODY: the bits core.sharedRepository=group and =all add. */
const PERM_GROUP = 0o660;
const PERM_EVERYBODY = 0o664;

/**
 * The mode git gives a file it creates with `mode` in a repository with this configuration
 * (core.sharedRepository; git's git_config_perm and calc_shared_perm): unchanged for `umask` (the
 * default), with group (or everyone's) bits added for `group`/`all`, or exactly the octal value
 * given (`0600`), write bits dropped for a read-only file.
 */
export function sharedFileMode(config: GitConfig, mode: number): number {
  const value = config.get('core.sharedRepository');
  let shared: number;
  if (value === undefined) return mode;
  if (value === null) shared = PERM_GROUP;
  else if (value === 'umask') return mode;
  else if (value === 'group') shared = PERM_GROUP;
  else if (value === 'all' || value === 'world' || value === 'everybody') shared = PERM_EVERYBODY;
  else if (/^[0-7]+$/.test(value)) {
    const octal = Number.parseInt(value, 8);
    if (octal === 0) return mode;
    shared = octal === 1 ? PERM_GROUP : octal === 2 ? PERM_EVERYBODY : -(octal & 0o666);
  } else {
    shared = config.getBool('core.sharedRepository') === true ? PERM_GROUP : 0;
    if (shared === 0) return mode;
  }
  let tweak = Math.abs(shared);
  if (!(mode & 0o200)) tweak &= ~0o222;
  if (mode & 0o100) tweak |= (tweak & 0o444) >> 2;
  return shared < 0 ? (mode & ~0o777) | tweak : mode | tweak;
}
