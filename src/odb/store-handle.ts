import { readDirIfPresent } from '../io/read-dir-if-present.js';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { isPackwrightError, PackwrightError } from '../errors/packwright-error.js';
import { isHex, toHex } from '../hash/hex.js';
import { readLoose, readLooseHeader } from '../loose/read-loose.js';
import type { Inflater } from '../zlib/inflater.js';
import { typeName, type ObjectType } from '../objects/object-type.js';
import { MidxSource, type CatalogView, type Source } from './catalog.js';
import type { Store } from './store.js';
import { listedObjects, type InfoRequest, type ObjectInfo, type StorePack, type StoredObject } from './store-pack.js';
import { notFound } from './store.js';
import { looseStream, type ObjectStream } from './object-stream.js';
import { objects } from './all-objects.js';

/** Where an object was found: a pack and its sorted position there, or a loose file. */
export type ObjectLocation =
  | { kind: 'pack'; pack: StorePack; position: number }
  | { kind: 'loose'; path: string };

/** The answer to a prefix question (git's get_short_oid): one object, several, or none. */
export type PrefixMatch =
  | { kind: 'unique'; id: Buffer }
  | { kind: 'ambiguous'; candidates: Buffer[] }
  | { kind: 'missing' };

/** What `header` tells about an object without applying deltas. */
export interface ObjectHeader {
  type: ObjectType;
  size: number;
  location: ObjectLocation;
  /** Deltas between the stored entry and a whole object (0 for loose objects and whole entries). */
  deltaDepth: number;
}

/** How a lookup may look again: whether a miss lists the pack directories again. */
export interface LookupOptions {
  /**
   * May a miss list the pack directories again, as the store's policy allows (default true)?
   * `false` is git's OBJECT_INFO_QUICK: no rescan, and loose objects are looked up in a listing of
   * their fan-out directory read once (a lookup per object of a pack then costs no stat each).
   */
  refresh?: boolean | undefined;
}

/** Rescans one miss may cause: a directory that changes under every listing cannot hold a lookup forever. */
const MAX_RESCANS_PER_MISS = 3;

/** Errors that say a stored copy is damaged (another copy may still be sound). */
const CORRUPTION: ReadonlySet<string> = new Set(['PACK_CORRUPT', 'DELTA_CORRUPT', 'OBJECT_CORRUPT', 'PACK_TRUNCATED', 'LOOSE_CORRUPT']);

/**
 * A view of a store for one user (a request, a worker, a batch tool): the catalog as it was when
 * the handle last refreshed, searched in git's order (multi-pack-indexes and packs, then loose
 * objects), with the pack of the last hit searched first. A miss, once every source in the view
 * is searched, asks the store for a newer view (see RefreshPolicy) and searches again.
 *
 * What a handle found stays readable through it: its view holds its packs open, so a location
 * taken from this handle reads the same bytes after `git gc` deletes the pack. A handle moves to
 * a newer view only on a miss, `refresh()` or `packs()`; a pack that then leaves every held view
 * closes, and a location into it is read by opening the pack again by name (a pack's name is
 * the hash of its bytes), or fails with PACK_MISSING if it is gone.
 */
export class StoreHandle {
  private view: CatalogView;
  /** The view's sources in search order: a hit moves its source to the front. */
  private order: Source[];
  private closed = false;
  /**
   * Why the last lookup that missed could not use a copy it found in an index (its pack failed to
   * open): a read that misses reports that, not just "not found".
   */
  private unusable: PackwrightError | undefined;

  constructor(readonly store: Store) {
    this.view = store.currentView();
    store.hold(this.view);
    this.order = [...this.view.sources];
  }

  get format(): Store['format'] {
    return this.store.format;
  }

  get hashLength(): number {
    return this.store.hashLength;
  }

  /** The catalog version this handle searches. */
  get version(): number {
    return this.view.version;
  }

  /**
   * The packs of the store's newest view, in git's order (listing the directories on first use):
   * the handle moves to that view.
   */
  packs(): readonly StorePack[] {
    this.ensureListed();
    this.adopt(this.store.currentView());
    return this.view.packs;
  }

  /** The objects directories searched for loose objects: the store's own, then alternates. */
  looseDirs(): readonly string[] {
    this.ensureListed();
    return this.view.looseDirs;
  }

