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
