import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { commonDirOf, discoverRepository } from '../repo/index.js';
import type { GlobalOptions } from './global-options.js';

/**
 * Why the CLI may start itself a second time.
 *
 * Reading a pack means touching a lot of fresh memory: the pack held whole, object buffers, the
 * delta-base cache. On Linux the first write to each 4 KiB page costs a fault (the first-touch cost, memory/index.ts)
 * here (docs/ARCHITECTURE.md, measured facts): 0.3 s for a 111 MB pack before any work is done. Where transparent huge pages
 * are given only on request (`madvise`, Debian's default), glibc asks for them on its large
 * allocations when started with `GLIBC_TUNABLES=glibc.malloc.hugetlb=1`, and one fault then maps
 * 2 MiB. Measured on gitoxide: cat-file --batch-all-objects --batch --unordered 3.30-3.38 s → 3.20-3.21 s,
 * 213-216 MB → 188-189 MB.
 * Tunables are read when a process starts, and Node cannot madvise, so the only way to get them is
 * to start again with the variable set. That costs one Node startup (~0.1 s, ~40 MB for the
 * waiting parent), so it happens only for the store's commands that read at least MIN_BYTES of
 * pack: `cat-file --batch-all-objects --batch`, where it is even in time and keeps the child ~10 MB
 * smaller (its 4 MiB young generation): gitoxide complete, five alternating runs, medians 1.87 s,
 * 178 MB against 1.88 s, 189 MB without.
 * Not for walks (`rev-list --objects --all`, `pack-objects --revs --all`), which it once sped up
 * when they read the pack whole: since they read through windows and list trees faster, the
 * relaunch only adds its start. Alternating runs (`/usr/bin/time`, medians of five): rev-list on
 * the gitoxide corpus repository 1.65 s, 170 MB relaunched against 1.45 s, 190 MB not (huge
 * pages set from the start, no relaunch: 1.46 s, so the pages no longer help it); pack-objects
 * there 2.52 s against 2.00 s; and on a bitmapped pack sent whole, 0.41 s against 0.23 s.
 * Not for index-pack, verify-pack or fsck: once pass 1 kept the deltas for pass 2 and the
 * resolvers reused their buffers, the relaunch made index-pack --threads=2 of gitoxide.pack slower
 * (3.01-3.10 s against 2.83-2.87 s) and verify-pack -v too (2.85-2.92 s against 2.72-2.77 s),
 * and --threads=1 no faster (3.78 s against 3.77 s, medians of 3). `PACKWRIGHT_HUGE_PAGES=0`
 * turns it off; `=1` relaunches whatever the command and size (tests use it to run the relaunch
 * path on small repositories).
 */
const TUNABLE = 'glibc.malloc.hugetlb=1';
/**
 * Set with it for the store's commands: allocations of 1 MiB and more get mappings of their own,
 * returned to the system when freed instead of staying in glibc's heap, where huge pages keep
 * memory 2 MiB at a time (cat-file --batch-all-objects --batch on gitoxide: 281 MB with it, 294
 * without).
 */
const MMAP_THRESHOLD = 'glibc.malloc.mmap_threshold=1048576';
const MIN_BYTES = 64 * 1024 * 1024;

/**
 * Runs this command again in a child process with huge pages requested, when it is worth it.
 * Resolves to the child's exit code, or undefined when the caller should run the command itself.
 */
export async function relaunchWithHugePages(global: GlobalOptions, rest: string[], env: Readonly<Record<string, string | undefined>>): Promise<number | undefined> {
  if (process.platform !== 'linux' || env['PACKWRIGHT_HUGE_PAGES'] === '0') return undefined;
  const tunables = env['GLIBC_TUNABLES'];
  // Already set (by us in the parent, or by the user): never relaunch twice.
  if (tunables?.includes('glibc.malloc.hugetlb') === true) return undefined;
  const always = env['PACKWRIGHT_HUGE_PAGES'] === '1';
  if ((!always && packBytesTouched(global, rest) < MIN_BYTES) || !hugePagesOnRequest() || !isGlibc()) return undefined;
  const script = process.argv[1];
  if (script === undefined) return undefined;
  const ours = tunables?.includes('glibc.malloc.mmap_threshold') === true ? TUNABLE : `${TUNABLE}:${MMAP_THRESHOLD}`;
  // PACKWRIGHT_PARENT_PID: the child aborts its work if this process dies (interruptible.ts).
  const childEnv = { ...env, GLIBC_TUNABLES: tunables === undefined || tunables === '' ? ours : `${tunables}:${ours}`, PACKWRIGHT_PARENT_PID: String(process.pid) };
  // The same big work makes many short-lived views and records: a 4 MiB young generation (16 by
  // default) keeps ~40 MB less resident for cat-file --batch at no cost in time. Flags given to
  // this process come after it, so they win.
  // Loaded only to relaunch: at the top of the bundle every command would load it at start.
  const { spawn } = await import('node:child_process');
  const child = spawn(process.execPath, ['--max-semi-space-size=4', ...process.execArgv, script, ...process.argv.slice(2)], { stdio: 'inherit', env: childEnv });
  // The child shares our terminal, so it gets ^C itself; signals sent to us alone are passed on.
  const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
  const forward = (signal: NodeJS.Signals): void => {
    child.kill(signal);
  };
  for (const s of signals) process.on(s, forward);
  return await new Promise<number | undefined>((done) => {
    child.on('error', () => done(undefined));
    child.on('exit', (code, signal) => {
      for (const s of signals) process.off(s, forward);
      if (signal !== null) {
        // Die the same way, so whoever waits for us sees the signal.
        process.kill(process.pid, signal);
      }
      done(code ?? 128);
    });
  });
}

/** How many bytes of pack the command will read: 0 when unknown or small work. */
function packBytesTouched(global: GlobalOptions, rest: string[]): number {
  const [command, ...args] = rest;
  switch (command) {
    case 'cat-file':
      // Only reading every object's content is big work; --batch-check over all objects is not.
      if (!args.includes('--batch-all-objects') || !args.some((a) => a === '--batch' || a.startsWith('--batch='))) return 0;
      return repositoryPackBytes(global);
    case 'demo':
      return repositoryPackBytes(global);
    default:
      return 0;
  }
}

function repositoryPackBytes(global: GlobalOptions): number {
  try {
    const objects = global.gitDir !== undefined ? join(commonDirOf(resolve(global.cwd, global.gitDir)), 'objects') : join(discoverRepository(global.cwd).commonDir, 'objects');
    const packDir = join(objects, 'pack');
    let total = 0;
    for (const name of readdirSync(packDir)) if (name.endsWith('.pack')) total += statSync(join(packDir, name)).size;
    return total;
  } catch {
    // Only decides whether to relaunch: the command itself reports what it cannot read.
    return 0;
  }
}

function hugePagesOnRequest(): boolean {
  try {
    return readFileSync('/sys/kernel/mm/transparent_hugepage/enabled', 'utf8').includes('[madvise]');
  } catch {
    // No such setting on this kernel: no huge pages on request, no relaunch.
    return false;
  }
}

/** GLIBC_TUNABLES means nothing to musl (Alpine). */
function isGlibc(): boolean {
  const report = process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined;
  return report?.header?.glibcVersionRuntime !== undefined;
}
