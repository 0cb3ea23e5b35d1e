import { odbStats } from '../odb/index.js';
import type { Repository } from '../repo/index.js';
import { interruptible } from './interruptible.js';
import { helpRequested, UsageError } from './usage-error.js';

const USAGE = 'usage: packwright odb stats [--extra-header-lookup] [--json]';

/**
 * `packwright odb stats`: every object counted once, by type, loose and packed, deltas and the
 * chain-length histogram, sizes, and the time of each phase. `--extra-header-lookup` then looks
 * every id up again through a cold store and exits 1 naming each one it could not find.
 */
export async function odbCommand(open: () => Repository, args: string[]): Promise<number> {
  const help = helpRequested(args, USAGE);
  if (help !== undefined) return help;
  const [sub, ...rest] = args;
  if (sub !== 'stats') throw new UsageError(USAGE);
  let json = false;
  let extraHeaderLookup = false;
  for (const a of rest) {
    if (a === '--json') json = true;
    else if (a === '--extra-header-lookup') extraHeaderLookup = true;
    else throw new UsageError(USAGE);
  }
  const repo = open();
  const s = await interruptible(async (signal) => odbStats(repo.objects, { extraHeaderLookup, signal }));
  if (json) {
    process.stdout.write(`${JSON.stringify(s, null, 2)}\n`);
  } else {
    const types = Object.entries(s.byType).map(([t, n]) => `${t} ${n}`).join(', ');
    const chains = s.chainLengths.map((n, d) => `  ${d}: ${n}\n`).filter((_, d) => (s.chainLengths[d] as number) > 0).join('');
    const ms = Object.entries(s.timings).map(([p, t]) => `${p} ${t.toFixed(1)} ms`).join(', ');
    process.stdout.write(
      `objects: ${s.objects} (${types})\nloose: ${s.loose}\npacked: ${s.packed} in ${s.packs} packs, ${s.deltas} deltas\n` +
      `chain length:\n${chains}size: ${s.bytes} bytes, ${s.diskBytes} on disk\ntime: ${ms}\n` +
      (extraHeaderLookup ? `extra header lookup: ${s.lookedUp} found, ${s.missing.length} missing\n` : ''),
    );
  }
  for (const id of s.missing) process.stderr.write(`error: ${id}: not found by the extra header lookup\n`);
  return s.missing.length > 0 ? 1 : 0;
}
