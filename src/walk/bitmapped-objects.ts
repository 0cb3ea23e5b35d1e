import { trace2Data } from '../trace2/trace2.js';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Bitset } from '../bitmap/bitset.js';
import { PackBitmap } from '../bitmap/pack-bitmap.js';
import { isPackwrightError, PackwrightError } from '../errors/packwright-error.js';
import { formatForHashLength } from '../hash/object-format.js';
import { readRevIndex } from '../idx/rev-index.js';
import type { MultiPackIndex } from '../midx/multi-pack-index.js';
import { MidxSource } from '../odb/catalog.js';
import type { StoreHandle } from '../odb/store-handle.js';
import type { StorePack } from '../odb/store-pack.js';

/** The id table a bitmap's index positions refer to: a pack's `.idx` or a multi-pack-index. */
interface IdTable {
  find(id: Uint8Array): number;
  /** The table's bytes, the ids at `idPosition`s. */
  readonly idData: Uint8Array;
  idPosition(i: number): number;
}

/**
 * What a reachability bitmap's bits stand for (git's bitmap_index, without a walk's state): the
 * objects of one pack in pack order (`pack-<hash>.bitmap`), or the objects of a multi-pack-index
 * in its pseudo-pack order (`multi-pack-index-<hash>.bitmap`: the preferred pack's objects first,
 * then each other pack's, by pack number, each by offset). Index positions (the bitmap's entries
 * and hash cache) are places in the id table: the pack's `.idx` or the multi-pack-index.
 *
 * Made once per file and kept while the pack or multi-pack-index is (see openBitmap): a server
 * answering fetch after fetch reads and checks each once.
 */
export class BitmappedObjects {
  /** Objects the bits cover. */
  readonly count: number;
  readonly hashLength: number;

  constructor(
    readonly bitmap: PackBitmap,
    private readonly ids: IdTable,
    /** Bit → index position. */
    readonly order: Uint32Array,
    /** Index position → bit. */
    private readonly bits: Uint32Array,
    /**
     * The pack whose objects are the first bits, in its own pack order: the bitmapped pack, or a
     * multi-pack-index's preferred pack (which holds every base of its deltas and wins every tie).
     * Pack reuse copies from it as it is.
     */
    readonly reusePack: StorePack,
    /** The multi-pack-index, for a multi-pack bitmap. */
    readonly midx?: MultiPackIndex,
  ) {
    this.count = order.length;
    this.hashLength = bitmap.hashLength;
  }

  /** git's bitmap_position without the extended index: the object's bit, or -1 when the bitmap does not cover it. */
  position(id: Uint8Array): number {
    const i = this.ids.find(id);
    return i < 0 ? -1 : (this.bits[i] as number);
  }

  /** The bytes the ids are read from (see idOffset). */
  get idData(): Uint8Array {
    return this.ids.idData;
  }

  /** Where the id of bit `k` starts in `idData`. */
  idOffset(k: number): number {
    return this.ids.idPosition(this.order[k] as number);
  }

  /** The path-name hash of bit `k`'s object, 0 when the bitmap has no hash cache. */
  nameHash(k: number): number {
    return this.bitmap.hashes?.[this.order[k] as number] ?? 0;
  }

  /** Whether the bitmap has an entry for commit `id`. */
  hasCommit(id: Uint8Array): boolean {
    const i = this.ids.find(id);
    return i >= 0 && this.bitmap.entryOf(i) >= 0;
  }

  /** The objects commit `id` reaches, when the bitmap has an entry for it (shared: do not change it). */
  commitSet(id: Uint8Array): Bitset | undefined {
    const i = this.ids.find(id);
    if (i < 0) return undefined;
    const entry = this.bitmap.entryOf(i);
    return entry < 0 ? undefined : this.bitmap.reachable(entry);
  }
}

/**
 * Bitmaps read, by pack or multi-pack-index: neither changes once written, and one the store lets
 * go takes its bitmap along.
 */
const opened = new WeakMap<StorePack | MultiPackIndex, BitmappedObjects>();

/**
 * The repository's reachability bitmap as git's open_bitmap finds it: a multi-pack-index's first
 * (the local one first, then alternates'), else the first pack's (newest first). Another bitmap
 * of the same kind is ignored with git's warning; a multi-pack bitmap that cannot be used is
 * warned about and the packs' are looked at instead. Undefined when there is none that can be
 * read.
 */
