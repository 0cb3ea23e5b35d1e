// The repository-level reads (Repository.readCommit, readTag, readTree, readBlob): revisions in,
// parsed objects out, ids as lowercase hex, types as names, paths as UTF-8 with their bytes.
import { PackwrightError } from '../errors/packwright-error.js';
import { toHex } from '../hash/hex.js';
import { parseCommitObject, type CommitObject } from '../objects/commit-object.js';
import { parseTagObject, type TagObject } from '../objects/tag-object.js';
import { findTreeEntry, modeType, TreeCursor } from '../objects/tree.js';
import { peelObject } from '../odb/peel-object.js';
import type { StoreHandle } from '../odb/store-handle.js';
import type { StoredObject } from '../odb/index.js';
import { diffTrees } from '../diff/diff-trees.js';
import type { Pathspec } from '../objects/pathspec.js';
import type { ObjectType } from '../objects/object-type.js';

/** One entry of a tree. */
export interface TreeEntryObject {
  /** The mode as a number (0o100644, 0o100755, 0o120000, 0o040000, 0o160000). */
  mode: number;
  type: 'blob' | 'tree' | 'commit';
  id: string;
  /** The name as UTF-8 (bytes that are not UTF-8 become U+FFFD: `pathBytes` has them as stored). */
  path: string;
  pathBytes: Buffer;
}

/** What the read needs of a repository: its objects and its revision syntax. */
export interface ObjectSource {
  readonly objects: StoreHandle;
  resolve(revision: string): Buffer;
}

const UTF8 = new TextDecoder();

/** The object `id` names, followed through tags (and, for 'tree', from a commit to its tree) to one of type `want`. */
function peelTo(objects: StoreHandle, id: Buffer, want: ObjectType, what: string): { id: Buffer; object: StoredObject } {
  const end = peelObject(objects, id, want);
  if (end.kind === 'found') return { id: end.id, object: objects.read(end.id) };
  if (end.kind === 'missing') return { id: end.id, object: objects.read(end.id) }; // OBJECT_NOT_FOUND, in the store's words
  if (end.type === 'tag') throw new PackwrightError('INVALID_ARGUMENT', `${what}: too many tags to peel`);
  throw new PackwrightError('INVALID_ARGUMENT', `object ${toHex(end.id)} is a ${end.type}, not a ${want} (${what})`);
}

export function readCommitFrom(repo: ObjectSource, rev: string): CommitObject {
  const { id, object } = peelTo(repo.objects, repo.resolve(rev), 'commit', rev);
  return parseCommitObject(toHex(id), object.data);
}

export function readTagFrom(repo: ObjectSource, rev: string): TagObject {
  const id = repo.resolve(rev);
  const object = repo.objects.read(id);
  if (object.type !== 'tag') throw new PackwrightError('INVALID_ARGUMENT', `object ${toHex(id)} is a ${object.type}, not a tag (${rev})`);
  return parseTagObject(toHex(id), object.data);
}

export function readTreeFrom(repo: ObjectSource, rev: string): TreeEntryObject[] {
  const { id, object } = peelTo(repo.objects, repo.resolve(rev), 'tree', rev);
  const H = repo.objects.hashLength;
  const data = Buffer.from(object.data.buffer, object.data.byteOffset, object.data.byteLength);
  const cursor = new TreeCursor(H).reset(data, toHex(id));
  const out: TreeEntryObject[] = [];
  while (cursor.next()) {
    const modeText = data.toString('latin1', cursor.entryStart, cursor.nameStart - 1);
    const pathBytes = Buffer.from(data.subarray(cursor.nameStart, cursor.nameEnd));
    out.push({ mode: parseInt(modeText, 8), type: modeType(modeText), id: data.toString('hex', cursor.idStart, cursor.idStart + H), path: UTF8.decode(pathBytes), pathBytes });
  }
  return out;
}

export function readBlobFrom(repo: ObjectSource, target: string | { commit: string; path: string }): Buffer {
  const objects = repo.objects;
  if (typeof target === 'string') return peelTo(objects, repo.resolve(target), 'blob', target).object.data;
  const { commit, path } = target;
  let { id } = peelTo(objects, repo.resolve(commit), 'tree', commit);
  const missing = (): PackwrightError => new PackwrightError('PATH_NOT_FOUND', `path '${path}' does not exist in '${commit}'`);
  for (const part of path.split('/').filter((p) => p !== '')) {
    const tree = objects.read(id);
    if (tree.type !== 'tree') throw missing();
    const entry = findTreeEntry(tree.data, objects.hashLength, Buffer.from(part, 'utf8'));
    if (entry === undefined) throw missing();
    id = entry.id;
  }
  const object = objects.read(id);
  if (object.type !== 'blob') throw new PackwrightError('INVALID_ARGUMENT', `path '${path}' in '${commit}' is a ${object.type}, not a blob`);
  return object.data;
}

/** One change between two trees, as the repository-level API gives it (hex ids, a UTF-8 path). */
export interface TreeDiffEntry {
  status: 'A' | 'D' | 'M' | 'T';
  path: string;
  pathBytes: Buffer;
  /** The old side: undefined for an added path. */
  oldId: string | undefined;
  oldMode: number | undefined;
  /** The new side: undefined for a deleted path. */
  newId: string | undefined;
  newMode: number | undefined;
}

/** The tree a revision names (a commit's, tags peeled), or undefined for null: the empty tree. */
export function treeOf(repo: ObjectSource, rev: string | null): Buffer | undefined {
  return rev === null ? undefined : peelTo(repo.objects, repo.resolve(rev), 'tree', rev).id;
}

export function diffTreesFrom(repo: ObjectSource, a: string | null, b: string | null, options: { recursive?: boolean | undefined; pathspec?: Pathspec | undefined }): TreeDiffEntry[] {
  return diffTrees(repo.objects, treeOf(repo, a), treeOf(repo, b), { recursive: options.recursive !== false, pathspec: options.pathspec }).map((c) => ({
    status: c.status,
    path: UTF8.decode(c.path),
    pathBytes: c.path,
    oldId: c.oldId?.toString('hex'),
    oldMode: c.oldMode,
    newId: c.newId?.toString('hex'),
    newMode: c.newMode,
  }));
}