  /**
   * Whether the store has no object at all: no pack lists one and no loose directory holds one
   * (a repository just made by `git init`, into which a clone indexes its first pack).
   */
  isEmpty(): boolean {
    if (this.packs().some((p) => (p.tryIndex()?.count ?? 1) > 0)) return false;
    const width = this.hashLength * 2 - 2;
    for (const dir of this.looseDirs()) {
      for (const sub of listDir(dir)) {
        if (sub.length !== 2 || !isHex(sub)) continue;
        if (listDir(join(dir, sub)).some((name) => name.length === width && isHex(name))) return false;
      }
    }
    return true;
  }

  /** The sources in lookup order (multi-pack-indexes, then packs none covers). */
  sources(): readonly Source[] {
    this.ensureListed();
    return this.view.sources;
  }

  /**
   * Tells every pack of the view that most of it will be read (a walk of the whole history): its
   * index is loaded whole and the pack read in big windows (whole, when it fits one) from the
   * next read on, instead of first reading it piece by piece and then again whole. With
   * `whole: false` (a walk of trees and commits, which reads scattered parts of each pack once),
   * through recycled 1 MiB windows instead, never whole (see PackFile.preferDense).
   */
  preferDenseReads(options: { whole?: boolean } = {}): void {
    for (const pack of this.packs()) {
      if (pack.tryIndex() === undefined || !pack.tryOpen()) continue;
      pack.index.loadAll();
      pack.open().file.preferDense(options.whole !== false);
    }
  }

  /** Moves to the store's newest view, listing the directories first. */
  refresh(): void {
    this.store.refresh();
    this.adopt(this.store.currentView());
  }

  private ensureListed(): void {
    if (!this.view.listed) this.adopt(this.store.listedView());
  }

  private adopt(view: CatalogView): void {
    if (view === this.view) return;
    this.store.hold(view);
    this.store.release(this.view);
    this.view = view;
    this.order = [...view.sources];
    this.looseListings.clear();
  }

  /** Names in each loose fan-out directory (by objects directory, then first byte), for quick lookups (`refresh: false`). */
  private readonly looseListings = new Map<string, (Set<string> | undefined)[]>();

  private looseListing(dir: string, fanout: number, hex: string): Set<string> {
    let lists = this.looseListings.get(dir);
    if (lists === undefined) this.looseListings.set(dir, (lists = new Array<Set<string> | undefined>(256)));
    let names = lists[fanout];
    if (names === undefined) {
      names = new Set(readDirIfPresent(join(dir, hex.slice(0, 2)), 'loose object directory') ?? []);
      lists[fanout] = names;
    }
    return names;
  }

  /**
   * Finds where `id` is stored, or undefined. A location names an open pack (or a loose file),
   * so reading it cannot miss because a file was deleted after the lookup.
   */
  locate(id: Uint8Array, options: LookupOptions = {}): ObjectLocation | undefined {
    if (!this.view.listed) this.ensureListed();
    this.unusable = undefined;
    const quick = options.refresh === false;
    for (let rescans = 0; ; rescans++) {
      const found = this.search(id, quick);
      if (found !== undefined) return found;
      if (options.refresh === false || !this.moveOn(rescans)) break;
    }
    this.store.countMiss();
    return undefined;
  }

  /**
   * After a miss: moves to a newer view if the store has one (another handle's rescan, a pack
   * added), else asks the store for a rescan. False when there is nothing newer to search.
   */
  private moveOn(rescans: number): boolean {
    const current = this.store.currentView();
    if (current !== this.view) {
      this.adopt(current);
      return true;
    }
    if (rescans >= MAX_RESCANS_PER_MISS) return false;
    const next = this.store.afterMiss(this.view.packs.some((p) => p.vanished));
    if (next === undefined) return false;
    this.adopt(next);
    return true;
  }

  private search(id: Uint8Array, quick = false): ObjectLocation | undefined {
    const order = this.order;
    for (let k = 0; k < order.length; k++) {
      const source = order[k] as Source;
      const found = source instanceof MidxSource ? this.searchMidx(source, id) : this.searchPack(source, id);
      if (found === undefined) continue;
      if (k > 0) {
        order.splice(k, 1);
        order.unshift(source);
      }
      return found;
    }
    const hex = toHex(id);
    const name = hex.slice(2);
    for (const dir of this.view.looseDirs) {
      // A quick lookup joins no path until it has a hit (it runs once per object of a pack).
      if (quick ? !this.looseListing(dir, id[0] as number, hex).has(name) : !existsSync(join(dir, hex.slice(0, 2), name))) continue;
      return { kind: 'loose', path: join(dir, hex.slice(0, 2), name) };
    }
    return undefined;
  }

