import { toHex } from '../hash/hex.js';
import { OBJ_BLOB, OBJ_COMMIT, OBJ_TAG, OBJ_TREE } from '../objects/object-type.js';
import { TreeCursor } from '../objects/tree.js';
import type { StoreHandle } from '../odb/store-handle.js';
import type { StorePack } from '../odb/store-pack.js';
import type { ObjectLocations } from './locate-objects.js';
import type { ObjectFilter } from './object-filter.js';
import { Flag, type ObjectTable } from './object-table.js';
import { isPackwrightError, PackwrightError } from '../errors/packwright-error.js';
import type { RefStore } from '../refs/ref-store.js';
import { resolveRevision } from '../refs/resolve-revision.js';
import { MATCHED, NOT_MATCHED, PatternList, UNDECIDED, type PatternMatch } from '../objects/pattern-list.js';

/** What the walk knew that a filter needs besides the objects. */
export interface FilterContext {
  /** Objects named by the caller (tips, and the commits tags peel to): no filter leaves them out (git's USER_GIVEN). */
  given: ReadonlySet<number>;
  /** The root trees of the commits walked (depth 0 for `tree:<depth>`). */
  rootTrees: () => Iterable<number>;
  /** Trees named as tips, with the path each is listed under (`<rev>:<path>`; '' for none): where `sparse:oid=` starts on them. */
  tipTrees?: () => Iterable<{ n: number; name: string }>;
  /** The pattern lists of the `sparse:oid=` filters, by name (see readSparsePatterns). */
  sparsePatterns?: ReadonlyMap<string, PatternList> | undefined;
}

/**
 * The object a filter's `sparse:oid=` names (git's get_oid_with_context): a revision as rev-parse
 * reads it when `refs` are given, else a full id; undefined when it names nothing.
 */
function resolveFilterName(handle: StoreHandle, refs: RefStore | undefined, name: string): Uint8Array | undefined {
  if (refs === undefined) return /^[0-9a-f]+$/i.test(name) && name.length === handle.hashLength * 2 ? Buffer.from(name, 'hex') : undefined;
  try {
    return resolveRevision({ refs, objects: handle }, name);
  } catch (e) {
    if (isPackwrightError(e, 'REF_NOT_FOUND') || isPackwrightError(e, 'PATH_NOT_FOUND') || isPackwrightError(e, 'OBJECT_NOT_FOUND')) return undefined;
    throw e;
  }
}

/**
 * The pattern list each `sparse:oid=<name>` of `filter` names, read as git does when it sets the
 * filter up, before counting (filter_sparse_oid__init): the name a revision (`<rev>:<path>`, with
 * `refs`) or an id; INVALID_ARGUMENT, in git's words, when it stands for nothing or for what is
 * not a blob this repository has.
 */
export function readSparsePatterns(handle: StoreHandle, filter: ObjectFilter, refs: RefStore | undefined): Map<string, PatternList> {
  const lists = new Map<string, PatternList>();
  const read = (f: ObjectFilter): void => {
    if (f.kind === 'combine') f.filters.forEach(read);
    if (f.kind !== 'sparse:oid' || lists.has(f.name)) return;
    const id = resolveFilterName(handle, refs, f.name);
    if (id === undefined) throw new PackwrightError('INVALID_ARGUMENT', `unable to access sparse blob in '${f.name}'`);
    const blob = handle.has(id) ? handle.read(id) : undefined;
    if (blob === undefined || blob.type !== 'blob') throw new PackwrightError('INVALID_ARGUMENT', `unable to parse sparse filter data in ${toHex(id)}`);
    lists.set(f.name, PatternList.parse(blob.data));
  };
  read(filter);
  return lists;
}

/**
 * git's `--filter` on the counted objects (list-objects-filter.c): the listed objects a filter
 * keeps, in their order. What it leaves out loses its LISTED mark, so that nothing later (a reused
 * delta, an included tag) takes it for part of the pack; what git reports as omitted is added to
 * `omitted` when given.
 */
