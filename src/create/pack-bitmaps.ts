import { trace2Active, trace2Data } from '../trace2/trace2.js';
import { Bitset } from '../bitmap/bitset.js';
import { toHex } from '../hash/hex.js';
import { parseCommit } from '../objects/commit.js';
import { OBJ_BLOB, OBJ_COMMIT, OBJ_TAG, OBJ_TREE } from '../objects/object-type.js';
import { TreeCursor } from '../objects/tree.js';
import { compareEntry, sharedEntries, type TreeEntries } from '../walk/tree-shapes.js';
import type { StoreHandle } from '../odb/store-handle.js';
import { openBitmap } from '../walk/bitmapped-objects.js';
import type { ObjectTable } from '../walk/object-table.js';

/** The reachability bitmaps of a pack: which commits get one, and what each reaches. */
export interface PackBitmaps {
  /** Selected commits (object numbers), in the order git writes them. */
  selected: number[];
  /** What each reaches, in pack order, as `selected`. */
  sets: Bitset[];
  types: { commits: Bitset; trees: Bitset; blobs: Bitset; tags: Bitset };
}

/**
 * git's bitmap_writer_select_commits: the pack's commits newest first (by committer date, ties in
 * the order counting met them); all of them under 100; else the first 100, then one commit per
 * stretch that widens with the distance (100 commits apart up to 20,000 in, then up to 5,000),
 * a preferred tip, else a merge, preferred within its stretch.
 */
export function selectBitmapCommits(commits: readonly number[], date: (n: number) => number, isMerge: (n: number) => boolean, preferred: ReadonlySet<number> = new Set()): number[] {
  const sorted = commits.map((n, i) => ({ n, i })).sort((a, b) => date(b.n) - date(a.n) || a.i - b.i).map((x) => x.n);
  if (sorted.length < 100) return sorted;
  const chosen: number[] = [];
  for (let i = 0; ;) {
    const next = nextCommitIndex(i);
    if (i + next >= sorted.length) break;
    let pick: number;
    if (next === 0) pick = sorted[i] as number;
    else {
      pick = sorted[i + next] as number;
      for (let j = 0; j <= next; j++) {
        const c = sorted[i + j] as number;
        // A preferred tip (pack.preferBitmapTips) wins its stretch; else the last merge in it.
        if (preferred.has(c)) {
          pick = c;
          break;
        }
        if (isMerge(c)) pick = c;
      }
    }
    chosen.push(pick);
    i += next + 1;
  }
  return chosen;
}

/**
 * What git's bitmap builder (bitmap_builder_init) reports as num_maximal_commits: walking first
 * parents from the selected commits, children before parents, each commit carries the set of
 * selected commits that reach it along first parents; a selected commit is maximal, and so is one
 * where that set is more than any one child's (children with different sets meet there); the walk
 * stops at commits `reused` (those the repository's current bitmap has, as git's does). git
 * builds its bitmaps from the maximal commits; packwright builds them ancestors first instead
 * (buildPackBitmaps), so this is computed only for the trace, where git's tests look for it.
 */
export function countMaximalCommits(selected: readonly number[], firstParent: (n: number) => number | undefined, reused: (n: number) => boolean = () => false): number {
  // The commits the walk meets, and how many first-parent children each has among them.
  const children = new Map<number, number>();
  const stack = [...selected];
  for (const n of selected) children.set(n, 0);
  while (stack.length > 0) {
    const p = firstParent(stack.pop() as number);
    if (p === undefined) continue;
    const seen = children.get(p);
    children.set(p, (seen ?? 0) + 1);
    if (seen === undefined) stack.push(p);
  }
  const words = Math.ceil(selected.length / 32);
  const masks = new Map<number, Uint32Array>();
  const maximal = new Set<number>();
  selected.forEach((n, i) => {
    const mask = new Uint32Array(words);
    mask[i >>> 5] = 1 << (i & 31);
    masks.set(n, mask);
    maximal.add(n);
  });
  // a has a bit b has not (git's bitmap_is_subset, true when a is *not* within b).
  const notWithin = (a: Uint32Array, b: Uint32Array): boolean => a.some((w, k) => (w & ~(b[k] as number)) !== 0);
  const ready = [...children].filter(([, count]) => count === 0).map(([n]) => n);
  let count = 0;
  while (ready.length > 0) {
    const c = ready.pop() as number;
    const mask = masks.get(c);
    masks.delete(c);
    // A commit the old bitmap has: its bits are taken from there, and nothing is carried past it.
    const carries = mask !== undefined && !reused(c);
    if (carries && maximal.has(c)) count++;
    const p = firstParent(c);
    if (p === undefined) continue;
    if (carries) {
      const have = masks.get(p);
      if (have === undefined) {
        masks.set(p, Uint32Array.from(mask));
        maximal.delete(p);
      } else if (notWithin(mask, have)) {
        const parentHasMore = notWithin(have, mask);
        for (let k = 0; k < words; k++) have[k] = (have[k] as number) | (mask[k] as number);
        if (parentHasMore) maximal.add(p);
        else maximal.delete(p);
      }
    }
    const left = (children.get(p) as number) - 1;
    children.set(p, left);
    if (left === 0) ready.push(p);
  }
  return count;
}

