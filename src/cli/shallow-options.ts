import { PackwrightError } from '../errors/index.js';
import { approxidate } from '../refs/index.js';

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

/**
 * A date as git's --shallow-since takes it (approxidate), in seconds since the epoch:
 * `@<seconds>`, seconds with or without a time zone (`1400000000 +0700`), relative spans
 * (`2 weeks ago`), ISO 8601 and RFC 2822 dates.
 */
function parseDate(text: string): number {
  const t = approxidate(text);
  if (t === undefined) throw new PackwrightError('INVALID_ARGUMENT', `cannot parse date '${text}' (give @<seconds> or an ISO 8601 date)`);
  return t;
}
