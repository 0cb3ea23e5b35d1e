// git's skipping negotiator (fetch.negotiationAlgorithm=skipping, negotiator/skipping.c): the local
// history newest first, as the default one walks it, but offered sparsely: after a commit that is
// sent, its parents are skipped 1, then 2, 4, 7, 11… deep (each distance about 3/2 the last, plus
// one), so a long history unknown to the server costs few haves. A commit without a parent left to
// walk is always sent. The server's ACKs and refs make commits common, and what is below them is
// not offered.
import { OBJ_COMMIT } from '../objects/object-type.js';
import { CommitQueueNegotiator } from './commit-queue-negotiator.js';
import type { Negotiator } from './negotiator.js';

/** Both sides have it. */
const COMMON = 1;
/** The server advertised it: it is offered, but nothing below it needs to be. */
const ADVERTISED = 2;
/** It has entered the queue. */
const SEEN = 4;
/** It has left the queue. */
const POPPED = 8;
/**
 * Its parents have been read: git's `parsed`, which stops the marking of common commits (a quirk
 * kept, since it decides which haves are sent). Set when it leaves the queue, or was a tip or an
 * advertised ref (git's parse_object).
 */
const PARSED = 16;

export class SkippingNegotiator extends CommitQueueNegotiator implements Negotiator {
  /** A queued commit's skip distance when it was set (git's entry.original_ttl), and what is left of it (ttl). */
  private readonly originalTtl = new Map<number, number>();
  private readonly ttl = new Map<number, number>();

  knownCommon(id: Uint8Array): void {
    const n = this.commit(id);
    if (n < 0 || this.dag.is(n, SEEN)) return;
    this.dag.mark(n, PARSED);
    this.push(n, ADVERTISED);
  }

  addTip(id: Uint8Array): void {
    const n = this.commit(id);
    if (n < 0 || this.dag.is(n, SEEN)) return;
    this.dag.mark(n, PARSED);
    this.push(n, 0);
  }

  next(): string | undefined {
    for (;;) {
      if (this.queue.size === 0 || this.nonCommon === 0) return undefined;
      const n = this.queue.pop();
      this.dag.mark(n, POPPED);
      const common = this.dag.is(n, COMMON);
      if (!common) this.nonCommon--;
      // A parent this repository lacks (a partial or damaged history) is not offered.
      if (this.dag.type(n) !== OBJ_COMMIT) continue;
      this.dag.mark(n, PARSED);
      let send = !common && this.ttl.get(n) === 0;
      let parentPushed = false;
      for (const p of this.dag.parents(n)) if (this.pushParent(n, p)) parentPushed = true;
      // No parent left to walk (a root, or parents already popped through clock skew): sent anyway.
      if (!this.dag.is(n, COMMON) && !parentPushed) send = true;
      this.originalTtl.delete(n);
      this.ttl.delete(n);
      if (send) return this.dag.hex(n);
    }
  }

  ack(hex: string): boolean {
    const n = this.commit(Buffer.from(hex, 'hex'));
    // git dies of an ACK for a commit it never offered; a lenient reading changes nothing here.
    if (n < 0 || !this.dag.is(n, SEEN)) return false;
    const known = this.dag.is(n, COMMON);
    this.markCommon(n);
    return !known;
  }

  /**
   * Makes sure parent `p` of the popped commit `n` is queued, with `n`'s commonness or the skip
   * distance `n` hands down (the larger of those it is handed). False when `p` has left the queue
   * already (clock skew): it then counts as no parent.
   */
  private pushParent(n: number, p: number): boolean {
    if (this.dag.is(p, SEEN)) {
      if (this.dag.is(p, POPPED)) return false;
    } else {
      this.push(p, 0);
    }
    if (this.dag.is(n, COMMON | ADVERTISED)) {
      this.markCommon(p);
    } else {
      const ttl = this.ttl.get(n) ?? 0;
      const original = this.originalTtl.get(n) ?? 0;
      // git's uint16_t arithmetic: the distance grows by half, plus one, at each commit sent.
      const newOriginal = ttl !== 0 ? original : (Math.floor((original * 3) / 2) + 1) & 0xffff;
      const newTtl = ttl !== 0 ? ttl - 1 : newOriginal;
      if ((this.originalTtl.get(p) ?? 0) < newOriginal) {
        this.originalTtl.set(p, newOriginal);
        this.ttl.set(p, newTtl);
      }
    }
    return true;
  }

  /**
   * git's mark_common: `start` and the queued commits below it are common. As git's, the walk
   * (last in, first out) stops at the first commit already common, and after marking one whose
   * parents have not been read.
   */
  private markCommon(start: number): void {
    const stack = [start];
    while (stack.length > 0) {
      const c = stack.pop() as number;
      if (this.dag.is(c, COMMON)) return;
      this.dag.mark(c, COMMON);
      if (!this.dag.is(c, POPPED)) this.nonCommon--;
      if (!this.dag.is(c, PARSED) || this.dag.type(c) !== OBJ_COMMIT) return;
      for (const p of this.dag.parents(c)) if (this.dag.is(p, SEEN)) stack.push(p);
    }
  }

  private push(n: number, mark: number): void {
    this.dag.mark(n, mark | SEEN);
    if ((mark & COMMON) === 0) this.nonCommon++;
    this.originalTtl.set(n, 0);
    this.ttl.set(n, 0);
    this.queue.push(n, this.dag.type(n) === OBJ_COMMIT ? this.dag.date(n) : 0);
  }
}
