import { closeSync, fstatSync, fsyncSync, openSync, renameSync, rmSync } from 'node:fs';
import { hashFileRange } from '../hash/hash-file.js';
import { writeFully } from '../io/write-fully.js';
import { Z_DEFAULT_COMPRESSION } from '../zlib/node-zlib.js';
import { PackwrightError, throwIfAborted } from '../errors/packwright-error.js';
import { toHex } from '../hash/hex.js';
import { writeIndex } from '../idx/write-index.js';
import { sortIds } from '../idx/sort-ids.js';
import { writeRevIndex } from '../idx/rev-index.js';
import { writeMtimes } from '../idx/mtimes.js';
import { temporaryPathBeside, writeFileAtomic } from '../io/write-file-atomic.js';
import { ObjectTable } from '../walk/object-table.js';
import { writePack, type NewDeltas, type PackSink, type PackSplit, type WrittenPack } from './write-pack.js';
import type { CreatePackOptions, CreatePackResult, WrittenPackFiles } from './create-pack-options.js';
import type { CountedObjects } from './count-for-pack.js';
import type { PackPlan } from './pack-plan.js';
import { buildPackBitmaps } from './pack-bitmaps.js';
import { bitmapFileBytes } from '../bitmap/bitmap-bytes.js';
import type { Bitset } from '../bitmap/bitset.js';


/**
 * The write stage: the planned pack streamed to `options.sink` and/or written under
 * `options.packBase` (one pack, or several under `maxPackSize`), each with its index (and `.rev`,
 * `.mtimes` when asked), through temporary files that an error or abort removes. Fills `result`'s
 * hash, packs and write statistics.
 */
export async function writePackOutput(options: CreatePackOptions, counted: CountedObjects, plan: PackPlan, deltas: NewDeltas, result: CreatePackResult): Promise<void> {
  const handle = options.objects;
  const { table, locations, listed } = counted;
  const progress = options.onProgress;
  const check = (): void => {
    throwIfAborted(options.signal, 'making the pack');
  };
  if (options.maxPackSize !== undefined && (options.sink !== undefined || options.packBase === undefined)) {
    throw new PackwrightError('INVALID_ARGUMENT', '--max-pack-size cannot be used to build a pack for transfer');
  }
  const temporaries: { path: string; fd: number }[] = [];
  const openPart = (): number => {
    const path = temporaryPathBeside(`${options.packBase}.pack`);
    // Readable too: a pack cut short by a split is hashed again from the file.
    const fd = openSync(path, 'wx+', 0o444);
    temporaries.push({ path, fd });
    return fd;
  };
  const writeAll = (fd: number, chunk: Uint8Array, at?: number): void => {
    writeFully(fd, chunk, temporaries.find((t) => t.fd === fd)?.path ?? `${options.packBase}.pack`, at);
  };
  let fd = options.packBase !== undefined && options.maxPackSize === undefined ? openPart() : -1;
  // git's reasons to write no bitmap, with its warnings (not with --write-bitmap-index-quiet).
  let bitmapOptions = options;
  if (options.writeBitmapIndex !== undefined && options.writeBitmapIndex !== false && (options.maxPackSize !== undefined || counted.leftOut > 0)) {
    if (options.writeBitmapIndex === true) {
      options.onWarning?.(counted.leftOut > 0 ? 'disabling bitmap writing, as some objects are not being packed' : 'disabling bitmap writing, packs are split due to pack.packSizeLimit');
    }
    bitmapOptions = { ...options, writeBitmapIndex: false };
  }
  const userSink = options.sink;
  const sink: PackSink = (chunk) => {
    if (fd >= 0) writeAll(fd, chunk);
    return userSink?.(chunk);
  };
  const split: PackSplit | undefined = options.maxPackSize === undefined ? undefined : {
    maxSize: options.maxPackSize,
    begin: () => {
      const part = openPart();
      return (chunk) => writeAll(part, chunk);
    },
    end: (_part, count, declared, hash) => {
      const part = (temporaries[temporaries.length - 1] as { fd: number }).fd;
      let name = hash;
      if (count !== declared) {
        // Cut short: the header said every object left. Set its count and hash the file again.
        const header = Buffer.alloc(4);
        header.writeUInt32BE(count);
        writeAll(part, header, 8);
        const t = temporaries[temporaries.length - 1] as { path: string; fd: number };
        name = hashFileRange(part, fstatSync(part).size, options.objects.hashLength === 20 ? 'sha1' : 'sha256', t.path);
      }
      writeAll(part, name);
      return name;
    },
  };
  try {
    const w = await writePack({
      handle,
      table,
      locations,
      plan,
      deltas,
      deltaBaseOffset: options.deltaBaseOffset !== false,
      compression: options.compression ?? Z_DEFAULT_COMPRESSION,
      sink,
      // The files are written at once; the caller's sink says for itself.
      reuseChunks: userSink === undefined || options.reuseChunks === true,
      split,
      signal: options.signal,
      onProgress: progress === undefined ? undefined : (done, total, bytes) => progress('writing', done, total, bytes),
    });
    Object.assign(result.stats, { copied: w.copied, copiedDeltas: w.copiedDeltas, thinDeltas: w.thinDeltas, recompressed: w.recompressed, newDeltas: w.newDeltas, newThinDeltas: w.newThinDeltas, badCrc: w.badCrc, verbatim: w.verbatim });
    result.hash = w.hash;
    check();
    if (options.packBase !== undefined) {
      const hashes = split === undefined ? [w.hash] : w.parts;
      for (const t of temporaries) {
        fsyncSync(t.fd);
        closeSync(t.fd);
        t.fd = -1;
      }
      fd = -1;
      // Each pack under its name in order, its objects' entries in its own index.
      for (let p = 0; p < hashes.length; p++) {
        const objects = split === undefined ? listed : listed.filter((o) => w.partOf[o] === p);
        const files = writePackFiles(bitmapOptions, options.packBase, (temporaries[p] as { path: string }).path, table, objects, { ...w, hash: hashes[p] as Buffer }, counted.mtimes);
        (temporaries[p] as { path: string }).path = '';
        result.packs.push(files);
      }
      const last = result.packs[result.packs.length - 1];
      if (last !== undefined) {
        result.hash = last.hash;
        Object.assign(result, { packPath: last.packPath, indexPath: last.indexPath }, last.reverseIndexPath !== undefined ? { reverseIndexPath: last.reverseIndexPath } : {});
      }
    }
  } finally {
    for (const t of temporaries) {
      if (t.fd >= 0) closeSync(t.fd);
      if (t.path !== '') rmSync(t.path, { force: true });
    }
  }
}

