import { PackwrightError } from '../errors/packwright-error.js';
import { toHex } from '../hash/hex.js';
import { OBJ_BLOB, OBJ_COMMIT, OBJ_TAG, OBJ_TREE, typeName } from '../objects/object-type.js';
import { TreeCursor } from '../objects/tree.js';
import { compareEntry, isTreeEntry, sharedEntries, TreeShapes, type Slab, type TreeShape } from './tree-shapes.js';
import { Flag, foldNameHash, nameHash, type ObjectTable } from './object-table.js';
import { ALL_INTERESTING, NOT_INTERESTING, type Pathspec } from '../objects/pathspec.js';
import { notFoundError, type MissingAction, type RevWalk } from './rev-walk.js';
import { drain, type Steps } from './sliced-steps.js';

/**
 * Called for each object listed, in git's order. `path` (only when asked for) is a view of the
 * walk's path buffer, valid during the call: empty for commits and root trees.
 */
export type ListVisitor = (n: number, type: number, path: Uint8Array | undefined) => void;

/** How `listObjects` lists: with paths or not, what a missing object does, a pathspec, which trees to enter. */
export interface ListObjectsOptions {
  /** Build each object's path for the visitor (rev-list prints them; a pack needs only the hash). */
  paths?: boolean | undefined;
  missing?: MissingAction | undefined;
  /** List only the tree entries these paths want (git's process_tree with the walk's pathspec). */
  pathspec?: Pathspec | undefined;
  /**
   * Asked of each tree before it is read: false leaves it out, unread and marked seen, with
   * what it holds (git's include_check_obj; the bitmap walk skips trees a bitmap covers).
   */
  includeTree?: ((n: number) => boolean) | undefined;
}

const SLASH = 0x2f;

/** One tree being listed: its entries are visited in order, a subtree's before the next entry. */
interface Frame {
  cursor: TreeCursor;
  /** A buffer of this depth's own, reused by each tree listed at this depth (but those kept)… */
  own: Buffer;
  /** …the buffer of the current tree (`own`, or one a kept tree is given)… */
  data: Buffer;
  /** …and the current tree's bytes in it. */
  view: Buffer;
  /** The length of this tree's path in the path buffer (its entries' paths continue it). */
  pathEnd: number;
  /** pack_name_hash of this tree's path and a '/', so an entry's hash is its name folded on. */
  prefixHash: number;
  /** The tree is in a promisor pack: what it names may be missing (--missing=allow-promisor). */
  promisor: boolean;
  /** The pathspec wants everything under this tree (or there is none): entries are not checked. */
  all: boolean;
  /** This tree's path as the pathspec sees a base ('' at the top, else ending in '/'), when it is checked. */
  base: string;
  /** The tree's object number. */
  tree: number;
  /** Where each entry met so far starts (`count` of them): the tree's shape, kept when it is done. */
  offsets: Int32Array;
  count: number;
  /** The tree is kept when done (TreeShapes): its bytes are in a buffer of their own, from this slab. */
  keep: boolean;
  slab: Slab | undefined;
  /**
   * A listed tree this one is likely a new version of (the previous root, or the tree of the same
   * name in the parent's previous version), walked alongside from entry `prevIndex`: entries it
   * holds byte for byte were dealt with when it was listed, and are passed over without a lookup.
   */
  prev: TreeShape | undefined;
  prevIndex: number;
  /** The cursor and prevIndex may be at the same entry: try passing over a shared stretch. */
  tryRun: boolean;
}

/** Trees smaller than this are not kept to be listed against (they have few entries to pass over). */
const MIN_KEPT_TREE = 4096;
/** Bytes of listed trees kept for their next versions (TreeShapes). */
const TREE_SHAPES_BUDGET = 4 << 20;

/** What listing trees needs of a walk: the table, and reading trees (the store of this thread). */
export interface TreeSource {
  readonly table: ObjectTable;
  readonly hashLength: number;
  /** The object, undefined when missing (marking it Flag.MISSING); `transient`: valid until the next read. */
  readTyped(n: number, want: number, transient?: boolean): { type: number; data: Buffer } | undefined;
  /** Whether the last object read came from a promisor pack. */
  readonly lastFromPromisor: boolean;
}

