import { basename } from 'node:path';
import { bitmapFileBytes } from '../bitmap/bitmap-bytes.js';
import { PackwrightError } from '../errors/packwright-error.js';
import type { MultiPackIndex } from '../midx/multi-pack-index.js';
import { OBJ_COMMIT } from '../objects/object-type.js';
import { peelObject } from '../odb/peel-object.js';
import type { Store } from '../odb/store.js';
import { ObjectTable } from '../walk/object-table.js';
import { openBitmap } from '../walk/bitmapped-objects.js';
import { walkCommits } from '../walk/walk-objects.js';
import { buildPackBitmaps } from './pack-bitmaps.js';

/** What a multi-pack bitmap is built from: the tips its commits are chosen among, and git's options. */
export interface MultiPackBitmapOptions {
  /**
   * The tips whose history the bitmapped commits are chosen from: git's are every ref's (or the
   * lines of `--refs-snapshot`), tags peeled, anything but a commit passed over. `preferred`:
   * a tip pack.preferBitmapTips names (a `+` line), which wins its stretch of history.
   */
  tips: readonly { id: Uint8Array; preferred?: boolean }[];
  /** Write the hash cache (git's pack.writeBitmapHashCache, on by default): the name hashes the repository's bitmap had, 0 for the rest, as git 2.39's. */
  hashCache?: boolean | undefined;
  /** Write the lookup table (git's pack.writeBitmapLookupTable). */
  lookupTable?: boolean | undefined;
}

/**
 * The `multi-pack-index-<checksum>.bitmap` of `midx` (which must have its RIDX chunk), as git
 * 2.39's write_midx_bitmap makes it: every object the multi-pack-index covers, in its pseudo-pack
 * order; the commits the tips reach, in the order a walk meets them, given to git's selection
 * (the same as for one pack); each selected commit's set computed as for a pack. Pass it as
 * `writeMultiPackIndexFile`'s `bitmap` option. OBJECT_NOT_FOUND, as git's "doesn't have full
 * closure", when a selected commit reaches an object the multi-pack-index does not cover.
 */
export function multiPackBitmap(store: Store, midx: MultiPackIndex, options: MultiPackBitmapOptions): Buffer {
  const order = midx.reverseIndex();
  if (order === undefined) throw new PackwrightError('INVALID_ARGUMENT', `${midx.path} has no reverse index: a bitmap needs one`);
  const handle = store.handle();
  try {
    handle.refresh();
    // Every pack's trees are read, scattered: big recycled windows, not the packs whole.
    handle.preferDenseReads({ whole: false });
    const byName = new Map(handle.packs().map((p) => [basename(p.idxPath), p]));
    const packs = midx.packNames.map((name) => {
      const pack = byName.get(name);
      if (pack === undefined) throw new PackwrightError('PACK_MISSING', `could not open pack ${name}`);
      return pack;
    });
    // Object k of the table is bit k: the pseudo-pack order, with each type from its pack.
    const N = midx.count;
    const table = new ObjectTable(midx.hashLength, N);
    const data = midx.data;
    for (let k = 0; k < N; k++) {
      const m = order[k] as number;
      table.intern(data, midx.idPosition(m));
      const pack = packs[midx.packOf(m)] as (typeof packs)[number];
      const position = pack.index.find(data, midx.idPosition(m));
      if (position < 0) throw new PackwrightError('MIDX_CORRUPT', `${midx.path}: ${midx.id(m).toString('hex')} is not in ${basename(pack.idxPath)}`);
      table.types[k] = pack.loadInfoTable().types[position] as number;
    }
    const listed = Int32Array.from({ length: N }, (_, k) => k);
    // The commits the tips reach, as a walk meets them (git's find_commits_for_midx_bitmap), that
    // the file covers.
    const tips = [];
    const preferred: Uint8Array[] = [];
    for (const tip of options.tips) {
      const peeled = peelObject(handle, Buffer.from(tip.id), 'non-tag');
      if (peeled.kind !== 'found' || handle.typeAt(handle.locateOrThrow(peeled.id)) !== 'commit') continue;
      tips.push({ id: peeled.id, uninteresting: false, name: '' });
      if (tip.preferred === true) preferred.push(peeled.id);
    }
    const walk = walkCommits(handle, tips, { missing: 'allow-any' });
    const candidates: number[] = [];
    for (const c of walk.commits) {
      const n = table.find(walk.table.id(c));
      if (n >= 0 && table.types[n] === OBJ_COMMIT) candidates.push(n);
    }
    const built = buildPackBitmaps(handle, table, listed, listed, preferred, candidates);
    if (built === undefined) throw new PackwrightError('OBJECT_NOT_FOUND', "Failed to write bitmap index. Packfile doesn't have full closure (a selected commit reaches an object the multi-pack-index does not cover)");
    // Name hashes come from the bitmap the repository has now (git's create_bitmap_mapping): a
    // pack's, or the multi-pack-index's being replaced; git has no paths here to make them from.
    const hashes = new Uint32Array(N);
    const old = options.hashCache !== false ? openBitmap(handle, () => {}) : undefined;
    if (old?.bitmap.hashes !== undefined) {
      for (let m = 0; m < N; m++) {
        const bit = old.position(midx.id(m));
        if (bit >= 0) hashes[m] = old.nameHash(bit);
      }
    }
    return bitmapFileBytes({
      format: store.format,
      packHash: midx.checksum(),
      objectCount: N,
      types: built.types,
      entries: built.selected.map((n, k) => ({ indexPosition: order[n] as number, bits: built.sets[k] as (typeof built.sets)[number] })),
      ...(options.hashCache !== false ? { hashCache: hashes } : {}),
      lookupTable: options.lookupTable === true,
    });
  } finally {
    handle.close();
  }
}
