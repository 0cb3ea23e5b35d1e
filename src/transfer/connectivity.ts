// git's check_connected (connected.c): every object the new tips reach, that the existing refs do
// not, must be in the store. What a push or a fetch checks before its refs may name the new
// objects: a pack may be complete and still leave something out.
import { isPackwrightError } from '../errors/packwright-error.js';
import type { StoreHandle } from '../odb/store-handle.js';
import type { RevTip } from '../walk/rev-args.js';
import { walkObjectsSliced } from '../walk/walk-objects.js';

/** Options of `isConnected`: the tips to check, the refs taken as complete, cancellation. */
export interface ConnectivityOptions {
  /** Commits whose parents are not followed (the shallow boundary). */
  shallow?: readonly Uint8Array[] | undefined;
  /** A partial clone's: objects that promisor packs' objects name may be missing (git's --exclude-promisor-objects). */
  promisor?: boolean | undefined;
  signal?: AbortSignal | undefined;
}

/**
 * Whether everything `tips` reach is in `objects`, walking only what `known` (the ids of the
 * existing refs, which are connected already) does not reach: git's `rev-list --objects --stdin
 * --not --all`. False when an object is missing (or cannot be read); other failures are thrown.
 */
export async function isConnected(objects: StoreHandle, tips: readonly Uint8Array[], known: readonly Uint8Array[], options: ConnectivityOptions = {}): Promise<boolean> {
  if (tips.length === 0) return true;
  const revTips: RevTip[] = [];
  for (const id of tips) {
    if (!objects.has(id)) return false;
    revTips.push({ id: Buffer.from(id), uninteresting: false, name: '' });
  }
  for (const id of known) {
    // A ref naming an object this repository lacks (corrupt, or a race with gc) limits nothing.
    if (objects.has(id)) revTips.push({ id: Buffer.from(id), uninteresting: true, name: '' });
  }
  try {
    await walkObjectsSliced(objects, revTips, {
      missing: options.promisor === true ? 'allow-promisor' : 'error',
      ...(options.shallow !== undefined && options.shallow.length > 0 ? { shallow: options.shallow } : {}),
      ...(options.signal !== undefined ? { signal: options.signal } : {}),
    });
    return true;
  } catch (e) {
    if (isPackwrightError(e) && (e.code === 'OBJECT_NOT_FOUND' || e.code === 'OBJECT_CORRUPT' || e.code === 'LOOSE_CORRUPT')) return false;
    throw e;
  }
}
