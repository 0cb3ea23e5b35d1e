import { PackwrightError } from '../errors/packwright-error.js';
import { toHex } from '../hash/hex.js';
import { parseCommit, parseTag } from '../objects/commit.js';
import { OBJ_BLOB, OBJ_COMMIT, OBJ_TAG, OBJ_TREE, typeName, typeNumber } from '../objects/object-type.js';
import { TreeCursor } from '../objects/tree.js';
import type { StoreHandle } from '../odb/store-handle.js';
import type { RevTip } from './rev-args.js';
import { Flag, ObjectTable } from './object-table.js';
import { ObjectReader } from './object-reader.js';
import { ParsedCommits, TREE_IN_GRAPH } from './parsed-commits.js';
import type { Pathspec } from '../objects/pathspec.js';
import type { CommitGraphChain } from '../commit-graph/commit-graph-chain.js';
import { changedWithin, TreeCache } from './pathspec-diff.js';
import { promisorObjects } from './promisor-objects.js';
import { DateQueue } from './date-queue.js';

/** What the walk does with objects it cannot find. */
export type MissingAction = 'error' | 'allow-any' | 'allow-promisor' | 'print';

/** An object waiting to be listed after the commits: a tag, a tree or blob tip, or a commit's tree. */
interface Pending {
  n: number;
  name: string;
}

/** Extra rounds the walk goes on after only excluded commits are queued (git's SLOP): clock skew. */
const SLOP = 5;

/**
 * The commit half of `git rev-list`: from the tips, the commits reachable from the included ones
 * and not from the excluded ones, in git's default order (newest committer date first, ties in the
 * order met), with git's rules for where to stop (revision.c, limit_list and still_interesting).
 * Then, as git's mark_edges_uninteresting does, the trees of the excluded commits at the boundary
 * are marked uninteresting with everything they reach, so that listing leaves them out and a thin
 * pack can delta against them.
 *
 * Everything is numbered in one `ObjectTable`, shared with the tree walk that follows.
 */
export class RevWalk extends ObjectReader {
  /** Included commits in output order. */
  readonly commits: number[] = [];
  /** Tags and tree or blob tips to list before the commits' trees (git's pending list). */
  readonly pending: Pending[] = [];
  /** Excluded commits whose trees were marked (thin-pack bases: git's edges). */
  readonly edges: number[] = [];
  /** Missing objects met (for `--missing=print`). */
  readonly missing: number[] = [];
  private readonly parsedCommits = new ParsedCommits();
  private readonly initial: number[] = [];
  /** Commits that change nothing the pathspec names (git's TREESAME): walked, not listed. */
  private readonly treesame = new Set<number>();
  /** Excluded commits given as tips (git's BOTTOM): still relevant parents when simplifying. */
  private readonly bottoms = new Set<number>();
  /** The trees simplification compared last (see TreeCache). */
  private readonly trees = new TreeCache();
  private limited = false;
  /** The commit-graph commits are read from, and the table's number for each position met (-1: not yet). */
  private readonly graph: CommitGraphChain | undefined;
  private graphNumbers = new Int32Array(0);
  private readonly cursor: TreeCursor;
  private readonly shallow: ObjectTable;

