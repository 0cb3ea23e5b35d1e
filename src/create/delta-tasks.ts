import type { Task } from '../workers/task.js';
import { storeForKey, type StoreKey } from '../odb/store-tasks.js';
import { searchSegment, type DeltaResults, type DeltaSegment } from './delta-window.js';

export interface DeltaSegmentRequest {
  store: StoreKey;
  segment: DeltaSegment;
  /** The segment's object ids, back to back. */
  ids: Uint8Array;
  /** Set to 1 by the main thread to stop every search (abort, or a peer failed). */
  stop: Int32Array;
}

/**
 * The task of pack generation's worker threads (create/delta-worker.ts): the window search of one
 * segment, reading objects through the worker's own store on the same files.
 */
export const deltaTasks = {
  deltas: {
    run(request: DeltaSegmentRequest): DeltaResults {
      const handle = storeForKey(request.store).objects;
      const H = request.segment.hashLength;
      const ids = request.ids;
      return searchSegment(request.segment, (i) => handle.read(ids.subarray(i * H, (i + 1) * H)).data, () => Atomics.load(request.stop, 0) !== 0);
    },
  } satisfies Task<DeltaSegmentRequest, DeltaResults>,
};

export type DeltaTasks = typeof deltaTasks;
