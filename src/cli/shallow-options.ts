import { PackwrightError } from '../errors/index.js';

/** What clone's and fetch's shallow options ask for (see CloneOptions and FetchOptions). */
export interface ShallowOptions {
  depth?: number;
  deepen?: number;
  shallowSince?: number;
  shallowExclude?: string[];
  unshallow?: boolean;
  updateShallow?: boolean;
}

/** The options that take a value; clone has no --deepen (nor --unshallow or --update-shallow). */
const VALUED = ['--depth', '--deepen', '--shallow-since', '--shallow-exclude'] as const;

/**
 * Reads a shallow option at `args[i]` (`--depth=3` or `--depth 3`, and so on) into `into`;
 * returns the index of the last argument it took, or -1 when `args[i]` is no such option.
 * Fetch's own options (--deepen, --unshallow, --update-shallow) count only when `fetch` is true.
 */
export function readShallowOption(args: readonly string[], i: number, into: ShallowOptions, fetch: boolean): number {
  const a = args[i] as string;
  if (fetch && a === '--unshallow') {
    into.unshallow = true;
    return i;
  }
  if (fetch && (a === '--update-shallow' || a === '--no-update-shallow')) {
    into.updateShallow = a === '--update-shallow';
    return i;
  }
  for (const name of VALUED) {
    if (name === '--deepen' && !fetch) continue;
    let value: string | undefined;
    let last = i;
    if (a.startsWith(`${name}=`)) value = a.slice(name.length + 1);
    else if (a === name && i + 1 < args.length) value = args[(last = i + 1)];
    else continue;
    value ??= '';
    if (name === '--shallow-exclude') (into.shallowExclude ??= []).push(value);
    else if (name === '--shallow-since') into.shallowSince = parseDate(value);
    else {
      const n = /^\d+$/.test(value) ? Number(value) : NaN;
      // git's words (builtin/fetch.c, builtin/clone.c).
      if (!(n > 0)) throw new PackwrightError('INVALID_ARGUMENT', name === '--depth' ? `depth ${value} is not a positive number` : `negative depth in --deepen is not supported`);
      if (name === '--depth') into.depth = n;
      else into.deepen = n;
    }
    return last;
  }
  return -1;
}

/** Seconds in each unit git's approxidate takes exactly in "<n> <unit>s ago". */
const UNIT_SECONDS: Readonly<Record<string, number>> = { second: 1, minute: 60, hour: 3600, day: 86400, week: 604800 };

/**
 * A date as git's --shallow-since takes it, in seconds since the epoch: `@<seconds>`, a number of
 * seconds (with a time zone after it or not, as git writes them: `1400000000 +0700`),
 * "<n> <seconds|minutes|hours|days|weeks> ago", or a date Date.parse reads (ISO 8601, RFC 2822).
 * git's approxidate reads more ("last friday", months and years ago); those are INVALID_ARGUMENT here.
 */
function parseDate(text: string): number {
  const raw = /^@?(\d+)(?:\s+[+-]\d{4})?$/.exec(text.trim());
  if (raw !== null) return Number(raw[1]);
  const ago = /^(\d+)\s+(second|minute|hour|day|week)s?\s+ago$/i.exec(text.trim());
  if (ago !== null) return Math.floor(Date.now() / 1000) - Number(ago[1]) * (UNIT_SECONDS[(ago[2] as string).toLowerCase()] as number);
  const ms = Date.parse(text);
  if (Number.isNaN(ms)) throw new PackwrightError('INVALID_ARGUMENT', `cannot parse date '${text}' (give @<seconds> or an ISO 8601 date)`);
  return Math.floor(ms / 1000);
}
