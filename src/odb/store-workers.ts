import { typeName, type ObjectType } from '../objects/object-type.js';
import { PackwrightError, throwIfAborted } from '../errors/packwright-error.js';
import { WorkerPool } from '../workers/worker-pool.js';
import type { StoredObject } from './store-pack.js';
import type { HeadersReply, ObjectsItem, StoreKey, StoreTasks } from './store-tasks.js';
import { emptyInfoTable, INFO_CHUNK, resolveInfoTypes, scanInfoChunks, type PackInfoTable } from '../pack/pack-info-table.js';
import type { PackIndex } from '../idx/pack-index.js';
import type { PackFile } from '../pack/pack-file.js';

/** A copy of a typed array in shared memory, for worker threads to read without a copy each. */
function copyShared<T extends Uint32Array | Float64Array>(a: T): T {
  const out = new (a.constructor as new (b: SharedArrayBuffer) => T)(new SharedArrayBuffer(a.byteLength));
  out.set(a);
  return out;
}

/** The worker script (store-worker.ts; in the CLI bundle, its own bundle beside it). */
const STORE_WORKER = new URL('./store-worker.js', import.meta.url);

/** Ids a worker is sent at once: enough to amortise a message, small enough to spread over threads. */
const CHUNK = 512;

/** Options of `Store.readMany` and `headerMany`: cancellation and progress. */
export interface ManyOptions {
  signal?: AbortSignal | undefined;
  /** Called after each chunk with the objects done so far and the total. */
  onProgress?: ((done: number, total: number) => void) | undefined;
}

/** One answer of `readMany`, in the order of the ids asked for. */
export type ReadManyResult =
  | { id: Buffer; found: true; type: ObjectType; data: Buffer }
  | { id: Buffer; found: false };

/** Chunk `c` of `ids`, back to back in one buffer (what a worker is sent). */
function packChunk(ids: readonly Uint8Array[], c: number, hashLength: number): Uint8Array {
  const part = ids.slice(c * CHUNK, (c + 1) * CHUNK);
  const packed = new Uint8Array(part.length * hashLength);
  part.forEach((id, k) => packed.set(id.subarray(0, hashLength), k * hashLength));
  return packed;
}

/**
 * The store's worker threads, started on first use: each runs its own store on the same files
 * (store-tasks.ts), so reading objects (inflate, delta application) and looking headers up
 * happen off the caller's thread. Work goes out in chunks of ids, a few per thread in flight,
 * to whichever thread has the fewest; answers come back in order.
 */
export class StoreWorkers {
  private readonly pool: WorkerPool<StoreTasks>;
  private readonly load: number[];

  constructor(private readonly key: StoreKey, readonly threads: number) {
    this.pool = new WorkerPool<StoreTasks>(STORE_WORKER, threads);
    this.load = new Array<number>(threads).fill(0);
  }

  private leastLoaded(): number {
    let best = 0;
    for (let i = 1; i < this.load.length; i++) if ((this.load[i] as number) < (this.load[best] as number)) best = i;
    return best;
  }

  /** Reads every id on the worker threads, yielding results in the order asked, with at most a few chunks in flight. */
  async *readMany(ids: readonly Uint8Array[], hashLength: number, options: ManyOptions = {}): AsyncGenerator<ReadManyResult> {
    const chunks = Math.ceil(ids.length / CHUNK);
    const inFlight: Promise<ObjectsItem[]>[] = [];
    let next = 0;
    const send = (c: number): Promise<ObjectsItem[]> => {
      const packed = packChunk(ids, c, hashLength);
      const items: ObjectsItem[] = [];
      const w = this.leastLoaded();
      this.load[w]!++;
      return this.pool.run(w, 'read', { store: this.key, ids: packed }, (item) => items.push(item)).then(
        () => { this.load[w]!--; return items; },
        (e: unknown) => { this.load[w]!--; throw e; },
      );
    };
    const depth = this.threads * 2;
    let done = 0;
    try {
      while (next < chunks && inFlight.length < depth) inFlight.push(send(next++));
      for (let c = 0; c < chunks; c++) {
        throwIfAborted(options.signal, 'reading on worker threads');
        const items = await (inFlight.shift() as Promise<ObjectsItem[]>);
        if (next < chunks) inFlight.push(send(next++));
        const base = c * CHUNK;
        for (const item of items) {
          const data = Buffer.from(item.data.buffer, item.data.byteOffset, item.data.byteLength);
          let start = 0;
          for (let k = 0; k < item.types.length; k++) {
            const end = item.ends[k] as number;
            const id = Buffer.from(ids[base + item.first + k] as Uint8Array);
            const type = item.types[k] as number;
            yield type === 0 ? { id, found: false } : { id, found: true, type: typeName(type), data: data.subarray(start, end) };
            start = end;
          }
        }
        done += Math.min(CHUNK, ids.length - base);
        options.onProgress?.(done, ids.length);
      }
    } finally {
      // Chunks still in flight when the caller stops: let them settle unobserved.
      for (const p of inFlight) p.catch(() => {});
    }
  }

