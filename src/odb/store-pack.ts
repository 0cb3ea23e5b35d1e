import { EntryHeader, OBJ_OFS_DELTA } from '../pack/entry-header.js';
import { PackwrightError, isPackwrightError } from '../errors/packwright-error.js';
import { PackIndex, type PackIndexOpenOptions } from '../idx/pack-index.js';
import { PackFile, type PackFileOptions } from '../pack/pack-file.js';
import { PackReader } from '../pack/pack-reader.js';
import { buildInfoTable, MAX_CHILDREN, objectSize, type PackInfoTable } from '../pack/pack-info-table.js';
import type { DeltaBaseCache, PackIdentity } from '../pack/delta-base-cache.js';
import { fileStamp } from '../io/file-stamp.js';
import { typeName, typeNumber, type ObjectType } from '../objects/object-type.js';
import { bufferStream, packEntryStream, type ObjectStream } from './object-stream.js';

/** An object read from the store: its type and its bytes (without git's `<type> <size>\0` header). */
export interface StoredObject {
  type: ObjectType;
  data: Buffer;
}

/** What the store knows of an object without reading its data. */
export interface ObjectInfo {
  type: ObjectType;
  size: number;
  /** Bytes the object takes on disk (its pack entry, or its loose file); -1 unless requested. */
  diskSize: number;
  /** Id of the delta base for a packed delta, otherwise undefined. */
  deltaBase: Buffer | undefined;
}

/** Optional parts of `ObjectInfo` (each costs a reverse index of the pack). */
export interface InfoRequest {
  diskSize?: boolean | undefined;
  deltaBase?: boolean | undefined;
}

/** What a pack needs from the store it belongs to: shared caches and read options. */
export interface PackContext {
  readonly hashLength: number;
  readonly cache: DeltaBaseCache;
  readonly packFileOptions: Omit<PackFileOptions, 'hashLength'>;
  readonly indexOptions: PackIndexOpenOptions;
  /**
   * Another copy of an object than the one in `except` (another pack, a loose file), for an entry
   * of `except` that cannot be read: how git recovers from a corrupt pack (the store sets it).
   */
  otherCopy?: (id: Uint8Array, except: StorePack) => StoredObject | undefined;
  /** Counts bytes of tables built for a pack against the store's ceiling (Store.charge). */
  charge?: (bytes: number) => void;
}

/** Files git keeps beside a pack that say something about it (gitrepository-layout). */
export interface PackMarkers {
  /** `.keep`: `git repack` leaves the pack alone. */
  keep: boolean;
  /** `.promisor`: the pack came from a promisor remote (partial clone). */
  promisor: boolean;
  /** `.mtimes`: a cruft pack, with a modification time per object. */
  mtimes: boolean;
}

/** Bytes an object of an info table (PackInfoTable's arrays, and the scan's sizeKnown). */
const INFO_TABLE_BYTES = 11;

/** Header-only lookups in one pack after which its info table is built (see `loadInfoTable`). */
const INFO_TABLE_AFTER = 4096;

/**
 * How many objects the indexes of `packs` list: an object in two packs counts twice, a pack whose
 * index cannot be read counts none (a size to plan by, not a count of distinct objects).
 */
export function listedObjects(packs: readonly StorePack[]): number {
  let count = 0;
  for (const p of packs) count += p.tryIndex()?.count ?? 0;
  return count;
}

/**
 * One pack of a store, found through its `.idx`. Nothing is opened when it is listed: the index
 * loads on the first lookup that reaches it, the pack on the first read, each exactly once (the
 * store is used from one thread; async callers share the loaded result). A load that fails is
 * remembered with the stamps of the two files and not tried again until one of them changes.
 *
 * Once open, the files stay open: after `git gc` deletes them, the pack stays readable through
 * this object for whoever still holds it (a handle's snapshot, a location). A pack name is the
 * hash of its contents, so a pack reopened under the same name has the same bytes.
 */
