// git's peel_to_type and deref_tag on a store: tags followed (and, for a tree, a commit to its
// tree) until an object of the wanted type. Types come from the store's headers, so nothing but
// tags (and a commit on the way to its tree) is inflated.
import { toHex } from '../hash/hex.js';
import { parseCommit, parseTag } from '../objects/commit.js';
import type { ObjectType } from '../objects/object-type.js';
import type { StoreHandle } from './store-handle.js';

/** git gives up on a chain of tags this long. */
const MAX_PEEL_DEPTH = 64;

/**
 * Where peeling ended: at an object of the wanted type (`found`), at another kind of object it
 * cannot go past (`other`, with its type; a tag when the chain is too long), or at an id the store
 * lacks (`missing`).
 */
export type PeelResult = { kind: 'found'; id: Buffer } | { kind: 'other'; id: Buffer; type: ObjectType } | { kind: 'missing'; id: Buffer };

/** Peels `id` to an object of type `want`, or to whatever is not a tag (`'non-tag'`). */
export function peelObject(objects: StoreHandle, id: Buffer, want: ObjectType | 'non-tag'): PeelResult {
  let current = id;
  for (let depth = 0; depth < MAX_PEEL_DEPTH; depth++) {
    const location = objects.locate(current);
    if (location === undefined) return { kind: 'missing', id: current };
    const type = objects.typeAt(location);
    if (type === want || (want === 'non-tag' && type !== 'tag')) return { kind: 'found', id: current };
    if (type === 'tag') current = parseTag(objects.readTransientAt(location).data, objects.hashLength, () => toHex(current)).object;
    else if (type === 'commit' && want === 'tree') current = parseCommit(objects.readTransientAt(location).data, objects.hashLength, () => toHex(current)).tree;
    else return { kind: 'other', id: current, type };
  }
  return { kind: 'other', id: current, type: 'tag' };
}