export function filterObjects(handle: StoreHandle, table: ObjectTable, listed: Int32Array, locations: ObjectLocations, filter: ObjectFilter, context: FilterContext, omitted?: number[]): Int32Array {
  const inListed = new Uint8Array(table.count);
  for (const o of listed) inListed[o] = 1;
  const depthKept = new Map<number, Uint8Array>();
  const sparseKept = new Map<string, Uint8Array>();
  const keeps = (f: ObjectFilter, o: number, type: number): boolean => {
    switch (f.kind) {
      case 'blob:none':
        return type !== OBJ_BLOB;
      case 'blob:limit': {
        // A blob this repository lacks is kept, its size unknown (git: "be conservative").
        if (type !== OBJ_BLOB || table.is(o, Flag.MISSING)) return true;
        const k = locations.pack[o] as number;
        const size = k >= 0 ? (locations.packs[k] as StorePack).info(locations.position[o] as number).size : handle.info(table.id(o)).size;
        return size < f.bytes;
      }
      case 'tree': {
        if (type !== OBJ_TREE && type !== OBJ_BLOB) return true;
        let kept = depthKept.get(f.depth);
        if (kept === undefined) {
          kept = withinDepth(handle, table, inListed, f.depth, context);
          depthKept.set(f.depth, kept);
        }
        return kept[o] === 1;
      }
      case 'object:type':
        return type === f.type;
      case 'sparse:oid': {
        if (type !== OBJ_BLOB) return true;
        let kept = sparseKept.get(f.name);
        if (kept === undefined) {
          const patterns = context.sparsePatterns?.get(f.name);
          if (patterns === undefined) throw new PackwrightError('INVALID_ARGUMENT', `sparse filter '${f.name}' was not read before counting`);
          kept = blobsInSparse(handle, table, inListed, patterns, context);
          sparseKept.set(f.name, kept);
        }
        return kept[o] === 1;
      }
      case 'combine':
        return f.filters.every((sub) => keeps(sub, o, type));
    }
  };
  // What git's --filter-print-omitted reports: what a filter other than object:type left out (that
  // one keeps no record), under combine: what any such sub-filter left out.
  const reports = (f: ObjectFilter, o: number, type: number): boolean =>
    f.kind === 'combine' ? f.filters.some((sub) => reports(sub, o, type)) : f.kind !== 'object:type' && !keeps(f, o, type);
  return listed.filter((o) => {
    const type = table.types[o] as number;
    if (context.given.has(o) || keeps(filter, o, type)) return true;
    table.unmark(o, Flag.LISTED);
    if (omitted !== undefined && reports(filter, o, type)) omitted.push(o);
    return false;
  });
}

/** Whether `filter` keeps no tree that was not named as a tip (so the walk need not read them). */
export function keepsNoTrees(filter: ObjectFilter): boolean {
  switch (filter.kind) {
    case 'tree':
      return filter.depth === 0;
    case 'object:type':
      return filter.type === OBJ_COMMIT || filter.type === OBJ_TAG;
    case 'combine':
      return filter.filters.some(keepsNoTrees);
    default:
      return false;
  }
}

/**
 * The trees and blobs `tree:<depth>` keeps: those met at a depth below `depth` on some path from
 * a walked commit's root tree (depth 0), through trees the walk listed (git does not enter
 * uninteresting trees, and re-enters a tree met again nearer the root: filter_trees_depth). A tree
 * named as a tip counts as depth -1: git does not filter it, nor count it, so its entries are at
 * depth 0. Levels are taken in order, so each tree is read once, at its least depth, and only if
 * it is kept.
 */
function withinDepth(handle: StoreHandle, table: ObjectTable, inListed: Uint8Array, depth: number, context: FilterContext): Uint8Array {
  const kept = new Uint8Array(table.count);
  const least = new Int32Array(table.count).fill(0x7fffffff);
  const cursor = new TreeCursor(table.hashLength);
  // Level -1: the trees named as tips; the walked commits' root trees join at level 0.
  let level: number[] = [];
  for (const n of context.given) {
    if (table.types[n] === OBJ_TREE && inListed[n] === 1) {
      least[n] = -1;
      level.push(n);
    }
  }
  for (let d = -1; d < depth; d++) {
    if (d === 0) {
      // Trees named as tips that the filter judges (--filter-provided-objects) start where root trees do.
      const tipTrees = [...(context.tipTrees?.() ?? [])].map((tip) => tip.n).filter((n) => table.types[n] === OBJ_TREE && !context.given.has(n));
      for (const n of [...tipTrees, ...context.rootTrees()]) {
        if (inListed[n] === 1 && (least[n] as number) > 0) {
          least[n] = 0;
          level.push(n);
        }
      }
    }
    if (level.length === 0 && d >= 0) break;
    const next: number[] = [];
    for (const t of level) {
      kept[t] = 1;
      if (table.is(t, Flag.MISSING)) continue;
      const data = handle.read(table.id(t)).data;
      cursor.reset(data, () => toHex(table.id(t)));
      while (cursor.next()) {
        const type = cursor.objectType;
        if (type === OBJ_COMMIT) continue; // a submodule's commit
        const n = table.find(data, cursor.idStart);
        if (n < 0 || inListed[n] !== 1) continue;
        if (type === OBJ_TREE) {
          if ((least[n] as number) > d + 1) {
            least[n] = d + 1;
            next.push(n);
          }
        } else if (d + 1 < depth) {
          kept[n] = 1;
        }
      }
    }
    level = next;
  }
  return kept;
}

/** One directory on the way down in blobsInSparse: its tree, where its path ends, what it says by default, whether something under it was left out. */
interface SparseFrame {
  tree: number;
  key: string;
  data: Uint8Array;
  cursor: TreeCursor;
  pathEnd: number;
  match: PatternMatch;
  omitted: boolean;
}