  private searchPack(pack: StorePack, id: Uint8Array): ObjectLocation | undefined {
    const index = pack.tryIndex();
    if (index === undefined) return undefined;
    const position = index.find(id);
    if (position < 0) return undefined;
    if (!pack.tryOpen()) {
      this.unusable = pack.error;
      return undefined;
    }
    return { kind: 'pack', pack, position };
  }

  private searchMidx(source: MidxSource, id: Uint8Array): ObjectLocation | undefined {
    const at = source.index.find(id);
    if (at < 0) return undefined;
    // The pack's own index gives the position every per-pack table is keyed by (and checks
    // that the multi-pack-index told the truth).
    const copy = source.copyOf(id, at);
    return copy === undefined ? undefined : { kind: 'pack', pack: copy.pack, position: copy.position };
  }

  /**
   * Whether the store holds `id` (a miss may list the directories again, as the store's refresh policy and
   * `options.refresh` allow).
   */
  has(id: Uint8Array, options?: LookupOptions): boolean {
    return this.locate(id, options) !== undefined;
  }

  /**
   * Reads the object at a location. A location held after its pack left every view and its files
   * were deleted (git repack -ad) is found again by its id, wherever the object is now: the same
   * bytes, or OBJECT_NOT_FOUND-like errors only when no copy is left.
   */
  readAt(location: ObjectLocation): StoredObject {
    try {
      if (location.kind === 'pack') return location.pack.read(location.position);
      return storedLoose(location.path, this.store.inflater);
    } catch (e) {
      return this.otherCopyAfter(location, e) ?? this.readAt(this.relocate(location, e));
    }
  }

  /**
   * Like `readAt`, but packed data is lent until the next read from the same pack. `baseSoon`:
   * the caller will read deltas based on this object next (it walks a delta tree), so a packed
   * object is kept in the delta base cache, where those reads find it.
   */
  readTransientAt(location: ObjectLocation, baseSoon = false): StoredObject {
    try {
      if (location.kind === 'pack') return location.pack.readTransient(location.position, baseSoon);
      return storedLoose(location.path, this.store.inflater);
    } catch (e) {
      return this.otherCopyAfter(location, e) ?? this.readTransientAt(this.relocate(location, e), baseSoon);
    }
  }

  /**
   * A packed copy that turned out corrupt: another copy of the object, from another pack or a
   * loose file, as git's read_object marks the packed one bad and looks again. Undefined when the
   * error is not corruption (the caller's relocation decides); the error again when no copy reads.
   */
  private otherCopyAfter(location: ObjectLocation, e: unknown): StoredObject | undefined {
    if (location.kind !== 'pack' || !isPackwrightError(e) || !CORRUPTION.has(e.code)) return undefined;
    const id = location.pack.idAt(location.position);
    const copy = id === undefined ? undefined : this.readCopyOutside(id, location.pack);
    if (copy === undefined) throw e;
    return copy;
  }

  /** The object from any pack but `except`, or a loose file; undefined when none holds a copy that reads. */
  readCopyOutside(id: Uint8Array, except: StorePack): StoredObject | undefined {
    if (!this.view.listed) this.ensureListed();
    for (const pack of this.view.packs) {
      if (pack === except) continue;
      const index = pack.tryIndex();
      const position = index === undefined ? -1 : index.find(id);
      if (position < 0 || !pack.tryOpen()) continue;
      try {
        return pack.read(position);
      } catch (e) {
        if (!isPackwrightError(e)) throw e;
      }
    }
    const hex = toHex(id);
    for (const dir of this.view.looseDirs) {
      const path = join(dir, hex.slice(0, 2), hex.slice(2));
      if (!existsSync(path)) continue;
      try {
        return storedLoose(path, this.store.inflater);
      } catch (e) {
        if (!isPackwrightError(e)) throw e;
      }
    }
    return undefined;
  }

  /**
   * Where the object of a location whose file is gone (a pack deleted by `git repack -ad`, a loose
   * file pruned after packing) is now; rethrows `e` when that is not why the read failed, or the
   * object cannot be found again.
   */
  private relocate(location: ObjectLocation, e: unknown): ObjectLocation {
    if (!isPackwrightError(e) || (e.code !== 'PACK_MISSING' && e.code !== 'IDX_MISSING' && e.code !== 'OBJECT_NOT_FOUND')) throw e;
    const id = location.kind === 'pack' ? location.pack.idAt(location.position) : looseId(location.path);
    const again = id === undefined ? undefined : this.locate(id);
    if (again === undefined || (again.kind === 'pack' && location.kind === 'pack' && again.pack === location.pack) || (again.kind === 'loose' && location.kind === 'loose' && again.path === location.path)) throw e;
    return again;
  }

