import type { Task } from '../workers/task.js';
import { storeForKey, type StoreKey } from '../odb/store-tasks.js';
import { walkTasks } from '../walk/walk-tasks.js';
import { searchSegment, type DeltaResults, type DeltaSegment } from './delta-window.js';
import { readAnyCopy } from './write-pack.js';

export interface DeltaSegmentRequest {
  store: StoreKey;
  segment: DeltaSegment;
  /** The segment's object ids, back to back. */
  ids: Uint8Array;
  /** Set to 1 by the main thread to stop every search (abort, or a peer failed). */
  stop: Int32Array;
}

/**
 * The tasks of pack generation's worker threads (create/create-worker.ts): the walk's (warming
 * the packs, listing the trees of a run of commits for a parallel count, walk/walk-tasks.ts) and
 * the window search of one segment of delta candidates.
 */
export const createTasks = {
  ...walkTasks,
  deltas: {
    run(request: DeltaSegmentRequest): DeltaResults {
      const handle = storeForKey(request.store).objects;
      const H = request.segment.hashLength;
      const ids = request.ids;
      return searchSegment(request.segment, (i) => readAnyCopy(handle, ids.subarray(i * H, (i + 1) * H)).data, () => Atomics.load(request.stop, 0) !== 0);
    },
  } satisfies Task<DeltaSegmentRequest, DeltaResults>,
};

export type CreateTasks = typeof createTasks;