/**
 * The blobs `sparse:oid=` keeps (git's filter_sparse): those the patterns take in at some path
 * where the walk meets them. Every listed tree is entered at each path it has under the walked
 * commits' root trees and the trees named as tips (at their own paths), since patterns match
 * whole paths; a blob with no deciding pattern takes its directory's verdict, the top's being
 * "not matched". As in git, a tree under which nothing was left out is not entered again, and
 * (what git does not skip, with the same result) neither is a tree met again at the same path.
 * Trees themselves are all kept.
 */
function blobsInSparse(handle: StoreHandle, table: ObjectTable, inListed: Uint8Array, patterns: PatternList, context: FilterContext): Uint8Array {
  const kept = new Uint8Array(table.count);
  const complete = new Uint8Array(table.count);
  // Trees entered with a path (`<number>:<path>`), and whether something under them was left out.
  const entered = new Map<string, boolean>();
  let path = new Uint8Array(256);
  const ensure = (size: number): void => {
    if (size <= path.length) return;
    const grown = new Uint8Array(Math.max(size, path.length * 2));
    grown.set(path);
    path = grown;
  };
  const pathKey = (n: number, end: number): string => `${n}:${Buffer.from(path.buffer, path.byteOffset, end).toString('latin1')}`;
  const stack: SparseFrame[] = [];
  // Enters tree `t` whose path is path[0..end), its name from `nameStart`: false when it needs no
  // visit. A tree named as a tip is not filtered itself (git calls no filter on what the user
  // gave): its own path decides nothing, and it is not entered again.
  const enter = (t: number, end: number, nameStart: number, inherited: PatternMatch, given = false): boolean => {
    if (complete[t] === 1 || table.is(t, Flag.MISSING)) return false;
    const key = pathKey(t, end);
    const omitted = entered.get(key);
    if (omitted !== undefined) {
      // Met here before: what it left out then it leaves out again, which its directory must hear.
      if (omitted && stack.length > 0) (stack[stack.length - 1] as SparseFrame).omitted = true;
      return false;
    }
    let match = given ? UNDECIDED : patterns.match(path.subarray(0, end), nameStart, true);
    if (match === UNDECIDED) match = inherited;
    if (given) complete[t] = 1;
    const data = handle.read(table.id(t)).data;
    stack.push({ tree: t, key, data, cursor: new TreeCursor(table.hashLength).reset(data, () => toHex(table.id(t))), pathEnd: end, match, omitted: false });
    return true;
  };
  // The tops: trees named as tips at their paths, then the walked commits' root trees.
  const tops: { n: number; name: Uint8Array }[] = [];
  const top = new Uint8Array(0);
  for (const { n, name } of context.tipTrees?.() ?? []) if (table.types[n] === OBJ_TREE && inListed[n] === 1) tops.push({ n, name: Buffer.from(name, 'utf8') });
  for (const n of context.rootTrees()) if (inListed[n] === 1) tops.push({ n, name: top });
  for (const { n, name } of tops) {
    ensure(name.length);
    path.set(name, 0);
    if (!enter(n, name.length, name.lastIndexOf(0x2f) + 1, NOT_MATCHED, context.given.has(n))) continue;
    while (stack.length > 0) {
      const frame = stack[stack.length - 1] as SparseFrame;
      const { cursor, data } = frame;
      if (!cursor.next()) {
        stack.pop();
        entered.set(frame.key, frame.omitted);
        if (!frame.omitted) complete[frame.tree] = 1;
        else if (stack.length > 0) (stack[stack.length - 1] as SparseFrame).omitted = true;
        continue;
      }
      const type = cursor.objectType;
      if (type === OBJ_COMMIT) continue; // a submodule's commit
      const n = table.find(data, cursor.idStart);
      if (n < 0 || inListed[n] !== 1) continue;
      if (type === OBJ_BLOB && kept[n] === 1) continue;
      // The entry's path: the directory's, a slash unless at the top, the name.
      const nameLength = cursor.nameEnd - cursor.nameStart;
      const nameStart = frame.pathEnd === 0 ? 0 : frame.pathEnd + 1;
      ensure(nameStart + nameLength);
      if (nameStart > 0) path[frame.pathEnd] = 0x2f;
      path.set(data.subarray(cursor.nameStart, cursor.nameEnd), nameStart);
      const end = nameStart + nameLength;
      if (type === OBJ_TREE) {
        enter(n, end, nameStart, frame.match);
        continue;
      }
      let match = patterns.match(path.subarray(0, end), nameStart, false);
      if (match === UNDECIDED) match = frame.match;
      if (match === MATCHED) kept[n] = 1;
      else frame.omitted = true;
    }
  }
  return kept;
}
