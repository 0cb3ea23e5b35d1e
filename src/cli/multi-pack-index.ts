import { readAll } from './read-lines.js';
import { resolve } from 'node:path';
import { Progress } from '../progress/index.js';
import { expireMultiPackIndex, Store, verifyMultiPackIndex, writeMultiPackIndexFile } from '../odb/index.js';
import type { Repository } from '../repo/index.js';
import { helpRequested, magnitudeOption, UsageError } from './usage-error.js';
import { multiPackBitmap, repackMultiPackIndex, type CreatePackPhase, type MultiPackBitmapOptions } from '../create/index.js';
import { readFileSync } from 'node:fs';

/** pack-objects' progress titles, as git's child prints them during a repack. */
const PACK_PHASES: Record<CreatePackPhase, string> = { counting: 'Enumerating objects', compressing: 'Compressing objects', writing: 'Writing objects' };
import type { GlobalOptions } from './global-options.js';
import type { CommandIO } from './command-io.js';

const USAGE = `usage: packwright multi-pack-index [<options>] write [--preferred-pack=<pack>][--[no-]bitmap] [--refs-snapshot=<path>]
   or: packwright multi-pack-index [<options>] verify
   or: packwright multi-pack-index [<options>] expire
   or: packwright multi-pack-index [<options>] repack [--batch-size=<size>]

    --object-dir <file>   object directory containing set of packfile and pack-index pairs
    --[no-]progress       force progress reporting`;

/** `git multi-pack-index write|verify|expire|repack`. */
export async function multiPackIndexCommand(io: CommandIO, ctx: GlobalOptions, open: () => Repository, args: string[]): Promise<number> {
  const help = helpRequested(args, USAGE, io.stdout);
  if (help !== undefined) return help;
  let objectDir: string | undefined;
  let preferredPack: string | undefined;
  let sub: string | undefined;
  let showProgress = io.stderr.isTTY;
  let stdinPacks = false;
  let batchSize = 0;
  let bitmap = false;
  let refsSnapshot: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    if (a.startsWith('--object-dir=')) objectDir = a.slice(13);
    else if (a === '--object-dir') objectDir = args[++i];
    else if (a === '--progress') showProgress = true;
    else if (a === '--no-progress') showProgress = false;
    else if (sub === 'write' && a === '--stdin-packs') stdinPacks = true;
    else if (sub === 'write' && a.startsWith('--preferred-pack=')) preferredPack = a.slice(17);
    else if (sub === 'write' && a === '--preferred-pack') preferredPack = args[++i];
    else if (sub === 'write' && (a === '--bitmap' || a === '--no-bitmap')) bitmap = a === '--bitmap';
    else if (sub === 'write' && a.startsWith('--refs-snapshot=')) refsSnapshot = a.slice(16);
    else if (sub === 'write' && a === '--refs-snapshot') refsSnapshot = args[++i];
    else if (sub === 'repack' && a.startsWith('--batch-size=')) batchSize = magnitudeOption('batch-size', a.slice(13), USAGE);
    else if (sub === 'repack' && a === '--batch-size') batchSize = magnitudeOption('batch-size', args[++i] ?? '', USAGE);
    else if (a.startsWith('-')) throw new UsageError(`unknown option '${a.replace(/^-+/, '')}'\n${USAGE}`);
    else if (sub === undefined) sub = a;
    else throw new UsageError(USAGE);
  }
  if (sub === undefined) throw new UsageError(`need a subcommand\n${USAGE}`);
  if (sub !== 'write' && sub !== 'verify' && sub !== 'expire' && sub !== 'repack') throw new UsageError(`unrecognized subcommand: ${sub}\n${USAGE}`);
  const store = objectDir !== undefined ? Store.open(resolve(ctx.cwd, objectDir), { objectFormat: open().format }) : open().store;
  const onWarning = (m: string): void => void io.stderr.write(`warning: ${m}\n`);
  const progress = new Progress(showProgress, io.stderr);
  const onProgress = (phase: string, done: number, total: number): void => progress.update(phase, done, total);
  try {
    switch (sub) {
      case 'write': {
        const include = stdinPacks ? new Set(readAll(io.stdin).toString('utf8').split('\n').map((l) => l.trim()).filter((l) => l !== '')) : undefined;
        const bitmapOptions = bitmap ? bitmapTips(open(), refsSnapshot === undefined ? undefined : resolve(ctx.cwd, refsSnapshot)) : undefined;
        writeMultiPackIndexFile(store, {
          ...(preferredPack !== undefined ? { preferredPack } : {}),
          ...(include !== undefined ? { include } : {}),
          ...(bitmapOptions !== undefined ? { bitmap: (midx) => multiPackBitmap(store, midx, bitmapOptions) } : {}),
          // git's test knob: the order in a .rev file too (its t5327 reads that).
          reverseIndexFile: bitmap && /^(1|true|yes|on)$/i.test(ctx.env['GIT_TEST_MIDX_WRITE_REV'] ?? ''),
          onWarning, onProgress,
        });
        return 0;
      }
      case 'verify': {
        const errors = verifyMultiPackIndex(store, { onProgress });
        progress.finish();
        for (const e of errors) io.stderr.write(`error: ${e}\n`);
        return errors.length > 0 ? 1 : 0;
      }
      case 'expire':
        expireMultiPackIndex(store, { onWarning, onProgress });
        return 0;
      case 'repack': {
        const config = open().config;
        await repackMultiPackIndex(store, {
          batchSize, onWarning, onProgress,
          packKeptObjects: config.getBool('repack.packKeptObjects') === true,
          deltaBaseOffset: config.getBool('repack.useDeltaBaseOffset') !== false,
          onPackProgress: (phase, done, total) => progress.update(PACK_PHASES[phase], done, total),
        });
        return 0;
      }
    }
  } finally {
    progress.finish();
  }
  throw new UsageError(`unrecognized subcommand: ${sub}\n${USAGE}`);
}

/**
 * What git's `multi-pack-index write --bitmap` chooses bitmapped commits among: every ref
 * (pack.preferBitmapTips naming the preferred ones by prefix), or the lines of a refs snapshot
 * (`[+]<id>`, `+` for preferred); and the hash cache and lookup table settings.
 */
function bitmapTips(repo: Repository, snapshot: string | undefined): MultiPackBitmapOptions {
  const config = repo.config;
  const hashCache = config.getBool('pack.writeBitmapHashCache');
  const lookupTable = config.getBool('pack.writeBitmapLookupTable');
  const tips: { id: Uint8Array; preferred: boolean }[] = [];
  if (snapshot !== undefined) {
    const width = 2 * repo.store.hashLength;
    for (const line of readFileSync(snapshot, 'utf8').split('\n')) {
      if (line === '') continue;
      const preferred = line.startsWith('+');
      const hex = preferred ? line.slice(1) : line;
      if (!/^[0-9a-f]+/.test(hex) || hex.length < width || !/^[0-9a-f]+$/.test(hex.slice(0, width))) throw new UsageError(`could not parse line: ${line}`);
      if (hex.length > width) throw new UsageError(`malformed line: ${line}`);
      tips.push({ id: Buffer.from(hex, 'hex'), preferred });
    }
  } else {
    const prefixes = config.getAll('pack.preferBitmapTips').filter((p): p is string => typeof p === 'string');
    for (const ref of repo.refs.list('refs/')) tips.push({ id: ref.id, preferred: prefixes.some((p) => ref.name.startsWith(p)) });
  }
  return { tips, ...(hashCache !== undefined ? { hashCache } : {}), ...(lookupTable !== undefined ? { lookupTable } : {}) };
}
