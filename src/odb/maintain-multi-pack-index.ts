import { isNotFound } from '../io/read-dir-if-present.js';
import { opendirSync, readdirSync, rmSync, statSync, type Stats } from 'node:fs';
import { writeFileAtomic } from '../io/write-file-atomic.js';
import { join } from 'node:path';
import { PackwrightError, isPackwrightError } from '../errors/packwright-error.js';
import { hashBytes } from '../hash/hash-object.js';
import { toHex } from '../hash/hex.js';
import { PackIndex } from '../idx/pack-index.js';
import { compareBytes } from '../idx/sorted-ids.js';
import { MultiPackIndex } from '../midx/multi-pack-index.js';
import { writeRevIndex } from '../idx/rev-index.js';
import { writeMultiPackIndex, type MidxPack } from '../midx/write-multi-pack-index.js';
import type { Store } from './store.js';

/** Options of `writeMultiPackIndexFile`: the preferred pack, the packs to include, warnings and progress. */
export interface MidxWriteOptions {
  /** The pack whose copies win over duplicates elsewhere (`pack-<hash>.pack` or `.idx`). */
  preferredPack?: string | undefined;
  /** Warnings git prints (a pack that could not be added, an unknown preferred pack). */
  onWarning?: ((message: string) => void) | undefined;
  /** Only these packs (`.idx` names; git's `--stdin-packs`): an existing file is not carried forward. */
  include?: ReadonlySet<string> | undefined;
  /** Progress, in git's phases ("Adding packfiles to multi-pack-index", …); total 0 when unknown. */
  onProgress?: ((phase: string, done: number, total: number) => void) | undefined;
  /**
   * Write a reachability bitmap too (git's `--bitmap`): the file gets its RIDX chunk, the oldest
   * pack is preferred when none is named (so the first bits are one pack's whole), and this makes
   * the `multi-pack-index-<checksum>.bitmap` of the new file, which is written before the file
   * takes its name, as git does. Building it needs walks, which this layer knows nothing of:
   * `multiPackBitmap` (packwright/create) is the function to give. Without it, an existing
   * bitmap goes (git's `--no-bitmap`).
   */
  bitmap?: ((midx: MultiPackIndex) => Uint8Array) | undefined;
  /**
   * Also write the order as `multi-pack-index-<checksum>.rev`, the file git wrote before the RIDX
   * chunk existed (git writes it under GIT_TEST_MIDX_WRITE_REV; its tests then read it).
   */
  reverseIndexFile?: boolean | undefined;
}

/**
 * What `writeMultiPackIndexFile` did: the file, whether it was written (not already up to date), and its
 * packs and objects.
 */
export interface MidxWriteResult {
  path: string;
  /** False when the existing file already covers every pack (git then writes nothing). */
  written: boolean;
  packs: number;
  objects: number;
}

/** The file's status, or undefined when it is not there. */
function statIfPresent(path: string): Stats | undefined {
  try {
    return statSync(path);
  } catch (e) {
    if (!isNotFound(e)) throw e;
    return undefined;
  }
}

/** `.idx` names of a pack directory in the order the directory lists them (git's readdir order). */
function idxNamesAsListed(packDir: string): string[] {
  const names: string[] = [];
  let dir;
  try {
    dir = opendirSync(packDir);
  } catch (e) {
    if (!isNotFound(e)) throw e;
    return names;
  }
  try {
    for (let e = dir.readSync(); e !== null; e = dir.readSync()) if (e.name.endsWith('.idx')) names.push(e.name);
  } finally {
    dir.closeSync();
  }
  return names;
}

/** git's cmp_idx_or_pack_name: pack names compared without their `.idx`/`.pack`. */
function samePack(a: string, b: string): boolean {
  const strip = (s: string): string => s.replace(/\.(idx|pack)$/, '');
  return strip(a) === strip(b);
}

