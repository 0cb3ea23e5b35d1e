import type { Task } from '../workers/task.js';
import { prefault } from '../workers/prefault.js';
import { Resolver, type ResolverStats } from './resolver.js';
import { CONTROL_ABORT, type ResolveState } from './resolve-state.js';
import { createPackVisitor, type PackVisitor } from './pack-visitor.js';
import { scanRegionsAhead, type RegionsRequest } from './scan-region.js';
import type { RegionScan } from './pack-scan.js';

/** A helper's scan of one region of pass 1 (see `scanRegionsAhead`). */
export interface RegionItem {
  index: number;
  region: RegionScan;
}

/**
 * The tasks index-pack's worker threads host (resolve/resolve-worker.ts runs them):
 * - `prefault`: touch a shared pack buffer's pages ahead of pass 1 (workers/prefault.ts);
 * - `scan-regions`: scan regions of pass 1 ahead of the main thread's scan, one item per region;
 * - `resolve`: take roots of the delta tree until none are left; reply with statistics (and what
 *   a visitor found, when the state names one).
 */
export const resolveTasks = {
  prefault: {
    /** Touches a shared buffer's pages ahead of the thread that reads it. */
    run(request: { buffer: Uint8Array; states: Int32Array }): void {
      prefault(request.buffer, request.states);
    },
  } satisfies Task<{ buffer: Uint8Array; states: Int32Array }, void>,
  'scan-regions': {
    /** Scans regions of a pack ahead of the main thread (a parallel pass 1). */
    run(request: RegionsRequest, emit): void {
      scanRegionsAhead(request, (index, r) => {
        // The tables are views of one buffer (scan-region.ts alloc).
        emit({ index, region: r }, [r.offsets.buffer as ArrayBuffer]);
      });
    },
  } satisfies Task<RegionsRequest, void, RegionItem>,
  resolve: {
    /** Resolves a share of the pack's deltas (pass 2). */
    run(state: ResolveState): ResolverStats {
      let resolver: Resolver | undefined;
      let visitor: PackVisitor | undefined;
      try {
        visitor = state.visitor !== undefined ? createPackVisitor(state.visitor, state) : undefined;
        resolver = new Resolver(state, undefined, visitor);
        resolver.run();
        if (visitor !== undefined) resolver.stats.visited = visitor.finish();
        return resolver.stats;
      } catch (e) {
        // Tell the other threads to stop too.
        Atomics.store(state.control, CONTROL_ABORT, 1);
        throw e;
      } finally {
        resolver?.close();
        visitor?.close?.();
      }
    },
  } satisfies Task<ResolveState, ResolverStats>,
};

export type ResolveTasks = typeof resolveTasks;
