import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { PackwrightError } from '../errors/packwright-error.js';
import { hashLength, type ObjectFormat } from '../hash/object-format.js';
import { toHex, isHex } from '../hash/hex.js';
import { OBJ_OFS_DELTA } from '../pack/entry-header.js';
import { PackIndex, type PackIndexOpenOptions } from '../idx/pack-index.js';
import type { ObjectIndex } from '../idx/object-index.js';
import { PackFile } from '../pack/pack-file.js';
import { PackReader } from '../pack/pack-reader.js';
import { buildInfoTable, objectSize, type PackInfoTable } from '../pack/pack-info-table.js';
import { DeltaBaseCache, DEFAULT_DELTA_BASE_CACHE_LIMIT, MAX_PACK_SLOTS, type PackIdentity } from '../pack/delta-base-cache.js';
import { readLoose, readLooseHeader } from '../loose/read-loose.js';
import { Inflater } from '../zlib/inflater.js';
import { GitConfig } from '../config/git-config.js';
import { readAlternates } from './alternates.js';

export interface StoredObject {
  type: number;
  data: Buffer;
}

export interface ObjectInfo {
  type: number;
  size: number;
  /** Bytes the object takes on disk (its pack entry, or its loose file); -1 unless requested. */
  diskSize: number;
  /** Id of the delta base for a packed delta, otherwise undefined. */
  deltaBase: Buffer | undefined;
}

/** Optional parts of `ObjectInfo` (each costs a reverse index of the pack). */
export interface InfoRequest {
  diskSize?: boolean;
  deltaBase?: boolean;
}

export interface OpenStoreOptions {
  /** SHA-1 or SHA-256; by default what the git directory's config says (extensions.objectformat). */
  objectFormat?: ObjectFormat;
  /** Bytes of resolved delta bases to keep (git's core.deltaBaseCacheLimit, 96 MiB). */
  deltaBaseCacheLimit?: number;
  /** Window size for pack reads (see PackFile); tests lower it to exercise windowed reads. */
  windowSize?: number;
  /** Reads through small windows before a pack is read in big ones (see PackFileOptions). */
  denseAfter?: number;
  /** Indexes of at least this many bytes are read by section, on demand (see PackIndex). */
  lazyIndexMin?: number;
}

/** Header-only lookups in one pack after which its info table is built (see `loadInfoTable`). */
const INFO_TABLE_AFTER = 4096;

/** One pack of the store: its index is loaded at open, the pack itself on first read. */
export class StorePack {
  private file: PackFile | undefined;
  private reader: PackReader | undefined;
  private table: PackInfoTable | undefined;
  private diskSizes: Uint32Array | Float64Array | undefined;
  private infoCalls = 0;

  constructor(
    readonly packPath: string,
    readonly index: PackIndex,
    /** Who this pack is in the store's caches (see PackIdentity). */
    readonly identity: PackIdentity,
    private readonly store: ObjectStore,
  ) {}

  get objectCount(): number {
    return this.index.count;
  }

  /**
   * The pack file, opened on first use and checked against its index: the object count and the
   * trailer must be the index's (git: "packfile ... does not match index"). It is kept open, so
   * it stays readable if `git gc` removes it.
   */
  private pack(): PackFile {
    if (this.file !== undefined) return this.file;
    const file = PackFile.open(this.packPath, { hashLength: this.index.hashLength, ...this.store.packFileOptions });
    try {
      if (file.objectCount !== this.index.count || !file.trailer().equals(this.index.packHash)) {
        throw new PackwrightError('IDX_MISMATCH', `packfile ${this.packPath} does not match index (${file.objectCount} objects in the pack, ${this.index.count} in the index)`, {
          file: this.packPath,
        });
      }
    } catch (e) {
      file.close();
      throw e;
    }
    this.file = file;
    return file;
  }

  /** The decoder, opening the pack on first use. */
  open(): PackReader {
    if (this.reader !== undefined) return this.reader;
    this.reader = new PackReader(this.pack(), this.store.cache, (id) => {
      const pos = this.index.find(id);
      return pos < 0 ? -1 : this.index.offset(pos);
    }, this.identity);
    return this.reader;
  }

  read(position: number): StoredObject {
    return this.open().read(this.index.offset(position));
  }

