// The repository-level writes (Repository.writeBlob, writeTree, writeCommit, writeTag): objects
// in git's bytes, stored loose as git stores them; ids back as lowercase hex.
import { PackwrightError } from '../errors/packwright-error.js';
import { formatCommitObject, type NewCommit } from '../objects/commit-object.js';
import { formatTagObject, type NewTag } from '../objects/tag-object.js';
import { serializeTree, type NewTreeEntry } from '../objects/tree.js';
import type { Store } from '../odb/store.js';

function checkId(hex: string, hashLength: number, what: string): void {
  if (hex.length !== 2 * hashLength || !/^[0-9a-f]+$/.test(hex)) throw new PackwrightError('INVALID_ARGUMENT', `${what}: '${hex}' is not a ${hashLength === 20 ? 'SHA-1' : 'SHA-256'} id in lowercase hex`);
}

export function writeBlobTo(store: Store, data: Uint8Array | string): string {
  return store.writeLoose('blob', typeof data === 'string' ? Buffer.from(data, 'utf8') : data).toString('hex');
}

export function writeTreeTo(store: Store, entries: readonly NewTreeEntry[]): string {
  return store.writeLoose('tree', serializeTree(entries, store.hashLength)).toString('hex');
}

export function writeCommitTo(store: Store, commit: NewCommit): string {
  checkId(commit.tree, store.hashLength, 'tree');
  for (const p of commit.parents ?? []) checkId(p, store.hashLength, 'parent');
  return store.writeLoose('commit', formatCommitObject(commit)).toString('hex');
}

export function writeTagTo(store: Store, tag: NewTag): string {
  checkId(tag.object, store.hashLength, 'object');
  return store.writeLoose('tag', formatTagObject(tag)).toString('hex');
}
