import { PackwrightError } from '../errors/packwright-error.js';

/**
 * What a store does on a miss once every index it knows is loaded (docs/ARCHITECTURE.md, "A
 * read"): list the pack directories again on every miss, as git does (`'on-miss'`); at most once
 * per window of `afterMs` milliseconds (`{ afterMs }`: 0 is on-miss); or never again after the
 * first listing (`'never'`). An explicit `store.refresh()`, a pack that vanished and a listing
 * that failed are retried at once whatever the window.
 */
export type RefreshPolicy = 'on-miss' | 'never' | { afterMs: number };

/** The library's default: servers with many misses (pushes of new objects) list at most once a second. */
export const DEFAULT_REFRESH: RefreshPolicy = { afterMs: 1000 };

/** git config `packwright.refreshAfter`: milliseconds, `never` or `on-miss`. */
export function parseRefreshPolicy(value: string, where: string): RefreshPolicy {
  const v = value.trim().toLowerCase();
  if (v === 'never') return 'never';
  if (v === 'on-miss' || v === 'onmiss') return 'on-miss';
  if (/^\d+$/.test(v)) return Number(v) === 0 ? 'on-miss' : { afterMs: Number(v) };
  throw new PackwrightError('CONFIG_INVALID', `${where}: bad refresh policy '${value}' (milliseconds, 'on-miss' or 'never')`);
}

/** Whether a miss may list the directories now. */
export function mayRescan(policy: RefreshPolicy, listed: boolean, retryNow: boolean, sinceLastScan: number): boolean {
  if (!listed) return true;
  if (policy === 'on-miss') return true;
  if (policy === 'never') return false;
  return retryNow || policy.afterMs <= 0 || sinceLastScan >= policy.afterMs;
}
