// The repository-level ref calls (Repository.listBranches, listTags, currentBranch, resolveRef,
// updateRef), in isomorphic-git's names: short names out, hex ids, writes through a ref transaction.
import { PackwrightError } from '../errors/packwright-error.js';
import { tryFromHex } from '../hash/hex.js';
import type { RefStore } from '../refs/ref-store.js';
import type { RefTransaction } from '../refs/ref-transaction.js';
import { DWIM_RULES } from '../refs/resolve-revision.js';
import { parseTag } from '../objects/commit.js';
import type { StoreHandle } from '../odb/store-handle.js';

/** Short names of the refs under `prefix` (git for-each-ref's order). */
export function shortNames(refs: RefStore, prefix: string): string[] {
  return refs.list(prefix).map((r) => r.name.slice(prefix.length));
}

/** The branch HEAD is on (`main`, or `refs/heads/main` with `fullname`); undefined when HEAD is detached. */
export function currentBranchOf(refs: RefStore, fullname: boolean): string | undefined {
  const head = refs.read('HEAD');
  if (head?.kind !== 'symbolic') return undefined;
  return fullname || !head.target.startsWith('refs/heads/') ? head.target : head.target.slice('refs/heads/'.length);
}

/** The id a ref name leads to, by git's rules for a short name (`main`, `v1`, `origin/main`, `HEAD`); REF_NOT_FOUND otherwise. */
export function resolveRefIn(refs: RefStore, ref: string): string {
  for (const rule of DWIM_RULES) {
    const id = refs.resolve(rule.replace('%s', ref));
    if (id !== undefined) return id.toString('hex');
  }
  throw new PackwrightError('REF_NOT_FOUND', `ref '${ref}' not found`);
}

/**
 * One ref update for `Repository.updateRef`, with an optional old value checked as `git update-ref` checks
 * it.
 */
export interface UpdateRefRequest {
  /** The full name (`refs/heads/main`, `HEAD`). */
  ref: string;
  /** The new id in hex; null deletes the ref. */
  value: string | null;
  /** Compare-and-swap: the id the ref must have now, null for "must not exist", undefined for no check. */
  oldValue?: string | null | undefined;
  /** The reflog message. */
  message?: string | undefined;
}

/** Queues `request` in `tx` and commits it (REF_MISMATCH, REF_LOCKED, REF_CONFLICT in git's words). */
export function updateRefWith(tx: RefTransaction, hashLength: number, request: UpdateRefRequest): void {
  const id = (hex: string, what: string): Buffer => {
    const b = tryFromHex(hex, hashLength);
    if (b === undefined) throw new PackwrightError('INVALID_ARGUMENT', `${what}: '${hex}' is not an object id`);
    return b;
  };
  const expect = request.oldValue === undefined ? undefined : request.oldValue === null ? 'absent' as const : id(request.oldValue, 'oldValue');
  const options = request.message !== undefined ? { message: request.message } : {};
  if (request.value === null) tx.delete(request.ref, expect === 'absent' ? undefined : expect, options);
  else tx.update(request.ref, id(request.value, 'value'), expect, options);
  tx.commit();
}

/** A ref as listRefs gives it: ids in hex, what an annotated tag peels to, where a symbolic ref points. */
export interface RefInfo {
  name: string;
  id: string;
  /** For a ref to an annotated tag: the object the tag (chain) finally names; undefined otherwise. */
  peeled?: string | undefined;
  /** For a symbolic ref: the ref it names. */
  target?: string | undefined;
}

/**
 * The refs under `prefix`, sorted as git for-each-ref sorts them, each tag peeled: from
 * packed-refs where it says, else by reading the tag (loose refs too, which refs.list leaves
 * unpeeled).
 */
export function listRefsIn(refs: RefStore, objects: StoreHandle, prefix: string): RefInfo[] {
  return refs.list(prefix).map((r) => {
    let peeled = r.peeled;
    if (peeled === undefined) {
      let id = r.id;
      for (let depth = 0; depth < 64; depth++) {
        const o = objects.has(id) ? objects.read(id) : undefined;
        if (o === undefined || o.type !== 'tag') break;
        id = parseTag(o.data, objects.hashLength, r.id.toString('hex')).object;
        peeled = id;
      }
    }
    return {
      name: r.name,
      id: r.id.toString('hex'),
      ...(peeled !== undefined ? { peeled: peeled.toString('hex') } : {}),
      ...(r.symbolicTarget !== undefined ? { target: r.symbolicTarget } : {}),
    };
  });
}
