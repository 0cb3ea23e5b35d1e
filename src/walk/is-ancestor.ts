import type { StoreHandle } from '../odb/store-handle.js';
import { CommitParents } from './commit-parents.js';
import { ObjectTable } from './object-table.js';
import { DateQueue } from './date-queue.js';

/** Marks of the search, in the flags of its own table (git's PARENT1, PARENT2, STALE). */
const FROM_ANCESTOR = 1;
const FROM_DESCENDANT = 2;
/** Below a commit both sides reach: nothing found under it can change the answer. */
const STALE = 4;

/**
 * Whether commit `ancestor` is reachable from commit `descendant` (or is it): git's
 * in_merge_bases, which a fast-forward check is (push, fetch, receive-pack's
 * denyNonFastForwards, `merge-base --is-ancestor`). As git's paint_down_to_common without a
 * commit-graph: both sides are painted down in commit-date order, newest first, and the walk
 * ends once `ancestor` is painted from `descendant` or every commit still queued lies below one
 * both sides reach. A fast-forward of a few commits so reads a few commits, where the merge bases
 * (mergeBases, linear in all of history) read the whole history: a push of 10 commits to git.git
 * spent 600 ms there.
 *
 * The answer does not depend on the order: only a commit below a common one is stale, and a
 * common one is `ancestor` or below it, so while `ancestor` is not yet painted from `descendant`
 * the path down to it is never stale. Commits the store lacks end their line (a shallow or
 * partial history).
 */
export function isAncestor(objects: StoreHandle, ancestor: Uint8Array, descendant: Uint8Array): boolean {
  if (Buffer.compare(ancestor, descendant) === 0) return true;
  const table = new ObjectTable(objects.hashLength, 256);
  const commits = new CommitParents(objects, table);
  const queue = new DateQueue();
  const target = table.intern(ancestor);
  const start = table.intern(descendant);
  table.mark(target, FROM_ANCESTOR);
  table.mark(start, FROM_DESCENDANT);
  queue.push(target, commits.time(target));
  queue.push(start, commits.time(start));
  // git's queue_has_nonstale: a look over the queue, which is the walk's frontier (a few commits wide).
  while (queue.some((n) => !table.is(n, STALE))) {
    const n = queue.pop();
    let flags = (table.flags[n] as number) & (FROM_ANCESTOR | FROM_DESCENDANT | STALE);
    if ((flags & (FROM_ANCESTOR | FROM_DESCENDANT)) === (FROM_ANCESTOR | FROM_DESCENDANT)) flags |= STALE;
    for (const p of commits.of(n)) {
      if (((table.flags[p] as number) & flags) === flags) continue;
      table.mark(p, flags);
      if (p === target && (flags & FROM_DESCENDANT) !== 0) return true;
      queue.push(p, commits.time(p));
    }
  }
  return table.is(target, FROM_DESCENDANT);
}