/** git's next_commit_index: how many commits the stretch starting at `idx` skips. */
function nextCommitIndex(idx: number): number {
  const MIN_COMMITS = 100;
  const MAX_COMMITS = 5000;
  const MUST_REGION = 100;
  const MIN_REGION = 20000;
  if (idx <= MUST_REGION) return 0;
  if (idx <= MIN_REGION) {
    const offset = idx - MUST_REGION;
    return offset < MIN_COMMITS ? offset : MIN_COMMITS;
  }
  const next = Math.min(idx - MIN_REGION, MAX_COMMITS);
  return next > MIN_COMMITS ? next : MIN_COMMITS;
}

/**
 * The bitmaps of a pack of the objects `listed` (numbers of `table`, at pack positions
 * `packPosition`): the type sets, git's selection of commits, and for each the objects it
 * reaches, computed ancestors first so that a commit's set starts from those of the selected
 * commits it reaches (its walk stops there), and a tree already in the set is not entered.
 * Undefined when something a selected commit reaches is not in the pack (git writes no bitmap
 * then: "some objects are not being packed"). `candidates`: the commits to select among, in the
 * order met (a multi-pack bitmap's: those the refs reach); by default every commit of the pack.
 */
export function buildPackBitmaps(handle: StoreHandle, table: ObjectTable, listed: Int32Array, packPosition: Int32Array, preferredTips: readonly Uint8Array[] = [], candidates?: readonly number[]): PackBitmaps | undefined {
  const N = listed.length;
  const H = handle.hashLength;
  const types = { commits: new Bitset(N), trees: new Bitset(N), blobs: new Bitset(N), tags: new Bitset(N) };
  const inPack: number[] = [];
  for (let k = 0; k < N; k++) {
    const n = listed[k] as number;
    const pos = packPosition[n] as number;
    const type = table.types[n];
    if (type === OBJ_COMMIT) {
      types.commits.set(pos);
      inPack.push(n);
    } else if (type === OBJ_TREE) types.trees.set(pos);
    else if (type === OBJ_BLOB) types.blobs.set(pos);
    else if (type === OBJ_TAG) types.tags.set(pos);
  }
  const commits = candidates ?? inPack;
  // Each commit's tree, parents and date, from its object.
  const trees = new Map<number, number>();
  const parents = new Map<number, number[]>();
  const dates = new Map<number, number>();
  for (const n of commits) {
    const c = parseCommit(handle.read(table.id(n)).data, H, toHex(table.id(n)));
    const tree = table.find(c.tree);
    if (tree < 0 || (packPosition[tree] as number) < 0) return undefined;
    const ps: number[] = [];
    for (const p of c.parents) {
      const pn = table.find(p);
      if (pn < 0 || (packPosition[pn] as number) < 0) return undefined;
      ps.push(pn);
    }
    trees.set(n, tree);
    parents.set(n, ps);
    dates.set(n, c.time);
  }
  // A parent outside the candidates (only given ones can miss one) is as good as missing.
  for (const ps of parents.values()) if (ps.some((p) => !parents.has(p))) return undefined;
  const preferred = new Set(preferredTips.map((id) => table.find(id)).filter((n) => n >= 0));
  const selected = selectBitmapCommits(commits, (n) => dates.get(n) as number, (n) => (parents.get(n) as number[]).length > 1, preferred);
  trace2Data('pack-bitmap-write', 'num_selected_commits', selected.length);
  if (trace2Active()) {
    // git's builder stops at commits the repository's bitmap has now (it reuses those).
    const old = openBitmap(handle, () => {});
    const reused = (n: number): boolean => old?.hasCommit(table.id(n)) === true;
    trace2Data('pack-bitmap-write', 'num_maximal_commits', countMaximalCommits(selected, (n) => (parents.get(n) as number[])[0], reused));
  }
  // Ancestors first: by topological level.
  const level = new Map<number, number>();
  for (const start of selected) {
    const stack = [start];
    while (stack.length > 0) {
      const c = stack[stack.length - 1] as number;
      if (level.has(c)) {
        stack.pop();
        continue;
      }
      let ready = true;
      let max = 0;
      for (const p of parents.get(c) as number[]) {
        const l = level.get(p);
        if (l === undefined) {
          ready = false;
          stack.push(p);
        } else if (l > max) max = l;
      }
      if (!ready) continue;
      stack.pop();
      level.set(c, max + 1);
    }
  }
  const order = selected.map((n, i) => ({ n, i })).sort((a, b) => (level.get(a.n) as number) - (level.get(b.n) as number) || a.i - b.i);
  const computed = new Map<number, Bitset>();
  const cursor = new TreeCursor(H);
  const roots = new RootTrees();
  for (const { n: start } of order) {
    const bits = new Bitset(N);
    // A root listed for another set is no help here: its objects are not in this one.
    roots.forget();
    const stack = [start];
    while (stack.length > 0) {
      const c = stack.pop() as number;
      const pos = packPosition[c] as number;
      if (bits.get(pos)) continue;
      const known = c !== start ? computed.get(c) : undefined;
      if (known !== undefined) {
        bits.or(known);
        continue;
      }
      bits.set(pos);
      if (!addTree(handle, table, packPosition, cursor, trees.get(c) as number, bits, roots)) return undefined;
      for (const p of parents.get(c) as number[]) stack.push(p);
    }
    computed.set(start, bits);
  }
  return { selected, sets: selected.map((n) => computed.get(n) as Bitset), types };
}

