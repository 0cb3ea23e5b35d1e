import { isPackwrightError, PackwrightError } from '../errors/packwright-error.js';
import { toHex } from '../hash/hex.js';
import { OBJ_OFS_DELTA } from './entry-header.js';
import { applyDelta, DeltaFormatError, readDeltaHeader } from '../delta/apply-delta.js';
import type { DeltaBaseCache, CachedObject, PackIdentity } from './delta-base-cache.js';
import { EntryHeader } from './entry-header.js';
import type { PackFile } from './pack-file.js';

/** An object read from a pack: its type number (1-4) and its bytes. */
export interface PackObject {
  type: number;
  data: Buffer;
}

/**
 * What a pack entry says of its object without inflating it: the object's type and size, the entry's own
 * type, and its delta base (offset or id) when it is a delta.
 */
export interface PackObjectInfo {
  /** Type of the object after resolving deltas (1-4). */
  type: number;
  /** Size of the object after resolving deltas. */
  size: number;
  /** Type stored in the entry header (6 and 7 for deltas). */
  entryType: number;
  /** OFS_DELTA: offset of the base; otherwise -1. */
  baseOffset: number;
  /** REF_DELTA: id of the base. */
  baseId: Buffer | undefined;
}

/** Finds the pack offset of a REF_DELTA base by id; -1 when this pack does not hold it. */
export type RefBaseLookup = (id: Uint8Array) => number;

const EMPTY: Buffer = Buffer.alloc(0);

/**
 * Decodes entries of one pack at random: walks a delta chain down to a cached or stored base, then
 * applies the deltas back up, caching each intermediate base like git's `unpack_entry`.
 */
export class PackReader {
  private readonly header = new EntryHeader();
  /**
   * Delta data and transient results, grown on demand. They are blocks of the cache's arena, like
   * the bases, so applyDelta copies within one buffer (see SHORT_COPY_WITHIN there).
   */
  private scratch = EMPTY;
  /** levelBuffer's two buffers, held only while one chain is decoded (dropped by `decode`). */
  private readonly levels: (Buffer | undefined)[] = [undefined, undefined];
  private result = EMPTY;
  /** The start of a delta, for header-only reads (which need no arena). */
  private readonly prefix = Buffer.allocUnsafeSlow(64);
  /** Resolved type of delta entries already walked, by offset: header-only reads stay O(1). */
  private readonly typeMemo = new Map<number, number>();
  private readonly chainOffsets: number[] = [];
  private readonly chainDataOffsets: number[] = [];
  private readonly chainSizes: number[] = [];
  /** A buffer from the cache being decoded into and not yet cached: released if decoding fails. */
  private pending: Buffer | undefined;

  constructor(
    readonly file: PackFile,
    readonly cache: DeltaBaseCache,
    private readonly findRefBase: RefBaseLookup,
    /** Distinguishes this pack's entries in a cache shared by several packs. */
    readonly identity: PackIdentity = { slot: 0, generation: 0 },
    /**
     * The object whose entry starts at `offset`, from another copy (loose, another pack), for a
     * delta whose base entry here cannot be read: git's unpack_entry fetches the base "from
     * another pack or loose" rather than failing outright.
     */
    private readonly baseElsewhere?: (offset: number) => PackObject | undefined,
  ) {}

  /**
   * Reads and fully resolves the object whose entry starts at `offset`. The result is the
   * caller's. See `readTransient` for the faster form whose result is only lent.
   */
  read(offset: number): PackObject {
    const obj = this.decode(offset, false);
    return { type: obj.type, data: obj.data };
  }

  /**
   * Like `read`, but the data is decoded into a buffer the reader reuses: valid only until the
   * next call on this reader. Printing or hashing every object this way touches no new memory.
   */
  readTransient(offset: number, keepAsBase = false, baseHint = -1): PackObject {
    // The caller knows this object is the base of deltas still to be read (pack order): decode it
    // into a block of the base cache and keep it there, so each of those deltas costs one
    // delta application instead of a walk down the chain. `baseHint`: the offset of its base, when
    // the caller knows it (an info table), which spares a REF delta its search of the index.
    return this.decode(offset, true, keepAsBase, baseHint);
  }