/**
 * Lists trees depth first, a tree before its entries, every object once, leaving out what is
 * SEEN or UNINTERESTING and submodule commits (git's process_tree). Each object gets its
 * pack_name_hash in the table. Trees are read once each; blobs are never read, only named (the
 * location pass finds them, and the missing ones).
 */
export class TreeLister {
  private path = new Uint8Array(256);
  private readonly frames: Frame[] = [];
  private depth = 0;
  /** Paths are built for the visitor, or for the pathspec to match. */
  private readonly buildPaths: boolean;
  /**
   * Trees listed lately, for their next versions to be listed against (see Frame.prev); none with
   * a pathspec or `includeTree`, which leave entries of a listed tree unlisted.
   */
  private readonly shapes: TreeShapes | undefined;
  /** The last commit root (or tip) listed: the previous version of the next one. */
  private lastRoot = -1;
  private readonly spec: Pathspec | undefined;

  constructor(
    private readonly source: TreeSource,
    private readonly visit: ListVisitor,
    private readonly withPaths: boolean,
    /** A tree the store lacks: throw, or note it (see checkMissing). */
    private readonly onMissing: (n: number, fromPromisor: boolean) => void,
    /** Only the entries it wants are listed (and not marked: another path may want one). */
    spec?: Pathspec,
    private readonly includeTree?: (n: number) => boolean,
  ) {
    this.spec = spec?.limits === true ? spec : undefined;
    this.buildPaths = withPaths || this.spec !== undefined;
    this.shapes = this.spec === undefined && includeTree === undefined ? new TreeShapes(TREE_SHAPES_BUDGET) : undefined;
  }

  private setPath(end: number, src: Uint8Array, start: number, stop: number, slash: boolean): number {
    const need = end + 1 + (stop - start);
    if (need > this.path.length) {
      const grown = new Uint8Array(Math.max(need, this.path.length * 2));
      grown.set(this.path);
      this.path = grown;
    }
    let p = end;
    const path = this.path;
    if (slash) path[p++] = SLASH;
    // A name is a few bytes: copied by hand, without a view object per entry.
    for (let i = start; i < stop; i++) path[p++] = src[i] as number;
    return p;
  }

  /**
   * Reads a tree, shows it and makes it the current frame; false when it is missing (and
   * allowed). `previous`: a listed tree it is likely a version of (-1: none).
   */
  private enter(n: number, pathEnd: number, hash: number, fromPromisor: boolean, all: boolean, previous = -1): boolean {
    const t = this.source.table;
    t.mark(n, Flag.SEEN);
    const obj = this.source.readTyped(n, OBJ_TREE, true);
    if (obj === undefined) {
      this.onMissing(n, fromPromisor);
      return false;
    }
    t.types[n] = OBJ_TREE;
    t.nameHashes[n] = hash;
    t.mark(n, Flag.LISTED);
    this.visit(n, OBJ_TREE, this.withPaths ? this.path.subarray(0, pathEnd) : undefined);
    let frame = this.frames[this.depth];
    if (frame === undefined) {
      frame = {
        cursor: new TreeCursor(this.source.hashLength), own: Buffer.alloc(0), data: Buffer.alloc(0), view: Buffer.alloc(0), pathEnd: 0, prefixHash: 0, promisor: false, all: true, base: '',
        tree: -1, offsets: new Int32Array(64), count: 0, keep: false, slab: undefined, prev: undefined, prevIndex: 0, tryRun: false,
      };
      this.frames[this.depth] = frame;
    }
    // The read is transient (the store's buffer, reused by the next read): keep a copy in the
    // frame's own buffer, which is reused by every tree at this depth; one to be kept for its
    // next version gets a buffer of its own.
    const size = obj.data.length;
    frame.keep = this.shapes !== undefined && size >= MIN_KEPT_TREE;
    if (frame.keep) {
      const room = (this.shapes as TreeShapes).allocate(size);
      frame.data = room.data;
      frame.slab = room.slab;
    } else {
      if (frame.own.length < size) frame.own = Buffer.allocUnsafeSlow(Math.max(size, 2 * frame.own.length, 4096));
      frame.data = frame.own;
    }
    obj.data.copy(frame.data, 0, 0, size);
    frame.tree = n;
    frame.count = 0;
    frame.prev = previous >= 0 ? this.shapes?.pin(previous) : undefined;
    frame.prevIndex = 0;
    frame.tryRun = frame.prev !== undefined;
    const data = frame.data.subarray(0, size);
    frame.cursor.reset(data, () => toHex(t.id(n)));
    frame.view = data;
    frame.pathEnd = pathEnd;
    frame.prefixHash = pathEnd > 0 ? foldNameHash(hash, SLASH) : 0;
    frame.promisor = this.source.lastFromPromisor;
    frame.all = all;
    if (!all) frame.base = pathEnd > 0 ? `${Buffer.from(this.path.buffer, this.path.byteOffset, pathEnd).toString('utf8')}/` : '';
    this.depth++;
    return true;
  }