/** The existing multi-pack-index, if it loads and its checksum holds (git ignores it otherwise). */
function existingMidx(store: Store, path: string, warn: (m: string) => void): MultiPackIndex | undefined {
  let midx: MultiPackIndex | undefined;
  try {
    midx = MultiPackIndex.openIfPresent(path, store.hashLength);
  } catch (e) {
    if (!isPackwrightError(e)) throw e;
    warn(`ignoring existing multi-pack-index; ${e.message}`);
    return undefined;
  }
  if (midx !== undefined && !hashBytes(store.format, midx.checksummed()).equals(midx.checksum())) {
    warn('ignoring existing multi-pack-index; checksum mismatch');
    return undefined;
  }
  return midx;
}

/** Opens one pack's index for the writer, as git's add_pack_to_midx does; undefined (with a warning) when it cannot. */
function packFor(store: Store, packDir: string, name: string, warn: (m: string) => void): MidxPack | undefined {
  const idxPath = join(packDir, name);
  let mtime: number;
  try {
    mtime = Math.floor(statSync(`${idxPath.slice(0, -4)}.pack`).mtimeMs / 1000);
  } catch {
    warn(`failed to add packfile '${idxPath}'`);
    return undefined;
  }
  try {
    return { name, mtime, index: PackIndex.open(idxPath, store.hashLength) };
  } catch (e) {
    if (!isPackwrightError(e)) throw e;
    warn(`failed to open pack-index '${idxPath}'`);
    return undefined;
  }
}

/**
 * `git multi-pack-index write`: one index over every pack of the store's own pack directory,
 * byte-identical to git 2.39's (see writeMultiPackIndex), written to a lock file and renamed
 * into place; stale `multi-pack-index-*.rev`/`.bitmap` files go. The store lists its directory
 * again, so its handles use the new file from their next miss.
 */
export function writeMultiPackIndexFile(store: Store, options: MidxWriteOptions = {}, drop?: ReadonlySet<string>): MidxWriteResult {
  const warn = options.onWarning ?? (() => {});
  const packDir = join(store.objectsDir, 'pack');
  const path = join(packDir, 'multi-pack-index');
  const progress = options.onProgress ?? (() => {});
  // git carries an existing file forward only when not told which packs to include.
  const previous = options.include === undefined ? existingMidx(store, path, warn) : undefined;
  const opened: PackIndex[] = [];
  try {
    const carried: MidxPack[] = (previous?.packNames ?? []).map((name) => ({ name, mtime: 0, index: { count: 0, id: () => new Uint8Array(0), offset: () => 0 } }));
    const packs: MidxPack[] = [];
    let checked = 0;
    for (const name of idxNamesAsListed(packDir)) {
      progress('Adding packfiles to multi-pack-index', ++checked, 0);
      if (previous?.packNames.includes(name)) continue;
      if (options.include !== undefined && !options.include.has(name)) continue;
      const p = packFor(store, packDir, name, warn);
      if (p === undefined) continue;
      opened.push(p.index as PackIndex);
      packs.push(p);
    }
    // Nothing new: git writes nothing, unless a bitmap is wanted and the file has none.
    if (previous !== undefined && packs.length === 0 && drop === undefined && (options.bitmap === undefined || hasBitmap(packDir, previous))) {
      if (options.bitmap === undefined) removeMidxFiles(packDir, '.bitmap', undefined);
      return { path, written: false, packs: previous.packNames.length, objects: previous.count };
    }
    const all = [...carried, ...packs];
    let preferred = -1;
    if (options.bitmap !== undefined && options.preferredPack === undefined) {
      // git's default for a bitmap: the oldest pack with objects (the first of equals), whose
      // objects then all come first in the pseudo-pack order.
      for (let i = 0; i < all.length; i++) {
        if (i < carried.length) {
          // A pack the existing file names: opened for its time and count (git loads it too).
          const loaded = packFor(store, packDir, (all[i] as MidxPack).name, warn);
          if (loaded === undefined) throw new PackwrightError('PACK_MISSING', `could not load pack ${(all[i] as MidxPack).name}`);
          opened.push(loaded.index as PackIndex);
          carried[i] = all[i] = loaded;
        }
        const p = all[i] as MidxPack;
        const best = preferred >= 0 ? (all[preferred] as MidxPack) : undefined;
        if (p.index.count > 0 && (best === undefined || p.mtime < best.mtime)) preferred = i;
      }
    } else if (options.preferredPack !== undefined) {
      preferred = all.findIndex((p) => samePack(options.preferredPack as string, p.name));
      if (preferred < 0) warn(`unknown preferred pack: '${options.preferredPack}'`);
      else if (preferred < carried.length) {
        // Its objects are taken from its own index (git loads the pack for this).
        const p = packFor(store, packDir, all[preferred]?.name as string, warn);
        if (p === undefined) preferred = -1;
        else {
          opened.push(p.index as PackIndex);
          carried[preferred] = p;
          all[preferred] = p;
        }
      }
      const chosen = preferred >= 0 ? all[preferred] : undefined;
      if (chosen !== undefined && chosen.index.count === 0) {
        throw new PackwrightError('INVALID_ARGUMENT', `cannot select preferred pack ${chosen.name} with no objects`);
      }
    }
    const write = (reverseIndex: boolean): Buffer => writeMultiPackIndex({
      format: store.format,
      ...(previous !== undefined ? { previous: { midx: previous, packs: carried } } : {}),
      packs,
      preferred,
      ...(drop !== undefined ? { drop } : {}),
      reverseIndex,
    });
    let bytes = write(options.bitmap !== undefined || options.reverseIndexFile === true);
    let bitmap = options.bitmap;
    if (bitmap !== undefined && MultiPackIndex.fromBytes(path, bytes, store.hashLength).count === 0) {
      warn('refusing to write multi-pack .bitmap without any objects');
      bitmap = undefined;
      bytes = write(options.reverseIndexFile === true);
    }
    progress('Writing chunks to multi-pack-index', 1, 1);
    const checksum = toHex(bytes.subarray(bytes.length - store.hashLength));
    const written = MultiPackIndex.fromBytes(path, bytes, store.hashLength);
    if (options.reverseIndexFile === true) {
      writeFileAtomic(join(packDir, `multi-pack-index-${checksum}.rev`), writeRevIndex(store.format, written.reverseIndex() as Uint32Array, written.checksum()), 0o444);
    }
    if (bitmap !== undefined) {
      // The bitmap first: a reader that finds the new file finds its bitmap too.
      writeFileAtomic(join(packDir, `multi-pack-index-${checksum}.bitmap`), bitmap(written), 0o444);
    }
    writeLocked(path, bytes);
    removeMidxFiles(packDir, '.bitmap', checksum);
    removeMidxFiles(packDir, '.rev', checksum);
    store.refresh();
    return { path, written: true, packs: written.packNames.length, objects: written.count };
  } finally {
    for (const index of opened) index.close();
  }
}

