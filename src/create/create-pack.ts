import { trace2Data } from '../trace2/trace2.js';
import { Z_DEFAULT_COMPRESSION } from '../zlib/node-zlib.js';
import { throwIfAborted } from '../errors/packwright-error.js';
import type { StoreHandle } from '../odb/store-handle.js';
import { type ObjectLocations } from '../walk/locate-objects.js';
import { findBitmapSets, wholePackOf } from '../walk/bitmap-walk.js';
import { planPackSteps } from './pack-plan.js';
import { drainSliced } from '../walk/sliced-steps.js';
import { WorkerPool } from '../workers/worker-pool.js';
import type { CreateTasks } from './create-tasks.js';
import { CREATE_WORKER } from './delta-search.js';
import { copyWholePack, type NewDeltas } from './write-pack.js';
import { searchDeltas } from './delta-search.js';
import type { CreatePackOptions, CreatePackResult } from './create-pack-options.js';
import { bitmapAllowed, countForPack, packReuseAllowed, type CountedObjects } from './count-for-pack.js';
import { writePackOutput } from './write-pack-files.js';

export type { CreatePackOptions, CreatePackPhase, CreatePackResult, CreatePackStats, WrittenPackFiles } from './create-pack-options.js';


/**
 * Makes a pack as `git pack-objects` does: counts the objects (a walk from tips, or a given list),
 * plans what to copy from the packs they are stored in, computes deltas for the rest, and writes
 * a version 2 pack that `git index-pack` accepts, streaming it to `sink` and/or writing it with
 * its index under `packBase`. Nothing is left half-written: file output goes through temporary
 * files, and an error or abort removes them.
 * @param options What to pack (tips and exclusions, or ids), reuse and delta settings, threads, output (`sink`, `packBase`), progress and an AbortSignal.
 * @returns The pack's checksum, the files written and the counts.
 * @throws {PackwrightError} OBJECT_NOT_FOUND, OBJECT_CORRUPT, ABORTED; files are written through temporary names.
 * @example await createPack({ objects: repo.objects, tips: [{ id: repo.resolve('HEAD'), uninteresting: false, name: 'HEAD' }], packBase: 'out/pack' });
 */
export async function createPack(options: CreatePackOptions): Promise<CreatePackResult> {
  const threads = Math.max(1, options.threads ?? 1);
  // One pool for the whole pack, started when a phase has work for it (counting from 3 threads, a
  // delta search big enough): a repack that copies everything starts no thread.
  const pools = new LazyPool(threads);
  try {
    const result = await createPackWith(options, pools, threads);
    // git's pack-objects reports what write_pack_file wrote (t5516 reads it); nothing when
    // --non-empty found nothing to write.
    if (result.hash.length > 0) trace2Data('pack-objects', 'write_pack_file/wrote', result.stats.objects);
    return result;
  } finally {
    await pools.close();
  }
}

/** The pack's worker pool, made on first use. */
class LazyPool {
  private pool: WorkerPool<CreateTasks> | undefined;
  constructor(readonly threads: number) {}

  get(): WorkerPool<CreateTasks> {
    this.pool ??= new WorkerPool<CreateTasks>(CREATE_WORKER, this.threads);
    return this.pool;
  }

  async close(): Promise<void> {
    await this.pool?.close();
  }
}

