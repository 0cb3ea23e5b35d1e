// What changed between two trees, as git's diff-tree finds it (tree-diff.c): both trees' entries
// walked side by side in git's tree order, a subtree entered only where its ids differ; no rename
// detection (git's default for diff-tree).

import { ALL_INTERESTING, NOT_INTERESTING, type Pathspec } from '../objects/pathspec.js';
import { baseNameCompare, S_IFDIR, S_IFGITLINK, S_IFMT, TreeCursor } from '../objects/tree.js';
import type { StoreHandle } from '../odb/store-handle.js';

/** One change: a path added (A), deleted (D), modified (M: content or mode), or changed in type (T: file, symlink, submodule). */
export interface TreeChange {
  status: 'A' | 'D' | 'M' | 'T';
  /** The path from the top, as stored (bytes). */
  path: Buffer;
  /** The old side (absent for A). */
  oldMode: number | undefined;
  oldId: Buffer | undefined;
  /** The new side (absent for D). */
  newMode: number | undefined;
  newId: Buffer | undefined;
}

/** Options of `diffTrees`: recursion, trees shown as well, paths to limit to. */
export interface DiffTreesOptions {
  /** Into subtrees (git's -r); without it a changed subtree is one entry. */
  recursive?: boolean | undefined;
  /** With `recursive`, the subtrees' own entries too, before what they hold (git's -t). */
  showTrees?: boolean | undefined;
  /** Only these paths. */
  pathspec?: Pathspec | undefined;
}

interface Entry {
  mode: number;
  name: Buffer;
  id: Buffer;
}

const EMPTY: Entry[] = [];

function entriesOf(objects: StoreHandle, id: Uint8Array | undefined): Entry[] {
  if (id === undefined) return EMPTY;
  const object = objects.read(id);
  const data = object.data;
  const H = objects.hashLength;
  const cursor = new TreeCursor(H).reset(data, Buffer.from(id).toString('hex'));
  const out: Entry[] = [];
  while (cursor.next()) {
    out.push({ mode: parseInt(data.toString('latin1', cursor.entryStart, cursor.nameStart - 1), 8), name: data.subarray(cursor.nameStart, cursor.nameEnd), id: data.subarray(cursor.idStart, cursor.idStart + H) });
  }
  return out;
}

const isDir = (mode: number): boolean => (mode & S_IFMT) === S_IFDIR;

/** git's base_name_compare of two entries (baseNameCompare). */
function compareEntries(a: Entry, b: Entry): number {
  return baseNameCompare(a.name, 0, a.name.length, isDir(a.mode), b.name, 0, b.name.length, isDir(b.mode));
}

/**
 * The changes from tree `a` to tree `b` (undefined: the empty tree), in git diff-tree's order.
 * @example diffTrees(repo.objects, parentTree, tree, { recursive: true })
 */
export function diffTrees(objects: StoreHandle, a: Uint8Array | undefined, b: Uint8Array | undefined, options: DiffTreesOptions = {}): TreeChange[] {
  const out: TreeChange[] = [];
  const recursive = options.recursive === true || options.showTrees === true;
  const showTrees = options.showTrees === true;
  const walk = (oldTree: Uint8Array | undefined, newTree: Uint8Array | undefined, base: Buffer, spec: Pathspec | undefined): void => {
    const olds = entriesOf(objects, oldTree);
    const news = entriesOf(objects, newTree);
    const baseText = base.toString('utf8');
    let i = 0;
    let j = 0;
    while (i < olds.length || j < news.length) {
      const o = olds[i];
      const n = news[j];
      const c = o === undefined ? 1 : n === undefined ? -1 : compareEntries(o, n);
      const e = (c <= 0 ? o : n) as Entry;
      if (c < 0) i++;
      else if (c > 0) j++;
      else {
        i++;
        j++;
      }
      if (c === 0 && (o as Entry).id.equals((n as Entry).id) && (o as Entry).mode === (n as Entry).mode) continue;
      let below = spec;
      if (spec !== undefined) {
        const interest = spec.interest(baseText, e.name.toString('utf8'), isDir(e.mode), (e.mode & S_IFMT) === S_IFGITLINK, true);
        if (interest === NOT_INTERESTING) continue;
        if (interest === ALL_INTERESTING) below = undefined;
      }
      const path = Buffer.concat([base, e.name]);
      const dir = isDir(e.mode);
      if (recursive && dir) {
        if (showTrees) {
          out.push(c === 0
            ? { status: 'M', path, oldMode: (o as Entry).mode, oldId: (o as Entry).id, newMode: (n as Entry).mode, newId: (n as Entry).id }
            : c < 0 ? { status: 'D', path, oldMode: e.mode, oldId: e.id, newMode: undefined, newId: undefined } : { status: 'A', path, oldMode: undefined, oldId: undefined, newMode: e.mode, newId: e.id });
        }
        const sub = Buffer.concat([path, Buffer.from('/')]);
        walk(c <= 0 ? (o as Entry).id : undefined, c >= 0 ? (n as Entry).id : undefined, sub, below);
        continue;
      }
      if (c < 0) out.push({ status: 'D', path, oldMode: e.mode, oldId: e.id, newMode: undefined, newId: undefined });
      else if (c > 0) out.push({ status: 'A', path, oldMode: undefined, oldId: undefined, newMode: e.mode, newId: e.id });
      else {
        const om = (o as Entry).mode;
        const nm = (n as Entry).mode;
        out.push({ status: (om & S_IFMT) !== (nm & S_IFMT) ? 'T' : 'M', path, oldMode: om, oldId: (o as Entry).id, newMode: nm, newId: (n as Entry).id });
      }
    }
  };
  walk(a, b, Buffer.alloc(0), options.pathspec?.limits === true ? options.pathspec : undefined);
  return out;
}