export class StorePack {
  private loadedIndex: PackIndex | undefined;
  private file: PackFile | undefined;
  private reader: PackReader | undefined;
  private table: PackInfoTable | undefined;
  private diskSizes: Uint32Array | Float64Array | undefined;
  private infoCalls = 0;
  /**
   * Per object, its deltas not read yet by `readTransient` (from the info table's children), and
   * the sum of the counts that can run out (below MAX_CHILDREN): a pass over every object (`--batch-all-objects --batch`) then holds in the base
   * cache only the bases it will still use, and lets each go after its last delta instead of when
   * the cache is full. A read that repeats a delta counts it again (a base may then go early, and
   * costs a walk down its chain); once every count is spent, the next read starts them over.
   */
  private unread: Uint8Array | undefined;
  private unreadTotal = 0;
  /** `unreadTotal` when the counts were copied: 0 means they never run out, and are copied once. */
  private unreadFull = 0;
  private header: EntryHeader | undefined;
  private failure: { error: PackwrightError; stamps: string } | undefined;
  /** Views of the catalog that list this pack and are still held (see Catalog). */
  holders = 0;
  /** Left the catalog (its files were gone at a rescan): closed once no view holds it. */
  retired = false;

  constructor(
    readonly packPath: string,
    readonly idxPath: string,
    /** The pack file's modification time when listed: git looks newer packs up first. */
    readonly mtime: number,
    readonly markers: PackMarkers,
    /** Who this pack is in the store's caches (see PackIdentity). */
    readonly identity: PackIdentity,
    private readonly context: PackContext,
  ) {}

  /** The last load failure, while it stands. */
  get error(): PackwrightError | undefined {
    return this.failure?.error;
  }

  /** The pack's index, loading it on first use; throws what loading threw. */
  get index(): PackIndex {
    if (this.loadedIndex !== undefined) return this.loadedIndex;
    if (this.failure !== undefined && !this.changedSinceFailure()) throw this.failure.error;
    try {
      this.loadedIndex = PackIndex.open(this.idxPath, this.context.hashLength, { ...this.context.indexOptions, revPath: `${this.idxPath.slice(0, -4)}.rev` });
      this.failure = undefined;
      // The sections it may read, and its pack order (8 bytes an object), once something asks.
      this.context.charge?.(this.loadedIndex.fileSize + 8 * this.loadedIndex.count);
      return this.loadedIndex;
    } catch (e) {
      throw this.fail(e);
    }
  }

  /**
   * The index, or undefined when it cannot be loaded (missing, corrupt, unreadable): a lookup then
   * passes over this pack, as git passes over a pack it cannot open.
   */
  tryIndex(): PackIndex | undefined {
    if (this.loadedIndex !== undefined) return this.loadedIndex;
    try {
      return this.index;
    } catch (e) {
      if (isPackwrightError(e)) return undefined;
      throw e;
    }
  }

  /** Opens index and pack (a location handed out must stay readable); false when either fails. */
  tryOpen(): boolean {
    if (this.file !== undefined) return true;
    try {
      this.pack();
      return true;
    } catch (e) {
      if (isPackwrightError(e)) return false;
      throw e;
    }
  }

  /** Whether the last failure was a file that is not there (git gc removed it): worth a rescan now. */
  get vanished(): boolean {
    const code = this.failure?.error.code;
    return code === 'IDX_MISSING' || code === 'PACK_MISSING';
  }

  private fail(e: unknown): unknown {
    if (isPackwrightError(e)) this.failure = { error: e, stamps: this.stamps() };
    return e;
  }

  private stamps(): string {
    return `${fileStamp(this.idxPath)} ${fileStamp(this.packPath)}`;
  }

  private changedSinceFailure(): boolean {
    return this.failure === undefined || this.failure.stamps !== this.stamps();
  }

  get objectCount(): number {
    return this.index.count;
  }

  /**
   * The pack file, opened on first use and checked against its index: the object count and the
   * trailer must be the index's (git: "packfile ... does not match index").
   */
  private pack(): PackFile {
    if (this.file !== undefined) return this.file;
    const index = this.index;
    if (this.failure !== undefined && !this.changedSinceFailure()) throw this.failure.error;
    let file: PackFile;
    try {
      file = PackFile.open(this.packPath, { hashLength: index.hashLength, ...this.context.packFileOptions });
    } catch (e) {
      throw this.fail(e);
    }
    try {
      if (file.objectCount !== index.count || !file.trailer().equals(index.packHash)) {
        throw new PackwrightError('IDX_MISMATCH', `packfile ${this.packPath} does not match index (${file.objectCount} objects in the pack, ${index.count} in the index)`, {
          file: this.packPath,
        });
      }
    } catch (e) {
      file.close();
      throw this.fail(e);
    }
    this.failure = undefined;
    this.file = file;
    return file;
  }

