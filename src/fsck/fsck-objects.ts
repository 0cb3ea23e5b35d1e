import { readDirIfPresent } from '../io/read-dir-if-present.js';
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { ObjectTable } from '../walk/object-table.js';
import { isPackwrightError, throwIfAborted } from '../errors/packwright-error.js';
import { hashBytes } from '../hash/hash-object.js';
import { isHex } from '../hash/hex.js';
import { checkSpecialBlob } from './check-object.js';
import { fsckMessageId, type FsckMessageKey } from './fsck-messages.js';
import { OBJ_BLOB, OBJ_COMMIT, OBJ_TAG, OBJ_TREE, TYPE_NAMES, typeNumber } from '../objects/object-type.js';
import { listedObjects, type StorePack, type StoredObject } from '../odb/store-pack.js';
import { verifyPack } from '../resolve/verify-pack.js';
import type { LinkRecords } from './link-records.js';
import { CHECKED_TYPES, FSCK_WORKER, ObjectChecker, PACK_CHECKER, type CheckFindings, type PackCheckOptions } from './pack-checker.js';
import { FsckState, HAS_OBJ, USED, PROMISOR, IN_PACK, LISTED, type LinkChunk } from './fsck-state.js';
import { FSCK_ERROR_OBJECT, FSCK_ERROR_PACK, type FsckMessageKind } from './fsck-options.js';

/** Every object the store lists, in one table shared with the pack checkers. */
export function list(s: FsckState): void {
  const H = s.H;
  const packs = s.handle.packs();
  const looseDirs = s.handle.looseDirs();
  const loose: { dir: string; hex: string; path: string }[] = [];
  s.cruft = [];
  for (const dir of looseDirs) {
    for (let b = 0; b < 256; b++) {
      const sub = b.toString(16).padStart(2, '0');
      const names = readDirIfPresent(join(dir, sub), 'loose object directory');
      if (names === undefined) continue;
      names.sort();
      for (const name of names) {
        const path = join(dir, sub, name);
        if (name.length === 2 * H - 2 && isHex(name) && name === name.toLowerCase()) loose.push({ dir, hex: sub + name, path });
        else if (!name.startsWith('tmp_obj_')) s.cruft.push(path);
      }
    }
  }
  const capacity = loose.length + listedObjects(packs);
  const table = (s.table = ObjectTable.shared(H, capacity + 1));
  s.flags = new Uint8Array(capacity + 1);
  for (const p of packs) {
    const index = p.tryIndex();
    if (index === undefined) continue;
    const bits = IN_PACK | LISTED | (p.markers.promisor ? PROMISOR : 0);
    // Each id's number, by its position in the index: the pack check finds its objects by it.
    const numbers = new Int32Array(index.count);
    s.packNumbers.set(p, numbers);
    let at = 0;
    // In blocks of ids (a view of the index once loaded): no Buffer per id.
    for (const { count, ids } of index.idBlocks(4096)) {
      for (let i = 0; i < count; i++) {
        const n = table.intern(ids, i * H);
        numbers[at++] = n;
        s.flags[n] = (s.flags[n] as number) | bits;
      }
    }
  }
  s.looseList = loose.map((l) => {
    const n = table.intern(Buffer.from(l.hex, 'hex'));
    s.flags[n] = (s.flags[n] as number) | LISTED;
    return { ...l, n };
  });
}

/** git's fsck_loose for every loose object, in directory order, with git's messages. */
export function checkLoose(s: FsckState): void {
  const checker = new ObjectChecker(s.H, checkOptions(s));
  const found: { n: number; k: number }[] = [];
  for (const cruft of s.cruft) s.say('error', `bad sha1 file: ${displayPath(cruft, s.o.cwd)}`);
  s.looseList.forEach((l, k) => {
    const obj = readLooseForCheck(s, l.path, l.hex);
    if (obj === undefined) {
      s.status |= FSCK_ERROR_OBJECT;
      return;
    }
    const n = l.n;
    s.flags[n] = (s.flags[n] as number) | HAS_OBJ;
    s.table.types[n] = obj.type;
    checker.check(k, obj.type, obj.data, () => l.hex);
    s.checked++;
    found.push({ n, k });
  });
  const numberOf = new Int32Array(s.looseList.length).fill(-1);
  for (const f of found) numberOf[f.k] = f.n;
  takeFindings(s, [checker.finish()], numberOf, (k) => s.looseList[k]?.hex ?? '', FSCK_ERROR_OBJECT);
}