  constructor(
    objects: StoreHandle,
    readonly options: {
      /** List tag objects met at the tips (rev-list --objects does). */
      tagObjects?: boolean;
      /** Commits whose parents the walk must not follow (a shallow repository's boundary). */
      shallow?: readonly Uint8Array[];
      /**
       * Keep only the first this many included commits of the output order (git's --max-count;
       * negative: no limit). Only their trees are listed; excluded commits still mark edges.
       */
      maxCount?: number | undefined;
      /** Follow only the first parent of included commits (git's --first-parent; excluded ones still exclude all their parents). */
      firstParent?: boolean | undefined;
      /** Leave out the first this many commits of the output order, before `maxCount` counts (git's --skip). */
      skip?: number | undefined;
      /**
       * List only commits with at least `minParents` and, unless negative, at most `maxParents`
       * parents (git's --min-parents, --max-parents; --merges is 2 and more, --no-merges 1 at most).
       * The others are walked through, not listed.
       */
      minParents?: number | undefined;
      maxParents?: number | undefined;
      /**
       * git's --since (max_age, seconds): a commit older than this is not listed, nor, in a walk
       * without excluded tips, are its parents walked; with them, it is excluded (and its
       * history with it), as git's limit_list does.
       */
      maxAge?: number | undefined;
      /** git's --until (min_age, seconds): commits newer than this are walked through but not listed. */
      minAge?: number | undefined;
      /** Keep only the commit halfway between the included and excluded ones (git's --bisect: `bisect`). */
      bisect?: boolean | undefined;
      /**
       * Limit the history to these paths (git's `-- <paths>`): a commit is listed only if it
       * changes what they name, and a merge that leaves them as one parent had them is followed
       * down that parent only (git's default history simplification, try_to_simplify_commit).
       */
      paths?: Pathspec | undefined;
      /**
       * git's --exclude-promisor-objects: the objects of promisor packs are not walked (the caller
       * marks them, markPromisorPacks), and an object missing here that they name is no error.
       */
      excludePromisor?: boolean | undefined;
      /**
       * Read commits from the store's commit-graph where it has them (default true): no commit
       * is inflated then, but nothing tells whether one came from a promisor pack (see
       * `lastFromPromisor`), which `--missing=allow-promisor` needs.
       */
      commitGraph?: boolean | undefined;
      /**
       * Mark the excluded side's trees as git's sparse algorithm does (pack.useSparse, on by
       * default in git's pack-objects): only down paths where an included tree differs, so an
       * excluded tree met again elsewhere (a copied directory) may still be sent.
       */
      sparse?: boolean | undefined;
      /**
       * Also give the tree of every excluded commit named as a tip to the excluded side, as an
       * edge (git's --objects-edge-aggressive, which pack-objects --thin --shallow uses): a
       * shallow client's haves may share no history within the boundary, yet it has their trees.
       */
      aggressiveEdges?: boolean | undefined;
    } = {},
  ) {
    super(objects, new ObjectTable(objects.hashLength));
    this.graph = options.commitGraph === false ? undefined : objects.store.commitGraph();
    if (this.graph !== undefined) this.graphNumbers = new Int32Array(this.graph.count).fill(-1);
    this.cursor = new TreeCursor(objects.hashLength);
    this.shallow = new ObjectTable(objects.hashLength, 16);
    for (const id of options.shallow ?? []) this.shallow.intern(id);
  }

  /** Adds tips, as `handle_revision_arg` does: tags are peeled, excluded commits mark their ancestry. */
  addTips(tips: readonly RevTip[]): void {
    const t = this.table;
    for (const tip of tips) {
      let n = t.intern(tip.id);
      const flags = tip.uninteresting ? Flag.UNINTERESTING : 0;
      t.mark(n, flags);
      // A tree or blob tip is listed under its path (git's object context): '' but for <rev>:<path>.
      let name = tip.path ?? '';
      if (tip.blob === true) {
        // An index entry: a blob by its mode; a missing one is met when the listing looks for it.
        if (t.types[n] === 0) t.types[n] = OBJ_BLOB;
        if (!flags) this.pending.push({ n, name });
        continue;
      }
      for (let depth = 0; ; depth++) {
        const obj = this.readTip(n);
        if (obj === undefined) {
          // An excluded tip that is not here is no loss (git: handle_commit returns NULL), nor one
          // the promisor remote has, with --exclude-promisor-objects (get_reference).
          if (flags || this.isPromisorObject(n)) break;
          throw notFoundError(t, n, 'object');
        }
        if (obj.type === OBJ_TAG) {
          const tag = parseTag(obj.data, this.hashLength, () => toHex(t.id(n)));
          if (this.options.tagObjects && !flags) this.pending.push({ n, name: tag.name });
          n = t.intern(tag.object);
          if (t.types[n] === 0) t.types[n] = typeNumber(tag.type);
          t.mark(n, flags);
          name = '';
          if (depth > 64) throw new PackwrightError('OBJECT_CORRUPT', `tag chain at ${tip.name} is too deep`);
          continue;
        }
        if (obj.type === OBJ_COMMIT) {
          if (!this.parsedCommits.has(n)) this.parsed(n, obj.data);
          if (flags) {
            this.markParentsUninteresting(n);
            this.limited = true;
            this.bottoms.add(n);
          }
          if (!t.is(n, Flag.SEEN)) {
            t.mark(n, Flag.SEEN);
            this.initial.push(n);
          }
        } else if (obj.type === OBJ_TREE) {
          if (flags) this.markTreeUninteresting(n);
          else this.pending.push({ n, name });
        } else if (!flags) {
          this.pending.push({ n, name });
        }
        break;
      }
    }
  }

