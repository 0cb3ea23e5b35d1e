import { toHex } from '../hash/hex.js';
import { OBJ_TREE } from '../objects/object-type.js';
import { TreeCursor } from '../objects/tree.js';
import type { StoreHandle } from '../odb/store-handle.js';
import { compareEntries, sameEntry, type Side } from './pathspec-diff.js';

const EMPTY = Buffer.alloc(0);

/**
 * Trees read lately, by id, for a run of diffs: a commit's trees are the old side of its child's
 * diff, so computing filters parents first reads most trees once instead of twice.
 */
export class TreeBytes {
  private readonly trees = new Map<string, Buffer>();

  constructor(private readonly capacity = 1024) {}

  get(handle: StoreHandle, id: Uint8Array): Buffer {
    const key = Buffer.from(id.buffer, id.byteOffset, id.byteLength).toString('latin1');
    let data = this.trees.get(key);
    if (data !== undefined) {
      // Most recently used last.
      this.trees.delete(key);
      this.trees.set(key, data);
      return data;
    }
    data = handle.read(id).data;
    if (this.trees.size >= this.capacity) this.trees.delete(this.trees.keys().next().value as string);
    this.trees.set(key, data);
    return data;
  }
}

/**
 * The paths a commit changes against its first parent, as git's changed-path Bloom filters take
 * them (bloom.c, get_or_compute_bloom_filter): every file (blob, symlink, submodule) added,
 * removed or changed between the trees, recursively, no renames, and each leading directory of
 * one ('dir/sub/file' gives 'dir', 'dir/sub' and itself). Paths are the raw bytes as latin1
 * strings. `oldTree` undefined: a root commit, against the empty tree. Undefined when more than
 * `max` files change, or the paths with their directories number more than `max`.
 */
export function changedPaths(handle: StoreHandle, oldTree: Uint8Array | undefined, newTree: Uint8Array, max: number, cache?: TreeBytes): Set<string> | undefined {
  const files: string[] = [];
  const H = handle.hashLength;
  const open = (id: Uint8Array | undefined): Side => {
    const cursor = new TreeCursor(H);
    // A copy: the walk reads subtrees while this tree is still being read.
    const data = id === undefined ? EMPTY : cache !== undefined ? cache.get(handle, id) : handle.read(id).data;
    cursor.reset(data, () => (id === undefined ? '<empty>' : toHex(id)));
    return { cursor, data, more: cursor.next() };
  };
  const idOf = (s: Side): Buffer => s.data.subarray(s.cursor.idStart, s.cursor.idStart + H);
  const nameOf = (s: Side): string => s.data.toString('latin1', s.cursor.nameStart, s.cursor.nameEnd);
  const diff = (a: Uint8Array | undefined, b: Uint8Array | undefined, base: string): boolean => {
    const x = open(a);
    const y = open(b);
    while (x.more || y.more) {
      if (files.length > max) return false;
      const c = !x.more ? 1 : !y.more ? -1 : compareEntries(x, y);
      if (c !== 0) {
        // On one side only: a tree's files are all added or removed.
        const s = c < 0 ? x : y;
        const path = base + nameOf(s);
        if (s.cursor.objectType === OBJ_TREE) {
          if (!(c < 0 ? diff(idOf(s), undefined, `${path}/`) : diff(undefined, idOf(s), `${path}/`))) return false;
        } else {
          files.push(path);
        }
        s.more = s.cursor.next();
        continue;
      }
      if (!sameEntry(x, y, H)) {
        const path = base + nameOf(y);
        if (x.cursor.objectType === OBJ_TREE && y.cursor.objectType === OBJ_TREE) {
          if (!diff(idOf(x), idOf(y), `${path}/`)) return false;
        } else {
          files.push(path);
        }
      }
      x.more = x.cursor.next();
      y.more = y.cursor.next();
    }
    return true;
  };
  if (!diff(oldTree, newTree, '') || files.length > max) return undefined;
  const paths = new Set<string>();
  for (const file of files) {
    for (let p = file; ; ) {
      paths.add(p);
      const slash = p.lastIndexOf('/');
      if (slash < 0) break;
      p = p.slice(0, slash);
    }
  }
  return paths.size > max ? undefined : paths;
}