/** Whether the multi-pack-index has a bitmap file (and the reverse index one needs). */
function hasBitmap(packDir: string, midx: MultiPackIndex): boolean {
  return midx.hasReverseIndex && statIfPresent(join(packDir, `multi-pack-index-${toHex(midx.checksum())}.bitmap`)) !== undefined;
}

/** Removes `multi-pack-index-<hash><ext>` files other than `keep`'s (git's clear_midx_files_ext). */
function removeMidxFiles(packDir: string, ext: '.bitmap' | '.rev', keep: string | undefined): void {
  let names: string[];
  try {
    names = readdirSync(packDir);
  } catch (e) {
    if (isNotFound(e)) return;
    throw e;
  }
  for (const name of names) {
    const m = /^multi-pack-index-([0-9a-f]+)(\.bitmap|\.rev)$/.exec(name);
    if (m !== null && m[2] === ext && m[1] !== keep) rmSync(join(packDir, name), { force: true });
  }
}

/** Writes through `<path>.lock` (created exclusively, as git's lockfile) and renames it into place. */
function writeLocked(path: string, bytes: Uint8Array): void {
  const lock = `${path}.lock`;
  try {
    writeFileAtomic(path, bytes, 0o444, lock);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') {
      throw new PackwrightError('IO_ERROR', `Unable to create '${lock}': File exists.\n\nAnother process seems to be running in this repository; if it crashed, remove the file and try again.`, { file: lock, cause: e });
    }
    throw new PackwrightError('IO_ERROR', `cannot write ${path}: ${(e as Error).message}`, { file: path, cause: e });
  }
}

