import { toHex } from '../hash/hex.js';
import { OBJ_COMMIT, OBJ_TREE } from '../objects/object-type.js';
import { ALL_INTERESTING, NOT_INTERESTING, type Pathspec } from '../objects/pathspec.js';
import { baseNameCompare, TreeCursor } from '../objects/tree.js';
import type { TreeSource } from './list-objects.js';

/** One side of a comparison of two trees: a tree's entries, read into a copy of its own. */
export interface Side {
  cursor: TreeCursor;
  data: Buffer;
  more: boolean;
}

/**
 * Whether the trees `a` and `b` (object numbers; -1 for none, the empty tree) differ within
 * `spec`: an entry the pathspec wants added, removed or changed (git's rev_compare_tree, whose
 * quick diff stops at the first change). Equal subtrees are not entered; a missing tree reads as
 * empty. This is what decides a commit TREESAME to a parent in a path-limited walk.
 */
export function changedWithin(source: TreeSource, spec: Pathspec, a: number, b: number, cache?: TreeCache): boolean {
  return differ(source, spec, a, b, '', false, cache ?? new TreeCache());
}

/**
 * Trees read lately, by object number: a commit's trees are compared with its parent's, then the
 * parent's with its own parent's, so each is wanted twice in a row (rev-list HEAD -- src gix/src
 * on gitoxide reads half as many trees).
 */
export class TreeCache {
  private readonly trees = new Map<number, Buffer>();

  constructor(private readonly capacity = 256) {}

  get(source: TreeSource, n: number): Buffer {
    let data = this.trees.get(n);
    if (data !== undefined) return data;
    const obj = source.readTyped(n, OBJ_TREE, true);
    // The read is transient: the comparison goes on reading subtrees while this one is walked.
    if (obj === undefined) data = EMPTY;
    else {
      data = Buffer.allocUnsafe(obj.data.length);
      obj.data.copy(data);
    }
    if (this.trees.size >= this.capacity) this.trees.delete(this.trees.keys().next().value as number);
    this.trees.set(n, data);
    return data;
  }
}

const EMPTY = Buffer.alloc(0);

function open(source: TreeSource, n: number, cache: TreeCache): Side {
  const cursor = new TreeCursor(source.hashLength);
  const data = n < 0 ? EMPTY : cache.get(source, n);
  cursor.reset(data, () => toHex(source.table.id(n)));
  return { cursor, data, more: cursor.next() };
}

/** git's base_name_compare of the two current entries (baseNameCompare). */
export function compareEntries(x: Side, y: Side): number {
  const cx = x.cursor;
  const cy = y.cursor;
  return baseNameCompare(x.data, cx.nameStart, cx.nameEnd, cx.objectType === OBJ_TREE, y.data, cy.nameStart, cy.nameEnd, cy.objectType === OBJ_TREE);
}

/** Whether the two current entries have the same mode and id. */
export function sameEntry(x: Side, y: Side, H: number): boolean {
  if (x.cursor.mode !== y.cursor.mode) return false;
  // By hand: Buffer.compare with ranges costs a native call and its checks for 20 bytes.
  const a = x.data;
  const b = y.data;
  const i = x.cursor.idStart;
  const j = y.cursor.idStart;
  for (let k = 0; k < H; k++) if (a[i + k] !== b[j + k]) return false;
  return true;
}

function differ(source: TreeSource, spec: Pathspec, a: number, b: number, base: string, all: boolean, cache: TreeCache): boolean {
  const x = open(source, a, cache);
  const y = open(source, b, cache);
  const H = source.hashLength;
  const table = source.table;
  const name = (s: Side): string => s.data.toString('utf8', s.cursor.nameStart, s.cursor.nameEnd);
  // Whether the entry at the cursor of `s` is one the pathspec wants (and, for a tree, all of it);
  // the comparison is recursive, as git's pruning diff is.
  const interest = (s: Side): number => (all ? ALL_INTERESTING : spec.interest(base, name(s), s.cursor.objectType === OBJ_TREE, s.cursor.objectType === OBJ_COMMIT, true));
  while (x.more || y.more) {
    const c = !x.more ? 1 : !y.more ? -1 : compareEntries(x, y);
    if (c !== 0) {
      // Only on one side: added or removed, if wanted (a tree counts when anything under it is).
      const s = c < 0 ? x : y;
      const i = interest(s);
      if (i !== NOT_INTERESTING) {
        if (i === ALL_INTERESTING || s.cursor.objectType !== OBJ_TREE) return true;
        const n = table.intern(s.data, s.cursor.idStart);
        if (c < 0 ? differ(source, spec, n, -1, `${base}${name(s)}/`, false, cache) : differ(source, spec, -1, n, `${base}${name(s)}/`, false, cache)) return true;
      }
      s.more = s.cursor.next();
      continue;
    }
    if (!sameEntry(x, y, H)) {
      const i = interest(y);
      if (i !== NOT_INTERESTING) {
        const bothTrees = x.cursor.objectType === OBJ_TREE && y.cursor.objectType === OBJ_TREE;
        if (!bothTrees) return true;
        const nx = table.intern(x.data, x.cursor.idStart);
        const ny = table.intern(y.data, y.cursor.idStart);
        if (differ(source, spec, nx, ny, `${base}${name(y)}/`, i === ALL_INTERESTING, cache)) return true;
      }
    }
    x.more = x.cursor.next();
    y.more = y.cursor.next();
  }
  return false;
}