  /** With `into`, the answer is written there (no allocation in a loop over many objects). */
  infoAt(location: ObjectLocation, want: InfoRequest = {}, into?: ObjectInfo): ObjectInfo {
    if (location.kind === 'pack') {
      try {
        return location.pack.info(location.position, want, into);
      } catch (e) {
        const copy = this.otherCopyAfter(location, e);
        if (copy !== undefined) {
          const info = into ?? { type: copy.type, size: 0, diskSize: -1, deltaBase: undefined };
          Object.assign(info, { type: copy.type, size: copy.data.length, diskSize: -1, deltaBase: undefined });
          return info;
        }
        return this.infoAt(this.relocate(location, e), want, into);
      }
    }
    let h;
    try {
      h = readLooseHeader(location.path, this.store.inflater);
    } catch (e) {
      return this.infoAt(this.relocate(location, e), want, into);
    }
    const type = typeName(h.type);
    const info = into ?? { type, size: 0, diskSize: -1, deltaBase: undefined };
    info.type = type;
    info.size = h.size;
    info.diskSize = want.diskSize ? statSync(location.path).size : -1;
    info.deltaBase = undefined;
    return info;
  }

  /**
   * The object's type alone, from entry headers (a delta chain's, down to its base) or a loose
   * header: for a caller asking about a few objects of a big pack, it neither inflates anything nor
   * counts toward building the pack's info table (as `infoAt` does).
   */
  typeAt(location: ObjectLocation): ObjectType {
    try {
      if (location.kind === 'pack') return location.pack.typeAt(location.position);
      return typeName(readLooseHeader(location.path, this.store.inflater).type);
    } catch (e) {
      return this.otherCopyAfter(location, e)?.type ?? this.typeAt(this.relocate(location, e));
    }
  }

  /** Reads an object; throws OBJECT_NOT_FOUND when no source has it. */
  read(id: Uint8Array): StoredObject {
    return this.readAt(this.locateOrThrow(id));
  }

  /**
   * Type, size and, when asked, disk size and delta base of `id`, reading no more than a delta's first
   * bytes; throws OBJECT_NOT_FOUND.
   */
  info(id: Uint8Array, want: InfoRequest = {}): ObjectInfo {
    return this.infoAt(this.locateOrThrow(id), want);
  }

  /**
   * The location of `id`, or OBJECT_NOT_FOUND; when the only copy found is in a pack that cannot
   * be used, that pack's error (IDX_MISMATCH, PACK_MISSING, …), which says more.
   */
  locateOrThrow(id: Uint8Array): ObjectLocation {
    const location = this.locate(id);
    if (location !== undefined) return location;
    // An id of the wrong length names nothing in any store: the caller's mistake, not a missing object.
    if (id.length !== this.hashLength) throw new PackwrightError('INVALID_ARGUMENT', `an object id of ${this.hashLength} bytes was expected, not ${id.length}`);
    throw this.unusable ?? notFound(id);
  }

  /**
   * An object's bytes as a stream, with its type and size known at once: memory stays bounded for
   * a large blob (a loose file or a whole pack entry is inflated as it is read).
   */
  readStream(id: Uint8Array): ObjectStream {
    const location = this.locateOrThrow(id);
    if (location.kind === 'pack') return location.pack.stream(location.position);
    const h = readLooseHeader(location.path, this.store.inflater);
    return looseStream(location.path, typeName(h.type), h.size, h.headerLength, statSync(location.path).size);
  }

  /** Type, size, where and delta depth, applying no delta; throws OBJECT_NOT_FOUND. */
  header(id: Uint8Array): ObjectHeader {
    const location = this.locateOrThrow(id);
    const info = this.infoAt(location);
    const deltaDepth = location.kind === 'pack' ? location.pack.deltaDepth(location.position) : 0;
    return { type: info.type, size: info.size, location, deltaDepth };
  }

  /**
   * The object a hex prefix names: unique, ambiguous (with up to `limit` candidates, sorted), or
   * missing. A miss lists the directories again as the policy allows, as git's get_short_oid
   * does ("the object may have recently been added ... or migrated from loose to packed").
   */
  resolvePrefix(hex: string, limit = 16): PrefixMatch {
    let found = this.findByPrefix(hex, Math.max(limit, 2));
    for (let rescans = 0; found.length === 0 && this.moveOn(rescans); rescans++) found = this.findByPrefix(hex, Math.max(limit, 2));
    if (found.length === 0) return { kind: 'missing' };
    if (found.length === 1) return { kind: 'unique', id: found[0] as Buffer };
    return { kind: 'ambiguous', candidates: found.slice(0, limit) };
  }

