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
  /** Parents' numbers (undefined: none). */
  private parentLists: (Int32Array | undefined)[] = [];
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
    // Filled, so that the array keeps fast elements when written out of order.
    const lists = new Array<Int32Array | undefined>(size).fill(undefined);
    for (let i = 0; i < this.parentLists.length; i++) lists[i] = this.parentLists[i];
    this.parentLists = lists;
  }

  has(n: number): boolean {
    return n < this.trees.length && (this.trees[n] as number) !== -1;
  }

  set(n: number, tree: number, time: number, parents: Int32Array | undefined): void {
    this.room(n);
    this.trees[n] = tree;
    this.times[n] = time;
    this.parentLists[n] = parents;
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

  parents(n: number): Int32Array | undefined {
    return this.parentLists[n];
  }

  /** Replaces the parents (history simplification keeps one). */
  setParents(n: number, parents: Int32Array): void {
    this.room(n);
    this.parentLists[n] = parents;
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
