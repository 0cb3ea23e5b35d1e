import { resolve } from 'node:path';
import { isPackwrightError } from '../errors/index.js';
import { hashLength, type ObjectFormat } from '../hash/index.js';
import { typeName } from '../objects/index.js';
import { OBJ_OFS_DELTA } from '../pack/index.js';
import { refBaseAt, verifyPack } from '../resolve/index.js';
import { Output } from './output.js';
import { interruptible } from './interruptible.js';
import { helpRequested, UsageError } from './usage-error.js';
import { configFromParameters, objectFormatOption, tryOpenRepository, type GlobalOptions } from './global-options.js';
import { maxMemoryOf } from './max-memory.js';

const USAGE = 'usage: packwright verify-pack [-v | --verbose] [-s | --stat-only] [--object-format=<fmt>] [--max-memory=<n>] [--collision-detection] <pack>.idx...';

/**
 * `git verify-pack`: rebuilds each pack's index and compares it byte for byte with the one on
 * disk (with the version and 64-bit threshold read from that index, as git's `--verify` does),
 * checking every object's hash on the way. `-v` lists objects in pack order, `-s` only the
 * chain-length histogram.
 */
export async function verifyPackCommand(ctx: GlobalOptions, args: string[]): Promise<number> {
  let verbose = false;
  let statOnly = false;
  let format: ObjectFormat | undefined;
  const idxs: string[] = [];
  let maxMemory: string | undefined;
  let detectCollisions = false;
  const help = helpRequested(args, USAGE);
  if (help !== undefined) return help;
  for (const a of args) {
    if (a === '-v' || a === '--verbose') verbose = true;
    else if (a === '-s' || a === '--stat-only') statOnly = true;
    else if (a.startsWith('--object-format=')) {
      // git's verify-pack hands the value to index-pack, whose failure makes verify-pack exit 1.
      try {
        format = objectFormatOption(a.slice(16));
      } catch (e) {
        if (!isPackwrightError(e)) throw e;
        process.stderr.write(`fatal: ${e.message}\n`);
        return 1;
      }
    }
    else if (a.startsWith('--max-memory=')) maxMemory = a.slice(13);
    else if (a === '--collision-detection') detectCollisions = true;
    else if (a === '--no-collision-detection') detectCollisions = false;
    else if (a.startsWith('-')) throw new UsageError(USAGE);
    else idxs.push(a);
  }
  if (idxs.length === 0) throw new UsageError(USAGE);
  const repo = tryOpenRepository(ctx);
  format ??= repo?.format ?? 'sha1';
  const ceiling = maxMemoryOf(maxMemory, repo?.config ?? configFromParameters(ctx.configParameters), USAGE);
  repo?.close();
  const H = hashLength(format);
  const out = new Output();
  let failed = 0;
  for (const arg of idxs) {
    // Paths are printed as given, like git; files are opened relative to -C.
    const shown = `${arg.replace(/\.(idx|pack)$/, '')}.pack`;
    const base = resolve(ctx.cwd, arg).replace(/\.(idx|pack)$/, '');
    const idxPath = `${base}.idx`;
    try {
      const r = await interruptible((signal) => verifyPack(idxPath, format as ObjectFormat, { signal, depths: verbose, ...(ceiling !== undefined ? { maxMemory: ceiling } : {}), ...(detectCollisions ? { detectCollisions } : {}) }));
      if (verbose || statOnly) {
        const s = r.scan;
        const deepest = r.stats.chainHistogram.length - 1;
        if (verbose) {
          for (let k = 0; k < s.count; k++) {
            // Like git: the size stored in the entry header (delta data size for deltas).
            const size = s.sizes[k] as number;
            out.string(`${toHexAt(s.ids, k, H)} ${typeName(s.resolvedTypes[k] as number).padEnd(6)} ${size} ${(s.offsets[k + 1] as number) - (s.offsets[k] as number)} ${s.offsets[k]}`);
            if ((s.types[k] as number) >= OBJ_OFS_DELTA) {
              const baseId = s.types[k] === OBJ_OFS_DELTA ? toHexAt(s.ids, s.ofsBase[k] as number, H) : toHexAt(s.refs.ids, refBaseAt(s.refs, k, H) / H, H);
              out.string(` ${(r.depths as Uint32Array)[k]} ${baseId}`);
            }
            out.string('\n');
          }
        }
        const nonDelta = r.stats.chainHistogram[0] ?? 0;
        if (nonDelta) out.string(`non delta: ${nonDelta} object${nonDelta === 1 ? '' : 's'}\n`);
        for (let d = 1; d <= deepest; d++) {
          const c = r.stats.chainHistogram[d] ?? 0;
          if (c) out.string(`chain length = ${d}: ${c} object${c === 1 ? '' : 's'}\n`);
        }
        // git 2.39 prints the verdict after the listing, not after the statistics alone.
        if (!statOnly) out.string(`${shown}: ok\n`);
      }
    } catch (e) {
      if (!isPackwrightError(e)) throw e;
      out.flush();
      process.stderr.write(`error: ${e.message}\n`);
      if (verbose || statOnly) out.string(`${shown}: bad\n`);
      failed++;
    }
  }
  out.flush();
  return failed ? 1 : 0;
}

function toHexAt(ids: Uint8Array, k: number, H: number): string {
  return Buffer.from(ids.buffer, ids.byteOffset + k * H, H).toString('hex');
}

