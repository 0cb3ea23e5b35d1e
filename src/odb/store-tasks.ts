import { typeNumber } from '../objects/object-type.js';
import type { ObjectInfo } from './store-pack.js';
import type { Task } from '../workers/task.js';
import { hashLength, type ObjectFormat } from '../hash/object-format.js';
import type { RefreshPolicy } from './refresh-policy.js';
import { Store } from './store.js';
import { PackFile } from '../pack/pack-file.js';
import { PackIndex, type PackOrder } from '../idx/pack-index.js';
import { scanInfoChunks, type PackInfoTable } from '../pack/pack-info-table.js';

/** Which store a worker opens (its own, on the same files): serialisable options only. */
export interface StoreKey {
  objectsDir: string;
  format: ObjectFormat;
  refresh: RefreshPolicy;
  multiPackIndex: boolean;
  deltaBaseCacheLimit: number;
  /** The worker store's share of the pack windows (see OpenStoreOptions.windowBudget). */
  windowBudget: number;
  /** OpenStoreOptions.alternates. */
  alternates: readonly string[];
}

export interface IdsRequest {
  store: StoreKey;
  /** Ids back to back, H bytes each. */
  ids: Uint8Array;
}

/**
 * Objects read by a worker, in request order: for each, its type (0 when missing) and the end
 * of its bytes in `data` (the previous end is its start).
 */
export interface ObjectsItem {
  first: number;
  types: Uint8Array;
  ends: Float64Array;
  data: Uint8Array;
}

/** Types and sizes of many objects, in the order asked (type 0: not found). */
export interface HeadersReply {
  /** 0 when the object is missing. */
  types: Uint8Array;
  sizes: Float64Array;
}

/** Chunks of a pack's info table, claimed and scanned into arrays the threads share (see scanInfoChunks). */
export interface InfoRangeRequest {
  packPath: string;
  idxPath: string;
  hashLength: number;
  /** The shared counter of claimed chunks (see scanInfoChunks). */
  next: Int32Array;
  /** Entries a claim covers. */
  chunk: number;
  table: Omit<PackInfoTable, 'bigSizes'> & { sizeKnown: Uint8Array };
  /** The index's pack order, in shared memory: the worker does not sort it again. */
  order: PackOrder;
}

/** A worker sends what it has read once it holds this many bytes (and at the end). */
const ITEM_BYTES = 4 << 20;

const stores = new Map<string, Store>();

/**
 * A worker's own store for `key`, opened on first use and kept for later requests (other worker
 * scripts that read objects, such as pack generation's, use it too).
 */
export function storeForKey(key: StoreKey): Store {
  const name = JSON.stringify(key);
  let store = stores.get(name);
  if (store === undefined) {
    store = Store.open(key.objectsDir, { objectFormat: key.format, refresh: key.refresh, multiPackIndex: key.multiPackIndex, deltaBaseCacheLimit: key.deltaBaseCacheLimit, windowBudget: key.windowBudget, maxMemory: Infinity, alternates: key.alternates });
    stores.set(name, store);
  }
  return store;
}

/**
 * The tasks of the store's worker threads (odb/store-worker.ts): reading objects and their
 * headers for `Store.readMany`/`headerMany`, so inflating and applying deltas happens off the
 * caller's thread. Each worker has its own store on the same files, with its own caches.
 */
export const storeTasks = {
  read: {
    run(request: IdsRequest, emit): number {
      const handle = storeForKey(request.store).objects;
      const H = hashLength(request.store.format);
      const n = request.ids.length / H;
      let first = 0;
      let parts: Buffer[] = [];
      let bytes = 0;
      let types = new Uint8Array(0);
      let ends = new Float64Array(0);
      const flush = (end: number): void => {
        const data = Buffer.concat(parts, bytes);
        const item: ObjectsItem = { first, types: types.subarray(0, end - first), ends: ends.subarray(0, end - first), data };
        emit(item, [data.buffer as ArrayBuffer, types.buffer as ArrayBuffer, ends.buffer as ArrayBuffer]);
        first = end;
        parts = [];
        bytes = 0;
      };
      for (let i = 0; i < n; i++) {
        if (types.length === 0) {
          types = new Uint8Array(n - first);
          ends = new Float64Array(n - first);
        }
        const id = request.ids.subarray(i * H, i * H + H);
        const location = handle.locate(id);
        if (location !== undefined) {
          const obj = handle.readAt(location);
          types[i - first] = typeNumber(obj.type);
          parts.push(obj.data);
          bytes += obj.data.length;
        }
        ends[i - first] = bytes;
        if (bytes >= ITEM_BYTES) {
          flush(i + 1);
          types = new Uint8Array(0);
        }
      }
      if (first < n) flush(n);
      return n;
    },
  } satisfies Task<IdsRequest, number, ObjectsItem>,
  'info-range': {
    run(request: InfoRangeRequest): [number, number][] {
      const index = PackIndex.open(request.idxPath, request.hashLength);
      index.usePackOrder(request.order);
      let pack: PackFile | undefined;
      try {
        pack = PackFile.open(request.packPath, { hashLength: request.hashLength });
        const table = { ...request.table, bigSizes: new Map<number, number>() };
        scanInfoChunks(pack, index, table, request.next, request.chunk);
        // Sizes of 4 GiB and more are not in the shared arrays: they come back in the reply.
        return [...table.bigSizes];
      } finally {
        pack?.close();
        index.close();
      }
    },
  } satisfies Task<InfoRangeRequest, [number, number][]>,
  headers: {
    run(request: IdsRequest): HeadersReply {
      const handle = storeForKey(request.store).objects;
      const H = hashLength(request.store.format);
      const n = request.ids.length / H;
      const types = new Uint8Array(n);
      const sizes = new Float64Array(n);
      const info: ObjectInfo = { type: 'blob', size: 0, diskSize: -1, deltaBase: undefined };
      for (let i = 0; i < n; i++) {
        const location = handle.locate(request.ids.subarray(i * H, i * H + H));
        if (location === undefined) continue;
        handle.infoAt(location, {}, info);
        types[i] = typeNumber(info.type);
        sizes[i] = info.size;
      }
      return { types, sizes };
    },
  } satisfies Task<IdsRequest, HeadersReply>,
};

export type StoreTasks = typeof storeTasks;
