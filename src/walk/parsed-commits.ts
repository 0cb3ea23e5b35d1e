/**
 * What a walk knows of each commit it has parsed, by object number: root tree, committer date,
 * parents, and where the commit-graph has it. Typed arrays grown with the numbers, not maps: a
 * walk of the whole history asks these of every commit several times (a map lookup and its
 * boxed entry cost ~5× an array read, and the collector's time on 18k commits).
 */
export class ParsedCommits {
  /** Root tree's number; -1: not parsed; TREE_IN_GRAPH: parsed from the graph, the tree not numbered yet. */
  private trees = new Int32Array(0);
  private times = new Float64Array(0);
  /**
   * Every commit's parents, back to back: commit n's are `parentCount[n]` numbers from
   * `parentStart[n]`. One array, not one per commit: 25k small arrays, all alive for the walk, were
   * copied by every scavenge and then promoted, 49 of `rev-list --count --all`'s 180 ms on a deep
   * history in the collector.
   */
  private pool = new Int32Array(4096);
  private poolUsed = 0;
  private parentStart = new Int32Array(0);
  private parentCount = new Int32Array(0);
  /** Position in the commit-graph; -1: not looked up, -2: not there. */
  private graphPositions = new Int32Array(0);

  private room(n: number): void {
    if (n < this.trees.length) return;
    const size = Math.max(1024, n + 1, this.trees.length * 2);
    const trees = new Int32Array(size).fill(-1);
    trees.set(this.trees);
    this.trees = trees;
    const times = new Float64Array(size);
    times.set(this.times);
    this.times = times;
    const positions = new Int32Array(size).fill(-1);
    positions.set(this.graphPositions);
    this.graphPositions = positions;
    const starts = new Int32Array(size);
    starts.set(this.parentStart);
    this.parentStart = starts;
    const counts = new Int32Array(size);
    counts.set(this.parentCount);
    this.parentCount = counts;
  }

  has(n: number): boolean {
    return n < this.trees.length && (this.trees[n] as number) !== -1;
  }

  /** Commit `n`'s tree, date and parents (the first `count` of `parents`; none when undefined). */
  set(n: number, tree: number, time: number, parents: ArrayLike<number> | undefined, count = parents?.length ?? 0): void {
    this.room(n);
    this.trees[n] = tree;
    this.times[n] = time;
    this.setParents(n, parents, count);
  }

  /** The tree of a parsed commit (TREE_IN_GRAPH until the walk numbers it: see RevWalk.treeOf). */
  tree(n: number): number {
    return this.trees[n] as number;
  }

  setTree(n: number, tree: number): void {
    this.trees[n] = tree;
  }

  time(n: number): number {
    return this.times[n] as number;
  }

  /** Commit `n`'s parents (a view, valid for as long as the walk), or undefined for none. */
  parents(n: number): Int32Array | undefined {
    const count = this.parentCount[n] as number;
    if (count === 0) return undefined;
    const start = this.parentStart[n] as number;
    return this.pool.subarray(start, start + count);
  }

  /**
   * Sets (or, for history simplification, replaces) commit `n`'s parents: the first `count` of
   * `parents`. They are appended to the pool, so views handed out before stay as they were.
   */
  setParents(n: number, parents: ArrayLike<number> | undefined, count = parents?.length ?? 0): void {
    this.room(n);
    if (parents === undefined || count === 0) {
      this.parentCount[n] = 0;
      return;
    }
    if (this.poolUsed + count > this.pool.length) {
      const grown = new Int32Array(Math.max(this.pool.length * 2, this.poolUsed + count));
      grown.set(this.pool.subarray(0, this.poolUsed));
      this.pool = grown;
    }
    const at = this.poolUsed;
    for (let k = 0; k < count; k++) this.pool[at + k] = parents[k] as number;
    this.poolUsed = at + count;
    this.parentStart[n] = at;
    this.parentCount[n] = count;
  }

  graphPosition(n: number): number {
    return n < this.graphPositions.length ? (this.graphPositions[n] as number) : -1;
  }

  setGraphPosition(n: number, position: number): void {
    this.room(n);
    this.graphPositions[n] = position;
  }
}

/** A commit read from the commit-graph whose tree no one has asked for (a walk of commits alone never does). */
export const TREE_IN_GRAPH = -2;
