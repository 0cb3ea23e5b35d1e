// The commits a fetch offers as `have`s (git's default negotiator, fetch-negotiator/default.c):
// the local refs' history newest first by committer date; what the server acknowledges is common,
// and so is everything below it, which is then never offered.
import type { StoreHandle } from '../odb/store-handle.js';
import { CommitDag } from '../walk/commit-dag.js';
import { OBJ_COMMIT } from '../objects/object-type.js';

const SEEN = 1;
const COMMON = 2;
const COMMON_REF = 4;
const POPPED = 8;

export class HaveNegotiator {
  private readonly dag: CommitDag;
  /** A max-heap of commit numbers by date (git's rev_list priority queue). */
  private readonly heap: number[] = [];
  private readonly dates = new Map<number, number>();
  /** Commits queued and not known to be common (git's non_common_revs): none left, nothing more worth offering. */
  private nonCommon = 0;

  /** `shallow`: this repository's shallow boundary, whose parents are not followed. */
  constructor(objects: StoreHandle, shallow: readonly Uint8Array[] = []) {
    this.dag = new CommitDag(objects, { grafts: shallow });
  }

  /** A local ref's id (git's add_tip): tags are peeled; anything but a commit, or missing, is passed over. */
  addTip(id: Uint8Array): void {
    const n = this.commit(id);
    if (n >= 0 && !this.dag.is(n, SEEN)) this.push(n, SEEN);
  }

  /**
   * An id the server is known to have (a ref it advertised, that this repository has too; git's
   * known_common): offered, but nothing below it.
   */
  knownCommon(id: Uint8Array): void {
    const n = this.commit(id);
    if (n < 0 || this.dag.is(n, SEEN)) return;
    this.push(n, SEEN | COMMON_REF);
    this.markCommon(n, true);
  }

  /** The next commit to offer (hex), or undefined when nothing is left worth offering. */
  next(): string | undefined {
    for (;;) {
      if (this.heap.length === 0 || this.nonCommon === 0) return undefined;
      const n = this.pop();
      this.dag.mark(n, POPPED);
      if (!this.dag.is(n, COMMON)) this.nonCommon--;
      // A parent this repository lacks (below a shallow boundary) is not offered.
      if (this.dag.type(n) !== OBJ_COMMIT) continue;
      const parents = this.dag.parents(n);
      const common = this.dag.is(n, COMMON);
      const mark = common || this.dag.is(n, COMMON_REF) ? SEEN | COMMON : SEEN;
      for (const p of parents) {
        if (!this.dag.is(p, SEEN)) this.push(p, mark);
        if ((mark & COMMON) !== 0) this.markCommon(p, true);
      }
      if (!common) return this.dag.hex(n);
    }
  }

  /** Up to `count` commits to offer next (a round's haves): fewer when nothing more is worth offering. */
  take(count: number): string[] {
    const out: string[] = [];
    while (out.length < count) {
      const h = this.next();
      if (h === undefined) break;
      out.push(h);
    }
    return out;
  }

  /** The server acknowledged `hex`: it and everything below it are common (git's ack). Whether it was news. */
  ack(hex: string): boolean {
    const n = this.commit(Buffer.from(hex, 'hex'));
    if (n < 0 || this.dag.is(n, COMMON)) return false;
    this.markCommon(n, false);
    return true;
  }

  /** git's mark_common: `n` (unless only its ancestors) and, through what was already seen, its ancestors. */
  private markCommon(start: number, ancestorsOnly: boolean): void {
    const stack: [number, boolean][] = [[start, ancestorsOnly]];
    while (stack.length > 0) {
      const [n, onlyBelow] = stack.pop() as [number, boolean];
      if (this.dag.is(n, COMMON)) continue;
      if (!onlyBelow) this.dag.mark(n, COMMON);
      if (!this.dag.is(n, SEEN)) {
        this.push(n, SEEN | (onlyBelow ? 0 : COMMON));
        continue;
      }
      if (!onlyBelow && !this.dag.is(n, POPPED)) this.nonCommon--;
      if (this.dag.type(n) !== OBJ_COMMIT) continue;
      for (const p of this.dag.parents(n)) stack.push([p, false]);
    }
  }

  private commit(id: Uint8Array): number {
    const n = this.dag.peel(this.dag.intern(id));
    return n >= 0 && this.dag.type(n) === OBJ_COMMIT ? n : -1;
  }

  private push(n: number, mark: number): void {
    this.dag.mark(n, mark);
    if ((mark & COMMON) === 0) this.nonCommon++;
    // A parent this repository lacks is queued last, and passed over when popped.
    const date = this.dag.type(n) === OBJ_COMMIT ? this.dag.date(n) : 0;
    const heap = this.heap;
    heap.push(n);
    this.dates.set(n, date);
    let i = heap.length - 1;
    while (i > 0) {
      const up = (i - 1) >> 1;
      if ((this.dates.get(heap[up] as number) as number) >= date) break;
      heap[i] = heap[up] as number;
      i = up;
    }
    heap[i] = n;
  }

  private pop(): number {
    const heap = this.heap;
    const top = heap[0] as number;
    const last = heap.pop() as number;
    if (heap.length > 0) {
      const date = this.dates.get(last) as number;
      let i = 0;
      for (;;) {
        let child = 2 * i + 1;
        if (child >= heap.length) break;
        const right = child + 1;
        if (right < heap.length && (this.dates.get(heap[right] as number) as number) > (this.dates.get(heap[child] as number) as number)) child = right;
        if ((this.dates.get(heap[child] as number) as number) <= date) break;
        heap[i] = heap[child] as number;
        i = child;
      }
      heap[i] = last;
    }
    return top;
  }
}