/** git's read_loose_object and its error lines; undefined when the object failed. */
export function readLooseForCheck(s: FsckState, path: string, hex: string): { type: number; data: Buffer } | undefined {
  const shown = displayPath(path, s.o.cwd);
  let file: Buffer;
  try {
    file = readFileSync(path);
  } catch (e) {
    s.say('error', `error: unable to mmap ${shown}: ${(e as Error).message}`);
    s.say('error', `error: ${hex}: object corrupt or missing: ${shown}`, { id: hex });
    return undefined;
  }
  const head = Buffer.alloc(64);
  const got = s.repo.store.inflater.inflatePrefix(file, 0, file.length, head, 0, head.length);
  const nul = got > 0 ? head.subarray(0, got).indexOf(0) : -1;
  if (got < 0 || nul < 0) {
    if (got < 0) s.say('error', `error: inflate: ${zlibWords(s.repo.store.inflater.lastError)}`);
    s.say('error', `error: unable to unpack header of ${shown}`);
    s.say('error', `error: ${hex}: object corrupt or missing: ${shown}`, { id: hex });
    return undefined;
  }
  const header = head.toString('latin1', 0, nul);
  const m = /^([^ ]+) (0|[1-9][0-9]*)$/.exec(header);
  if (m === null) {
    s.say('error', `error: unable to parse header of ${shown}`);
    s.say('error', `error: ${hex}: object corrupt or missing: ${shown}`, { id: hex });
    return undefined;
  }
  const typeName = m[1] as string;
  const size = Number(m[2]);
  const total = nul + 1 + size;
  const out = Buffer.allocUnsafe(total + 1);
  const consumed = s.repo.store.inflater.inflateExact(file, 0, file.length, out, 0, total);
  if (consumed < 0 || consumed !== file.length) {
    s.say('error', consumed < 0 ? `error: corrupt loose object '${hex}'` : `error: garbage at end of loose object '${hex}'`, { id: hex });
    s.say('error', `error: unable to unpack contents of ${shown}`);
    s.say('error', `error: ${hex}: object corrupt or missing: ${shown}`, { id: hex });
    return undefined;
  }
  const data = out.subarray(nul + 1, total);
  const real = hashBytes(s.repo.format, out.subarray(0, total)).toString('hex');
  const type = TYPE_NAMES.indexOf(typeName as (typeof TYPE_NAMES)[number]);
  let bad = false;
  if (real !== hex) {
    s.say('error', `error: ${real}: hash-path mismatch, found at: ${shown}`, { id: real });
    bad = true;
  }
  if (type <= 0) {
    s.say('error', `error: ${real}: object is of unknown type '${typeName}': ${shown}`, { id: real });
    bad = true;
  }
  return bad ? undefined : { type, data };
}

export function checkOptions(s: FsckState): PackCheckOptions {
  return { rules: s.rules.toJSON(), table: s.table.sharedParts, tagNames: s.o.tags === true };
}