  /** Room in `frame.offsets` for `more` entries past `count`, and the end offset after them. */
  private reserveOffsets(frame: Frame, more: number): void {
    const need = frame.count + more + 1;
    if (need <= frame.offsets.length) return;
    const grown = new Int32Array(Math.max(need, frame.offsets.length * 2));
    grown.set(frame.offsets);
    frame.offsets = grown;
  }

  /** Notes that the current entry of `frame` starts at `at` (its shape). */
  private record(frame: Frame, at: number): void {
    this.reserveOffsets(frame, 1);
    frame.offsets[frame.count++] = at;
  }

  /**
   * Passes over the entries from the cursor on that the previous version holds byte for byte
   * from `prevIndex` on (their offsets noted as it has them, shifted).
   */
  private skipShared(frame: Frame): void {
    frame.tryRun = false;
    const prev = frame.prev as TreeShape;
    const i = frame.prevIndex;
    if (i >= prev.count) return;
    const off = prev.offsets;
    const c = frame.cursor;
    const cStart = c.position;
    const lo = sharedEntries(frame.view, cStart, prev, i);
    if (lo === i) return;
    const shift = cStart - (off[i] as number);
    if (frame.keep) {
      this.reserveOffsets(frame, lo - i);
      for (let k = i; k < lo; k++) frame.offsets[frame.count++] = (off[k] as number) + shift;
    }
    c.seek((off[lo] as number) + shift);
    frame.prevIndex = lo;
  }

  /**
   * Moves the previous version on to the cursor's entry, in git's tree order: 0 when it holds
   * that entry byte for byte (mode, name, id), else one more than the object number of a tree it
   * holds under the same name (that tree's previous version), else -1.
   */
  private matchPrevious(frame: Frame, c: TreeCursor, data: Buffer, isTree: boolean): number {
    const prev = frame.prev as TreeShape;
    const pd = prev.data;
    const off = prev.offsets;
    const H = this.source.hashLength;
    while (frame.prevIndex < prev.count) {
      const start = off[frame.prevIndex] as number;
      const end = off[frame.prevIndex + 1] as number;
      const order = compareEntry(prev, frame.prevIndex, H, data, c.nameStart, c.nameEnd, isTree);
      if (order < 0) {
        // An entry the new version no longer has.
        frame.prevIndex++;
        continue;
      }
      // A new entry (order > 0) or the same name: either way the next entries may line up again.
      frame.tryRun = true;
      if (order > 0) return -1;
      frame.prevIndex++;
      const curEnd = c.idStart + H;
      if (end - start === curEnd - c.entryStart && data.compare(pd, start, end, c.entryStart, curEnd) === 0) return 0;
      if (!isTree || !isTreeEntry(prev, frame.prevIndex - 1)) return -1;
      return this.source.table.intern(pd, end - H) + 1;
    }
    return -1;
  }

  /** A tree's entries are all met: let its previous version go, and keep it for its next. */
  private finish(frame: Frame): void {
    if (frame.prev !== undefined) {
      this.shapes?.unpin(frame.prev);
      frame.prev = undefined;
    }
    if (!frame.keep || this.shapes === undefined) return;
    // The end of the last entry closes the offsets (TreeShape's `offsets[count]`).
    this.reserveOffsets(frame, 0);
    frame.offsets[frame.count] = frame.view.length;
    const kept = this.shapes.copyOffsets(frame.offsets, frame.count + 1);
    this.shapes.set(frame.tree, { data: frame.view, offsets: kept.offsets, count: frame.count, slab: frame.slab, offsetSlab: kept.slab });
    frame.keep = false;
  }

