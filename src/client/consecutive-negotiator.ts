// The commits a fetch offers as `have`s by git's default negotiator ("consecutive",
// negotiator/default.c): the local refs' history newest first by committer date; what the server
// acknowledges is common, and so is everything below it, which is then never offered.
import { OBJ_COMMIT } from '../objects/object-type.js';
import { CommitQueueNegotiator } from './commit-queue-negotiator.js';
import type { Negotiator } from './negotiator.js';

const SEEN = 1;
const COMMON = 2;
const COMMON_REF = 4;
const POPPED = 8;

export class ConsecutiveNegotiator extends CommitQueueNegotiator implements Negotiator {
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
      if (this.queue.size === 0 || this.nonCommon === 0) return undefined;
      const n = this.queue.pop();
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

  private push(n: number, mark: number): void {
    this.dag.mark(n, mark);
    if ((mark & COMMON) === 0) this.nonCommon++;
    // A parent this repository lacks is queued last, and passed over when popped.
    this.queue.push(n, this.dag.type(n) === OBJ_COMMIT ? this.dag.date(n) : 0);
  }
}
