import { isNotFound, readDirIfPresent } from '../io/read-dir-if-present.js';
import { lstatSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { StoreHandle } from './store-handle.js';

/** A file git's `count-objects -v` reports as garbage, and why. */
export interface GarbageFile {
  path: string;
  /** git's words: "garbage found", "no corresponding .idx", "no corresponding .pack", … */
  reason: string;
  size: number;
}

/** What `git count-objects -v` reports, in bytes (the CLI prints KiB as git does). */
export interface ObjectCounts {
  /** Loose objects in the store's own directory. */
  count: number;
  /** Their disk usage (allocated blocks, as git's on_disk_bytes). */
  size: number;
  /** Objects in the store's own packs (alternates' packs are not counted, as in git). */
  inPack: number;
  packs: number;
  /** Bytes of those packs and their indexes. */
  sizePack: number;
  /** Loose objects that are also in a pack. */
  prunePackable: number;
  garbage: GarbageFile[];
  sizeGarbage: number;
  alternates: string[];
}

/** Suffixes git keeps in a pack directory (packfile.c, prepare_pack). */
const PACK_FILES = ['.idx', '.rev', '.pack', '.bitmap', '.keep', '.promisor', '.mtimes'];

/** `git count-objects -v` as data: loose objects, the store's own packs, garbage, alternates. */
export function countObjects(handle: StoreHandle): ObjectCounts {
  const objectsDir = handle.store.objectsDir;
  const H2 = handle.hashLength * 2;
  const out: ObjectCounts = { count: 0, size: 0, inPack: 0, packs: 0, sizePack: 0, prunePackable: 0, garbage: [], sizeGarbage: 0, alternates: [] };
  const garbage = (path: string, reason: string): void => {
    let size = 0;
    try {
      size = statSync(path).size;
    } catch {
      // Gone already: counted, with no size, as git counts it.
    }
    out.garbage.push({ path, reason, size });
    out.sizeGarbage += size;
  };
  const packs = handle.packs();
  for (let b = 0; b < 256; b++) {
    const sub = b.toString(16).padStart(2, '0');
    const dir = join(objectsDir, sub);
    const names = readDirIfPresent(dir, 'loose object directory');
    if (names === undefined) continue;
    names.sort();
    for (const name of names) {
      const path = join(dir, name);
      if (name.length !== H2 - 2 || !/^[0-9a-f]+$/.test(name)) {
        garbage(path, 'garbage found');
        continue;
      }
      let st;
      try {
        st = lstatSync(path);
      } catch {
        // As git's count-objects: what cannot be examined is reported as garbage, by name.
        garbage(path, 'garbage found');
        continue;
      }
      if (!st.isFile()) {
        garbage(path, 'garbage found');
        continue;
      }
      out.count++;
      out.size += st.blocks * 512;
      const id = Buffer.from(sub + name, 'hex');
      if (packs.some((p) => (p.tryIndex()?.find(id) ?? -1) >= 0)) out.prunePackable++;
    }
  }
  const packDir = join(objectsDir, 'pack');
  for (const p of packs) {
    if (!p.packPath.startsWith(packDir + '/')) continue;
    const index = p.tryIndex();
    if (index === undefined) continue;
    out.inPack += index.count;
    out.packs++;
    out.sizePack += fileSize(p.packPath) + fileSize(p.idxPath);
  }
  packGarbage(packDir, garbage);
  out.alternates = handle.looseDirs().slice(1);
  return out;
}

/**
 * git's report_pack_garbage: a file of a known suffix whose base has not both a `.pack` and an
 * `.idx` is reported with what is missing; a file of no known suffix is garbage.
 */
function packGarbage(packDir: string, garbage: (path: string, reason: string) => void): void {
  const names = readDirIfPresent(packDir, 'pack directory');
  if (names === undefined) return;
  const known: string[] = [];
  for (const name of names) {
    if (name === 'multi-pack-index') continue;
    if (name.startsWith('multi-pack-index') && (name.endsWith('.bitmap') || name.endsWith('.rev'))) continue;
    if (PACK_FILES.some((s) => name.endsWith(s))) known.push(join(packDir, name));
    else garbage(join(packDir, name), 'garbage found');
  }
  known.sort();
  const byBase = new Map<string, string[]>();
  for (const path of known) {
    const base = path.slice(0, path.lastIndexOf('.') + 1);
    byBase.set(base, [...(byBase.get(base) ?? []), path]);
  }
  for (const [base, files] of byBase) {
    const pack = files.includes(`${base}pack`);
    const idx = files.includes(`${base}idx`);
    if (pack && idx) continue;
    const reason = pack ? 'no corresponding .idx' : idx ? 'no corresponding .pack' : 'no corresponding .idx or .pack';
    for (const f of files) garbage(f, reason);
  }
}

function fileSize(path: string): number {
  try {
    return statSync(path).size;
  } catch (e) {
    if (!isNotFound(e)) throw e;
    // Removed since it was listed (a concurrent gc): counted with no size, as git counts it.
    return 0;
  }
}

/** git's strbuf_humanise_bytes: "1.50 KiB", "12.00 MiB", "3 bytes". */
export function humaniseBytes(bytes: number): string {
  const two = (n: number): string => String(n).padStart(2, '0');
  if (bytes > 2 ** 30) return `${Math.floor(bytes / 2 ** 30)}.${two(Math.floor((bytes % 2 ** 30) / 10737419))} GiB`;
  if (bytes > 2 ** 20) {
    const x = bytes + 5243;
    return `${Math.floor(x / 2 ** 20)}.${two(Math.floor(((x % 2 ** 20) * 100) / 2 ** 20))} MiB`;
  }
  if (bytes > 2 ** 10) {
    const x = bytes + 5;
    return `${Math.floor(x / 2 ** 10)}.${two(Math.floor(((x % 2 ** 10) * 100) / 2 ** 10))} KiB`;
  }
  return `${bytes} ${bytes === 1 ? 'byte' : 'bytes'}`;
}