/**
 * `git multi-pack-index verify`: the checksum, the order of names and ids, and each object's
 * offset against its pack's own index. Returns the errors found, in git's words (none: valid, or
 * no file at all).
 */
export function verifyMultiPackIndex(store: Store, options: Pick<MidxWriteOptions, 'onProgress'> = {}): string[] {
  const progress = options.onProgress ?? (() => {});
  const packDir = join(store.objectsDir, 'pack');
  const path = join(packDir, 'multi-pack-index');
  const errors: string[] = [];
  let midx: MultiPackIndex | undefined;
  try {
    midx = MultiPackIndex.openIfPresent(path, store.hashLength);
  } catch (e) {
    if (!isPackwrightError(e)) throw e;
    return [e.message];
  }
  if (midx === undefined) return errors;
  if (midx.count === 0) return ['the midx contains no oid'];
  if (!hashBytes(store.format, midx.checksummed()).equals(midx.checksum())) errors.push('incorrect checksum');
  const indexes: (PackIndex | undefined)[] = midx.packNames.map((name, i) => {
    progress('Looking for referenced packfiles', i + 1, midx.packNames.length);
    try {
      statSync(join(packDir, name.replace(/\.idx$/, '.pack')));
      return PackIndex.open(join(packDir, name), store.hashLength);
    } catch (e) {
      if (!isPackwrightError(e) && (e as NodeJS.ErrnoException).code === undefined) throw e;
      errors.push(`failed to load pack in position ${i}`);
      return undefined;
    }
  });
  try {
    const H = store.hashLength;
    for (let i = 1; i < midx.count; i++) {
      if ((i & 1023) === 0 || i === midx.count - 1) progress('Verifying OID order in multi-pack-index', i + 1, midx.count);
      if (compareBytes(midx.id(i - 1), 0, midx.id(i), 0, H) >= 0) {
        errors.push(`oid lookup out of order: oid[${i - 1}] = ${toHex(midx.id(i - 1))} >= ${toHex(midx.id(i))} = oid[${i}]`);
      }
    }
    for (let i = 0; i < midx.count; i++) {
      if ((i & 1023) === 0 || i === midx.count - 1) progress('Verifying object offsets', i + 1, midx.count);
      const id = midx.id(i);
      let pack: number;
      let offset: number;
      try {
        pack = midx.packOf(i);
        offset = midx.offset(i);
      } catch (e) {
        if (!isPackwrightError(e)) throw e;
        errors.push(e.message);
        continue;
      }
      const index = indexes[pack];
      if (index === undefined) {
        errors.push(`failed to load pack entry for oid[${i}] = ${toHex(id)}`);
        continue;
      }
      const at = index.find(id);
      const stored = at < 0 ? -1 : index.offset(at);
      if (stored !== offset) {
        errors.push(`incorrect object offset for oid[${i}] = ${toHex(id)}: ${offset.toString(16)} != ${stored < 0 ? 'none' : stored.toString(16)}`);
      }
    }
  } finally {
    for (const index of indexes) index?.close();
  }
  return errors;
}

/**
 * `git multi-pack-index expire`: deletes the packs the multi-pack-index names but chooses no
 * object from (unless they have a `.keep` or are cruft packs), then rewrites it without them.
 * Returns the packs deleted.
 */
export function expireMultiPackIndex(store: Store, options: MidxWriteOptions = {}): string[] {
  const packDir = join(store.objectsDir, 'pack');
  const path = join(packDir, 'multi-pack-index');
  const midx = existingMidx(store, path, options.onWarning ?? (() => {}));
  if (midx === undefined) return [];
  const progress = options.onProgress ?? (() => {});
  const counts = new Uint32Array(midx.packNames.length);
  for (let i = 0; i < midx.count; i++) {
    if ((i & 1023) === 0 || i === midx.count - 1) progress('Counting referenced objects', i + 1, midx.count);
    counts[midx.packOf(i)]!++;
  }
  const drop = new Set<string>();
  midx.packNames.forEach((name, i) => {
    progress('Finding and deleting unreferenced packfiles', i + 1, midx.packNames.length);
    if (counts[i] !== 0) return;
    const base = join(packDir, name.slice(0, -4));
    const exists = (ext: string): boolean => statIfPresent(`${base}${ext}`) !== undefined;
    if (!exists('.pack') || exists('.keep') || exists('.mtimes')) return;
    drop.add(name);
    // The index first: a pack without its index is invisible to every reader.
    for (const ext of ['.idx', '.pack', '.rev', '.bitmap', '.promisor']) rmSync(`${base}${ext}`, { force: true });
  });
  if (drop.size > 0) writeMultiPackIndexFile(store, options, drop);
  return [...drop];
}