  /** Walks the commits (see the class comment); fills `commits` and `edges`. */
  walk(): void {
    const t = this.table;
    const queue = new DateQueue();
    // git sorts the tips by date, stably, before the walk.
    const tips = this.initial.map((n, i) => ({ n, i, time: this.parsedCommits.time(n) }));
    tips.sort((a, b) => b.time - a.time || a.i - b.i);
    let interesting = 0;
    const push = (n: number): void => {
      t.mark(n, Flag.QUEUED);
      if (!t.is(n, Flag.UNINTERESTING)) interesting++;
      queue.push(n, this.parsedCommits.time(n));
    };
    this.onUninteresting = (n) => {
      if (t.is(n, Flag.QUEUED)) interesting--;
    };
    for (const tip of tips) push(tip.n);
    const listed: number[] = [];
    let slop = SLOP;
    let date = Infinity;
    const { maxAge, minAge } = this.options;
    const skip = Math.max(0, this.options.skip ?? 0);
    const stopAt = !this.limited && this.options.bisect !== true && (this.options.maxCount ?? -1) >= 0 ? (this.options.maxCount as number) + skip : -1;
    const minParents = this.options.minParents ?? 0;
    const maxParents = this.options.maxParents ?? -1;
    const parentsCounted = minParents > 0 || maxParents >= 0;
    let shown = 0;
    while (queue.size > 0) {
      const n = queue.pop();
      t.unmark(n, Flag.QUEUED);
      if (!t.is(n, Flag.UNINTERESTING)) interesting--;
      if (maxAge !== undefined && this.parsedCommits.time(n) < maxAge && !t.is(n, Flag.UNINTERESTING)) {
        // git: get_revision_1 skips it and its parents; limit_list excludes it.
        if (!this.limited) continue;
        t.mark(n, Flag.UNINTERESTING);
      }
      this.processParents(n, push);
      if (t.is(n, Flag.UNINTERESTING)) {
        this.markParentsUninteresting(n);
        if (!this.limited) continue;
        // still_interesting: go on while a queued commit is newer than the last listed one or
        // any queued commit is included; then SLOP more rounds.
        if (queue.size === 0) break;
        if (date <= queue.peekTime() || interesting > 0) slop = SLOP;
        else if (--slop === 0) break;
        continue;
      }
      if (minAge !== undefined && this.parsedCommits.time(n) > minAge) continue;
      date = this.parsedCommits.time(n);
      // git's get_commit_action: a commit with too few or too many parents is walked, not shown.
      if (parentsCounted) {
        const count = this.parentsOf(n).length;
        if (count < minParents || (maxParents >= 0 && count > maxParents)) continue;
      }
      listed.push(n);
      // Without excluded tips nothing later can drop a commit listed now: stop at --max-count,
      // as git's get_revision does (log -n 1000 on a long history walks 1000 commits, not all).
      if (stopAt >= 0 && !this.treesame.has(n) && ++shown >= stopAt) break;
    }
    this.onUninteresting = undefined;
    let included = listed.filter((n) => !t.is(n, Flag.UNINTERESTING) && !this.treesame.has(n));
    if (this.options.bisect === true) {
      const best = bisect(included, (n) => this.parentsOf(n), (n) => t.is(n, Flag.UNINTERESTING), this.options.firstParent === true);
      included = best === undefined ? [] : [best];
    }
    const max = this.options.maxCount ?? -1;
    this.commits.push(...(max >= 0 ? included.slice(skip, skip + max) : included.slice(skip)));
    if (this.limited) this.markEdges(listed);
    if (this.options.aggressiveEdges === true) {
      for (const n of this.initial) {
        if (!t.is(n, Flag.UNINTERESTING) || !this.parsedCommits.has(n)) continue;
        this.markTreeUninteresting(this.treeOf(n));
        if (!t.is(n, Flag.EDGE)) {
          t.mark(n, Flag.EDGE);
          this.edges.push(n);
        }
      }
    }
  }