  /** Type and size of every id (type 0: missing), looked up on all threads at once. */
  async headerMany(ids: readonly Uint8Array[], hashLength: number, options: ManyOptions = {}): Promise<HeadersReply> {
    const types = new Uint8Array(ids.length);
    const sizes = new Float64Array(ids.length);
    const chunks = Math.ceil(ids.length / CHUNK);
    let next = 0;
    let done = 0;
    const worker = async (w: number): Promise<void> => {
      for (;;) {
        throwIfAborted(options.signal, 'reading on worker threads');
        const c = next++;
        if (c >= chunks) return;
        const packed = packChunk(ids, c, hashLength);
        const reply = await this.pool.run(w, 'headers', { store: this.key, ids: packed });
        types.set(reply.types, c * CHUNK);
        sizes.set(reply.sizes, c * CHUNK);
        done += reply.types.length;
        options.onProgress?.(done, ids.length);
      }
    };
    await Promise.all(Array.from({ length: this.threads }, (_, w) => worker(w)));
    return { types, sizes };
  }

  /**
   * A pack's info table (see buildInfoTable), scanned into shared memory in chunks that this
   * thread and the workers claim as they are free (scanInfoChunks); the types are then resolved
   * here.
   */
  async infoTable(pack: PackFile, idxPath: string, index: PackIndex, chunk = INFO_CHUNK): Promise<PackInfoTable> {
    const n = index.count;
    const table = emptyInfoTable(n, (bytes) => new SharedArrayBuffer(bytes));
    const { bigSizes, ...shared } = table;
    const local = index.packOrder();
    const order = {
      offsets: copyShared(local.offsets),
      positions: copyShared(local.positions),
    };
    // This thread claims chunks too, while the workers boot and then join in (work stealing
    // through one shared counter: whoever is free takes the next chunk).
    const next = new Int32Array(new SharedArrayBuffer(4));
    const replies = Promise.all(Array.from({ length: this.threads }, (_, w) => this.pool.run(w, 'info-range', {
      packPath: pack.path, idxPath, hashLength: index.hashLength, next, chunk, table: shared, order,
    })));
    scanInfoChunks(pack, index, table, next, chunk);
    for (const r of await replies) for (const [pos, size] of r) bigSizes.set(pos, size);
    resolveInfoTypes(table, index, pack.path);
    return table;
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}

/**
 * Single reads from many concurrent callers (a server's requests), gathered for one event-loop
 * turn and sent to the workers as one chunk: `read` resolves with the object or rejects with
 * OBJECT_NOT_FOUND.
 */
export class ReadBatcher {
  private queue: { id: Uint8Array; resolve: (o: StoredObject) => void; reject: (e: unknown) => void }[] = [];
  private scheduled = false;

  constructor(private readonly workers: () => StoreWorkers, private readonly hashLength: number) {}

  read(id: Uint8Array): Promise<StoredObject> {
    return new Promise((resolve, reject) => {
      this.queue.push({ id, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => void this.flush());
      }
    });
  }

  private async flush(): Promise<void> {
    const batch = this.queue;
    this.queue = [];
    this.scheduled = false;
    try {
      let k = 0;
      for await (const r of this.workers().readMany(batch.map((b) => b.id), this.hashLength)) {
        const waiter = batch[k++] as (typeof batch)[number];
        if (r.found) waiter.resolve({ type: r.type, data: r.data });
        else waiter.reject(new PackwrightError('OBJECT_NOT_FOUND', `object ${r.id.toString('hex')} not found`));
      }
    } catch (e) {
      for (const b of batch) b.reject(e);
    }
  }
}
