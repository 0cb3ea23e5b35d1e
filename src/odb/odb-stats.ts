import { statSync } from 'node:fs';
import { toHex } from '../hash/hex.js';
import { readLooseHeader } from '../loose/read-loose.js';
import { objectSize } from '../pack/pack-info-table.js';
import { forEachObject } from './all-objects.js';
import { Store } from './store.js';
import type { StoreHandle } from './store-handle.js';

export interface OdbStatsOptions {
  /**
   * Then open a second, cold store on the same directory and look every id up again (git's
   * `cat-file -e` of each): ids it cannot find are in `missing`. What `odb stats
   * --extra-header-lookup` runs while `git repack` changes the files, to prove nothing is lost.
   */
  extraHeaderLookup?: boolean;
  signal?: AbortSignal;
  onProgress?: (phase: string, done: number, total: number) => void;
}

/** What `packwright odb stats` reports. */
export interface OdbStats {
  objects: number;
  /** By type name: commit, tree, blob, tag. */
  byType: Record<string, number>;
  loose: number;
  packed: number;
  packs: number;
  /** Packed objects stored as deltas. */
  deltas: number;
  /** Index d: objects whose delta chain is d deltas long (0: stored whole, or loose). */
  chainLengths: number[];
  /** Sum of the objects' sizes. */
  bytes: number;
  /** Sum of the bytes they take on disk (pack entries and loose files). */
  diskBytes: number;
  /** Milliseconds per phase: listing, headers, and the extra lookup when asked for. */
  timings: Record<string, number>;
  /** Ids the extra lookup could not find (hex). */
  missing: string[];
  /** Ids counted by the extra lookup. */
  lookedUp: number;
}

const TYPE_NAMES = ['', 'commit', 'tree', 'blob', 'tag'];

/**
 * Counts every object of the store once (git's rule for duplicates: the copy a lookup finds):
 * type, size, whole or delta and the length of its chain, from one info table per pack (a
 * sequential pass; see `buildInfoTable`) and the header of each loose object.
 */
export function odbStats(handle: StoreHandle, options: OdbStatsOptions = {}): OdbStats {
  const { signal, onProgress } = options;
  const stats: OdbStats = {
    objects: 0, byType: { commit: 0, tree: 0, blob: 0, tag: 0 }, loose: 0, packed: 0, packs: 0, deltas: 0, chainLengths: [],
    bytes: 0, diskBytes: 0, timings: {}, missing: [], lookedUp: 0,
  };
  let t = performance.now();
  const packs = handle.packs().filter((p) => p.tryIndex() !== undefined && p.tryOpen());
  stats.packs = packs.length;
  // Per pack: the info table, the entry sizes and each position's chain length.
  const perPack = new Map<object, { depth: Uint32Array; sizes: Uint32Array | Float64Array }>();
  for (const pack of packs) {
    signal?.throwIfAborted();
    const table = pack.loadInfoTable();
    const n = pack.index.count;
    const depth = chainDepths(table.basePositions, n);
    perPack.set(pack, { depth, sizes: pack.index.entrySizes(pack.open().file.dataEnd) });
  }
  stats.timings['tables'] = performance.now() - t;
  t = performance.now();
  const ids: Buffer[] | undefined = options.extraHeaderLookup ? [] : undefined;
  let seen = 0;
  forEachObject(handle, { unordered: true }, (id, location) => {
    if ((++seen & 0xffff) === 0) {
      signal?.throwIfAborted();
      onProgress?.('headers', seen, 0);
    }
    ids?.push(Buffer.from(id));
    stats.objects++;
    let type: number;
    let depth = 0;
    if (location.kind === 'pack') {
      const pack = location.pack;
      const table = pack.loadInfoTable();
      const own = perPack.get(pack);
      const position = location.position;
      type = table.types[position] as number;
      stats.bytes += objectSize(table, position);
      if (own !== undefined) {
        depth = own.depth[position] as number;
        stats.diskBytes += own.sizes[position] as number;
      }
      stats.packed++;
      if (depth > 0) stats.deltas++;
    } else {
      const h = readLooseHeader(location.path, handle.store.inflater);
      type = h.type;
      stats.bytes += h.size;
      stats.diskBytes += statSync(location.path).size;
      stats.loose++;
    }
    const name = TYPE_NAMES[type] ?? String(type);
    stats.byType[name] = (stats.byType[name] ?? 0) + 1;
    while (stats.chainLengths.length <= depth) stats.chainLengths.push(0);
    stats.chainLengths[depth] = (stats.chainLengths[depth] as number) + 1;
  });
  stats.timings['headers'] = performance.now() - t;
  if (ids !== undefined) {
    t = performance.now();
    const cold = Store.open(handle.store.objectsDir, { objectFormat: handle.format, refresh: 'on-miss' });
    try {
      const h = cold.objects;
      for (let i = 0; i < ids.length; i++) {
        if ((i & 0xffff) === 0) {
          signal?.throwIfAborted();
          onProgress?.('extra lookup', i, ids.length);
        }
        const id = ids[i] as Buffer;
        const location = h.locate(id);
        if (location === undefined) {
          stats.missing.push(toHex(id));
          continue;
        }
        h.infoAt(location);
        stats.lookedUp++;
      }
    } finally {
      cold.close();
    }
    stats.timings['extraLookup'] = performance.now() - t;
  }
  return stats;
}

const UNKNOWN = 0xffffffff;

/**
 * The delta chain length of every position, from each position's base (-1 for none): each chain
 * is walked up to the first position already known, then filled in on the way back, so every
 * position is visited a bounded number of times whatever the order of bases and deltas (a
 * REF_DELTA's base may follow it in a pack another tool wrote).
 */
function chainDepths(bases: Int32Array, n: number): Uint32Array {
  const depth = new Uint32Array(n).fill(UNKNOWN);
  const path: number[] = [];
  for (let start = 0; start < n; start++) {
    let p = start;
    while (depth[p] === UNKNOWN) {
      path.push(p);
      const base = bases[p] as number;
      if (base < 0) {
        depth[p] = 0;
        path.pop();
        break;
      }
      if (path.length > n) throw new RangeError(`delta chain from position ${start} loops`);
      p = base;
    }
    let d = depth[p] as number;
    while (path.length > 0) depth[path.pop() as number] = ++d;
  }
  return depth;
}