  /**
   * Learns type, size and delta base of every object in one sequential pass (see
   * `buildInfoTable`): worth it before asking about most of the pack. Later `info` calls answer
   * from the table, and pack-order reads keep delta bases cached.
   */
  loadInfoTable(): PackInfoTable {
    this.table ??= buildInfoTable(this.pack(), this.index);
    return this.table;
  }

  /** Bytes of each entry by idx position, made on the first question about disk sizes. */
  private entrySizes(): Uint32Array | Float64Array {
    if (this.diskSizes === undefined) {
      this.diskSizes = this.index.entrySizes(this.pack().dataEnd);
    }
    return this.diskSizes;
  }

  /** See `PackReader.readTransient`: the data is valid until the next read from this pack. */
  readTransient(position: number): StoredObject {
    return this.open().readTransient(this.index.offset(position), this.table?.isBase[position] === 1);
  }

  /**
   * Type and size, reading no more than a delta's first bytes. `diskSize` and `deltaBase` cost a
   * reverse index (built once per pack) and are computed only when asked for.
   */
  info(position: number, want: InfoRequest = {}, into?: ObjectInfo): ObjectInfo {
    // Many header-only questions about one pack (a long --batch-check input): one sequential
    // pass answers all of them faster than random reads and chain walks.
    if (this.table === undefined && ++this.infoCalls === INFO_TABLE_AFTER) this.loadInfoTable();
    const t = this.table;
    if (t !== undefined) {
      const base = t.basePositions[position] as number;
      const info = into ?? { type: 0, size: 0, diskSize: -1, deltaBase: undefined };
      info.type = t.types[position] as number;
      info.size = objectSize(t, position);
      info.diskSize = want.diskSize ? (this.entrySizes()[position] as number) : -1;
      info.deltaBase = want.deltaBase && base >= 0 ? Buffer.from(this.index.id(base)) : undefined;
      return info;
    }
    const reader = this.open();
    const offset = this.index.offset(position);
    const i = reader.info(offset);
    let deltaBase: Buffer | undefined;
    if (want.deltaBase && i.entryType === OBJ_OFS_DELTA) {
      const p = this.index.positionOfOffset(i.baseOffset);
      if (p < 0) throw new PackwrightError('PACK_CORRUPT', `${this.packPath}: OFS_DELTA at offset ${offset} points into the middle of an entry (${i.baseOffset})`, { file: this.packPath, offset });
      deltaBase = Buffer.from(this.index.id(p));
    } else {
      deltaBase = i.baseId;
    }
    const diskSize = want.diskSize ? this.index.entryEnd(offset, this.pack().dataEnd) - offset : -1;
    if (into === undefined) return { type: i.type, size: i.size, diskSize, deltaBase };
    into.type = i.type;
    into.size = i.size;
    into.diskSize = diskSize;
    into.deltaBase = deltaBase;
    return into;
  }

  close(): void {
    this.file?.close();
    this.file = undefined;
    this.reader = undefined;
    this.index.close();
  }
}

/** The store's sources at one moment (see `ObjectStore.snapshot`). */
export interface StoreSnapshot {
  readonly packs: readonly StorePack[];
  readonly looseDirs: readonly string[];
}

/** Where an object was found: a pack and its sorted position there, or a loose file. */
export type ObjectLocation =
  | { kind: 'pack'; pack: StorePack; position: number }
  | { kind: 'loose'; path: string };

/**
 * The objects of one repository: its packs (and those of its alternates), then loose objects, in
 * git's lookup order. A first, static store: packs are listed when it opens (the refreshing,
 * generation-counted store is built on top of this).
 */
export class ObjectStore {
  readonly objectsDir: string;
  readonly format: ObjectFormat;
  readonly hashLength: number;
  readonly cache: DeltaBaseCache;
  /** In lookup order; read through `snapshot()` from outside (the catalog will change underneath). */
  private readonly packs: StorePack[] = [];
  /** Object directories whose loose objects are searched: ours first, then alternates. */
  private readonly looseDirs: string[];
  readonly packFileOptions: { windowSize?: number; denseAfter?: number };
  private readonly indexOptions: PackIndexOpenOptions;
  readonly inflater = new Inflater();
  /** Index into `packs` of the last hit: consecutive lookups tend to hit the same pack. */
  private lastPack = 0;