  /** Drops the object at `offset` from the base cache: the caller knows no delta will need it again. */
  forget(offset: number): void {
    this.cache.drop(this.cache.key(this.identity, offset));
  }

  private output(size: number, transient: boolean, keep: boolean, base?: CachedObject): Buffer {
    if (keep) return this.cache.allocate(size + 1, base);
    if (!transient) return Buffer.allocUnsafeSlow(size + 1);
    if (this.result.length < size + 1) this.result = this.grow(this.result, size + 1, base);
    return this.result;
  }

  private decode(offset: number, transient: boolean, keep = false, baseHint = -1): PackObject {
    try {
      return this.decodeChain(offset, transient, keep, baseHint);
    } catch (e) {
      // A corrupt entry must not cost the cache the block it was being decoded into.
      if (this.pending !== undefined) this.cache.release(this.pending);
      throw e;
    } finally {
      this.pending = undefined;
      this.levels[0] = this.levels[1] = undefined;
    }
  }

  /** The most levels a read of this pack has had to replay (see decodeChain's stride). */
  private longestReplay = 0;

  private decodeChain(offset: number, transient: boolean, keep: boolean, baseHint: number): PackObject {
    const file = this.file;
    const cache = this.cache;
    const h = this.header;
    const offsets = this.chainOffsets;
    const dataOffsets = this.chainDataOffsets;
    const sizes = this.chainSizes;
    offsets.length = 0;
    dataOffsets.length = 0;
    sizes.length = 0;
    let cur = offset;
    let base: CachedObject | undefined;
    /** Why a level of the chain could not be read, while a copy from elsewhere may still save it. */
    let failure: unknown;
    for (;;) {
      if (offsets.length > 0) {
        base = cache.get(cache.key(this.identity, cur));
        if (base !== undefined) break;
      }
      try {
        file.readEntryHeader(cur, h);
        if (h.type < OBJ_OFS_DELTA) {
          if (offsets.length === 0) {
            const out = (this.pending = this.output(h.size, transient, keep));
            file.inflate(cur, cur + h.headerLength, h.size, out, 0);
            return this.finish(offset, h.type, out, h.size, keep);
          }
          const backing = (this.pending = cache.allocate(h.size + 1));
          file.inflate(cur, cur + h.headerLength, h.size, backing, 0, true);
          base = { type: h.type, data: backing.subarray(0, h.size), backing };
          cache.set(cache.key(this.identity, cur), base);
          this.pending = undefined;
          break;
        }
      } catch (e) {
        // A base that cannot be read here may be read elsewhere (git's unpack_entry); the
        // requested object's own entry is the caller's to look for elsewhere.
        if (offsets.length === 0 || this.baseElsewhere === undefined || !isPackwrightError(e)) throw e;
        if (this.pending !== undefined) cache.release(this.pending);
        this.pending = undefined;
        const copy = this.baseElsewhere(cur);
        failure = e;
        base = copy === undefined ? undefined : { type: copy.type, data: copy.data };
        break;
      }
      offsets.push(cur);
      dataOffsets.push(cur + h.headerLength);
      sizes.push(h.size);
      if (offsets.length > file.objectCount) {
        throw new PackwrightError('PACK_CORRUPT', `${file.path}: delta chain from offset ${offset} loops (REF_DELTA cycle)`, { file: file.path, offset });
      }
      if (h.type === OBJ_OFS_DELTA) {
        cur = h.baseOffset;
        continue;
      }
      try {
        cur = offsets.length === 1 && baseHint >= 0 ? baseHint : this.refBase(cur, h.baseId as Buffer);
      } catch (e) {
        // A delta here whose base is nowhere in the pack: above the requested object, the object
        // at `cur` may still be had elsewhere, and the levels above it made from that.
        if (this.baseElsewhere === undefined || offsets.length < 2 || !isPackwrightError(e)) throw e;
        offsets.pop();
        dataOffsets.pop();
        sizes.pop();
        const copy = this.baseElsewhere(cur);
        failure = e;
        base = copy === undefined ? undefined : { type: copy.type, data: copy.data };
        break;
      }
    }
    // A chain longer than the cache holds would push out, level by level, everything a later read
    // needs, leaving only the levels just made (cat-file in id order over 1,100-deep chains of
    // 200 KB blobs with a 28 MB cache: 317k deltas applied for 3,300 objects, 4x git's time).
    // Past half of what the cache holds, only one level in `stride` is kept, chosen by a hash of
    // its offset: the same levels whichever read reaches them (and, strides being powers of two,
    // a longer stride's levels among a shorter one's), so the kept ones add up to a lattice over
    // the chain that fits, and a later read finds one about `stride` levels down.
    // The stride follows the longest chain replayed in this pack so far, not this read's: a short
    // replay that kept every level would push the lattice out again.
    this.longestReplay = Math.max(this.longestReplay, offsets.length - 1);
    const room = base === undefined ? Infinity : Math.max(1, Math.floor(cache.limit / Math.max(1, base.data.length) / 2));
    // Only for chains far longer than that (four times): where they fit, keeping every level is what
    // reads in chain order want (the next read's base is the level just made; sparser keeping made
    // cat-file --batch in rev-list order on gitoxide 10% slower).
    const stride = this.longestReplay <= 4 * room ? 1 : 2 ** Math.ceil(Math.log2(this.longestReplay / room));
    for (let i = offsets.length - 1; i >= 0; i--) {
      const at = offsets[i] as number;
      const size = sizes[i] as number;
      if (base === undefined && i < offsets.length - 1) {
        // The level below could not be made: its object may still be had elsewhere (git's
        // unpack_entry asks for each missing base by id, level by level).
        const copy = this.baseElsewhere?.(offsets[i + 1] as number);
        if (copy !== undefined) base = { type: copy.type, data: copy.data };
      }
      if (base === undefined) {
        if (i === 0) throw failure;
        continue;
      }
      try {
        if (this.scratch.length < size + 1) this.scratch = this.grow(this.scratch, size + 1, base);
        // The levels below the object asked for are scattered reads (see PackFile.view).
        file.inflate(at, dataOffsets[i] as number, size, this.scratch, 0, i > 0);
        const resultSize = this.deltaResultSize(at, this.scratch, size, base.data.length);
        if (i === 0) {
          const out = (this.pending = this.output(resultSize, transient, keep, base));
          this.applyAt(at, base.data, this.scratch, size, out);
          return this.finish(offset, base.type, out, resultSize, keep);
        }
        // A level the cache will not keep (larger than its limit) goes to one of two buffers of
        // this read's own, in turn: a fresh buffer a level cost a deep chain of large objects
        // under a small cache ~4x the delta application itself in first touches of memory.
        // The requested object's own base is kept too: the next read may well be its sibling.
        const kept = (stride === 1 || i === 1 || (Math.imul(at, 0x9e3779b1) >>> 16 & (stride - 1)) === 0) && cache.keeps(resultSize);
        const backing: Buffer = kept ? (this.pending = cache.allocate(resultSize + 1, base)) : this.levelBuffer(resultSize + 1, base);
        this.applyAt(at, base.data, this.scratch, size, backing);
        base = { type: base.type, data: backing.subarray(0, resultSize), backing };
        if (kept) cache.set(cache.key(this.identity, at), base);
        this.pending = undefined;
      } catch (e) {
        // Without a way to look elsewhere, or at the top, the damage is the answer.
        if (this.baseElsewhere === undefined || i === 0 || !isPackwrightError(e)) throw e;
        if (this.pending !== undefined) cache.release(this.pending);
        this.pending = undefined;
        failure = e;
        base = undefined;
      }
    }
    throw new Error('unreachable: a delta chain always ends in a base');
  }

