import { PACK_HEADER_LENGTH } from '../pack/pack-header.js';
import type { WorkerPool } from '../workers/worker-pool.js';
import { PackScanner, type PackScan, type RegionScan } from './pack-scan.js';
import type { ResolveTasks } from './resolve-tasks.js';
import { CLAIM_MAIN, type RegionsRequest } from './scan-region.js';

/**
 * Pass 1 regions: about this many bytes each; at most 256 regions in a shared whole-pack buffer,
 * any number when helpers read regions into buffers of their own (which stay this small).
 */
export const REGION_BYTES = 2 << 20;
/**
 * Regions each helper may scan ahead of the main thread (scanRegionsAhead). The scans wait for the
 * main thread to adopt them, at up to 56 bytes an entry (more as their arrays grow): on 10M small
 * objects at --threads=2, a window of 8 kept ~50 MB more resident than one of 2 when pass 2
 * began, and 4 peaked at 646-665 MiB in all with pass 1 as fast as with 8 (6.3 s).
 */
export const REGIONS_AHEAD = 4;
/**
 * Regions a received pack is cut into (of REGION_BYTES each, its size being unknown): 32 GiB.
 * Past them the main thread scans alone.
 */
const STREAM_REGIONS = 16384;

/** The helpers of a parallel pass 1, started before this thread's own scan. */
export interface SplitScan {
  bounds: Float64Array;
  claims: Int32Array;
  /** RegionsRequest.front: the main thread's region. */
  front: Int32Array;
  /** The helper's scan of region i, or undefined if there is none (failed or crashed helper). */
  result(i: number): Promise<RegionScan | undefined>;
  /** Settles when every helper has finished. */
  done: Promise<void>;
  /** A pack still arriving: tells the helpers how much of it is in the file now. */
  received?: (bytes: number) => void;
}

/**
 * Starts the helpers of a parallel pass 1 over `[PACK_HEADER_LENGTH, dataEnd)` of the pack: many
 * small regions, which this thread claims as its scan reaches them and helpers claim a little
 * ahead of it (see scanRegionsAhead). `regionBytes` is the regions' size (tests make it small to
 * have many regions in a small pack).
 */
export function splitScan(pool: WorkerPool<ResolveTasks>, base: Omit<RegionsRequest, 'bounds' | 'claims' | 'front' | 'window' | 'received'>, regionBytes = REGION_BYTES): SplitScan {
  // A pack still arriving (its size unknown) is cut into regions of regionBytes from the header
  // on; a file's data into equal ones.
  const stream = base.dataEnd === Infinity;
  const span = base.dataEnd - PACK_HEADER_LENGTH;
  const regions = Math.ceil(span / regionBytes);
  const count = stream ? STREAM_REGIONS : Math.max(pool.size + 1, base.buffer !== undefined ? Math.min(256, regions) : regions);
  const bounds = new Float64Array(new SharedArrayBuffer(8 * (count + 1)));
  for (let i = 0; i <= count; i++) bounds[i] = PACK_HEADER_LENGTH + (stream ? i * regionBytes : Math.floor((span * i) / count));
  const claims = new Int32Array(new SharedArrayBuffer(4 * count));
  claims[0] = CLAIM_MAIN;
  const front = new Int32Array(new SharedArrayBuffer(4));
  const results = new Map<number, RegionScan>();
  const waiters = new Map<number, (r: RegionScan | undefined) => void>();
  let finished = false;
  const deliver = (i: number, r: RegionScan): void => {
    const w = waiters.get(i);
    if (w === undefined) results.set(i, r);
    else {
      waiters.delete(i);
      w(r);
    }
  };
  const received = stream ? new BigInt64Array(new SharedArrayBuffer(8)) : undefined;
  let receivedBefore = 0;
  const request: RegionsRequest = { ...base, bounds, claims, front, window: REGIONS_AHEAD * pool.size, ...(received !== undefined ? { received } : {}) };
  const helpers = Array.from({ length: pool.size }, (_, j) => pool.run(j, 'scan-regions', request, (m) => deliver(m.index, m.region)));
  const done = Promise.allSettled(helpers).then(() => {
    finished = true;
    for (const w of waiters.values()) w(undefined);
    waiters.clear();
  });
  return {
    bounds, claims, front, done,
    ...(received !== undefined ? {
      received(bytes: number): void {
        const before = receivedBefore;
        receivedBefore = bytes;
        Atomics.store(received, 0, BigInt(bytes));
        // Idle helpers wait on the front (scanRegionsAhead); a region becomes theirs to take only
        // when half a region more has come, so they are woken then, not at every chunk (a notify
        // costs ~14 µs: 46 ms of a clone's 3300 chunks).
        const step = regionBytes / 2;
        if (Math.floor(bytes / step) !== Math.floor(before / step)) Atomics.notify(front, 0);
      },
    } : {}),
    result(i) {
      const r = results.get(i);
      if (r !== undefined || finished) {
        results.delete(i);
        return Promise.resolve(r);
      }
      return new Promise((resolve) => waiters.set(i, resolve));
    },
  };
}

/**
 * This thread's side of a parallel pass 1: scan region by region, adopting a helper's scan of a
 * region only if it starts exactly where this scan stands (otherwise scan it here too, which also
 * reports any error in it at its real offset).
 */
export async function scanWithHelpers(scanner: PackScanner, split: SplitScan, helpWith: (declared: number) => boolean = () => true): Promise<PackScan> {
  const { bounds, claims, front } = split;
  const moveFront = (i: number): void => {
    Atomics.store(front, 0, i);
    Atomics.notify(front, 0);
  };
  try {
    await scanner.begin();
    // A received pack's count is known only now (the header was read).
    const help = helpWith(scanner.declared);
    for (let i = 1; help && i < claims.length && !scanner.complete; i++) {
      await scanner.scanUntil(bounds[i] as number);
      moveFront(i);
      if (Atomics.compareExchange(claims, i, 0, CLAIM_MAIN) === 0) continue;
      const r = await split.result(i);
      if (r !== undefined) await scanner.adopt(r);
    }
    // Helpers still waiting (a received pack's regions past its end, or no help wanted) stop.
    moveFront(claims.length);
    const scan = await scanner.finish();
    await split.done;
    return scan;
  } finally {
    // Helpers waiting for the front to move stop (this one failed, or all regions are done).
    moveFront(claims.length);
  }
}