/** Every pack verified with index-pack's resolver, its objects checked by the pack checker on all threads. */
export async function checkPacks(s: FsckState): Promise<void> {
  const packs = s.handle.packs();
  const total = listedObjects(packs);
  let before = 0;
  for (const pack of packs) {
    throwIfAborted(s.o.signal);
    const index = pack.tryIndex();
    if (index === undefined) {
      s.error(pack.error?.message ?? `unable to open ${pack.idxPath}`, FSCK_ERROR_PACK);
      continue;
    }
    const options = checkOptions(s);
    const progress = s.o.onProgress;
    const base = before;
    try {
      const started = performance.now();
      const result = await verifyPack(pack.idxPath, s.repo.format, {
        // Unless told, index-pack's rule: git's thread count, one thread for a small pack.
        ...(s.o.threads !== undefined ? { threads: s.o.threads } : {}),
        visitor: { name: PACK_CHECKER, types: CHECKED_TYPES, options },
        // git's verify_packfile walks the entries the index lists: so does this pass 1, which
        // needs the pack held whole (up to index-pack's memoryLimit, 1 GiB): fsck is not under
        // index-pack's ceiling (git's fsck holds a struct for every object as well).
        extentsFromIndex: true,
        maxMemory: Infinity,
        existingIndex: index,
        workerScript: FSCK_WORKER,
        ...(s.o.signal !== undefined ? { signal: s.o.signal } : {}),
        ...(progress !== undefined ? { onProgress: (_phase: string, done: number) => progress('checking objects', base + Math.min(done, index.count), total) } : {}),
      });
      s.ms['verify'] = (s.ms['verify'] ?? 0) + performance.now() - started;
      for (const [phase, ms] of Object.entries(result.stats.phases)) s.ms[`verify ${phase}`] = (s.ms[`verify ${phase}`] ?? 0) + ms;
      const scan = result.scan;
      const H = s.H;
      const numberOf = new Int32Array(scan.count);
      // The verify checked each entry's id against the index at its position (pack order).
      const numbers = s.packNumbers.get(pack);
      const { positions } = index.packOrder();
      for (let k = 0; k < scan.count; k++) {
        const n = numbers !== undefined ? (numbers[positions[k] as number] as number) : s.table.find(scan.ids, k * H);
        numberOf[k] = n;
        if (n < 0) continue;
        s.flags[n] = (s.flags[n] as number) | HAS_OBJ;
        s.table.types[n] = scan.resolvedTypes[k] as number;
      }
      s.checked += scan.count;
      const idHex = (k: number): string => Buffer.from(scan.ids.buffer, scan.ids.byteOffset + k * H, H).toString('hex');
      // Each thread's links stay its own chunk: merging them would copy them all once more.
      takeFindings(s, result.visits as CheckFindings[], numberOf, idHex, FSCK_ERROR_PACK, pack.markers.promisor);
      for (let k = 0; k < scan.count && s.gitmodules.size + s.gitattributes.size > 0; k++) {
        if (scan.resolvedTypes[k] !== OBJ_BLOB) continue;
        const hex = idHex(k);
        // git checks a special blob as it verifies the pack when a tree named it earlier (trees
        // come before blobs in a pack): its findings then count against the pack.
        if (s.gitmodules.has(hex) || s.gitattributes.has(hex)) s.specialInPack.add(hex);
      }
    } catch (e) {
      if (!isPackwrightError(e) || e.code === 'ABORTED') throw e;
      s.error(e.message, FSCK_ERROR_PACK);
      if (!packChecksumMatches(pack, s.H)) s.error(`${pack.packPath} pack checksum mismatch`, FSCK_ERROR_PACK);
    }
    before += index.count;
    progress?.('checking objects', before, total);
  }
}

/**
 * Reports a checker's findings in order and keeps its links. An error counts as `bit`: git's
 * fsck_loose sets ERROR_OBJECT, while a packed object's errors make the pack's verification fail.
 */
export function takeFindings(s: FsckState, parts: CheckFindings[], numberOf: Int32Array, idHex: (k: number) => string, bit: number, promisor = false): void {
  const f = { findings: parts.flatMap((p) => p.findings), treeErrors: parts.flatMap((p) => p.treeErrors) };
  const typeOfK = (k: number): number => {
    const n = numberOf[k] as number;
    return n >= 0 ? (s.table.types[n] as number) : 0;
  };
  // Per object, as git prints them: the tree's decoding error and "broken links", then the checks.
  const treeErrors = new Map(f.treeErrors);
  const byK = new Map<number, typeof f.findings>();
  for (const x of f.findings) {
    const list = byK.get(x.k) ?? [];
    list.push(x);
    byK.set(x.k, list);
  }
  const ks = [...new Set([...treeErrors.keys(), ...byK.keys()])].sort((a, b) => a - b);
  for (const k of ks) {
    const hex = idHex(k);
    const e = treeErrors.get(k);
    if (e !== undefined) {
      s.say('error', `error: ${e}`, { id: hex });
      s.objectError(OBJ_TREE, hex, 'broken links');
    }
    for (const x of byK.get(k) ?? []) {
      if (x.severity === 'error') s.status |= bit;
      const kind = x.severity === 'error' ? 'error' : 'warning';
      s.say(kind, `${kind === 'error' ? 'error' : 'warning'} in ${TYPE_NAMES[x.type || typeOfK(k)] || 'unknown'} ${s.describe(hex)}: ${x.msgId}: ${x.message}`, { id: hex, msgId: x.msgId });
    }
  }
  const tagNames = new Map(parts.flatMap((p) => p.tagNames));
  // `root` and `tagged` lines in pack order, as git prints them while verifying, whichever thread checked the object.
  const shown: [number, FsckMessageKind, string, string][] = [];
  for (const part of parts) {
    for (const id of part.gitmodules) s.gitmodules.add(id);
    for (const id of part.gitattributes) s.gitattributes.add(id);
    const unknown = internUnknown(s, part.links);
    for (const records of part.links.records) {
      s.chunks.push({ records, numberOf, unknown });
      if (promisor) s.promisorChunks.add(s.chunks.length - 1);
      if (s.o.root === true || s.o.tags === true) rootsAndTags(s, s.chunks.length - 1, tagNames, idHex, shown);
    }
  }
  for (const [, kind, text, id] of shown.sort((a, b) => a[0] - b[0])) s.say(kind, text, { id });
}