/** What `git multi-pack-index repack` rewrites: the packs chosen, and the ids of the objects taken from them. */
export interface MidxRepackSelection {
  /** `.idx` names of the packs chosen. */
  packs: string[];
  /** The objects the multi-pack-index takes from those packs, in its (id) order. */
  ids: Buffer[];
}

/**
 * What `selectPacksToRepack` chooses by: the batch size, as `git multi-pack-index repack --batch-size`
 * does.
 */
export interface MidxRepackSelectOptions {
  /**
   * git's `--batch-size`: 0 takes every pack; otherwise packs are taken oldest first while their
   * expected sizes add up to less than this, each one smaller than it (a pack's expected size is
   * its size scaled by the share of its objects the multi-pack-index takes from it).
   */
  batchSize: number;
  /** Take packs with a `.keep` file too (`repack.packKeptObjects`, default false). */
  packKeptObjects?: boolean | undefined;
  /** Called with a warning git would print (a pack that cannot be read is skipped). */
  onWarning?: ((message: string) => void) | undefined;
}

/**
 * The packs `git multi-pack-index repack` would combine (git's fill_included_packs_all and
 * fill_included_packs_batch): never cruft packs (with `.mtimes`), kept packs only when asked.
 * Undefined when there is no multi-pack-index or fewer than two packs qualify: git then does nothing.
 */
export function selectPacksToRepack(store: Store, options: MidxRepackSelectOptions): MidxRepackSelection | undefined {
  const packDir = join(store.objectsDir, 'pack');
  const midx = existingMidx(store, join(packDir, 'multi-pack-index'), options.onWarning ?? (() => {}));
  if (midx === undefined) return undefined;
  try {
    const names = midx.packNames;
    const referenced = new Uint32Array(names.length);
    for (let i = 0; i < midx.count; i++) referenced[midx.packOf(i)]!++;
    const packs = names.map((name, i) => {
      const base = join(packDir, name.slice(0, -4));
      const stat = (ext: string): Stats | undefined => statIfPresent(`${base}${ext}`);
      const pack = stat('.pack');
      let objects = 0;
      if (pack !== undefined) {
        try {
          const index = PackIndex.open(join(packDir, name), store.hashLength);
          objects = index.count;
          index.close();
        } catch (e) {
          if (!isPackwrightError(e)) throw e;
        }
      }
      return {
        i, name, objects, referenced: referenced[i] as number,
        usable: pack !== undefined && objects > 0 && stat('.mtimes') === undefined && (options.packKeptObjects === true || stat('.keep') === undefined),
        size: Number(pack?.size ?? 0), mtime: Math.floor(Number(pack?.mtimeMs ?? 0) / 1000),
      };
    });
    const chosen: typeof packs = [];
    if (options.batchSize === 0) {
      for (const p of packs) if (p.usable) chosen.push(p);
    } else {
      let total = 0;
      for (const p of [...packs].sort((a, b) => a.mtime - b.mtime || a.i - b.i)) {
        if (total >= options.batchSize) break;
        if (!p.usable) continue;
        const expected = Math.floor((p.size * p.referenced) / p.objects);
        if (expected >= options.batchSize) continue;
        chosen.push(p);
        total += expected;
      }
    }
    if (chosen.length < 2) return undefined;
    const include = new Uint8Array(names.length);
    for (const p of chosen) include[p.i] = 1;
    const ids: Buffer[] = [];
    for (let i = 0; i < midx.count; i++) if (include[midx.packOf(i)]) ids.push(Buffer.from(midx.id(i)));
    return { packs: chosen.map((p) => p.name), ids };
  } finally {
    midx.close();
  }
}