  /** One of the two buffers for levels of a chain the cache does not keep: the one `base` is not in. */
  private levelBuffer(size: number, base: CachedObject): Buffer {
    const i = this.levels[0] !== undefined && base.data.buffer === this.levels[0].buffer ? 1 : 0;
    const have = this.levels[i];
    if (have !== undefined && have.length >= size) return have;
    const fresh = Buffer.allocUnsafeSlow(Math.max(size, (have?.length ?? 0) * 2));
    this.levels[i] = fresh;
    return fresh;
  }

  /** A larger replacement for a scratch buffer, from the cache's arena (never evicting `keep`). */
  private grow(old: Buffer, size: number, keep?: CachedObject): Buffer {
    this.cache.release(old);
    return this.cache.allocate(Math.max(size, old.length * 2, 1 << 16), keep);
  }

  private finish(offset: number, type: number, out: Buffer, size: number, keep: boolean): PackObject {
    const data = out.subarray(0, size);
    if (keep) this.cache.set(this.cache.key(this.identity, offset), { type, data, backing: out });
    return { type, data };
  }

  private deltaResultSize(offset: number, delta: Buffer, deltaSize: number, baseLength: number): number {
    try {
      return readDeltaHeader(delta, 0, deltaSize, baseLength).resultSize;
    } catch (e) {
      throw this.deltaError(offset, e);
    }
  }

