import { IDX_LARGE_OFFSET } from '../idx/idx-format.js';
import { hashLength, type ObjectFormat } from '../hash/object-format.js';
import { PackIndex } from '../idx/pack-index.js';
import { indexPack, type IndexPackOptions, type IndexPackResult } from './index-pack.js';

/**
 * Verifies a pack against its index as `git verify-pack` does: rebuilds the index (hashing every
 * object) with the version and 64-bit threshold read from the existing one (git's
 * `read_idx_option`) and requires identical bytes. Throws IDX_MISMATCH or the pack's error.
 */
export async function verifyPack(idxPath: string, format: ObjectFormat, options: Pick<IndexPackOptions, 'signal' | 'onProgress' | 'threads' | 'maxMemory' | 'depths' | 'visitor' | 'workerScript' | 'extentsFromIndex' | 'existingIndex' | 'detectCollisions'> = {}): Promise<IndexPackResult> {
  const existing = options.existingIndex !== undefined ? indexOptionsFrom(options.existingIndex) : indexOptionsOf(idxPath, format);
  const opts: IndexPackOptions = { ...options, ...existing, objectFormat: format, verify: true, indexPath: idxPath };
  return indexPack(idxPath.replace(/\.idx$/, '.pack'), opts);
}

/**
 * The version and 64-bit threshold an existing index was written with (git's read_idx_option):
 * what `--verify` must rebuild it with to compare bytes. The threshold is the smallest offset the
 * 64-bit table holds, less one.
 */
export function indexOptionsOf(idxPath: string, format: ObjectFormat): Pick<IndexPackOptions, 'idxVersion' | 'largeOffsetLimit'> {
  const H = hashLength(format);
  // Read whole (its every entry is compared), through the same open as the store's (typed errors).
  const existing = PackIndex.open(idxPath, H, { lazyMin: Infinity });
  try {
    return indexOptionsFrom(existing);
  } finally {
    existing.close();
  }
}

/** `indexOptionsOf` for an index already open. */
export function indexOptionsFrom(existing: PackIndex): Pick<IndexPackOptions, 'idxVersion' | 'largeOffsetLimit'> {
  const H = existing.hashLength;
  const opts: Pick<IndexPackOptions, 'idxVersion' | 'largeOffsetLimit'> = { idxVersion: existing.version };
  if (existing.version === 2) {
    let smallestLarge = Infinity;
    const table = 8 + 1024 + existing.count * (H + 4);
    const data = existing.data;
    for (let i = 0; i < existing.count; i++) {
      if (data.readUInt32BE(table + 4 * i) & IDX_LARGE_OFFSET) smallestLarge = Math.min(smallestLarge, existing.offset(i));
    }
    if (smallestLarge !== Infinity) opts.largeOffsetLimit = smallestLarge - 1;
  }
  return opts;
}