  /** The commits named as tips, or that tags named as tips peel to (git's USER_GIVEN commits; the excluded ones too). */
  get givenCommits(): readonly number[] {
    return this.initial;
  }

  /** The tree of a parsed commit. */
  treeOf(n: number): number {
    const tree = this.parsedCommits.tree(n);
    if (tree !== TREE_IN_GRAPH) return tree;
    // Numbered on first use: a walk of commits alone never asks, and saves an intern a commit.
    const g = this.graph as CommitGraphChain;
    const layer = g.layerOf(this.parsedCommits.graphPosition(n));
    const t = this.table;
    const number = t.intern(layer.data, layer.treeOffset(this.parsedCommits.graphPosition(n) - layer.baseCount));
    if (t.types[number] === 0) t.types[number] = OBJ_TREE;
    this.parsedCommits.setTree(n, number);
    return number;
  }

  /** The parents of a parsed commit (none for a shallow boundary commit). */
  parentsOf(n: number): Int32Array {
    return this.parsedCommits.parents(n) ?? EMPTY;
  }

  /**
   * Asked of each commit as it leaves the queue: false stops the walk there, its parents not
   * queued (git's include_check; the bitmap walk stops at commits a bitmap covers).
   */
  include: ((n: number) => boolean) | undefined;

  private onUninteresting: ((n: number) => void) | undefined;

  private setUninteresting(n: number): void {
    this.onUninteresting?.(n);
    this.table.mark(n, Flag.UNINTERESTING);
  }

  /** git's process_parents: queue a commit's parents, passing on its exclusion. */
  private processParents(n: number, push: (n: number) => void): void {
    if (this.include !== undefined && !this.include(n)) return;
    const t = this.table;
    const excluded = (t.flags[n] as number) & Flag.UNINTERESTING;
    if (!excluded && this.options.paths !== undefined) this.simplify(n, this.options.paths);
    for (const p of this.parentsOf(n)) {
      if (excluded && !t.is(p, Flag.UNINTERESTING)) this.setUninteresting(p);
      if (!this.parseCommit(p)) {
        if (excluded || this.isPromisorObject(p)) continue;
        throw notFoundError(t, p, 'commit');
      }
      if (excluded) this.markParentsUninteresting(p);
      if (!t.is(p, Flag.SEEN)) {
        t.mark(p, Flag.SEEN);
        push(p);
      }
      if (!excluded && this.options.firstParent === true) break;
    }
  }