/**
 * The last root tree listed into the set being computed, with its entries' offsets: each commit's
 * root is listed against it (commits come in walk order, a commit before its parents, whose roots
 * differ from it in a few entries). Entries it holds byte for byte are in the set already (it was
 * listed whole), so they are passed over by native comparisons of spans, with no parse and no
 * lookup: git.git's roots hold ~500 entries each, and looking every one up again, commit after
 * commit, was most of the time of writing a bitmap.
 */
class RootTrees {
  data: Buffer | undefined;
  offsets = new Int32Array(256);
  count = 0;
  /** The root being listed: its entries' offsets (swapped with the previous one's when done). */
  private next = new Int32Array(256);
  private nextCount = 0;

  /** Two buffers for roots, the previous one in `buffers[held]`: a root is copied into the other. */
  private readonly buffers = [Buffer.alloc(0), Buffer.alloc(0)];
  private held = 0;

  forget(): void {
    this.data = undefined;
  }

  /** A copy of `lent` (the root about to be listed) that stays until the root after the next. */
  hold(lent: Buffer): Buffer {
    const k = 1 - this.held;
    let buffer = this.buffers[k] as Buffer;
    if (buffer.length < lent.length) buffer = this.buffers[k] = Buffer.allocUnsafeSlow(Math.max(lent.length, 2 * buffer.length));
    lent.copy(buffer);
    return buffer.subarray(0, lent.length);
  }

  /** Notes the offset of the next entry of the root being listed. */
  note(offset: number): void {
    if (this.nextCount + 2 > this.next.length) {
      const grown = new Int32Array(this.next.length * 2);
      grown.set(this.next);
      this.next = grown;
    }
    this.next[this.nextCount++] = offset;
  }

  /** The root being listed is done (`data`, whole): it becomes the previous one. */
  done(data: Buffer): void {
    this.note(data.length);
    [this.offsets, this.next] = [this.next, this.offsets];
    this.count = this.nextCount - 1;
    this.nextCount = 0;
    this.data = data;
    this.held = 1 - this.held;
  }
}

/** Sets `tree` and everything it holds (submodule commits aside); false for an object not in the pack. */
function addTree(handle: StoreHandle, table: ObjectTable, packPosition: Int32Array, cursor: TreeCursor, tree: number, bits: Bitset, roots: RootTrees): boolean {
  const H = table.hashLength;
  const stack = [tree];
  while (stack.length > 0) {
    const t = stack.pop() as number;
    const pos = packPosition[t] as number;
    if (bits.get(pos)) continue;
    bits.set(pos);
    // Lent until the next read: only a root is kept (copied) for the next root.
    const isRoot = t === tree;
    const lent = handle.readTransientAt(handle.locateOrThrow(table.id(t))).data;
    const data = isRoot ? roots.hold(lent) : lent;
    cursor.reset(data, () => toHex(table.id(t)));
    // The root is listed against the previous root (see RootTrees); its subtrees as they are.
    const prev: TreeEntries | undefined = isRoot && roots.data !== undefined ? (roots as TreeEntries) : undefined;
    let i = 0;
    let tryRun = prev !== undefined;
    for (;;) {
      if (prev !== undefined && tryRun && i < prev.count) {
        tryRun = false;
        const cStart = cursor.position;
        const lo = sharedEntries(data, cStart, prev, i);
        if (lo > i) {
          const shift = cStart - (prev.offsets[i] as number);
          for (let k = i; k < lo; k++) roots.note((prev.offsets[k] as number) + shift);
          cursor.seek((prev.offsets[lo] as number) + shift);
          i = lo;
        }
      }
      if (!cursor.next()) break;
      if (isRoot) roots.note(cursor.entryStart);
      const type = cursor.objectType;
      if (prev !== undefined) {
        // Past the previous entries named before this one; one of the same name is passed too.
        while (i < prev.count) {
          const order = compareEntry(prev, i, H, data, cursor.nameStart, cursor.nameEnd, type === OBJ_TREE);
          if (order > 0) break;
          i++;
          if (order === 0) break;
        }
        tryRun = true;
      }
      if (type === OBJ_COMMIT) continue;
      const n = table.find(data, cursor.idStart);
      if (n < 0 || (packPosition[n] as number) < 0) return false;
      if (type === OBJ_TREE) {
        if (!bits.get(packPosition[n] as number)) stack.push(n);
      } else {
        bits.set(packPosition[n] as number);
      }
    }
    if (isRoot) roots.done(data);
  }
  return true;
}
