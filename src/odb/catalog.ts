import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { PackwrightError, isPackwrightError } from '../errors/packwright-error.js';
import { MultiPackIndex } from '../midx/multi-pack-index.js';
import { MAX_PACK_SLOTS, type PackIdentity } from '../pack/delta-base-cache.js';
import { readAlternates } from './alternates.js';
import { fileStamp } from '../io/file-stamp.js';
import { StorePack, type PackContext, type PackMarkers } from './store-pack.js';

/** One objects directory's multi-pack-index and the packs it names, by pack number. */
export class MidxSource {
  constructor(
    readonly index: MultiPackIndex,
    readonly packs: readonly StorePack[],
  ) {}

  get path(): string {
    return this.index.path;
  }

  /**
   * The copy of `id` the multi-pack-index chose at `at`, as a pack and its position in that pack's
   * own index; when that pack cannot be read (deleted since the file was written), another pack
   * the file covers that holds the object, found through its own index. Undefined when none does.
   */
  copyOf(id: Uint8Array, at: number): { pack: StorePack; position: number } | undefined {
    let chosen: StorePack | undefined;
    try {
      chosen = this.packs[this.index.packOf(at)];
    } catch (e) {
      if (!isPackwrightError(e)) throw e;
    }
    const found = chosen === undefined ? undefined : usableCopy(chosen, id);
    if (found !== undefined) return found;
    for (const pack of this.packs) {
      if (pack === chosen) continue;
      const other = usableCopy(pack, id);
      if (other !== undefined) return other;
    }
    return undefined;
  }
}

function usableCopy(pack: StorePack, id: Uint8Array): { pack: StorePack; position: number } | undefined {
  const position = pack.tryIndex()?.find(id) ?? -1;
  return position >= 0 && pack.tryOpen() ? { pack, position } : undefined;
}

/** What a lookup searches, in order: a multi-pack-index or a pack through its own index. */
export type Source = MidxSource | StorePack;

/**
 * The catalog at one moment. Handles search a view, and a view never changes: a rescan makes a
 * new one. A view is held while a handle (or the catalog, for its current view) uses it; the
 * packs it lists stay open until no held view lists them.
 */
export interface CatalogView {
  /** Grows by one with every rescan that found a change. */
  readonly version: number;
  /** Lookup order: multi-pack-indexes, then the packs none covers (local first, newest first). */
  readonly sources: readonly Source[];
  /** Every pack, covered by a multi-pack-index or not, in git's order. */
  readonly packs: readonly StorePack[];
  /** Objects directories for loose objects: the store's own, then its alternates. */
  readonly looseDirs: readonly string[];
  /** Whether this view came from listing the directories (the first view of a store does not). */
  readonly listed: boolean;
  holders: number;
}

export interface CatalogOptions {
  /** Use each directory's multi-pack-index (git's core.multiPackIndex, default true). */
  multiPackIndex: boolean;
  /** Alternates before those of `objects/info/alternates` (OpenStoreOptions.alternates), absolute. */
  alternates: readonly string[];
}

interface MidxEntry {
  stamp: string;
  index: MultiPackIndex | undefined;
}

/**
 * The sources of one store, found by listing its pack directories (its own and its alternates'),
 * and kept across rescans: a pack listed again is the same `StorePack`, with whatever it has
 * loaded, and a pack that is gone leaves the catalog but stays readable through the views that
 * hold it. Slots in the caches are handed out to packs as they appear and taken back when a
 * retired pack closes, so the catalog has no fixed size; only the packs open at one moment are
 * bounded (MAX_PACK_SLOTS, by the delta base cache's keys).
 */
export class Catalog {
  private readonly byPath = new Map<string, StorePack>();
  private readonly midxByPath = new Map<string, MidxEntry>();
  private readonly freeSlots: number[] = [];
  private nextSlot = 0;
  /** Packs that held each slot before (the generation of its next pack). */
  private readonly generations: number[] = [];
  private view: CatalogView;
  /** Directory listings made so far (`odb stats`, the refresh benches). */
  scans = 0;
  /** Warnings of the last listing: an ignored alternate, a multi-pack-index that could not be used. */
  warnings: string[] = [];

