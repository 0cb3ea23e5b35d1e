import type { RevTip } from '../refs/rev-args.js';
import type { StoreHandle } from '../odb/store-handle.js';
import { PackwrightError } from '../errors/packwright-error.js';
import { checkMissing, listObjects, type ListVisitor } from './list-objects.js';
import { locateObjects, type ObjectLocations } from './locate-objects.js';
import { Flag, type ObjectTable } from './object-table.js';
import { RevWalk, type MissingAction } from './rev-walk.js';

export interface WalkObjectsOptions {
  /** What to do with missing trees and blobs (default 'error'; commits must be there). */
  missing?: MissingAction;
  /** Commits whose parents are not followed (a shallow boundary: `--shallow` lines, the shallow file). */
  shallow?: readonly Uint8Array[];
  /** Give the visitor each object's path. */
  paths?: boolean;
  /** Called for each object listed, in git's order (missing objects included; see `missing`). */
  visit?: ListVisitor;
  signal?: AbortSignal;
}

export interface WalkedObjects {
  walk: RevWalk;
  table: ObjectTable;
  /** The objects to send, in git's order, without missing ones. */
  order: Int32Array;
  locations: ObjectLocations;
  /** Missing objects met (allowed by `missing`), in the order met. */
  missing: number[];
}

/**
 * The objects reachable from the included tips and not from the excluded ones, as
 * `git rev-list --objects` lists them: the commit walk, the tree walk, then one pass over the
 * pack indexes to find where each object is (which is also what tells a missing blob).
 */
export function walkObjects(handle: StoreHandle, tips: readonly RevTip[], options: WalkObjectsOptions = {}): WalkedObjects {
  const missingAction = options.missing ?? 'error';
  const walk = new RevWalk(handle, { tagObjects: true, missing: missingAction, shallow: options.shallow ?? [] });
  const signal = options.signal;
  throwIfAborted(signal);
  walk.addTips(tips);
  walk.walk();
  throwIfAborted(signal);
  const listed: number[] = [];
  const visit = options.visit;
  listObjects(
    walk,
    (n, type, path) => {
      listed.push(n);
      visit?.(n, type, path);
    },
    { paths: options.paths === true, missing: missingAction },
  );
  throwIfAborted(signal);
  const table = walk.table;
  const locations = locateObjects(handle, table);
  const missing: number[] = [...walk.missing];
  let kept = 0;
  const order = new Int32Array(listed.length);
  for (const n of listed) {
    if (table.is(n, Flag.MISSING)) {
      if (!walk.missing.includes(n)) {
        checkMissing(walk, n, missingAction, table.is(n, Flag.PROMISOR));
        missing.push(n);
      }
      continue;
    }
    order[kept++] = n;
  }
  return { walk, table, order: order.subarray(0, kept), locations, missing };
}

function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new PackwrightError('ABORTED', 'the walk was aborted');
}