  /** The decoder, opening the pack on first use. */
  open(): PackReader {
    if (this.reader !== undefined) return this.reader;
    const index = this.index;
    this.reader = new PackReader(this.pack(), this.context.cache, (id) => {
      const pos = index.find(id);
      return pos < 0 ? -1 : index.offset(pos);
    }, this.identity, (offset) => {
      // A base entry here that cannot be read: its id, from the index, and a copy elsewhere.
      const pos = index.positionOfOffset(offset);
      const copy = pos < 0 ? undefined : this.context.otherCopy?.(index.id(pos), this);
      return copy === undefined ? undefined : { type: typeNumber(copy.type), data: copy.data };
    });
    return this.reader;
  }

  /** Reads the object at idx position `position`, resolving deltas. */
  read(position: number): StoredObject {
    const o = this.open().read(this.index.offset(position));
    return { type: typeName(o.type), data: o.data };
  }

  /**
   * Learns type, size and delta base of every object in one sequential pass (see
   * `buildInfoTable`): worth it before asking about most of the pack. Later `info` calls answer
   * from the table, and pack-order reads keep delta bases cached.
   */
  loadInfoTable(): PackInfoTable {
    if (this.table === undefined) {
      this.table = buildInfoTable(this.pack(), this.index);
      this.context.charge?.(INFO_TABLE_BYTES * this.index.count);
    }
    return this.table;
  }

  /** Whether the info table is built (see loadInfoTable). */
  get hasInfoTable(): boolean {
    return this.table !== undefined;
  }

  /** Installs an info table built elsewhere (on worker threads: Store.loadInfoTables). */
  setInfoTable(table: PackInfoTable): void {
    if (this.table === undefined) this.context.charge?.(INFO_TABLE_BYTES * this.index.count);
    this.table = table;
    this.unread = undefined;
  }

  /** Bytes of each entry by idx position, made on the first question about disk sizes. */
  private entrySizes(): Uint32Array | Float64Array {
    if (this.diskSizes === undefined) {
      this.diskSizes = this.index.entrySizes(this.pack().dataEnd);
      this.context.charge?.(this.diskSizes.byteLength);
    }
    return this.diskSizes;
  }

  /** The resolved type at `position`: from the info table if built, else entry headers only. */
  typeAt(position: number): ObjectType {
    const t = this.table;
    return typeName(t !== undefined ? t.types[position] as number : this.open().resolvedType(this.index.offset(position)));
  }

