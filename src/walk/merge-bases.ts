import type { StoreHandle } from '../odb/store-handle.js';
import { CommitParents } from './commit-parents.js';
import { ObjectTable } from './object-table.js';

/** Marks of the merge-base search, in the flags of its own table (not the walk's `Flag` meanings). */
const FROM_A = 1;
const FROM_B = 2;
/** A proper ancestor of a common ancestor: not a merge base. */
const BELOW_COMMON = 4;

/**
 * The merge bases of two commits (git's get_merge_bases): their common ancestors that no other
 * common ancestor reaches, in the order met from `a` (depth first, last parent first). What
 * `A...B` excludes. Commits the store lacks end their line of ancestry (a shallow or partial
 * history). Linear in the commits reached: each is numbered in an ObjectTable (whose flags hold
 * the marks), parsed once, and visited at most once by each of the three passes (from `a`, from `b`, below the common ones).
 */
export function mergeBases(objects: StoreHandle, a: Uint8Array, b: Uint8Array): Buffer[] {
  const table = new ObjectTable(objects.hashLength, 1024);
  const parents = new CommitParents(objects, table);
  /** Marks every commit the starts reach (themselves too) with `flag`; returns them in depth-first order. */
  const paint = (starts: readonly number[], flag: number): number[] => {
    const order: number[] = [];
    const stack = [...starts];
    while (stack.length > 0) {
      const n = stack.pop() as number;
      if (table.is(n, flag)) continue;
      table.mark(n, flag);
      order.push(n);
      // Pushed in order, so the last parent is taken first: the order git's results come in.
      for (const p of parents.of(n)) stack.push(p);
    }
    return order;
  };
  paint([table.intern(b)], FROM_B);
  const common = paint([table.intern(a)], FROM_A).filter((n) => table.is(n, FROM_B));
  // Every proper ancestor of a common ancestor is reached by it: not a merge base.
  const below: number[] = [];
  for (const n of common) for (const p of parents.of(n)) below.push(p);
  paint(below, BELOW_COMMON);
  return common.filter((n) => !table.is(n, BELOW_COMMON)).map((n) => Buffer.from(table.id(n)));
}