  private constructor(objectsDir: string, format: ObjectFormat, options: OpenStoreOptions) {
    this.objectsDir = objectsDir;
    this.format = format;
    this.hashLength = hashLength(format);
    this.cache = new DeltaBaseCache(options.deltaBaseCacheLimit ?? DEFAULT_DELTA_BASE_CACHE_LIMIT);
    this.packFileOptions = {};
    if (options.windowSize !== undefined) this.packFileOptions.windowSize = options.windowSize;
    if (options.denseAfter !== undefined) this.packFileOptions.denseAfter = options.denseAfter;
    this.indexOptions = options.lazyIndexMin !== undefined ? { lazyMin: options.lazyIndexMin } : {};
    const alternates = readAlternates(objectsDir);
    this.looseDirs = [objectsDir, ...alternates];
    for (const dir of this.looseDirs) this.addPacks(join(dir, 'pack'));
  }

  /**
   * Opens the objects of a git directory, or of an objects directory given directly. Nothing is
   * searched for: finding the repository from a work tree (or a linked worktree's common
   * directory) is `Repository.open`'s work, and `Repository.objects` opens its store.
   */
  static open(path: string, options: OpenStoreOptions = {}): ObjectStore {
    const dir = resolve(path);
    const isGitDir = existsSync(join(dir, 'objects')) && existsSync(join(dir, 'HEAD'));
    const objectsDir = isGitDir ? join(dir, 'objects') : dir;
    if (!existsSync(objectsDir)) throw new PackwrightError('REPO_NOT_FOUND', `not a git directory or objects directory: ${dir}`, { file: dir });
    // An objects directory inside a git directory takes the format from that git directory's config.
    const formatDir = isGitDir ? dir : dirname(dir);
    const format = options.objectFormat ?? (existsSync(join(formatDir, 'config')) ? objectFormatOf(formatDir) : 'sha1');
    return new ObjectStore(objectsDir, format, options);
  }

  private addPacks(packDir: string): void {
    let names: string[];
    try {
      names = readdirSync(packDir);
    } catch {
      return;
    }
    const found: { idx: string; pack: string; mtime: number }[] = [];
    for (const name of names) {
      if (!name.endsWith('.idx')) continue;
      const pack = join(packDir, name.slice(0, -4) + '.pack');
      // A pack is visible only through its index, and an index only with its pack.
      if (!existsSync(pack)) continue;
      found.push({ idx: join(packDir, name), pack, mtime: statSync(pack).mtimeMs });
    }
    // git's order: newest pack first.
    found.sort((a, b) => b.mtime - a.mtime || (a.pack < b.pack ? -1 : 1));
    for (const f of found) {
      if (this.packs.length >= MAX_PACK_SLOTS) {
        throw new PackwrightError('INVALID_ARGUMENT', `${packDir}: more than ${MAX_PACK_SLOTS} packs; repack the repository (git repack -ad)`, { file: packDir });
      }
      const index = PackIndex.open(f.idx, this.hashLength, { ...this.indexOptions, revPath: `${f.idx.slice(0, -4)}.rev` });
      this.packs.push(new StorePack(f.pack, index, { slot: this.packs.length, generation: 0 }, this));
    }
  }

  /**
   * The packs and loose-object directories as they are now, in lookup order. Iterate this, not
   * the store: a snapshot stays the same while the store's catalog changes (the dynamic store
   * adds and retires packs underneath long-lived handles).
   */
  snapshot(): StoreSnapshot {
    return { packs: [...this.packs], looseDirs: [...this.looseDirs] };
  }

  /** Finds where `id` is stored, or undefined. */
  locate(id: Uint8Array): ObjectLocation | undefined {
    const packs = this.packs;
    const n = packs.length;
    for (let k = 0; k < n; k++) {
      const i = (this.lastPack + k) % n;
      const pack = packs[i] as StorePack;
      // Lookups ask only what every ObjectIndex answers (a multi-pack-index will too).
      const index: ObjectIndex = pack.index;
      const position = index.find(id);
      if (position >= 0) {
        this.lastPack = i;
        return { kind: 'pack', pack, position };
      }
    }
    const hex = toHex(id);
    for (const dir of this.looseDirs) {
      const path = join(dir, hex.slice(0, 2), hex.slice(2));
      if (existsSync(path)) return { kind: 'loose', path };
    }
    return undefined;
  }

  has(id: Uint8Array): boolean {
    return this.locate(id) !== undefined;
  }