async function createPackWith(options: CreatePackOptions, pools: LazyPool, threads: number): Promise<CreatePackResult> {
  const handle = options.objects;
  const times = { counting: 0, planning: 0, compressing: 0, writing: 0 };
  let t = performance.now();
  const lap = (): number => {
    const now = performance.now();
    const d = now - t;
    t = now;
    return d;
  };
  const progress = options.onProgress;
  // Between phases (and inside each, see there) an abort stops the work; nothing is renamed.
  const check = (): void => {
    throwIfAborted(options.signal, 'making the pack');
  };

  // Every object of a bitmapped pack and nothing else, to a sink (a clone of a repacked
  // repository): the pack goes as it is, git's whole-pack reuse, with nothing counted, planned or
  // written one by one, unless an entry fails its CRC check.
  const sink = options.sink;
  // The bitmap's sets for the tips, found once: for that and for counting (walkForPack).
  const bitmapSets = options.tips !== undefined && options.ids === undefined && options.cruft === undefined && bitmapAllowed(options)
    ? findBitmapSets(handle, options.tips, { missing: options.missing ?? 'error', ...(options.onWarning !== undefined ? { onWarning: options.onWarning } : {}), ...(options.signal !== undefined ? { signal: options.signal } : {}) })
    : undefined;
  if (sink !== undefined && bitmapSets !== undefined && options.reuseObject !== false && options.reuseDelta !== false && packReuseAllowed(options)) {
    const whole = wholePackOf(bitmapSets);
    if (whole !== undefined) {
      const objects = whole.index.count;
      progress?.('counting', objects, objects);
      times.counting = lap();
      const hash = await copyWholePack(whole, sink, options.signal, undefined, options.reuseChunks === true);
      if (hash !== undefined) {
        times.writing = lap();
        return {
          hash,
          stats: { inputObjects: objects, objects, copied: objects, copiedDeltas: 0, thinDeltas: 0, recompressed: 0, newDeltas: 0, newThinDeltas: 0, badCrc: 0, verbatim: 0, missing: 0, loosened: 0, packReused: objects, packReusedDeltas: 0, times },
          packs: [],
        };
      }
    }
  }

  // The stages, as gix-pack's count / entries / bytes: count (count-for-pack.ts), plan
  // (pack-plan.ts), new deltas (delta-search.ts), write (write-pack-files.ts).
  const counted = await countForPack(options, () => pools.get(), threads, bitmapSets);
  const { table, listed, locations, missing, inputObjects, loosened } = counted;
  const packReused = counted.packReused.objects;
  const packReusedDeltas = counted.packReused.deltas;
  // git counts (and may delta) only what it does not send by reusing the bitmapped pack as it is.
  progress?.('counting', listed.length, listed.length - packReused);
  check();
  times.counting = lap();
  if (options.nonEmpty === true && listed.length === 0) {
    return { hash: Buffer.alloc(0), packs: [], stats: { inputObjects, objects: 0, copied: 0, copiedDeltas: 0, thinDeltas: 0, recompressed: 0, newDeltas: 0, newThinDeltas: 0, badCrc: 0, verbatim: 0, missing, loosened, packReused: 0, packReusedDeltas: 0, times } };
  }

  // Planning: what stored data to copy.
  const reuseObject = options.reuseObject !== false;
  // In slices: a server plans the packs of many requests on one event loop.
  const plan = await drainSliced(planPackSteps(table, listed, locations, {
    reuseObject,
    reuseDelta: reuseObject && options.reuseDelta !== false,
    thin: options.thin === true,
    depth: options.depth ?? 50,
    receiverHas: counted.receiverHas,
    ...(counted.packReused.verbatim > 0 && counted.packReused.pack !== undefined ? { verbatim: { pack: counted.packReused.pack, count: counted.packReused.verbatim } } : {}),
  }), options.signal, 'making the pack');
  check();
  times.planning = lap();

  // Compressing: new deltas for what has none.
  const deltas: NewDeltas = new Map();
  const window = options.window ?? 10;
  if (window > 0) {
    const sentAsIs = packReused > 0 ? packReusedObjects(counted) : undefined;
    await searchDeltas({
      handle,
      table,
      locations,
      plan,
      listed,
      window,
      ...(options.windowMemory !== undefined ? { windowMemory: options.windowMemory } : {}),
      depth: options.depth ?? 50,
      reuseDelta: reuseObject && options.reuseDelta !== false,
      threads,
      ...(threads > 1 ? { pool: async () => { const pool = pools.get(); await shareWholePacks(pool, threads, handle, locations); return pool; } } : {}),
      compression: options.compression ?? Z_DEFAULT_COMPRESSION,
      bigFileThreshold: options.bigFileThreshold ?? 512 * 1024 * 1024,
      ...(options.deltaCacheSize === undefined ? {} : { deltaCacheSize: options.deltaCacheSize }),
      deltas,
      ...(sentAsIs !== undefined ? { sentAsIs } : {}),
      ...(options.signal === undefined ? {} : { signal: options.signal }),
      ...(progress === undefined ? {} : { onProgress: (done: number, total: number) => progress('compressing', done, total) }),
    });
  }
  check();
  times.compressing = lap();

  const result: CreatePackResult = {
    hash: Buffer.alloc(0),
    stats: { inputObjects, objects: listed.length, copied: 0, copiedDeltas: 0, thinDeltas: 0, recompressed: 0, newDeltas: 0, newThinDeltas: 0, badCrc: 0, verbatim: 0, missing, loosened, packReused, packReusedDeltas, times },
    packs: [],
  };
  await writePackOutput(options, counted, plan, deltas, result);
  times.writing = lap();
  return result;
}






/**
 * By object number, 1 for the objects git's pack reuse sends from the bitmapped pack as they are
 * (count-for-pack.ts, packReuse): no delta is looked for them, and git's "Counting objects" leaves
 * them out.
 */
function packReusedObjects(counted: CountedObjects): Uint8Array {
  const { table, listed, locations } = counted;
  const { pack, positions } = counted.packReused;
  const reused = new Uint8Array(table.count);
  const k = pack === undefined ? -1 : locations.packs.indexOf(pack);
  if (pack === undefined || positions === undefined || k < 0) return reused;
  const rankOf = pack.index.packRanks();
  for (const o of listed) {
    if (locations.pack[o] === k && positions.get(rankOf[locations.position[o] as number] as number)) reused[o] = 1;
  }
  return reused;
}

/**
 * Moves each pack this thread holds whole into shared memory (one copy) and hands it to the
 * workers, which would otherwise each read their own: on gitoxide (111 MB) that is 220 MB less and
 * no re-read per worker. Packs not held whole are read by the workers as they need them.
 */
async function shareWholePacks(pool: WorkerPool<CreateTasks>, threads: number, handle: StoreHandle, locations: ObjectLocations): Promise<void> {
  const shared: { path: string; bytes: SharedArrayBuffer }[] = [];
  for (const pack of locations.packs) {
    const file = pack.open().file;
    const whole = file.wholeBytes();
    if (whole === undefined) continue;
    let bytes = whole.buffer instanceof SharedArrayBuffer && whole.byteOffset === 0 && whole.byteLength === whole.buffer.byteLength ? whole.buffer : undefined;
    if (bytes === undefined) {
      bytes = new SharedArrayBuffer(whole.length);
      const copy = Buffer.from(bytes);
      whole.copy(copy);
      file.adoptWhole(copy);
    }
    shared.push({ path: pack.packPath, bytes });
  }
  await Promise.all(Array.from({ length: threads }, (_, w) => pool.run(w, 'prepare', { store: handle.store.key, shared })));
}