  /**
   * git's try_to_simplify_commit for an included commit: TREESAME when it changes nothing `paths`
   * names (a root commit: when they name nothing in it). A merge TREESAME to a relevant parent
   * (included, or an excluded tip) keeps only that parent; a merge counts as changed only against
   * its relevant parents when it has any.
   */
  private simplify(n: number, paths: Pathspec): void {
    const t = this.table;
    const parents = this.parentsOf(n);
    const tree = this.treeOf(n);
    if (parents.length === 0) {
      if (!changedWithin(this, paths, -1, tree, this.trees)) this.treesame.add(n);
      return;
    }
    let relevantParents = 0;
    let relevantChange = false;
    let irrelevantChange = false;
    for (let i = 0; i < parents.length; i++) {
      const p = parents[i] as number;
      const relevant = !t.is(p, Flag.UNINTERESTING) || this.bottoms.has(p);
      if (relevant) relevantParents++;
      // With --first-parent only the first parent is compared (git: a side branch that brought
      // the paths' content must not derail the walk).
      if (i === 1 && this.options.firstParent === true) break;
      if (!this.parseCommit(p)) throw notFoundError(t, p, 'commit');
      if (!changedWithin(this, paths, this.treeOf(p), tree, this.trees)) {
        if (!relevant) continue;
        this.parsedCommits.setParents(n, Int32Array.of(p));
        this.treesame.add(n);
        return;
      }
      if (relevant) relevantChange = true;
      else irrelevantChange = true;
    }
    if (relevantParents > 0 ? !relevantChange : !irrelevantChange) this.treesame.add(n);
  }

  /** git's mark_parents_uninteresting: excludes the parsed ancestry of `n` (its parents onwards). */
  private markParentsUninteresting(n: number): void {
    const t = this.table;
    const stack = [n];
    while (stack.length > 0) {
      const c = stack.pop() as number;
      for (const p of this.parentsOf(c)) {
        if (t.is(p, Flag.UNINTERESTING)) continue;
        this.setUninteresting(p);
        if (this.parsedCommits.has(p)) stack.push(p);
      }
    }
  }

  /** git's mark_edges_uninteresting (not sparse): the trees an excluded boundary commit holds. */
  private markEdges(listed: readonly number[]): void {
    if (this.options.sparse === true) {
      this.markEdgesSparse(listed);
      return;
    }
    const t = this.table;
    for (const n of listed) {
      if (t.is(n, Flag.UNINTERESTING)) {
        this.markTreeUninteresting(this.treeOf(n));
        continue;
      }
      for (const p of this.parentsOf(n)) {
        if (!t.is(p, Flag.UNINTERESTING) || !this.parsedCommits.has(p)) continue;
        this.markTreeUninteresting(this.treeOf(p));
        if (!t.is(p, Flag.EDGE)) {
          t.mark(p, Flag.EDGE);
          this.edges.push(p);
        }
      }
    }
  }

  /**
   * git's mark_edges_uninteresting with `sparse`: every listed commit's tree and its parents'
   * trees (an excluded commit's marked excluded, an excluded parent an edge), then
   * markTreesUninterestingSparse over them.
   */
  private markEdgesSparse(listed: readonly number[]): void {
    const t = this.table;
    const trees: number[] = [];
    const inSet = new Set<number>();
    const add = (tree: number): void => {
      if (inSet.has(tree)) return;
      inSet.add(tree);
      trees.push(tree);
    };
    for (const n of listed) {
      const tree = this.treeOf(n);
      if (t.is(n, Flag.UNINTERESTING)) t.mark(tree, Flag.UNINTERESTING);
      add(tree);
      for (const p of this.parentsOf(n)) {
        if (!this.parsedCommits.has(p)) continue;
        const parentTree = this.treeOf(p);
        add(parentTree);
        if (!t.is(p, Flag.UNINTERESTING)) continue;
        t.mark(parentTree, Flag.UNINTERESTING);
        if (!t.is(p, Flag.EDGE)) {
          t.mark(p, Flag.EDGE);
          this.edges.push(p);
        }
      }
    }
    this.markTreesUninterestingSparse(trees);
  }

