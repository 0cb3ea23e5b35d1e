import { join } from 'node:path';
import { selectPacksToRepack, writeMultiPackIndexFile, type MidxRepackSelectOptions, type MidxWriteOptions } from '../odb/maintain-multi-pack-index.js';
import type { Store } from '../odb/store.js';
import { createPack, type CreatePackPhase, type CreatePackResult } from './create-pack.js';

/** Options of `repackMultiPackIndex`, as `git multi-pack-index repack` takes them. */
export interface MidxRepackOptions extends MidxRepackSelectOptions {
  /** OFS_DELTA in the new pack (`repack.useDeltaBaseOffset`, default true). */
  deltaBaseOffset?: boolean | undefined;
  threads?: number | undefined;
  signal?: AbortSignal | undefined;
  /** Progress of the new pack, then of the multi-pack-index written over it. */
  onPackProgress?: ((phase: CreatePackPhase, done: number, total: number, bytes?: number) => void) | undefined;
  /** Progress of each phase of the pack written: done of total. */
  onProgress?: MidxWriteOptions['onProgress'] | undefined;
}

/** What `repackMultiPackIndex` did: the packs chosen and the pack written. */
export interface MidxRepackResult {
  /** The packs whose objects went into the new pack (they stay until `expire`). */
  packs: string[];
  pack?: CreatePackResult;
}

/**
 * `git multi-pack-index repack`: the objects the multi-pack-index takes from the packs chosen by
 * `selectPacksToRepack` go into one new pack (stored data and deltas reused, as git's
 * pack-objects does for the list it is given), and the multi-pack-index is written again over
 * every pack. The old packs stay, now unreferenced, for `expire` to delete.
 */
export async function repackMultiPackIndex(store: Store, options: MidxRepackOptions): Promise<MidxRepackResult> {
  const selection = selectPacksToRepack(store, options);
  if (selection === undefined) return { packs: [] };
  const handle = store.handle();
  let pack: CreatePackResult;
  try {
    pack = await createPack({
      objects: handle,
      ids: selection.ids.map((id) => ({ id })),
      packBase: join(store.objectsDir, 'pack', 'pack'),
      deltaBaseOffset: options.deltaBaseOffset !== false,
      ...(options.threads !== undefined ? { threads: options.threads } : {}),
      ...(options.signal !== undefined ? { signal: options.signal } : {}),
      ...(options.onPackProgress !== undefined ? { onProgress: options.onPackProgress } : {}),
    });
  } finally {
    handle.close();
  }
  store.refresh();
  writeMultiPackIndexFile(store, {
    ...(options.onWarning !== undefined ? { onWarning: options.onWarning } : {}),
    ...(options.onProgress !== undefined ? { onProgress: options.onProgress } : {}),
  });
  return { packs: selection.packs, pack };
}