  private applyAt(offset: number, base: Buffer, delta: Buffer, deltaSize: number, out: Buffer): void {
    try {
      applyDelta(base, 0, base.length, delta, 0, deltaSize, out, 0);
    } catch (e) {
      throw this.deltaError(offset, e);
    }
  }

  private deltaError(offset: number, e: unknown): unknown {
    if (!(e instanceof DeltaFormatError)) return e;
    return new PackwrightError('DELTA_CORRUPT', `${this.file.path}: failed to apply delta at offset ${offset}: ${e.message}`, {
      file: this.file.path, offset, cause: e,
    });
  }

  private refBase(offset: number, id: Buffer): number {
    const base = this.findRefBase(id);
    if (base < 0) {
      throw new PackwrightError('PACK_CORRUPT', `${this.file.path}: REF_DELTA at offset ${offset} needs base ${toHex(id)}, which is not in the pack`, {
        file: this.file.path, offset,
      });
    }
    return base;
  }

  /** Type and size without inflating more than a delta's first bytes (git's `packed_object_info`). */
  info(offset: number): PackObjectInfo {
    const file = this.file;
    const h = this.header;
    file.readEntryHeader(offset, h);
    const entryType = h.type;
    const baseOffset = h.baseOffset;
    const baseId = h.baseId;
    if (entryType < OBJ_OFS_DELTA) return { type: entryType, size: h.size, entryType, baseOffset, baseId };
    const prefix = this.prefix;
    const n = file.inflatePrefix(offset, offset + h.headerLength, Math.min(h.size, 20), prefix);
    let size: number;
    try {
      size = readDeltaHeader(prefix, 0, n).resultSize;
    } catch (e) {
      throw new PackwrightError('DELTA_CORRUPT', `${file.path}: bad delta header at offset ${offset}: ${(e as Error).message}`, { file: file.path, offset, cause: e });
    }
    return { type: this.resolvedType(offset), size, entryType, baseOffset, baseId };
  }

  /** Follows base references (headers only) down to a non-delta entry, remembering the answer. */
  resolvedType(offset: number): number {
    const h = this.header;
    const memo = this.typeMemo;
    const walked = this.chainOffsets;
    walked.length = 0;
    let cur = offset;
    let type = 0;
    for (let depth = 0; depth <= this.file.objectCount; depth++) {
      const known = memo.get(cur);
      if (known !== undefined) { type = known; break; }
      this.file.readEntryHeader(cur, h);
      if (h.type < OBJ_OFS_DELTA) { type = h.type; break; }
      walked.push(cur);
      cur = h.type === OBJ_OFS_DELTA ? h.baseOffset : this.refBase(cur, h.baseId as Buffer);
    }
    if (type === 0) {
      throw new PackwrightError('PACK_CORRUPT', `${this.file.path}: delta chain from offset ${offset} loops (REF_DELTA cycle)`, { file: this.file.path, offset });
    }
    for (const o of walked) memo.set(o, type);
    return type;
  }
}
