import type { Task } from '../workers/task.js';
import { TreeLister } from './list-objects.js';
import { ObjectReader } from './object-reader.js';
import { Flag, ObjectTable } from './object-table.js';
import { storeForKey, type StoreKey } from '../odb/store-tasks.js';

export interface PrepareRequest {
  store: StoreKey;
  /** Packs the main thread holds whole in shared memory: the worker uses them instead of reading its own. */
  shared: { path: string; bytes: SharedArrayBuffer }[];
}

export interface ListRequest {
  store: StoreKey;
  /** The root trees to list, in walk order, back to back. */
  roots: Uint8Array;
  /** Trees and blobs the walk excluded (reachable from excluded commits), back to back. */
  excluded: Uint8Array;
}

/** What a worker listed: objects in its order, and the trees it could not read. */
export interface ListReply {
  ids: Uint8Array;
  types: Uint8Array;
  nameHashes: Uint32Array;
  /** Flag.PROMISOR where it applies. */
  flags: Uint8Array;
  /** Trees not in the store, and whether a promisor pack named each. */
  missing: Uint8Array;
  missingPromisor: Uint8Array;
}

/**
 * A worker's share of counting: the trees of a run of consecutive commits, listed depth first as
 * the sequential walk does, with the worker's own seen-set. Runs of commits share most of their
 * trees with their neighbours, so what two workers both list is about one snapshot; the main
 * thread drops those when it merges the runs in order (see listObjectsParallel).
 */
function listRun(request: ListRequest, emit: (item: ListReply, transfer: ArrayBuffer[]) => void): number {
  const handle = storeForKey(request.store).objects;
  const H = handle.hashLength;
  const table = new ObjectTable(H, 1 << 16);
  for (let p = 0; p < request.excluded.length; p += H) table.mark(table.intern(request.excluded, p), Flag.UNINTERESTING | Flag.SEEN);
  const order: number[] = [];
  const missing: number[] = [];
  const missingPromisor: number[] = [];
  const lister = new TreeLister(new ObjectReader(handle, table), (n) => order.push(n), false, (n, fromPromisor) => {
    missing.push(n);
    missingPromisor.push(fromPromisor ? 1 : 0);
  });
  const empty = new Uint8Array(0);
  for (let p = 0; p < request.roots.length; p += H) lister.listTree(table.intern(request.roots, p), empty);
  const ids = table.idsOf(order);
  const types = Uint8Array.from(order, (n) => table.types[n] as number);
  const nameHashes = Uint32Array.from(order, (n) => table.nameHashes[n] as number);
  const flags = Uint8Array.from(order, (n) => (table.flags[n] as number) & Flag.PROMISOR);
  const missingIds = table.idsOf(missing);
  const reply: ListReply = { ids, types, nameHashes, flags, missing: missingIds, missingPromisor: Uint8Array.from(missingPromisor) };
  emit(reply, [ids.buffer, types.buffer, nameHashes.buffer, flags.buffer, missingIds.buffer, reply.missingPromisor.buffer] as ArrayBuffer[]);
  return order.length;
}

/**
 * The walk's tasks on worker threads, each reading objects through the worker's own store on the
 * same files: warming the packs while the main thread walks the commits, and listing the trees of
 * a run of commits for a parallel count. Pack generation's worker (create/create-worker.ts) hosts
 * them beside its delta search.
 */
export const walkTasks = {
  prepare: {
    run(request: PrepareRequest): number {
      const handle = storeForKey(request.store).objects;
      const shared = new Map(request.shared.map((p) => [p.path, p.bytes]));
      let packs = 0;
      for (const pack of handle.packs()) {
        if (pack.tryIndex() === undefined || !pack.tryOpen()) continue;
        pack.index.loadAll();
        const file = pack.open().file;
        const bytes = shared.get(pack.packPath);
        if (bytes !== undefined) {
          file.adoptWhole(Buffer.from(bytes));
        } else {
          file.preferDense();
          file.view(file.dataEnd - 1, 1);
        }
        packs++;
      }
      return packs;
    },
  } satisfies Task<PrepareRequest, number>,
  list: {
    run: listRun,
  } satisfies Task<ListRequest, number, ListReply>,
};

export type WalkTasks = typeof walkTasks;