  readAt(location: ObjectLocation): StoredObject {
    if (location.kind === 'pack') return location.pack.read(location.position);
    return readLoose(location.path, this.inflater);
  }

  /** Like `readAt`, but packed data is lent until the next read from the same pack. */
  readTransientAt(location: ObjectLocation): StoredObject {
    if (location.kind === 'pack') return location.pack.readTransient(location.position);
    return readLoose(location.path, this.inflater);
  }

  /** With `into`, the answer is written there (no allocation in a loop over many objects). */
  infoAt(location: ObjectLocation, want: InfoRequest = {}, into?: ObjectInfo): ObjectInfo {
    if (location.kind === 'pack') return location.pack.info(location.position, want, into);
    const h = readLooseHeader(location.path, this.inflater);
    const info = into ?? { type: 0, size: 0, diskSize: -1, deltaBase: undefined };
    info.type = h.type;
    info.size = h.size;
    info.diskSize = want.diskSize ? statSync(location.path).size : -1;
    info.deltaBase = undefined;
    return info;
  }

  /** Reads an object; throws OBJECT_NOT_FOUND when it is in none of the packs and loose directories. */
  read(id: Uint8Array): StoredObject {
    const location = this.locate(id);
    if (location === undefined) throw notFound(id);
    return this.readAt(location);
  }

  info(id: Uint8Array, want: InfoRequest = {}): ObjectInfo {
    const location = this.locate(id);
    if (location === undefined) throw notFound(id);
    return this.infoAt(location, want);
  }

  /**
   * All ids starting with the hex `prefix`, up to `limit` distinct ones (2 is enough to tell
   * unique from ambiguous).
   */
  findByPrefix(prefix: string, limit = 2): Buffer[] {
    const p = prefix.toLowerCase();
    if (!isHex(p) || p.length === 0 || p.length > this.hashLength * 2) return [];
    const found = new Map<string, Buffer>();
    for (const pack of this.packs) {
      const index: ObjectIndex = pack.index;
      const { first, count } = index.findPrefix(p, limit);
      for (let i = 0; i < count; i++) {
        const id = Buffer.from(index.id(first + i));
        found.set(id.toString('hex'), id);
      }
    }
    for (const dir of this.looseDirs) {
      const sub = join(dir, p.slice(0, 2));
      if (p.length < 2) {
        for (const id of this.looseIds(dir)) if (id.toString('hex').startsWith(p)) found.set(id.toString('hex'), id);
        continue;
      }
      let names: string[];
      try {
        names = readdirSync(sub);
      } catch {
        continue;
      }
      for (const name of names) {
        const hex = p.slice(0, 2) + name;
        if (hex.length === this.hashLength * 2 && hex.startsWith(p) && isHex(hex)) found.set(hex, Buffer.from(hex, 'hex'));
      }
    }
    return [...found.values()].sort(Buffer.compare).slice(0, Math.max(limit, 0) || undefined);
  }

  /** Ids of the loose objects in one objects directory, sorted. */
  looseIds(dir: string): Buffer[] {
    const ids: Buffer[] = [];
    const width = this.hashLength * 2 - 2;
    for (let b = 0; b < 256; b++) {
      const sub = b.toString(16).padStart(2, '0');
      let names: string[];
      try {
        names = readdirSync(join(dir, sub));
      } catch {
        continue;
      }
      names.sort();
      for (const name of names) {
        if (name.length === width && isHex(name)) ids.push(Buffer.from(sub + name, 'hex'));
      }
    }
    return ids;
  }

  close(): void {
    for (const p of this.packs) p.close();
    this.inflater.close();
    this.cache.clear();
  }
}

/** extensions.objectformat of a git directory's own config (git reads it nowhere else). */
export function objectFormatOf(gitDir: string): ObjectFormat {
  const file = join(gitDir, 'config');
  const v = GitConfig.read(file).get('extensions.objectformat')?.toLowerCase();
  if (v === undefined || v === null || v === 'sha1') return 'sha1';
  if (v === 'sha256') return 'sha256';
  throw new PackwrightError('CONFIG_INVALID', `${file}: unknown object format "${v}"`, { file });
}

export function notFound(id: Uint8Array): PackwrightError {
  return new PackwrightError('OBJECT_NOT_FOUND', `object ${toHex(id)} not found`);
}
