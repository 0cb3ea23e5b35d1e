import { throwIfAborted } from '../errors/packwright-error.js';
import { statSync } from 'node:fs';
import { toHex } from '../hash/hex.js';
import { readLooseHeader } from '../loose/read-loose.js';
import { objectSize, type PackInfoTable } from '../pack/pack-info-table.js';
import { forEachObject, onlyPack } from './all-objects.js';
import { Store } from './store.js';
import type { StoreHandle } from './store-handle.js';
import type { ObjectInfo, StorePack } from './store-pack.js';
import { typeNumber } from '../objects/object-type.js';

/** Options of `odbStats`: threads, the extra cold header lookup, cancellation and progress. */
export interface OdbStatsOptions {
  /**
   * Threads for the info tables and the extra lookup (default: the store's). One: everything on
   * this thread.
   */
  threads?: number | undefined;
  /**
   * Then open a second, cold store on the same directory and look every id up again from all
   * threads at once: ids it cannot find are in `missing`, ids whose type or size differs are in
   * `wrong`. What `odb stats --extra-header-lookup` runs while `git repack` changes the files,
   * to show that nothing is lost.
   */
  extraHeaderLookup?: boolean | undefined;
  signal?: AbortSignal | undefined;
  /** Progress of each phase: done of total. */
  onProgress?: ((phase: string, done: number, total: number) => void) | undefined;
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
  /** Milliseconds per phase: tables, headers, and the extra lookup when asked for. */
  timings: Record<string, number>;
  /** Ids the extra lookup could not find (hex). */
  missing: string[];
  /** Ids the extra lookup found with another type or size (hex). */
  wrong: string[];
  /** Ids the extra lookup found. */
  lookedUp: number;
}

const TYPE_NAMES = ['', 'commit', 'tree', 'blob', 'tag'];

/** What is known of one pack for counting: its table, entry sizes, and each position's chain length. */
interface PackFacts {
  table: PackInfoTable;
  sizes: Uint32Array | Float64Array;
  depth: Uint32Array;
}

/**
 * Counts every object of the store once (git's rule for duplicates: the copy a lookup finds):
 * type, size, whole or delta and the length of its chain, from one info table per pack (a
 * sequential pass, split over threads for large packs; see `buildInfoTable`) and the header of
 * each loose object.
 */
export async function odbStats(handle: StoreHandle, options: OdbStatsOptions = {}): Promise<OdbStats> {
  const { signal, onProgress } = options;
  const store = handle.store;
  const stats: OdbStats = {
    objects: 0, byType: { commit: 0, tree: 0, blob: 0, tag: 0 }, loose: 0, packed: 0, packs: 0, deltas: 0, chainLengths: [],
    bytes: 0, diskBytes: 0, timings: {}, missing: [], wrong: [], lookedUp: 0,
  };
  let t = performance.now();
  const packs = handle.packs().filter((p) => p.tryIndex() !== undefined && p.tryOpen());
  stats.packs = packs.length;
  if ((options.threads ?? 2) > 1) await store.loadInfoTables({ ...(signal !== undefined ? { signal } : {}) });
  const facts = new Map<StorePack, PackFacts>();
  for (const pack of packs) {
    throwIfAborted(signal, 'odb stats');
    const table = pack.loadInfoTable();
    facts.set(pack, { table, sizes: pack.index.entrySizes(pack.open().file.dataEnd), depth: chainDepths(table.basePositions, pack.index.count) });
  }
  stats.timings['tables'] = performance.now() - t;
  t = performance.now();
  const byType = new Float64Array(8);
  const chains: number[] = [];
  const count = (type: number, size: number, disk: number, depth: number): void => {
    byType[type]!++;
    stats.bytes += size;
    stats.diskBytes += disk;
    chains[depth] = (chains[depth] ?? 0) + 1;
  };
  const only = onlyPack(handle);
  if (only !== undefined && facts.has(only)) {
    // One pack: its positions are the objects, each once.
    const f = facts.get(only) as PackFacts;
    const n = only.index.count;
    for (let p = 0; p < n; p++) count(f.table.types[p] as number, objectSize(f.table, p), f.sizes[p] as number, f.depth[p] as number);
    stats.packed = n;
    stats.objects = n;
  } else {
    let seen = 0;
    forEachObject(handle, { unordered: true }, (_id, location) => {
      if ((++seen & 0xffff) === 0) {
        throwIfAborted(signal, 'odb stats');
        onProgress?.('headers', seen, 0);
      }
      stats.objects++;
      if (location.kind === 'pack') {
        const f = facts.get(location.pack) as PackFacts;
        const p = location.position;
        count(f.table.types[p] as number, objectSize(f.table, p), f.sizes[p] as number, f.depth[p] as number);
        stats.packed++;
      } else {
        const h = readLooseHeader(location.path, store.inflater);
        count(h.type, h.size, statSync(location.path).size, 0);
        stats.loose++;
      }
    });
  }
  for (let type = 1; type < TYPE_NAMES.length; type++) stats.byType[TYPE_NAMES[type] as string] = byType[type] as number;
  stats.chainLengths = Array.from(chains, (n) => n ?? 0);
  stats.deltas = stats.objects - (stats.chainLengths[0] ?? 0);
  stats.timings['headers'] = performance.now() - t;
  if (options.extraHeaderLookup) await extraLookup(handle, stats, options);
  return stats;
}

/** Looks every object up again through a cold store, from all its threads at once, and compares. */
async function extraLookup(handle: StoreHandle, stats: OdbStats, options: OdbStatsOptions): Promise<void> {
  const t = performance.now();
  const ids: Buffer[] = [];
  const types: number[] = [];
  const sizes: number[] = [];
  const info: ObjectInfo = { type: 'blob', size: 0, diskSize: -1, deltaBase: undefined };
  forEachObject(handle, { unordered: true }, (id, location) => {
    ids.push(Buffer.from(id));
    handle.infoAt(location, {}, info);
    types.push(typeNumber(info.type));
    sizes.push(info.size);
  });
  const threads = options.threads ?? 2;
  const cold = Store.open(handle.store.objectsDir, { objectFormat: handle.format, refresh: 'on-miss', threads: Math.max(1, threads), alternates: handle.store.key.alternates });
  try {
    let got: { types: Uint8Array; sizes: Float64Array };
    if (threads > 1) {
      got = await cold.headerMany(ids, { ...(options.signal !== undefined ? { signal: options.signal } : {}), onProgress: (d, n) => options.onProgress?.('extra lookup', d, n) });
    } else {
      got = { types: new Uint8Array(ids.length), sizes: new Float64Array(ids.length) };
      const h = cold.objects;
      ids.forEach((id, i) => {
        const location = h.locate(id);
        if (location === undefined) return;
        h.infoAt(location, {}, info);
        got.types[i] = typeNumber(info.type);
        got.sizes[i] = info.size;
      });
    }
    ids.forEach((id, i) => {
      if (got.types[i] === 0) stats.missing.push(toHex(id));
      else {
        stats.lookedUp++;
        if (got.types[i] !== types[i] || got.sizes[i] !== sizes[i]) stats.wrong.push(toHex(id));
      }
    });
  } finally {
    cold.close();
  }
  stats.timings['extraLookup'] = performance.now() - t;
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