  /** Lists the tree `root` and what it reaches, under `rootPath` ('' for a commit's tree). */
  listTree(root: number, rootPath: Uint8Array): void {
    if (this.beginTree(root, rootPath)) this.listEntries(Infinity);
  }

  /**
   * Lists `root` itself and enters it; true when its entries are then to be listed
   * (`listEntries`), false when there is nothing more to do for it.
   */
  beginTree(root: number, rootPath: Uint8Array): boolean {
    const t = this.source.table;
    if (t.is(root, Flag.SEEN | Flag.UNINTERESTING)) return false;
    if (this.includeTree !== undefined && !this.includeTree(root)) {
      t.mark(root, Flag.SEEN);
      return false;
    }
    // Without paths, an end of 1 stands for "some path": only whether a path is empty matters.
    const rootEnd = this.buildPaths ? this.setPath(0, rootPath, 0, rootPath.length, false) : Math.min(rootPath.length, 1);
    // A tip's name counts in its entries' hashes, as git's path does; a commit's root is "".
    const rootHash = rootPath.length > 0 ? nameHash(rootPath) : 0;
    // The root is listed whatever the pathspec says (git shows it before looking at entries),
    // against the root listed before it.
    if (!this.enter(root, rootEnd, rootHash, t.is(root, Flag.PROMISOR), this.spec === undefined, this.lastRoot)) return false;
    this.lastRoot = root;
    return true;
  }

  /**
   * Lists the entries of the trees entered, depth first; true once the tree `beginTree` entered
   * is done, false after `budget` steps (a tree entered or finished is a step) with the rest kept
   * for the next call: a first commit's tree is the whole repository, ~60 ms of gitoxide's, and a
   * server lets other requests in between (listSteps).
   */
  listEntries(budget: number): boolean {
    const t = this.source.table;
    const withPaths = this.withPaths;
    const buildPaths = this.buildPaths;
    const spec = this.spec;
    while (this.depth > 0) {
      if (budget-- <= 0) return false;
      const frame = this.frames[this.depth - 1] as Frame;
      const c = frame.cursor;
      let descended = false;
      for (;;) {
        if (frame.tryRun) this.skipShared(frame);
        if (!c.next()) break;
        if (frame.keep) this.record(frame, c.entryStart);
        const type = c.objectType;
        const data = frame.view;
        // An entry the previous version has as it is was dealt with there; a tree changed under
        // the same name is listed against its own previous version.
        let previous = -1;
        if (frame.prev !== undefined) {
          const found = this.matchPrevious(frame, c, data, type === OBJ_TREE);
          if (found === 0) continue;
          previous = found - 1;
        }
        if (type === OBJ_COMMIT) continue; // a submodule: not in this repository
        let all = true;
        if (!frame.all) {
          // Before the object is looked at: one the pathspec does not want here is not marked,
          // so the same object met under a wanted path is listed there (git's process_tree, whose
          // pathspec is not recursive: a glob enters only the directories its literal start names).
          const interest = (spec as Pathspec).interest(frame.base, data.toString('utf8', c.nameStart, c.nameEnd), type === OBJ_TREE, false, false);
          if (interest === NOT_INTERESTING) continue;
          all = interest === ALL_INTERESTING;
        }
        const end = buildPaths ? this.setPath(frame.pathEnd, data, c.nameStart, c.nameEnd, frame.pathEnd > 0) : 1;
        const n = t.intern(data, c.idStart);
        if (t.types[n] === 0) t.types[n] = type;
        if (t.is(n, Flag.SEEN | Flag.UNINTERESTING)) continue;
        const hash = nameHash(data, c.nameStart, c.nameEnd, frame.prefixHash);
        if (type === OBJ_TREE) {
          if (this.includeTree !== undefined && !this.includeTree(n)) {
            t.mark(n, Flag.SEEN);
            continue;
          }
          if (this.enter(n, end, hash, frame.promisor, all, previous)) {
            descended = true;
            break;
          }
          continue;
        }
        // Blobs are not looked up here: the pack's location pass finds them all at once (see
        // locateObjects), and reports the missing ones.
        t.mark(n, Flag.SEEN | Flag.LISTED | (frame.promisor ? Flag.PROMISOR : 0));
        t.nameHashes[n] = hash;
        this.visit(n, OBJ_BLOB, withPaths ? this.path.subarray(0, end) : undefined);
      }
      if (!descended) {
        this.finish(frame);
        this.depth--;
      }
    }
    return true;
  }
}

