import type { StoreHandle } from '../odb/store-handle.js';
import { OBJ_COMMIT } from '../objects/object-type.js';
import { CommitDag } from '../walk/commit-dag.js';
import { DateQueue } from '../walk/date-queue.js';

/**
 * What git's two walking negotiators (default.c and skipping.c) share: the local history as a
 * commit graph with its marks, a queue of commits newest first, and the count of queued commits
 * not known to be common (none left: nothing more worth offering).
 */
export abstract class CommitQueueNegotiator {
  protected readonly dag: CommitDag;
  /** git's rev_list: newest first, equal dates in the order queued. */
  protected readonly queue = new DateQueue();
  /** Commits queued and not known to be common (git's non_common_revs). */
  protected nonCommon = 0;

  /** `shallow`: this repository's shallow boundary, whose parents are not followed. */
  constructor(objects: StoreHandle, shallow: readonly Uint8Array[] = []) {
    this.dag = new CommitDag(objects, { grafts: shallow });
  }

  /** The commit `id` names (a tag peeled), or -1 for anything else or nothing here. */
  protected commit(id: Uint8Array): number {
    const n = this.dag.peel(this.dag.intern(id));
    return n >= 0 && this.dag.type(n) === OBJ_COMMIT ? n : -1;
  }
}