  /**
   * git's mark_trees_uninteresting_sparse: when `trees` holds both excluded and included trees,
   * the children of the excluded ones are marked excluded, and the same is done for each path's
   * subtrees (grouped by name across all the trees); a path only included trees reach is not
   * entered. Missing trees are passed over.
   */
  private markTreesUninterestingSparse(trees: readonly number[]): void {
    const t = this.table;
    const stack: (readonly number[])[] = [trees];
    const cursor = this.cursor;
    while (stack.length > 0) {
      const set = stack.pop() as readonly number[];
      let excluded = false;
      let included = false;
      for (const n of set) {
        if (t.is(n, Flag.UNINTERESTING)) excluded = true;
        else included = true;
      }
      if (!excluded || !included) continue;
      const byPath = new Map<string, number[]>();
      for (const n of set) {
        const obj = this.readTyped(n, OBJ_TREE, true);
        if (obj === undefined) continue;
        const parentExcluded = t.is(n, Flag.UNINTERESTING);
        cursor.reset(obj.data, () => toHex(t.id(n)));
        while (cursor.next()) {
          const type = cursor.objectType;
          if (type === OBJ_COMMIT) continue;
          const c = t.intern(obj.data, cursor.idStart);
          if (t.types[c] === 0) t.types[c] = type;
          if (parentExcluded) t.mark(c, Flag.UNINTERESTING);
          if (type !== OBJ_TREE) continue;
          const name = obj.data.toString('latin1', cursor.nameStart, cursor.nameEnd);
          let list = byPath.get(name);
          if (list === undefined) byPath.set(name, (list = []));
          if (!list.includes(c)) list.push(c);
        }
      }
      for (const list of byPath.values()) stack.push(list);
    }
  }

  /**
   * git's mark_tree_uninteresting: the tree and everything it reaches (except submodule commits)
   * are excluded; a tree already excluded is not entered again. Missing trees are passed over.
   */
  markTreeUninteresting(root: number): void {
    const t = this.table;
    if (t.is(root, Flag.UNINTERESTING)) return;
    t.mark(root, Flag.UNINTERESTING);
    t.types[root] = OBJ_TREE;
    const stack = [root];
    const cursor = this.cursor;
    while (stack.length > 0) {
      const n = stack.pop() as number;
      const obj = this.readTyped(n, OBJ_TREE, true);
      if (obj === undefined) continue;
      cursor.reset(obj.data, () => toHex(t.id(n)));
      while (cursor.next()) {
        const type = cursor.objectType;
        if (type === OBJ_COMMIT) continue;
        const c = t.intern(obj.data, cursor.idStart);
        if (t.types[c] === 0) t.types[c] = type;
        if (t.is(c, Flag.UNINTERESTING)) continue;
        t.mark(c, Flag.UNINTERESTING);
        if (type === OBJ_TREE) stack.push(c);
      }
    }
  }

  /**
   * Reads and parses commit `n` unless the walk has already (from the commit-graph when it has
   * the commit, as git's parse_commit does); false when the store lacks it.
   */
  private parseCommit(n: number): boolean {
    if (this.parsedCommits.has(n)) return true;
    if (this.fromGraph(n)) return true;
    const obj = this.readTyped(n, OBJ_COMMIT, true);
    if (obj === undefined) return false;
    this.parsed(n, obj.data);
    return true;
  }

