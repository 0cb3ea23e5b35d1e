import { isPackwrightError } from '../errors/packwright-error.js';
import { parseCommit } from '../objects/commit.js';
import type { StoreHandle } from '../odb/store-handle.js';
import type { ObjectTable } from './object-table.js';

/**
 * The parents (numbered in `table`) and committer date of commits, each read and parsed once, for
 * the ancestry searches (mergeBases, isAncestor). A commit the store lacks, or cannot parse, has
 * none and date 0: its line of ancestry ends there (a shallow or partial history).
 */
export class CommitParents {
  private readonly lists: (number[] | undefined)[] = [];
  private readonly times: number[] = [];

  constructor(private readonly objects: StoreHandle, private readonly table: ObjectTable) {}

  /** Commit `n`'s parents. */
  of(n: number): number[] {
    let ps = this.lists[n];
    if (ps === undefined) {
      try {
        const c = parseCommit(this.objects.read(Buffer.from(this.table.id(n))).data, this.objects.hashLength);
        this.times[n] = c.time;
        ps = c.parents.map((p) => this.table.intern(p));
      } catch (e) {
        if (!isPackwrightError(e)) throw e;
        this.times[n] = 0;
        ps = [];
      }
      this.lists[n] = ps;
    }
    return ps;
  }

  /** Commit `n`'s committer date (read with its parents). */
  time(n: number): number {
    this.of(n);
    return this.times[n] as number;
  }
}
