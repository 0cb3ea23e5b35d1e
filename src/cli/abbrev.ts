import type { GitConfig } from '../config/index.js';
import { PackwrightError } from '../errors/index.js';

/** git's MINIMUM_ABBREV. */
const MINIMUM_ABBREV = 4;

/**
 * The abbreviation length `core.abbrev` sets (git's default_abbrev): -1 for automatic (unset or
 * `auto`), the full length for `no`/false, else the number, at least 4.
 */
export function configuredAbbrev(config: GitConfig, hexLength: number): number {
  const v = config.get('core.abbrev');
  if (v === undefined || v === null || v === 'auto') return -1;
  if (['no', 'false', 'off'].includes(v.toLowerCase())) return hexLength;
  const n = Number(v);
  if (!Number.isInteger(n)) throw new PackwrightError('CONFIG_INVALID', `bad numeric config value '${v}' for 'core.abbrev': invalid unit`);
  if (n < MINIMUM_ABBREV) throw new PackwrightError('CONFIG_INVALID', `abbrev length out of range: ${n}`);
  return Math.min(n, hexLength);
}

/** An `--abbrev=<n>` value as git's parse_opt_abbrev_cb clamps it (0 means the full id). */
export function abbrevOption(value: string, hexLength: number): number {
  const n = Number(value);
  if (!/^-?[0-9]+$/.test(value)) throw new PackwrightError('INVALID_ARGUMENT', `option \`abbrev' expects a numerical value`);
  if (n === 0) return 0;
  return Math.min(Math.max(n, MINIMUM_ABBREV), hexLength);
}