  /**
   * Commit `n` as the commit-graph has it; false when the graph does not have it. A parent's
   * position comes with its child's entry, so only tips are looked up by id.
   */
  private fromGraph(n: number): boolean {
    const g = this.graph;
    if (g === undefined) return false;
    const t = this.table;
    const commits = this.parsedCommits;
    let pos = commits.graphPosition(n);
    if (pos === -1) {
      pos = g.find(t.id(n));
      if (pos < 0) {
        commits.setGraphPosition(n, -2);
        return false;
      }
    } else if (pos < 0) {
      return false;
    }
    const layer = g.layerOf(pos);
    const i = pos - layer.baseCount;
    t.types[n] = OBJ_COMMIT;
    commits.setGraphPosition(n, pos);
    this.graphNumbers[pos] = n;
    const tree = TREE_IN_GRAPH;
    const time = layer.date(i);
    const positions = layer.parents(i);
    if (positions.length === 0 || (this.shallow.count > 0 && this.shallow.find(t.id(n)) >= 0)) {
      commits.set(n, tree, time, undefined);
      return true;
    }
    const parents = this.scratchParents(positions.length);
    for (let k = 0; k < positions.length; k++) {
      const p = positions[k] as number;
      let pn = this.graphNumbers[p] as number;
      if (pn < 0) {
        const parentLayer = g.layerOf(p);
        pn = t.intern(parentLayer.data, parentLayer.idOffset(p - parentLayer.baseCount));
        this.graphNumbers[p] = pn;
        if (t.types[pn] === 0) t.types[pn] = OBJ_COMMIT;
        commits.setGraphPosition(pn, p);
      }
      parents[k] = pn;
    }
    commits.set(n, tree, time, parents, positions.length);
    return true;
  }

  /** Room for `k` parents while a commit is parsed: ParsedCommits copies them into its pool. */
  private parentScratch = new Int32Array(16);
  private scratchParents(k: number): Int32Array {
    if (this.parentScratch.length < k) this.parentScratch = new Int32Array(Math.max(k, 2 * this.parentScratch.length));
    return this.parentScratch;
  }

  private parsed(n: number, data: Uint8Array): void {
    const t = this.table;
    const c = parseCommit(data, this.hashLength, () => toHex(t.id(n)));
    t.types[n] = OBJ_COMMIT;
    const tree = t.intern(c.tree);
    if (t.types[tree] === 0) t.types[tree] = OBJ_TREE;
    // A commit of a promisor pack may name a tree the partial clone left out.
    if (this.lastFromPromisor) t.mark(tree, Flag.PROMISOR);
    if (c.parents.length === 0 || (this.shallow.count > 0 && this.shallow.find(t.id(n)) >= 0)) {
      this.parsedCommits.set(n, tree, c.time, undefined);
      return;
    }
    const parents = this.scratchParents(c.parents.length);
    for (let i = 0; i < c.parents.length; i++) {
      parents[i] = t.intern(c.parents[i] as Buffer);
      if (t.types[parents[i] as number] === 0) t.types[parents[i] as number] = OBJ_COMMIT;
    }
    this.parsedCommits.set(n, tree, c.time, parents, c.parents.length);
  }

  /**
   * A tip's type, and its data when the walk needs it (a tag or commit): a tip naming a blob or
   * tree is not decoded here (a tagged large blob; a corrupt one that a copy elsewhere replaces).
   */
  private readTip(n: number): { type: number; data: Buffer } | undefined {
    if (this.parsedCommits.has(n) || this.fromGraph(n)) return { type: OBJ_COMMIT, data: EMPTY_DATA };
    const location = this.objects.locate(this.table.id(n));
    // Transient reads (the store's buffer until its next read): addTips parses a tag or commit at
    // once, and a copy of each would cost an allocation per ref (8.5k refs on gitoxide).
    if (location === undefined) return this.readTyped(n, -1, true);
    const type = typeNumber(this.objects.typeAt(location));
    if (type === OBJ_TAG || type === OBJ_COMMIT) return this.readTypedAt(n, location, type, true);
    this.table.types[n] = type;
    return { type, data: EMPTY_DATA };
  }

  private promisor: ObjectTable | undefined;

  /**
   * With `excludePromisor`: whether object `n` is one the promisor remote has (git's
   * is_promisor_object), so that its absence here is no error.
   */
  isPromisorObject(n: number): boolean {
    if (this.options.excludePromisor !== true) return false;
    if (this.promisor === undefined) {
      this.promisor = new ObjectTable(this.hashLength, 1024);
      promisorObjects(this.objects, this.promisor);
    }
    return this.promisor.find(this.table.id(n)) >= 0;
  }