  /**
   * See `PackReader.readTransient`: the data is valid until the next read from this pack. With an
   * info table, an object that deltas still to be read are based on is kept in the base cache,
   * and dropped from it once the last of them has been read (see `unread`). `baseSoon`: the caller
   * knows deltas on this object come next (StoreHandle.readTransientAt), so it is kept too.
   */
  readTransient(position: number, baseSoon = false): StoredObject {
    const t = this.table;
    const reader = this.open();
    const index = this.index;
    if (t === undefined) {
      const o = reader.readTransient(index.offset(position), baseSoon);
      return { type: typeName(o.type), data: o.data };
    }
    let unread = this.unread;
    // Copied again only once they are all spent (an O(n) copy a pass, never one a read: a pack
    // without deltas, or whose bases all saturate, has nothing to spend).
    if (unread === undefined || (this.unreadTotal === 0 && this.unreadFull > 0)) {
      unread = this.unread = t.children.slice();
      let total = 0;
      for (let p = 0; p < unread.length; p++) if ((unread[p] as number) < MAX_CHILDREN) total += unread[p] as number;
      this.unreadTotal = this.unreadFull = total;
    }
    const base = t.basePositions[position] as number;
    const baseOffset = base >= 0 ? index.offset(base) : -1;
    const obj = reader.readTransient(index.offset(position), baseSoon || (unread[position] as number) > 0, baseOffset);
    // The base has one delta fewer to come; after its last, nothing in a pass needs it cached.
    // A count that saturated (MAX_CHILDREN) is not exact and never drops.
    const left = base >= 0 ? (unread[base] as number) : 0;
    if (left > 0 && left < MAX_CHILDREN) {
      unread[base] = left - 1;
      this.unreadTotal--;
      if (left === 1) reader.forget(baseOffset);
    }
    return { type: typeName(obj.type), data: obj.data };
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
      const type = typeName(t.types[position] as number);
      const info = into ?? { type, size: 0, diskSize: -1, deltaBase: undefined };
      info.type = type;
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
      deltaBase = Buffer.from(this.index.id(this.positionOfBase(offset, i.baseOffset)));
    } else {
      deltaBase = i.baseId;
    }
    const diskSize = want.diskSize ? this.index.entryEnd(offset, this.pack().dataEnd) - offset : -1;
    if (into === undefined) return { type: typeName(i.type), size: i.size, diskSize, deltaBase };
    into.type = typeName(i.type);
    into.size = i.size;
    into.diskSize = diskSize;
    into.deltaBase = deltaBase;
    return into;
  }

  /**
   * The object at `position` as a stream: a whole entry is inflated as it is read, so memory stays
   * bounded whatever its size; a delta is applied in memory first (git does not deltify objects
   * above core.bigFileThreshold, 512 MiB, so large blobs are whole entries).
   */
  stream(position: number): ObjectStream {
    const file = this.pack();
    const index = this.index;
    const offset = index.offset(position);
    const h = (this.header ??= new EntryHeader());
    file.readEntryHeader(offset, h);
    if (h.type >= OBJ_OFS_DELTA) {
      const obj = this.read(position);
      return bufferStream(obj.type, obj.data);
    }
    const where = `${this.packPath} offset ${offset}`;
    return packEntryStream((buf, at) => {
      file.readInto(buf, at, buf.length);
      return buf.length;
    }, where, typeName(h.type), h.size, offset + h.headerLength, index.entryEnd(offset, file.dataEnd));
  }

  /**
   * How many deltas lie between the object at `position` and its full base (0 for a whole object),
   * from entry headers alone. A REF_DELTA whose base is not in this pack (never so in a pack git
   * stored) counts as one.
   */
  deltaDepth(position: number): number {
    const file = this.pack();
    const index = this.index;
    const h = (this.header ??= new EntryHeader());
    let offset = index.offset(position);
    for (let depth = 0; depth <= index.count; depth++) {
      file.readEntryHeader(offset, h);
      if (h.type < OBJ_OFS_DELTA) return depth;
      if (h.type === OBJ_OFS_DELTA) {
        offset = h.baseOffset;
        continue;
      }
      const base = index.find(h.baseId as Buffer);
      if (base < 0) return depth + 1;
      offset = index.offset(base);
    }
    throw new PackwrightError('PACK_CORRUPT', `${this.packPath}: delta chain from position ${position} loops`, { file: this.packPath });
  }

  private positionOfBase(offset: number, baseOffset: number): number {
    const p = this.index.positionOfOffset(baseOffset);
    if (p < 0) throw new PackwrightError('PACK_CORRUPT', `${this.packPath}: OFS_DELTA at offset ${offset} points into the middle of an entry (${baseOffset})`, { file: this.packPath, offset });
    return p;
  }

  /**
   * The pack left the catalog and no held view lists it: its files are let go of. An index held
   * in memory (no file of its own) is kept, so a location still held into this pack knows its
   * object's id and can be found again where the object is now (see StoreHandle.readAt).
   */
  retire(): void {
    this.file?.close();
    this.file = undefined;
    this.reader = undefined;
    this.table = undefined;
    this.unread = undefined;
    this.diskSizes = undefined;
    if (this.loadedIndex?.holdsFile) {
      this.loadedIndex.close();
      this.loadedIndex = undefined;
    }
  }

  /** The id at `position` while the index is in memory (a retired pack's may not be). */
  idAt(position: number): Buffer | undefined {
    const index = this.loadedIndex;
    return index === undefined ? undefined : Buffer.from(index.id(position));
  }

  /** Closes the pack file and index. */
  close(): void {
    this.file?.close();
    this.file = undefined;
    this.reader = undefined;
    this.loadedIndex?.close();
    this.loadedIndex = undefined;
    this.table = undefined;
    this.unread = undefined;
    this.diskSizes = undefined;
  }
}