  /**
   * All ids starting with the hex `prefix`, up to `limit` distinct ones (2 is enough to tell
   * unique from ambiguous), sorted. Searches this handle's view as it is.
   */
  findByPrefix(prefix: string, limit = 2): Buffer[] {
    this.ensureListed();
    const p = prefix.toLowerCase();
    if (!isHex(p) || p.length === 0 || p.length > this.hashLength * 2) return [];
    const found = new Map<string, Buffer>();
    for (const source of this.view.sources) {
      const index = source instanceof MidxSource ? source.index : source.tryIndex();
      if (index === undefined) continue;
      const { first, count } = index.findPrefix(p, limit);
      for (let i = 0; i < count; i++) {
        const id = Buffer.from(index.id(first + i));
        found.set(id.toString('hex'), id);
      }
    }
    for (const dir of this.view.looseDirs) {
      if (p.length < 2) {
        for (const id of this.looseIds(dir)) if (id.toString('hex').startsWith(p)) found.set(id.toString('hex'), id);
        continue;
      }
      for (const name of listDir(join(dir, p.slice(0, 2)))) {
        const hex = p.slice(0, 2) + name;
        if (hex.length === this.hashLength * 2 && hex.startsWith(p) && isHex(hex)) found.set(hex, Buffer.from(hex, 'hex'));
      }
    }
    return [...found.values()].sort(Buffer.compare).slice(0, Math.max(limit, 0) || undefined);
  }

  /**
   * The shortest hex prefix of `id`, at least `minLength` digits, that names no other object
   * (git's find_unique_abbrev). `minLength` -1 is git's automatic length: half the bits of the
   * number of packed objects, rounded up, and at least 7.
   */
  abbreviate(id: Uint8Array, minLength = -1): string {
    const hex = Buffer.from(id.buffer, id.byteOffset, id.byteLength).toString('hex');
    let len = minLength;
    if (len < 0) {
      const count = listedObjects(this.packs());
      len = Math.max(7, Math.ceil((count > 0 ? Math.floor(Math.log2(count)) + 1 : 1) / 2));
    }
    if (len === 0 || len >= hex.length) return hex;
    for (; len < hex.length; len++) {
      const found = this.findByPrefix(hex.slice(0, len), 2);
      if (found.length <= 1 && (found.length === 0 || found[0]?.equals(id) === true)) return hex.slice(0, len);
    }
    return hex;
  }

  /**
   * Every id of the store once, sorted (or in storage order with `unordered`), each a copy the
   * caller keeps. `objects(handle)` gives the same walk with locations and no copies.
   */
  *ids(options: { unordered?: boolean } = {}): Generator<Buffer, void, undefined> {
    for (const e of objects(this, options)) yield Buffer.from(e.id);
  }

  /** Ids of the loose objects in one objects directory, sorted. */
  looseIds(dir: string): Buffer[] {
    const ids: Buffer[] = [];
    const width = this.hashLength * 2 - 2;
    for (let b = 0; b < 256; b++) {
      const sub = b.toString(16).padStart(2, '0');
      const names = listDir(join(dir, sub));
      names.sort();
      for (const name of names) {
        if (name.length === width && isHex(name)) ids.push(Buffer.from(sub + name, 'hex'));
      }
    }
    return ids;
  }

  /** Lets go of the view: packs that left the catalog close once no handle holds them. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.store.release(this.view);
  }

  /** Lets go of the view this handle holds (`using handle = store.handle()`). */
  [Symbol.dispose](): void {
    this.close();
  }
}

/** The id a loose object's path names (`<objects>/ab/cdef…`). */
function looseId(path: string): Buffer | undefined {
  const m = /([0-9a-f]{2})[\\/]([0-9a-f]{38}|[0-9a-f]{62})$/.exec(path);
  return m === null ? undefined : Buffer.from(`${m[1]}${m[2]}`, 'hex');
}

function listDir(path: string): string[] {
  return readDirIfPresent(path, 'loose object directory') ?? [];
}

/** A loose object as the store gives it (its type named). */
function storedLoose(path: string, inflater: Inflater): StoredObject {
  const o = readLoose(path, inflater);
  return { type: typeName(o.type), data: o.data };
}