  /** The walk notes what the store lacks (for `--missing=print`, and to report it once). */
  protected override absent(n: number): void {
    if (this.table.is(n, Flag.MISSING)) return;
    this.table.mark(n, Flag.MISSING);
    this.missing.push(n);
  }
}

const EMPTY = new Int32Array(0);
const EMPTY_DATA = Buffer.alloc(0);

export function notFoundError(t: ObjectTable, n: number, what: string): PackwrightError {
  const type = t.types[n] ? typeName(t.types[n] as number) : what;
  return new PackwrightError('OBJECT_NOT_FOUND', `missing ${type} object '${toHex(t.id(n))}'`);
}

/**
 * git's find_bisection (bisect.c) over the included commits in output order: the commit that
 * reaches closest to half of them. Weights (how many of the commits each reaches, itself
 * included) are counted oldest first: a commit with no included parent weighs 1, a merge is counted
 * by a walk of its ancestry, a commit with one included parent weighs one more than it; the first
 * commit found exactly halfway (2w - n in -1..1) wins at once, else the one with the largest
 * min(w, n - w), the oldest first on ties. With `firstParent` only first parents count.
 */
function bisect(commits: readonly number[], parentsOf: (n: number) => Int32Array, excluded: (n: number) => boolean, firstParent: boolean): number | undefined {
  const list = [...commits].reverse();
  const nr = list.length;
  if (nr === 0) return undefined;
  const position = new Map<number, number>();
  list.forEach((n, i) => position.set(n, i));
  const weights = new Int32Array(nr);
  const weightOf = (n: number): number => {
    const i = position.get(n);
    return i === undefined ? -1 : (weights[i] as number);
  };
  const halfway = (w: number): boolean => Math.abs(2 * w - nr) <= 1;
  const parents = (n: number): Int32Array => {
    const all = parentsOf(n);
    return firstParent ? all.subarray(0, 1) : all;
  };
  let counted = 0;
  for (let i = 0; i < nr; i++) {
    let interesting = 0;
    for (const p of parents(list[i] as number)) if (!excluded(p)) interesting++;
    weights[i] = interesting === 0 ? 1 : interesting === 1 ? -1 : -2;
    if (interesting === 0) counted++;
  }
  // Merges: count what each reaches (count_distance), a fresh walk each.
  for (let i = 0; i < nr; i++) {
    if (weights[i] !== -2) continue;
    const seen = new Set<number>();
    const stack = [list[i] as number];
    while (stack.length > 0) {
      const c = stack.pop() as number;
      if (excluded(c) || seen.has(c)) continue;
      seen.add(c);
      for (const p of parentsOf(c)) stack.push(p);
    }
    weights[i] = seen.size;
    if (halfway(seen.size)) return list[i];
    counted++;
  }
  // A single strand: one more than the parent. (A pass that finds nothing new ends the loop
  // where git's would spin: an included parent that is not among the commits.)
  for (let progress = true; counted < nr && progress;) {
    progress = false;
    for (let i = 0; i < nr; i++) {
      if ((weights[i] as number) >= 0) continue;
      let known = -1;
      for (const p of parents(list[i] as number)) {
        if (excluded(p)) continue;
        const w = weightOf(p);
        if (w >= 0) {
          known = w;
          break;
        }
      }
      if (known < 0) continue;
      weights[i] = known + 1;
      counted++;
      progress = true;
      if (halfway(known + 1)) return list[i];
    }
  }
  let best = list[0] as number;
  let bestDistance = -1;
  for (let i = 0; i < nr; i++) {
    const w = weights[i] as number;
    const distance = Math.min(w, nr - w);
    if (distance > bestDistance) {
      best = list[i] as number;
      bestDistance = distance;
    }
  }
  return best;
}