export function internUnknown(s: FsckState, links: LinkRecords): Int32Array {
  const H = s.H;
  const count = links.unknown.length / H;
  const out = new Int32Array(count);
  for (let i = 0; i < count; i++) {
    out[i] = s.table.intern(links.unknown, i * H);
    if (s.table.added) s.growFlags();
  }
  return out;
}

/** `root <id>` for parentless commits and `tagged …` for tags, as git prints them while checking. */
export function rootsAndTags(s: FsckState, chunkIndex: number, tagNames: Map<number, string>, idHex: (k: number) => string, into: [number, FsckMessageKind, string, string][]): void {
  const chunk = s.chunks[chunkIndex] as LinkChunk;
  const r = chunk.records;
  for (let p = 0; p < r.length;) {
    const k = r[p] as number;
    const count = r[p + 1] as number;
    const n = chunk.numberOf?.[k] ?? k;
    const type = s.table.types[n] as number;
    if (type === OBJ_COMMIT && s.o.root === true) {
      let parents = 0;
      for (let i = 0; i < count; i++) if (r[p + 3 + 2 * i] === OBJ_COMMIT) parents++;
      if (parents === 0) into.push([k, 'root', `root ${s.describe(idHex(k))}`, idHex(k)]);
    }
    if (type === OBJ_TAG && s.o.tags === true && count > 0) {
      const t = s.target(chunk, r[p + 2] as number);
      const linkType = r[p + 3] as number;
      const hex = s.hexOf(t);
      into.push([k, 'tagged', `tagged ${TYPE_NAMES[linkType] || 'unknown'} ${s.describe(hex)} (${tagNames.get(k) ?? ''}) in ${s.describe(idHex(k))}`, hex]);
    }
    p += 2 + 2 * count;
  }
}

/**
 * Indexes every recorded object's links by object number, marks what they point to as used
 * (git's mark_used), and reports links whose target is an object of another type.
 */
export function resolveLinks(s: FsckState): void {
  s.growFlags();
  const count = s.table.count;
  s.linkChunk = new Uint16Array(count);
  s.linkAt = new Int32Array(count);
  const types = s.table.types;
  s.chunks.forEach((chunk, c) => {
    const r = chunk.records;
    const promisor = s.promisorChunks.has(c);
    for (let p = 0; p < r.length;) {
      const k = r[p] as number;
      const links = r[p + 1] as number;
      const n = chunk.numberOf !== undefined ? (chunk.numberOf[k] as number) : k;
      if (n >= 0 && s.linkChunk[n] === 0) {
        s.linkChunk[n] = c + 1;
        s.linkAt[n] = p;
      }
      let wrong: string | undefined;
      for (let i = 0; i < links; i++) {
        const t = s.target(chunk, r[p + 2 + 2 * i] as number);
        const linkType = r[p + 3 + 2 * i] as number;
        s.flags[t] = (s.flags[t] as number) | USED | (promisor ? PROMISOR : 0);
        if (types[t] === 0) types[t] = linkType;
        else if (linkType !== 0 && types[t] !== linkType && ((s.flags[t] as number) & HAS_OBJ)) {
          wrong ??= `object ${s.hexOf(t)} is a ${TYPE_NAMES[types[t] as number]}, not a ${TYPE_NAMES[linkType]}`;
        }
      }
      if (wrong !== undefined && n >= 0) {
        s.say('error', `error: ${wrong}`);
        s.objectError(types[n] as number, s.hexOf(n), 'broken links');
      }
      p += 2 + 2 * links;
    }
  });
}

