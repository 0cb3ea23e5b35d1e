import { PackwrightError } from '../errors/packwright-error.js';
import { toHex } from '../hash/hex.js';
import { hashLength, type ObjectFormat } from '../hash/object-format.js';
import { Store } from '../odb/store.js';
import { ARENA_FACTOR } from '../pack/delta-base-cache.js';
import { ALL_VISITED_TYPES, registerPackVisitor, type PackVisitor } from '../resolve/pack-visitor.js';
import type { PackView } from '../resolve/pack-visitor.js';
import { CHECKED_TYPES, ObjectChecker, type CheckFindings, type PackCheckOptions } from './pack-checker.js';
import { typeNumber } from '../objects/object-type.js';

/** The repository whose copies incoming objects are compared with, as plain data for worker threads. */
export interface CompareWith {
  objectsDir: string;
  format: ObjectFormat;
  multiPackIndex: boolean;
  /** OpenStoreOptions.alternates (GIT_ALTERNATE_OBJECT_DIRECTORIES). */
  alternates: readonly string[];
}

export interface IndexPackVisitorOptions {
  /** `--fsck-objects` / `--strict`: commits, trees and tags checked as fsck checks them. */
  check?: PackCheckOptions | undefined;
  /** In a repository: every incoming object it already has must be the same object. */
  compare?: CompareWith | undefined;
}

export const INDEX_PACK_VISITOR = 'index-pack';

/** The types the visitor must be shown for these options. */
export function indexPackVisitorTypes(options: IndexPackVisitorOptions): number {
  // Every type for the comparison: any incoming object may already be in the repository.
  return (options.compare !== undefined ? ALL_VISITED_TYPES : 0) | (options.check !== undefined ? CHECKED_TYPES : 0);
}

/**
 * What a resolving thread's store for the comparisons may hold: bases of the repository's delta
 * chains (incoming objects come in delta-tree order, so the base of the copy just compared is
 * mostly the previous one) and pack windows. Charged to each thread by index-pack's memory plan:
 * with 32 MiB of windows, index-pack --stdin with collision detection (the default) in a
 * repository ran on one thread under the default ceiling, on a pack like gitoxide's. A stored copy
 * outside the windows costs a read, not a failure, and a fetch's pack holds few objects the
 * repository already has.
 */
const COMPARE_CACHE = 8 << 20;
const COMPARE_WINDOWS = 8 << 20;
export const COMPARE_BYTES_PER_THREAD = Math.ceil(COMPARE_CACHE * ARENA_FACTOR) + COMPARE_WINDOWS;

registerPackVisitor(INDEX_PACK_VISITOR, (raw: unknown, state: PackView): PackVisitor => {
  const o = raw as IndexPackVisitorOptions;
  const H = hashLength(state.format);
  const ids = state.ids;
  const checker = o.check !== undefined ? new ObjectChecker(H, o.check) : undefined;
  const compare = o.compare;
  // This thread's own view of the repository, opened at the first object: git's sha1_object
  // reads the stored copy while the incoming one is in hand, and so does this, on every thread.
  let store: Store | undefined;
  return {
    visit(k, type, data) {
      const id = ids.subarray(k * H, k * H + H);
      if (checker !== undefined && (CHECKED_TYPES & (1 << type)) !== 0) checker.check(k, type, data, () => toHex(id));
      if (compare === undefined) return;
      store ??= Store.open(compare.objectsDir, {
        objectFormat: compare.format, multiPackIndex: compare.multiPackIndex, refresh: 'never', threads: 1,
        deltaBaseCacheLimit: COMPARE_CACHE, windowBudget: COMPARE_WINDOWS, maxMemory: Infinity, alternates: compare.alternates,
      });
      const objects = store.objects;
      const where = objects.locate(id, { refresh: false });
      if (where === undefined) return;
      // Lent until the next read: no buffer is made for the stored copy. The resolver shows a
      // delta's base just before the delta, so the stored base is kept for it (when the
      // repository's pack has the same deltas, as when the pack is its own, the next read is
      // then one delta away).
      const theirs = objects.readTransientAt(where, true);
      if (typeNumber(theirs.type) !== type || !theirs.data.equals(data)) {
        throw new PackwrightError('OBJECT_CORRUPT', `SHA1 COLLISION FOUND WITH ${toHex(id)} !`, { file: state.name, offset: state.offsets[k] as number });
      }
    },
    finish: (): CheckFindings | undefined => checker?.finish(),
    close(): void {
      store?.close();
      store = undefined;
    },
  };
});