/**
 * git's traverse_commit_list after a `RevWalk`: the commits in walk order, then the pending tags
 * and tips, then each commit's tree (see TreeLister).
 */
export function listObjects(walk: RevWalk, visit: ListVisitor, options: ListObjectsOptions = {}): void {
  drain(listSteps(walk, visit, options));
}

/** Trees entered or finished between two yields of listSteps (~1-2 ms of gitoxide's). */
const TREE_STEPS = 256;

/**
 * `listObjects` in steps: it yields after each commit's tree, and every TREE_STEPS trees within
 * one, so a caller on an event loop can let it turn (walkObjectsSliced).
 */
export function* listSteps(walk: RevWalk, visit: ListVisitor, options: ListObjectsOptions = {}): Steps<void> {
  const withPaths = options.paths === true;
  const missing = options.missing ?? 'error';
  const empty = new Uint8Array(0);
  const lister = new TreeLister(walk, visit, withPaths, missingHandler(walk, missing), options.pathspec, options.includeTree);
  listCommitsAndPending(walk, visit, withPaths, lister);
  for (const n of walk.commits) {
    if (lister.beginTree(walk.treeOf(n), empty)) while (!lister.listEntries(TREE_STEPS)) yield;
    yield;
  }
}

/** The commits, then the pending tags, trees and blobs (git lists them before the commits' trees). */
export function listCommitsAndPending(walk: RevWalk, visit: ListVisitor, withPaths: boolean, lister: TreeLister): void {
  const t = walk.table;
  const empty = new Uint8Array(0);
  for (const n of walk.commits) {
    t.mark(n, Flag.LISTED);
    visit(n, OBJ_COMMIT, withPaths ? empty : undefined);
  }
  for (const p of walk.pending) {
    const n = p.n;
    if (t.is(n, Flag.SEEN | Flag.UNINTERESTING)) continue;
    const type = t.types[n] as number;
    const name = Buffer.from(p.name, 'utf8');
    if (type === OBJ_TAG) {
      t.mark(n, Flag.SEEN | Flag.LISTED);
      visit(n, OBJ_TAG, withPaths ? name : undefined);
    } else if (type === OBJ_TREE) {
      lister.listTree(n, name);
    } else {
      t.mark(n, Flag.SEEN | Flag.LISTED);
      t.nameHashes[n] = nameHash(name);
      visit(n, type, withPaths ? name : undefined);
    }
  }
}

/**
 * What a walk does with a tree or blob the store lacks: nothing when the promisor remote has it
 * and the walk excludes promisor objects (git's pre-filter in process_tree and process_blob),
 * else `checkMissing`.
 */
export function missingHandler(walk: RevWalk, missing: MissingAction): (n: number, fromPromisor: boolean) => void {
  return (n, fromPromisor) => {
    if (walk.isPromisorObject(n)) walk.table.mark(n, Flag.MISSING);
    else checkMissing(walk.table, n, missing, fromPromisor);
  };
}

/** Throws for a missing object unless `missing` allows it (git's finish_object__ma). */
export function checkMissing(t: ObjectTable, n: number, missing: MissingAction, fromPromisor: boolean): void {
  t.mark(n, Flag.MISSING);
  if (missing === 'allow-any' || missing === 'print' || (missing === 'allow-promisor' && fromPromisor)) return;
  if (missing === 'allow-promisor') throw new PackwrightError('OBJECT_NOT_FOUND', `unexpected missing ${typeName(t.types[n] || OBJ_BLOB)} object '${toHex(t.id(n))}'`);
  // git's process_tree dies of a tree it cannot read in its own words.
  if (t.types[n] === OBJ_TREE) throw new PackwrightError('OBJECT_NOT_FOUND', `bad tree object ${toHex(t.id(n))}`);
  throw notFoundError(t, n, 'object');
}
