import { PackwrightError } from '../errors/packwright-error.js';

/**
 * What a partial clone leaves out (git's `--filter=<spec>`, list-objects-filter-options): all
 * blobs, blobs of at least `bytes`, or every tree and blob (a tree depth of 0). Objects named as
 * tips are sent all the same, as git sends what it is asked for by name.
 */
export type ObjectFilter = { kind: 'blob:none' } | { kind: 'blob:limit'; bytes: number } | { kind: 'tree:0' };

const UNITS: Record<string, number> = { '': 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 };

/** Parses a filter spec; the forms packwright does not implement (sparse:, tree:N>0, combine:) are INVALID_ARGUMENT. */
export function parseObjectFilter(spec: string): ObjectFilter {
  if (spec === 'blob:none') return { kind: 'blob:none' };
  const limit = /^blob:limit=([0-9]+)([kmg]?)$/i.exec(spec);
  if (limit !== null) return { kind: 'blob:limit', bytes: Number(limit[1]) * (UNITS[(limit[2] ?? '').toLowerCase()] as number) };
  if (spec === 'tree:0') return { kind: 'tree:0' };
  throw new PackwrightError('INVALID_ARGUMENT', `unsupported object filter '${spec}' (packwright knows blob:none, blob:limit=<n>[kmg] and tree:0)`);
}
