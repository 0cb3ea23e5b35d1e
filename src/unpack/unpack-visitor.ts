import { toHex } from '../hash/hex.js';
import { hashLength, type ObjectFormat } from '../hash/object-format.js';
import { OBJ_BLOB } from '../objects/object-type.js';
import { writeLoose, type WriteLooseOptions } from '../loose/write-loose.js';
import { Store } from '../odb/store.js';
import { registerPackVisitor, type PackVisitor } from '../resolve/pack-visitor.js';
import type { PackView } from '../resolve/pack-visitor.js';
import { ObjectChecker, type CheckFindings, type PackCheckOptions } from '../fsck/pack-checker.js';

export interface UnpackVisitorOptions {
  objectsDir: string;
  format: ObjectFormat;
  /** OpenStoreOptions.alternates: what they hold is not written again. */
  alternates: readonly string[];
  /** Write nothing (`-n`). */
  dryRun: boolean;
  loose: WriteLooseOptions;
  /** `--strict`: check objects and hold commits, trees and tags back until their links are known good. */
  check: PackCheckOptions | undefined;
}

/** What one thread of unpack-objects did. */
export interface UnpackThreadResult {
  written: number;
  /** With --strict: the checks' findings and links, and the objects held back (id, type, contents). */
  checks: CheckFindings | undefined;
  held: { id: Uint8Array; type: number; data: Uint8Array }[];
}

export const UNPACK_VISITOR = 'unpack-objects';

registerPackVisitor(UNPACK_VISITOR, (raw: unknown, state: PackView): PackVisitor => {
  const o = raw as UnpackVisitorOptions;
  const H = hashLength(o.format);
  const ids = state.ids;
  // This thread's view of the repository: an object already there is not written again (git's
  // write_object_file freshens it instead).
  let store: Store | undefined;
  const checker = o.check !== undefined ? new ObjectChecker(H, o.check) : undefined;
  const held: UnpackThreadResult['held'] = [];
  let written = 0;
  return {
    visit(k, type, data) {
      const id = ids.subarray(k * H, k * H + H);
      if (checker !== undefined) {
        checker.check(k, type, data, () => toHex(id));
        if (type !== OBJ_BLOB) {
          // Written once every link is known to be there (git's write_rest).
          held.push({ id: Uint8Array.from(id), type, data: Uint8Array.from(data) });
          return;
        }
      }
      if (o.dryRun) return;
      store ??= Store.open(o.objectsDir, { objectFormat: o.format, refresh: 'never', alternates: o.alternates });
      if (store.objects.has(id, { refresh: false })) return;
      if (writeLoose(o.objectsDir, toHex(id), type, data, o.loose)) written++;
    },
    finish: (): UnpackThreadResult => ({ written, checks: checker?.finish(), held }),
    close(): void {
      store?.close();
      store = undefined;
    },
  };
});
