import { hashLength, type ObjectFormat } from '../hash/object-format.js';
import { PackIndex } from '../idx/pack-index.js';
import { indexPack, type IndexPackOptions, type IndexPackResult } from './index-pack.js';

/**
 * Verifies a pack against its index as `git verify-pack` does: rebuilds the index (hashing every
 * object) with the version and 64-bit threshold read from the existing one (git's
 * `read_idx_option`) and requires identical bytes. Throws IDX_MISMATCH or the pack's error.
 */
export async function verifyPack(idxPath: string, format: ObjectFormat, options: Pick<IndexPackOptions, 'signal' | 'onProgress'> = {}): Promise<IndexPackResult> {
  const H = hashLength(format);
  // Read whole (its every entry is compared), through the same open as the store's (typed errors).
  const existing = PackIndex.open(idxPath, H, { lazyMin: Infinity });
  const opts: IndexPackOptions = { ...options, objectFormat: format, verify: true, indexPath: idxPath, idxVersion: existing.version };
  if (existing.version === 2) {
    // The smallest offset stored in the 64-bit table sets the threshold.
    let smallestLarge = Infinity;
    const table = 8 + 1024 + existing.count * (H + 4);
    for (let i = 0; i < existing.count; i++) {
      if (existing.data.readUInt32BE(table + 4 * i) & 0x80000000) smallestLarge = Math.min(smallestLarge, existing.offset(i));
    }
    if (smallestLarge !== Infinity) opts.largeOffsetLimit = smallestLarge - 1;
  }
  return indexPack(idxPath.replace(/\.idx$/, '.pack'), opts);
}
