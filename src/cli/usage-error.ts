import { PackwrightError } from '../errors/index.js';
import type { CommandOutput } from './command-io.js';

/** A command line that cannot be run as given; the CLI prints it and exits 129 like git. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/**
 * `<command> -h` prints the command's usage on stdout and exits 129, as git's parse-options does;
 * `--help` (which in git opens the manual) prints it and exits 0. Undefined when neither is asked.
 */
export function helpRequested(args: string[], usage: string, stdout: CommandOutput): number | undefined {
  const h = args[0] === '-h' && args.length === 1;
  const help = args.includes('--help');
  if (!h && !help) return undefined;
  stdout.write(`${usage}\n`);
  return h ? 129 : 0;
}

/**
 * A non-negative integer option value (decimal, or 0x hex as git's strtoul reads it). Anything else
 * is INVALID_ARGUMENT naming the whole option (`bad --index-version=2,zz`, as git words it).
 */
export function integerOption(option: string, value: string): number {
  const n = /^(0[xX][0-9a-fA-F]+|[0-9]+)$/.test(value) ? Number(value) : NaN;
  if (!Number.isSafeInteger(n)) throw new PackwrightError('INVALID_ARGUMENT', `bad ${option}`);
  return n;
}

/** git's `--index-version=<v>[,<limit>]` (index-pack and pack-objects): the .idx version, and the offset above which v2 uses its 64-bit table. */
export function indexVersionOption(option: string): { version: 1 | 2; largeOffsetLimit?: number } {
  const [v, limit] = option.slice(option.indexOf('=') + 1).split(',');
  if (v !== '1' && v !== '2') throw new PackwrightError('INVALID_ARGUMENT', `unsupported index version ${v}`);
  const version = v === '1' ? 1 : 2;
  return limit === undefined ? { version } : { version, largeOffsetLimit: integerOption(option, limit) };
}

/** git's `--pack_header=<version>,<count>` (index-pack and unpack-objects, from fetch-pack and receive-pack). */
export function packHeaderOption(option: string): { version: number; count: number } {
  const m = /^(\d+),(\d+)$/.exec(option.slice(option.indexOf('=') + 1));
  if (m === null) throw new PackwrightError('INVALID_ARGUMENT', `bad ${option}`);
  return { version: Number(m[1]), count: Number(m[2]) };
}

/** git's OPT_MAGNITUDE: a non-negative integer with an optional k/m/g suffix (powers of 1024). */
export function magnitudeOption(name: string, value: string, usage: string): number {
  const m = /^([0-9]+)([kmg]?)$/i.exec(value);
  const n = m === null ? NaN : Number(m[1]) * 1024 ** ' kmg'.indexOf((m[2] || ' ').toLowerCase());
  if (!Number.isSafeInteger(n)) throw new UsageError(`error: option \`${name}' expects a non-negative integer value with an optional k/m/g suffix\n${usage}`);
  return n;
}
