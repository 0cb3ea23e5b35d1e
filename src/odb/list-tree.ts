import { PackwrightError } from '../errors/packwright-error.js';
import { toHex } from '../hash/hex.js';
import { OBJ_BLOB, OBJ_TREE, typeName, type ObjectType } from '../objects/object-type.js';
import { canonicalMode, modeObjectType, TreeCursor } from '../objects/tree.js';
import type { StoreHandle } from './store-handle.js';

/** One entry `listTree` gives: its path from the top tree, mode, type and id. */
export interface ListedTreeEntry {
  /** The path from the top tree, `/`-separated, decoded as UTF-8 (what nearly every tree holds). */
  path: string;
  /** The path's bytes as the trees hold them (names are bytes in git, in any encoding). */
  pathBytes: Buffer;
  /** The entry's name alone (the last component of `path`), decoded as UTF-8. */
  name: string;
  /** Mode as git canonicalises it (0o100644, 0o100755, 0o120000, 0o040000, 0o160000). */
  mode: number;
  /** 'tree' for a directory, 'commit' for a submodule, else 'blob'. */
  type: ObjectType;
  id: Buffer;
}

/** What `listTree` lists: recursion, trees only or as well, and paths to limit to. */
export interface ListTreeOptions {
  /** Descend into every subtree (`-r`). */
  recursive?: boolean | undefined;
  /** Only trees (`-d`). */
  treesOnly?: boolean | undefined;
  /** Also show the trees descended into (`-t`). */
  showTrees?: boolean | undefined;
  /**
   * Paths to limit the listing to, from the top tree: strings (UTF-8) or the paths' bytes; a trailing
   * `/` matches only a directory. Literal, as `git ls-tree` takes them: no wildcards. Empty: everything.
   */
  paths?: readonly (string | Uint8Array)[] | undefined;
}

/** How an entry stands against a path: outside it, on it (or under it), or a directory leading to it. */
const OUTSIDE = 0;
const ON = 1;
const LEADING = 2;

function matchPath(spec: string, path: string, isDir: boolean): number {
  if (spec === '') return ON;
  const dirOnly = spec.endsWith('/');
  const s = dirOnly ? spec.slice(0, -1) : spec;
  // `dir/` names what is in the directory: git descends into it (show_recursive).
  if (path === s) return isDir ? (dirOnly ? LEADING : ON) : (dirOnly ? OUTSIDE : ON);
  if (path.startsWith(`${s}/`)) return ON;
  if (isDir && s.startsWith(`${path}/`)) return LEADING;
  return OUTSIDE;
}

/**
 * The entries of a tree as `git ls-tree` lists them (read_tree with its show_recursive rule): in
 * tree order, depth first; a directory is descended into with `recursive`, or when a path names
 * something inside it (and is then not listed itself unless `showTrees`); blobs and submodules
 * are left out with `treesOnly`.
 */
export function* listTree(handle: StoreHandle, tree: Uint8Array, options: ListTreeOptions = {}): Generator<ListedTreeEntry> {
  const H = handle.hashLength;
  // Matched as latin1 strings: one char a byte, so any encoding compares as its bytes.
  const paths = (options.paths ?? []).map((p) => Buffer.from(p).toString('latin1'));
  const recursive = options.recursive === true;
  const treesOnly = options.treesOnly === true;
  // git: -d with -r implies -t.
  const showTrees = options.showTrees === true || (treesOnly && recursive);
  const walk = function* (id: Uint8Array, base: string): Generator<ListedTreeEntry> {
    const obj = handle.read(id);
    if (obj.type !== 'tree') throw new PackwrightError('OBJECT_CORRUPT', `not a tree object: ${toHex(id)}`);
    const data = obj.data;
    const cursor = new TreeCursor(H).reset(data, () => toHex(id));
    while (cursor.next()) {
      const name = data.toString('latin1', cursor.nameStart, cursor.nameEnd);
      const path = base + name;
      const mode = canonicalMode(cursor.mode);
      const typeCode = modeObjectType(mode);
      const isDir = typeCode === OBJ_TREE;
      let leading = false;
      if (paths.length > 0) {
        let matched = false;
        for (const p of paths) {
          const m = matchPath(p, path, isDir);
          if (m !== OUTSIDE) matched = true;
          if (m === LEADING) leading = true;
        }
        if (!matched) continue;
      }
      const entryId = Buffer.from(data.subarray(cursor.idStart, cursor.idStart + H));
      if (isDir) {
        // git's show_recursive: -r, or a path that goes on below this directory.
        const descend = recursive || leading;
        if (!descend || showTrees) yield entry(path, name, mode, typeCode, entryId);
        if (descend) yield* walk(entryId, `${path}/`);
      } else if (!treesOnly || typeCode !== OBJ_BLOB) {
        // -d leaves out blobs only: submodules are listed.
        yield entry(path, name, mode, typeCode, entryId);
      }
    }
  };
  yield* walk(tree, '');
}

/** An entry from a path and name held as latin1 (one char a byte). */
function entry(path: string, name: string, mode: number, typeCode: number, id: Buffer): ListedTreeEntry {
  const pathBytes = Buffer.from(path, 'latin1');
  return { path: pathBytes.toString('utf8'), pathBytes, name: Buffer.from(name, 'latin1').toString('utf8'), mode, type: typeName(typeCode), id };
}