export function openBitmap(handle: StoreHandle, warn: (message: string) => void): BitmappedObjects | undefined {
  let found: BitmappedObjects | undefined;
  for (const source of handle.sources()) {
    if (!(source instanceof MidxSource)) continue;
    const path = midxBitmapPath(source.index);
    if (!existsSync(path)) continue;
    if (found !== undefined) {
      warn(`ignoring extra bitmap file: '${source.index.path}'`);
      continue;
    }
    try {
      found = openMidxBitmap(source, path, warn);
    } catch (e) {
      if (!isPackwrightError(e)) throw e;
      warn(e.message);
    }
  }
  if (found !== undefined) return found;
  for (const pack of handle.packs()) {
    const path = pack.packPath.replace(/\.pack$/, '.bitmap');
    if (!existsSync(path)) continue;
    if (found !== undefined) {
      warn(`ignoring extra bitmap file: '${pack.packPath}'`);
      continue;
    }
    const index = pack.tryIndex();
    if (index === undefined || !pack.tryOpen()) continue;
    try {
      found = opened.get(pack);
      if (found === undefined) {
        const bitmap = PackBitmap.open(path, { objectCount: index.count, hashLength: index.hashLength, packHash: index.packHash });
        const ids: IdTable = { find: (id) => index.find(id), idData: index.idData(), idPosition: (i) => index.idPosition(i) };
        found = new BitmappedObjects(bitmap, ids, index.packOrder().positions, index.packRanks(), pack);
        opened.set(pack, found);
      }
    } catch (e) {
      if (!isPackwrightError(e, 'BITMAP_CORRUPT')) throw e;
      warn(e.message);
      return undefined;
    }
  }
  return found;
}

/** `multi-pack-index-<checksum>.bitmap` beside the multi-pack-index (git's midx_bitmap_filename). */
function midxBitmapPath(midx: MultiPackIndex): string {
  return join(dirname(midx.path), `multi-pack-index-${midx.checksum().toString('hex')}.bitmap`);
}

/**
 * A multi-pack bitmap, checked as git's open_midx_bitmap_1 checks it (the checksum it names, a
 * reverse index, a preferred pack that can be read) and more: the reverse index must be the
 * pseudo-pack order, since a wrong one would send other objects than the bits say. Undefined
 * (warned) where git warns and goes on without it; a damaged file is BITMAP_CORRUPT.
 */
function openMidxBitmap(source: MidxSource, path: string, warn: (message: string) => void): BitmappedObjects | undefined {
  const midx = source.index;
  const cached = opened.get(midx);
  if (cached !== undefined) return cached;
  if (midx.count === 0) return undefined;
  const bitmap = PackBitmap.open(path, { objectCount: midx.count, hashLength: midx.hashLength });
  if (!bitmap.ownerHash().equals(midx.checksum())) {
    throw new PackwrightError('BITMAP_CORRUPT', `checksum doesn't match in MIDX and bitmap (${path})`, { file: path, offset: 12 });
  }
  const order = midxPackOrder(midx);
  if (order === undefined) {
    warn('multi-pack bitmap is missing required reverse index');
    return undefined;
  }
  const preferred = source.packs[midx.packOf(order[0] as number)] as StorePack;
  if (!preferred.tryOpen() || preferred.tryIndex() === undefined) {
    warn(`preferred pack (${preferred.packPath}) is invalid`);
    return undefined;
  }
  const bits = new Uint32Array(midx.count);
  for (let k = 0; k < order.length; k++) bits[order[k] as number] = k;
  const ids: IdTable = { find: (id) => midx.find(id), idData: midx.data, idPosition: (i) => midx.idPosition(i) };
  const found = new BitmappedObjects(bitmap, ids, order, bits, preferred, midx);
  opened.set(midx, found);
  return found;
}

/**
 * The multi-pack-index's pseudo-pack order (bit → position): its RIDX chunk, else the
 * `multi-pack-index-<checksum>.rev` git wrote before the chunk existed (and still writes under
 * GIT_TEST_MIDX_WRITE_REV), checked to be a permutation sorted by (preferred pack first, pack
 * number, offset). Undefined when there is neither.
 */
function midxPackOrder(midx: MultiPackIndex): Uint32Array | undefined {
  let order = midx.reverseIndex();
  const where = order !== undefined ? `${midx.path} (RIDX chunk)` : join(dirname(midx.path), `multi-pack-index-${midx.checksum().toString('hex')}.rev`);
  if (order === undefined) {
    if (!existsSync(where)) return undefined;
    order = readRevIndex(where, formatForHashLength(midx.hashLength), midx.count, midx.checksum());
    trace2Data('load_midx_revindex', 'source', 'rev');
  } else trace2Data('load_midx_revindex', 'source', 'midx');
  const n = midx.count;
  const fail = (k: number, why: string): never => {
    throw new PackwrightError('BITMAP_CORRUPT', `${where}: entry ${k} ${why}, not the pseudo-pack order`, { file: where });
  };
  const seen = new Uint8Array(n);
  const preferred = n > 0 ? midx.packOf(order[0] as number) : 0;
  let lastPack = -1;
  let lastOffset = -1;
  for (let k = 0; k < n; k++) {
    const m = order[k] as number;
    if (m >= n || seen[m] === 1) fail(k, `names position ${m} ${m >= n ? 'out of range' : 'twice'}`);
    seen[m] = 1;
    const p = midx.packOf(m);
    const pack = p === preferred ? -1 : p;
    const offset = midx.offset(m);
    if (pack < lastPack || (pack === lastPack && offset <= lastOffset)) fail(k, `(pack ${p}, offset ${offset}) comes after (pack ${lastPack < 0 ? preferred : lastPack}, offset ${lastOffset})`);
    lastPack = pack;
    lastOffset = offset;
  }
  return order;
}