/**
 * The `.bitmap` of the pack of `sorted` (index order; `byOffset`: those positions in pack order),
 * or null when the pack does not hold everything its commits reach.
 */
function packBitmapFile(options: CreatePackOptions, table: ObjectTable, sorted: Int32Array, byOffset: readonly number[], packHash: Buffer): Buffer | null {
  const N = sorted.length;
  const packPosition = new Int32Array(table.count).fill(-1);
  byOffset.forEach((i, k) => (packPosition[sorted[i] as number] = k));
  const inPackOrder = Int32Array.from(byOffset, (i) => sorted[i] as number);
  const built = buildPackBitmaps(options.objects, table, inPackOrder, packPosition, options.bitmapPreferredTips ?? []);
  if (built === undefined) return null;
  const indexPosition = new Int32Array(table.count).fill(-1);
  sorted.forEach((n, i) => (indexPosition[n] = i));
  return bitmapFileBytes({
    format: options.objects.format,
    packHash,
    objectCount: N,
    types: built.types,
    entries: built.selected.map((n, k) => ({ indexPosition: indexPosition[n] as number, bits: built.sets[k] as Bitset })),
    ...(options.bitmapHashCache !== false ? { hashCache: Uint32Array.from(sorted, (n) => table.nameHashes[n] as number) } : {}),
    lookupTable: options.bitmapLookupTable === true,
  });
}

/**
 * The written pack's files under their names: the temporary pack renamed to
 * `<base>-<hash>.pack`, then the `.rev` (when asked) and the `.idx`, each through a temporary file
 * (git's order: the index, which makes the pack visible, comes last).
 */
function writePackFiles(options: CreatePackOptions, base: string, tmpPath: string, table: ObjectTable, listed: Int32Array, w: WrittenPack, mtimes?: readonly number[]): WrittenPackFiles {
  const H = table.hashLength;
  const name = `${base}-${toHex(w.hash)}`;
  // A radix sort of the ids: a comparator sort of 76k objects by Buffer.compare took ~250 ms.
  const order = sortIds(table.idsOf(listed), listed.length, H);
  const sorted = Int32Array.from(order, (i) => listed[i] as number);
  const ids = table.idsOf(sorted);
  const offsets = Float64Array.from(sorted, (o) => w.offsets[o] as number);
  const crcs = Uint32Array.from(sorted, (o) => w.crcs[o] as number);
  const format = H === 20 ? 'sha1' : 'sha256';
  const index = writeIndex(format, { ids, offsets, crc32: crcs }, w.hash, {
    ...(options.indexVersion === undefined ? {} : { version: options.indexVersion }),
    ...(options.largeOffsetLimit === undefined ? {} : { largeOffsetLimit: options.largeOffsetLimit }),
  });
  // The bitmap is built before any file takes its name: a pack whose commits reach what it does
  // not hold fails here, as git's write does ("failed to write bitmap index"), leaving nothing.
  const wantBitmap = options.writeBitmapIndex !== undefined && options.writeBitmapIndex !== false;
  // Index positions in pack order, for the .rev and the bitmap (sorted once for both).
  const byOffset = options.writeReverseIndex || wantBitmap ? [...sorted.keys()].sort((a, b) => (offsets[a] as number) - (offsets[b] as number)) : [];
  const bitmap = wantBitmap ? packBitmapFile(options, table, sorted, byOffset, w.hash) : undefined;
  if (bitmap === null) throw new PackwrightError('OBJECT_NOT_FOUND', 'failed to write bitmap index: the pack does not hold everything its commits reach');
  renameSync(tmpPath, `${name}.pack`);
  const out: WrittenPackFiles = { hash: w.hash, packPath: `${name}.pack`, indexPath: `${name}.idx` };
  if (options.writeReverseIndex) {
    const rank = new Uint32Array(sorted.length);
    byOffset.forEach((i, k) => (rank[k] = i));
    writeFileAtomic(`${name}.rev`, writeRevIndex(format, rank, w.hash));
    out.reverseIndexPath = `${name}.rev`;
  }
  // A cruft pack's times, in index order, before the index makes the pack visible (git's order).
  if (mtimes !== undefined) {
    writeFileAtomic(`${name}.mtimes`, writeMtimes(format, Uint32Array.from(sorted, (o) => mtimes[o] as number), w.hash));
    out.mtimesPath = `${name}.mtimes`;
  }
  // The bitmap, before the index (git's order).
  if (bitmap !== undefined) {
    writeFileAtomic(`${name}.bitmap`, bitmap);
    out.bitmapPath = `${name}.bitmap`;
  }
  writeFileAtomic(`${name}.idx`, index);
  return out;
}
