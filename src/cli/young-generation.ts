import { createRequire } from 'node:module';

/**
 * Commands that read a few refs or objects and exit. They never grow the young generation, and
 * `node:v8` loads Node's streams (~20 modules): issue 42's start-up line counts those
 * milliseconds. `cat-file` is one of them unless it runs a batch.
 */
const LIGHT = new Set(['rev-parse', 'show-ref', 'symbolic-ref', 'update-ref', 'show-index', 'hash-object', 'ls-tree', 'cat-file']);

/**
 * Keeps V8's young generation at its first size (1 MiB a semi-space) for the command about to
 * run. V8 doubles it each time a scavenge finds it busy, up to 3 × 16 MiB, and on this kind of
 * machine every fresh page is a fault on first touch (docs/ARCHITECTURE.md, measured facts). On
 * gitoxide complete (alternating runs): pack-objects --revs --all 155 -> 129 MB at the same
 * 1.4-1.5 s, rev-list --objects --all 147 -> 116 MB and 1.15-1.19 -> 1.05-1.06 s, index-pack
 * 253 -> 218 MB at 3.4 s. The growth factor is read each time V8 would grow the space, so setting
 * it after start works (the maximum size is not; only a relaunch sets that). The executable's
 * business only: a library must not change its host's V8 flags.
 */
export function keepYoungGenerationSmall(command: string | undefined, args: readonly string[]): void {
  if (command === undefined || (LIGHT.has(command) && !args.some((a) => a.startsWith('--batch')))) return;
  const v8 = createRequire(import.meta.url)('node:v8') as typeof import('node:v8');
  v8.setFlagsFromString('--semi-space-growth-factor=1');
}
