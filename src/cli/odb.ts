import { odbStats } from '../odb/index.js';
import type { OpenRepositoryOptions, Repository } from '../repo/index.js';
import { helpRequested, integerOption, UsageError } from './usage-error.js';
import type { CommandIO } from './command-io.js';

const USAGE = 'usage: packwright odb stats [--extra-header-lookup] [--threads <n>] [--json]';

/**
 * `packwright odb stats`: every object counted once, by type, loose and packed, deltas and the
 * chain-length histogram, sizes, and the time of each phase. `--extra-header-lookup` then looks
 * every id up again through a cold store and exits 1 naming each one it could not find.
 */
export async function odbCommand(io: CommandIO, open: (options?: OpenRepositoryOptions) => Repository, args: string[]): Promise<number> {
  const help = helpRequested(args, USAGE, io.stdout);
  if (help !== undefined) return help;
  const [sub, ...rest] = args;
  if (sub !== 'stats') throw new UsageError(USAGE);
  let json = false;
  let extraHeaderLookup = false;
  let threads: number | undefined;
  for (let i = 0; i < rest.length; i++) {
    const a = rest[i] as string;
    if (a === '--json') json = true;
    else if (a === '--extra-header-lookup') extraHeaderLookup = true;
    else if (a.startsWith('--threads=')) threads = integerOption('--threads', a.slice(10));
    else if (a === '--threads') threads = integerOption('--threads', rest[++i] ?? '');
    else throw new UsageError(USAGE);
  }
  const repo = open(threads !== undefined ? { threads: Math.max(1, threads) } : {});
  const s = await io.interruptible((signal) => odbStats(repo.objects, { extraHeaderLookup, signal, ...(threads !== undefined ? { threads: Math.max(1, threads) } : {}) }));
  if (json) {
    io.stdout.write(`${JSON.stringify(s, null, 2)}\n`);
  } else {
    const types = Object.entries(s.byType).map(([t, n]) => `${t} ${n}`).join(', ');
    const chains = s.chainLengths.map((n, d) => `  ${d}: ${n}\n`).filter((_, d) => (s.chainLengths[d] as number) > 0).join('');
    const ms = Object.entries(s.timings).map(([p, t]) => `${p} ${t.toFixed(1)} ms`).join(', ');
    io.stdout.write(
      `objects: ${s.objects} (${types})\nloose: ${s.loose}\npacked: ${s.packed} in ${s.packs} packs, ${s.deltas} deltas\n` +
      `chain length:\n${chains}size: ${s.bytes} bytes, ${s.diskBytes} on disk\ntime: ${ms}\n` +
      (extraHeaderLookup ? `extra header lookup: ${s.lookedUp} found, ${s.missing.length} missing, ${s.wrong.length} wrong\n` : ''),
    );
  }
  for (const id of s.missing) io.stderr.write(`error: ${id}: not found by the extra header lookup\n`);
  for (const id of s.wrong) io.stderr.write(`error: ${id}: another type or size in the extra header lookup\n`);
  return s.missing.length > 0 || s.wrong.length > 0 ? 1 : 0;
}
