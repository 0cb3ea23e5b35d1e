import { statSync } from 'node:fs';

/**
 * What a file is, as far as telling "the same file as before" goes: inode, size and change time
 * (`-` when it is not there). A source that failed to load is retried only once the stamp of one
 * of its files differs: an unchanged broken file is not reopened on every miss.
 */
export function fileStamp(path: string): string {
  try {
    const s = statSync(path, { bigint: true });
    return `${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}`;
  } catch {
    // Any failure reads as "not there": the stamp only decides whether loading is tried again,
    // and that load reports the real error.
    return '-';
  }
}

/**
 * Milliseconds since the file of `stamp` last changed (its later of modification and change
 * times), or Infinity for a missing file. File times are coarse (a clock tick of a few ms), so a
 * file written again within that tick at the same size keeps its stamp: a stamp is worth trusting
 * only once its file is older than that (git's "racily clean" rule for its index).
 */
export function stampAge(stamp: string, now = Date.now()): number {
  const [, , mtimeNs, ctimeNs] = stamp.split(':');
  if (mtimeNs === undefined || ctimeNs === undefined) return Infinity;
  const changed = BigInt(mtimeNs) > BigInt(ctimeNs) ? BigInt(mtimeNs) : BigInt(ctimeNs);
  return now - Number(changed / 1_000_000n);
}