/** git's fsck_finish: `.gitmodules` and `.gitattributes` blobs that trees named. */
export function checkSpecialBlobs(s: FsckState): void {
  const kinds: ['gitmodules' | 'gitattributes', Set<string>, FsckMessageKey, FsckMessageKey][] = [
    ['gitmodules', s.gitmodules, 'GITMODULES_MISSING', 'GITMODULES_BLOB'],
    ['gitattributes', s.gitattributes, 'GITATTRIBUTES_MISSING', 'GITATTRIBUTES_BLOB'],
  ];
  for (const [kind, ids, missingKey, blobKey] of kinds) {
    for (const hex of [...ids].sort()) {
      const id = Buffer.from(hex, 'hex');
      const n = s.table.find(id);
      const report = (key: FsckMessageKey, message: string, type = OBJ_BLOB): boolean => {
        const severity = s.rules.severity(key);
        if (severity === 'ignore' || s.rules.skip.has(hex)) return false;
        const isError = severity === 'error' || severity === 'fatal';
        if (isError) s.status |= s.specialInPack.has(hex) ? FSCK_ERROR_PACK : FSCK_ERROR_OBJECT;
        const word = isError ? 'error' : 'warning';
        s.say(isError ? 'error' : 'warning', `${word} in ${TYPE_NAMES[type]} ${s.describe(hex)}: ${fsckMessageId(key)}: ${message}`, { id: hex, msgId: fsckMessageId(key) });
        return isError;
      };
      let object: StoredObject | undefined;
      try {
        object = s.handle.read(id);
      } catch (e) {
        if (!isPackwrightError(e)) throw e;
      }
      if (object === undefined) {
        if (n >= 0 && ((s.flags[n] as number) & PROMISOR)) continue;
        report(missingKey, `unable to read ${kind === 'gitmodules' ? '.gitmodules' : '.gitattributes'} blob`);
        continue;
      }
      if (object.type !== 'blob') {
        report(blobKey, `non-blob found at ${kind === 'gitmodules' ? '.gitmodules' : '.gitattributes'}`, typeNumber(object.type));
        continue;
      }
      if (s.rules.skip.has(hex)) continue;
      checkSpecialBlob(kind, object.data, (key, message) => report(key, message));
    }
  }
}

/** git's printed paths: relative to the working directory, as its object directory path is. */
function displayPath(path: string, cwd = process.cwd()): string {
  const r = relative(cwd, path);
  if (r.startsWith('..')) return path;
  return r.startsWith('.') ? r : `./${r}`;
}

/** zlib's words for an inflate error, as git's zlib.c prints them (`data stream error (incorrect header check)`). */
function zlibWords(lastError: string): string {
  const m = /^(Z_[A-Z_]+)(?:: (.*))?$/.exec(lastError);
  const words: Record<string, string> = {
    Z_DATA_ERROR: 'data stream error', Z_MEM_ERROR: 'out of memory', Z_BUF_ERROR: 'needs more space in the output buffer',
    Z_NEED_DICT: 'needs dictionary', Z_STREAM_ERROR: 'stream consistency error', Z_VERSION_ERROR: 'wrong version',
  };
  if (m === null) return `data stream error (${lastError || 'no message'})`;
  return `${words[m[1] as string] ?? 'unknown error'} (${m[2] ?? 'no message'})`;
}

/** Whether a pack's trailer is the hash of the rest of it (git's "pack checksum mismatch" otherwise). */
function packChecksumMatches(pack: StorePack, H: number): boolean {
  try {
    const data = readFileSync(pack.packPath);
    return hashBytes(H === 20 ? 'sha1' : 'sha256', data.subarray(0, data.length - H)).equals(data.subarray(data.length - H));
  } catch {
    // Asked only of a pack that already failed its check: unreadable is "does not match" there.
    return false;
  }
}