  constructor(
    readonly objectsDir: string,
    private readonly context: PackContext,
    private readonly options: CatalogOptions,
    /** Called when a slot's pack closes, so caches drop what they hold of it. */
    private readonly onSlotFreed: (slot: number) => void,
  ) {
    this.view = { version: 0, sources: [], packs: [], looseDirs: [objectsDir], listed: false, holders: 1 };
  }

  get current(): CatalogView {
    return this.view;
  }

  /**
   * Lists the pack directories again and makes a new current view if anything changed. Throws
   * only what makes the listing itself impossible; files that are broken or vanish are left to
   * their loads (a lookup passes over them).
   */
  scan(): CatalogView {
    this.scans++;
    const { dirs, warnings } = readAlternates(this.objectsDir, this.options.alternates);
    const looseDirs = [this.objectsDir, ...dirs];
    const midxSources: MidxSource[] = [];
    const uncovered: StorePack[] = [];
    const all: StorePack[] = [];
    const seen = new Set<string>();
    for (const dir of looseDirs) {
      const packDir = join(dir, 'pack');
      const packs = this.listPacks(packDir, seen);
      all.push(...packs);
      const midx = this.options.multiPackIndex ? this.midxFor(packDir, packs, warnings) : undefined;
      if (midx !== undefined) midxSources.push(midx);
      const covered = new Set(midx?.packs);
      for (const p of packs) if (!covered.has(p)) uncovered.push(p);
    }
    for (const [path, pack] of this.byPath) {
      if (seen.has(path)) continue;
      this.byPath.delete(path);
      pack.retired = true;
      if (pack.holders === 0) this.closePack(pack);
    }
    this.warnings = warnings;
    const sources: Source[] = [...midxSources, ...uncovered];
    const old = this.view;
    if (old.listed && sameList(old.sources, sources) && sameList(old.packs, all) && sameList(old.looseDirs, looseDirs)) return old;
    return this.install({ version: old.version + 1, sources, packs: all, looseDirs, listed: true, holders: 0 });
  }

  /**
   * Adds a pack that was just written into one of the store's pack directories (index-pack into
   * the store), without listing the directory: it is visible at once, and searched first.
   */
  addPack(idxPath: string): StorePack {
    const packPath = `${idxPath.slice(0, -4)}.pack`;
    let pack = this.byPath.get(packPath);
    if (pack === undefined) {
      pack = this.newPack(packPath, idxPath, safeMtime(packPath), readMarkers(packPath.slice(0, -5), undefined));
      this.byPath.set(packPath, pack);
    }
    const old = this.view;
    if (old.packs.includes(pack)) return pack;
    this.install({ version: old.version + 1, sources: [pack, ...old.sources], packs: [pack, ...old.packs], looseDirs: old.looseDirs, listed: old.listed, holders: 0 });
    return pack;
  }

  /** Makes `next` the current view: the catalog holds it instead of the one before. */
  private install(next: CatalogView): CatalogView {
    const old = this.view;
    this.hold(next);
    this.view = next;
    this.release(old);
    return next;
  }

  /** Marks a view as used by one more handle. */
  hold(view: CatalogView): void {
    if (view.holders++ === 0) for (const p of view.packs) p.holders++;
  }

  /** A handle stopped using a view: packs that left the catalog close when no view lists them. */
  release(view: CatalogView): void {
    if (--view.holders > 0) return;
    for (const p of view.packs) {
      if (--p.holders === 0 && p.retired) this.closePack(p);
    }
  }

  /** The packs of one directory that git would use: an `.idx` with its `.pack`, newest first. */
  private listPacks(packDir: string, seen: Set<string>): StorePack[] {
    let names: string[];
    try {
      names = readdirSync(packDir);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') return [];
      throw new PackwrightError('IO_ERROR', `cannot list ${packDir}: ${(e as Error).message}`, { file: packDir, cause: e });
    }
    const present = new Set(names);
    const found: { pack: StorePack; mtime: number }[] = [];
    for (const name of names) {
      if (!name.endsWith('.idx')) continue;
      const base = name.slice(0, -4);
      // A pack is visible only through its index, and an index only with its pack.
      if (!present.has(`${base}.pack`)) continue;
      const packPath = join(packDir, `${base}.pack`);
      let pack = this.byPath.get(packPath);
      if (pack === undefined) {
        const mtime = safeMtime(packPath);
        // Gone between the listing and the stat: as if it had not been listed.
        if (Number.isNaN(mtime)) continue;
        pack = this.newPack(packPath, join(packDir, name), mtime, readMarkers(join(packDir, base), present));
        this.byPath.set(packPath, pack);
      }
      seen.add(packPath);
      found.push({ pack, mtime: pack.mtime });
    }
    // git's order: newest pack first.
    found.sort((a, b) => b.mtime - a.mtime || (a.pack.packPath < b.pack.packPath ? -1 : 1));
    return found.map((f) => f.pack);
  }

  /**
   * The directory's multi-pack-index, when it can be used: it loads, and every pack it names is
   * listed. git uses a stale one (after `git repack -ad` removed packs it names) and misses the
   * objects it points into those packs; ignoring it and searching each pack's own index finds
   * them all, at the cost of a few more index lookups until the next `multi-pack-index write`.
   */
  private midxFor(packDir: string, packs: StorePack[], warnings: string[]): MidxSource | undefined {
    const path = join(packDir, 'multi-pack-index');
    const stamp = fileStamp(path);
    let entry = this.midxByPath.get(path);
    if (entry === undefined || entry.stamp !== stamp) {
      entry = { stamp, index: undefined };
      if (stamp !== '-') {
        try {
          entry.index = MultiPackIndex.openIfPresent(path, this.context.hashLength);
        } catch (e) {
          if (!isPackwrightError(e)) throw e;
          warnings.push(`${e.message}; using the packs' own indexes`);
        }
      }
      this.midxByPath.set(path, entry);
    } else if (entry.index === undefined && stamp !== '-') {
      warnings.push(`multi-pack-index ${path} could not be used; using the packs' own indexes`);
    }
    const index = entry.index;
    if (index === undefined) return undefined;
    const byIdxName = new Map(packs.map((p) => [p.idxPath.slice(packDir.length + 1), p]));
    const named: StorePack[] = [];
    for (const name of index.packNames) {
      const pack = byIdxName.get(name);
      if (pack === undefined) {
        warnings.push(`multi-pack-index ${path} names ${name}, which is not there; using the packs' own indexes`);
        return undefined;
      }
      named.push(pack);
    }
    return new MidxSource(index, named);
  }

  private newPack(packPath: string, idxPath: string, mtime: number, markers: PackMarkers): StorePack {
    return new StorePack(packPath, idxPath, mtime, markers, this.takeSlot(packPath), this.context);
  }

  private takeSlot(packPath: string): PackIdentity {
    const slot = this.freeSlots.pop() ?? (this.nextSlot < MAX_PACK_SLOTS ? this.nextSlot++ : -1);
    if (slot < 0) {
      throw new PackwrightError('INVALID_ARGUMENT', `${packPath}: more than ${MAX_PACK_SLOTS} packs are open in this store at once; repack the repository (git repack -ad)`, { file: packPath });
    }
    const generation = this.generations[slot] ?? 0;
    this.generations[slot] = generation + 1;
    return { slot, generation };
  }

  private closePack(pack: StorePack): void {
    pack.retire();
    this.onSlotFreed(pack.identity.slot);
    this.freeSlots.push(pack.identity.slot);
  }

  /** Closes every pack, held or not (the store is closing). */
  closeAll(): void {
    for (const p of this.view.packs) p.close();
    for (const p of this.byPath.values()) p.close();
  }
}

function sameList<T>(a: readonly T[], b: readonly T[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

function safeMtime(path: string): number {
  try {
    return statSync(path).mtimeMs;
  } catch {
    // Only orders packs (newest first, as git does); a pack that cannot be opened is reported when read.
    return NaN;
  }
}

function readMarkers(base: string, present: Set<string> | undefined): PackMarkers {
  const has = (ext: string): boolean => (present !== undefined ? present.has(`${base.slice(base.lastIndexOf('/') + 1)}${ext}`) : fileStamp(`${base}${ext}`) !== '-');
  return { keep: has('.keep'), promisor: has('.promisor'), mtimes: has('.mtimes') };
}
