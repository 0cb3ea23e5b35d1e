import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { ObjectTable } from '../walk/object-table.js';
import { isPackwrightError, throwIfAborted } from '../errors/packwright-error.js';
import { hashBytes } from '../hash/hash-object.js';
import { fromHex, isHex } from '../hash/hex.js';
import { readFileIfPresent } from '../io/read-file-if-present.js';
import { checkSpecialBlob, objectLinks, TreeEntryReader } from '../objects/check-object.js';
import { FsckRules, fsckMessageId, type FsckMessageKey } from '../objects/fsck-messages.js';
import { OBJ_BLOB, OBJ_COMMIT, OBJ_TAG, OBJ_TREE, TYPE_NAMES } from '../objects/object-type.js';
import { verifyMultiPackIndex } from '../odb/maintain-multi-pack-index.js';
import { verifyCommitGraph, type CommitLookup } from '../commit-graph/verify-commit-graph.js';
import { parseCommit } from '../objects/commit.js';
import type { StoreHandle } from '../odb/store-handle.js';
import { listedObjects, type StorePack } from '../odb/store-pack.js';
import { verifyPack } from '../resolve/verify-pack.js';
import { parseIndexFile } from '../repo/index-file.js';
import { readReflogFile, reflogFiles, type ReflogFile } from '../refs/reflog.js';
import type { Repository } from '../repo/repository.js';
import type { LinkRecords } from './link-records.js';
import { CHECKED_TYPES, FSCK_WORKER, ObjectChecker, PACK_CHECKER, type CheckFindings, type PackCheckOptions } from './pack-checker.js';
import { fsckRulesFromConfig } from './config-rules.js';


/** Bits of the exit status, as git's fsck sets them. */
export const FSCK_ERROR_OBJECT = 0o1;
export const FSCK_ERROR_REACHABLE = 0o2;
export const FSCK_ERROR_PACK = 0o4;
export const FSCK_ERROR_REFS = 0o10;
export const FSCK_ERROR_COMMIT_GRAPH = 0o20;
export const FSCK_ERROR_MULTI_PACK_INDEX = 0o40;

export interface FsckOptions {
  /** Check packed objects too (default true; git's --full). */
  full?: boolean;
  /** Only check that everything reachable is there (reads reachable trees and commits, checks nothing else). */
  connectivityOnly?: boolean;
  /** Warnings count as errors, and 100664 is a bad file mode (git's --strict). */
  strict?: boolean;
  /** Report unreachable objects nothing points to (default true). */
  dangling?: boolean;
  /** Report every unreachable object. */
  unreachable?: boolean;
  /** Report root commits. */
  root?: boolean;
  /** Report tags and what they point at. */
  tags?: boolean;
  /** Name objects by how they are reached (`refs/heads/main~2:src/`) in reports. */
  nameObjects?: boolean;
  /** Write dangling objects to `.git/lost-found/` (implies `full`, no reflogs). */
  lostFound?: boolean;
  /** Reflog entries are heads too (default true). */
  reflogs?: boolean;
  /** The index's objects are heads too (always when no `objects` are given). */
  cache?: boolean;
  /** Heads to check from instead of the refs (git's `<object>...`). */
  objects?: readonly string[];
  /** Threads for the pack checks, this one included (default: git's index-pack rule). */
  threads?: number;
  /** The directory file paths in messages are shown relative to, as git shows them (default: the process's). */
  cwd?: string;
  signal?: AbortSignal;
  onProgress?: (phase: 'checking objects' | 'checking connectivity', done: number, total: number) => void;
  /** Each message as it is found (also collected in the result). */
  onMessage?: (message: FsckMessage) => void;
}

export type FsckMessageKind = 'error' | 'warning' | 'notice' | 'broken-link' | 'missing' | 'dangling' | 'unreachable' | 'root' | 'tagged';

/** One line of fsck's report, as git prints it, with what it is about. */
export interface FsckMessage {
  kind: FsckMessageKind;
  /** git prints connectivity findings on stdout and errors, warnings and notices on stderr. */
  stream: 'stdout' | 'stderr';
  /** The text without its newline (a broken link takes two lines, joined by `\n`). */
  text: string;
  /** The object it is about (hex), when one. */
  id?: string;
  /** For object checks: git's message id (`badTimezone`). */
  msgId?: string;
}

export interface FsckResult {
  /** git's exit status: FSCK_ERROR_* bits, 0 when all is well. */
  status: number;
  messages: FsckMessage[];
  /** Objects the store lists (loose and packed, with alternates). */
  objects: number;
  /** Objects whose contents were checked. */
  checked: number;
  /** Objects reached from the heads. */
  reachable: number;
  ms: Record<string, number>;
}

// Per-object flags (git's builtin/fsck.c has the first four).
const REACHABLE = 1;
const HAS_OBJ = 4;
const USED = 8;
const PROMISOR = 16;
const IN_PACK = 32;
const LISTED = 64;

/**
 * Where one object's recorded links are: a chunk of records (a block of a thread's LinkRecords) and
 * an offset in it. Chunks are numbered in 16 bits: 65535 blocks of 256 KiB hold 2^31 links.
 */
interface LinkChunk {
  records: Int32Array;
  /** Object number of each `k` in the records (pack index or loose list index -> table number). */
  numberOf: Int32Array | undefined;
  /** Object number of each unknown id. */
  unknown: Int32Array;
}

/**
 * Checks a repository's object database as `git fsck` does: loose objects (hash, header, zlib
 * stream), then every pack verified and its objects checked in one pass on all threads (the pack
 * checker runs inside index-pack's resolver), then connectivity from the refs, HEADs, reflogs
 * and the index. Returns every finding as data, in git's words, with git's exit status.
 */
export async function fsck(repo: Repository, options: FsckOptions = {}): Promise<FsckResult> {
  const run = new FsckRun(repo, options);
  try {
    return await run.run();
  } finally {
    run.close();
  }
}

class FsckRun {
  private readonly H: number;
  private readonly handle: StoreHandle;
  private readonly rules: FsckRules;
  private table!: ObjectTable;
  private flags = new Uint8Array(0);
  private status = 0;
  private readonly messages: FsckMessage[] = [];
  private readonly chunks: LinkChunk[] = [];
  private readonly names = new Map<number, string>();
  private readonly ms: Record<string, number> = {};
  private lap = performance.now();
  private checked = 0;
  private linkChunk = new Uint16Array(0);
  private linkAt = new Int32Array(0);
  private readonly gitmodules = new Set<string>();
  private readonly gitattributes = new Set<string>();
  private defaultRefs = 0;
  private showUnreachable: boolean;
  private readonly pending: number[] = [];

  constructor(private readonly repo: Repository, private readonly o: FsckOptions) {
    this.H = repo.store.hashLength;
    this.handle = repo.store.handle();
    this.rules = fsckRulesFromConfig(repo.config, repo.store.hashLength * 2, o.strict === true);
    this.showUnreachable = o.unreachable === true;
  }

  close(): void {
    this.handle.close();
  }

  private time(phase: string): void {
    const now = performance.now();
    this.ms[phase] = now - this.lap;
    this.lap = now;
  }

  private say(kind: FsckMessageKind, text: string, extra: Pick<FsckMessage, 'id' | 'msgId'> = {}): void {
    const stream = kind === 'error' || kind === 'warning' || kind === 'notice' ? 'stderr' : 'stdout';
    const m: FsckMessage = { kind, stream, text, ...extra };
    this.messages.push(m);
    this.o.onMessage?.(m);
  }

  private error(text: string, bit: number, id?: string): void {
    this.status |= bit;
    this.say('error', `error: ${text}`, id === undefined ? {} : { id });
  }

  async run(): Promise<FsckResult> {
    const o = this.o;
    const lostFound = o.lostFound === true;
    const full = o.full !== false || lostFound;
    const connectivityOnly = o.connectivityOnly === true;
    this.list();
    this.time('list');
    if (connectivityOnly) {
      for (let n = 0; n < this.table.count; n++) if (((this.flags[n] as number) & LISTED)) this.flags[n] = (this.flags[n] as number) | HAS_OBJ;
    } else {
      this.checkLoose();
      this.time('loose');
      if (full) await this.checkPacks();
      this.time('packs');
    }
    this.resolveLinks();
    if (!connectivityOnly) this.checkSpecialBlobs();
    this.time('links');
    this.heads(lostFound ? false : o.reflogs !== false);
    this.time('heads');
    // Objects not checked above are read to walk their links: all of them with --connectivity-only,
    // every tree and commit when names are wanted. That is most of each pack, so read it in big
    // windows (whole when it fits) from the start, not entry by entry first.
    if (connectivityOnly || o.nameObjects === true) this.handle.preferDenseReads();
    this.traverse();
    if (connectivityOnly && (o.dangling !== false || lostFound)) this.markUnreachableReferents();
    this.report(lostFound);
    this.verifyCommitGraphs();
    this.verifyMidx();
    this.time('connectivity');
    let reachable = 0;
    for (let n = 0; n < this.table.count; n++) if (((this.flags[n] as number) & REACHABLE)) reachable++;
    let objects = 0;
    for (let n = 0; n < this.table.count; n++) if (((this.flags[n] as number) & LISTED)) objects++;
    return { status: this.status, messages: this.messages, objects, checked: this.checked, reachable, ms: this.ms };
  }

  // ---- listing -------------------------------------------------------------------------------

  /** Every object the store lists, in one table shared with the pack checkers. */
  private list(): void {
    const H = this.H;
    const packs = this.handle.packs();
    const looseDirs = this.handle.looseDirs();
    const loose: { dir: string; hex: string; path: string }[] = [];
    this.cruft = [];
    for (const dir of looseDirs) {
      for (let b = 0; b < 256; b++) {
        const sub = b.toString(16).padStart(2, '0');
        let names: string[];
        try {
          names = readdirSync(join(dir, sub));
        } catch {
          continue;
        }
        names.sort();
        for (const name of names) {
          const path = join(dir, sub, name);
          if (name.length === 2 * H - 2 && isHex(name) && name === name.toLowerCase()) loose.push({ dir, hex: sub + name, path });
          else if (!name.startsWith('tmp_obj_')) this.cruft.push(path);
        }
      }
    }
    const capacity = loose.length + listedObjects(packs);
    const table = (this.table = ObjectTable.shared(H, capacity + 1));
    this.flags = new Uint8Array(capacity + 1);
    for (const p of packs) {
      const index = p.tryIndex();
      if (index === undefined) continue;
      const bits = IN_PACK | LISTED | (p.markers.promisor ? PROMISOR : 0);
      // Each id's number, by its position in the index: the pack check finds its objects by it.
      const numbers = new Int32Array(index.count);
      this.packNumbers.set(p, numbers);
      let at = 0;
      // In blocks of ids (a view of the index once loaded): no Buffer per id.
      for (const { count, ids } of index.idBlocks(4096)) {
        for (let i = 0; i < count; i++) {
          const n = table.intern(ids, i * H);
          numbers[at++] = n;
          this.flags[n] = (this.flags[n] as number) | bits;
        }
      }
    }
    this.looseList = loose.map((l) => {
      const n = table.intern(Buffer.from(l.hex, 'hex'));
      this.flags[n] = (this.flags[n] as number) | LISTED;
      return { ...l, n };
    });
  }

  private cruft: string[] = [];
  /** Table numbers of each pack's objects, by index position (list). */
  private readonly packNumbers = new Map<StorePack, Int32Array>();
  private looseList: { dir: string; hex: string; path: string; n: number }[] = [];

  // ---- loose objects -------------------------------------------------------------------------

  /** git's fsck_loose for every loose object, in directory order, with git's messages. */
  private checkLoose(): void {
    const checker = new ObjectChecker(this.H, this.checkOptions());
    const found: { n: number; k: number }[] = [];
    for (const cruft of this.cruft) this.say('error', `bad sha1 file: ${displayPath(cruft, this.o.cwd)}`);
    this.looseList.forEach((l, k) => {
      const obj = this.readLooseForCheck(l.path, l.hex);
      if (obj === undefined) {
        this.status |= FSCK_ERROR_OBJECT;
        return;
      }
      const n = l.n;
      this.flags[n] = (this.flags[n] as number) | HAS_OBJ;
      this.table.types[n] = obj.type;
      checker.check(k, obj.type, obj.data, () => l.hex);
      this.checked++;
      found.push({ n, k });
    });
    const numberOf = new Int32Array(this.looseList.length).fill(-1);
    for (const f of found) numberOf[f.k] = f.n;
    this.takeFindings([checker.finish()], numberOf, (k) => this.looseList[k]?.hex ?? '', FSCK_ERROR_OBJECT);
  }

  /** git's read_loose_object and its error lines; undefined when the object failed. */
  private readLooseForCheck(path: string, hex: string): { type: number; data: Buffer } | undefined {
    const shown = displayPath(path, this.o.cwd);
    let file: Buffer;
    try {
      file = readFileSync(path);
    } catch (e) {
      this.say('error', `error: unable to mmap ${shown}: ${(e as Error).message}`);
      this.say('error', `error: ${hex}: object corrupt or missing: ${shown}`, { id: hex });
      return undefined;
    }
    const head = Buffer.alloc(64);
    const got = this.repo.store.inflater.inflatePrefix(file, 0, file.length, head, 0, head.length);
    const nul = got > 0 ? head.subarray(0, got).indexOf(0) : -1;
    if (got < 0 || nul < 0) {
      if (got < 0) this.say('error', `error: inflate: ${zlibWords(this.repo.store.inflater.lastError)}`);
      this.say('error', `error: unable to unpack header of ${shown}`);
      this.say('error', `error: ${hex}: object corrupt or missing: ${shown}`, { id: hex });
      return undefined;
    }
    const header = head.toString('latin1', 0, nul);
    const m = /^([^ ]+) (0|[1-9][0-9]*)$/.exec(header);
    if (m === null) {
      this.say('error', `error: unable to parse header of ${shown}`);
      this.say('error', `error: ${hex}: object corrupt or missing: ${shown}`, { id: hex });
      return undefined;
    }
    const typeName = m[1] as string;
    const size = Number(m[2]);
    const total = nul + 1 + size;
    const out = Buffer.allocUnsafe(total + 1);
    const consumed = this.repo.store.inflater.inflateExact(file, 0, file.length, out, 0, total);
    if (consumed < 0 || consumed !== file.length) {
      this.say('error', consumed < 0 ? `error: corrupt loose object '${hex}'` : `error: garbage at end of loose object '${hex}'`, { id: hex });
      this.say('error', `error: unable to unpack contents of ${shown}`);
      this.say('error', `error: ${hex}: object corrupt or missing: ${shown}`, { id: hex });
      return undefined;
    }
    const data = out.subarray(nul + 1, total);
    const real = hashBytes(this.repo.format, out.subarray(0, total)).toString('hex');
    const type = TYPE_NAMES.indexOf(typeName as (typeof TYPE_NAMES)[number]);
    let bad = false;
    if (real !== hex) {
      this.say('error', `error: ${real}: hash-path mismatch, found at: ${shown}`, { id: real });
      bad = true;
    }
    if (type <= 0) {
      this.say('error', `error: ${real}: object is of unknown type '${typeName}': ${shown}`, { id: real });
      bad = true;
    }
    return bad ? undefined : { type, data };
  }

  // ---- packs ---------------------------------------------------------------------------------

  private checkOptions(): PackCheckOptions {
    return { rules: this.rules.toJSON(), table: this.table.sharedParts, tagNames: this.o.tags === true };
  }

  /** Every pack verified with index-pack's resolver, its objects checked by the pack checker on all threads. */
  private async checkPacks(): Promise<void> {
    const packs = this.handle.packs();
    const total = listedObjects(packs);
    let before = 0;
    for (const pack of packs) {
      throwIfAborted(this.o.signal);
      const index = pack.tryIndex();
      if (index === undefined) {
        this.error(pack.error?.message ?? `unable to open ${pack.idxPath}`, FSCK_ERROR_PACK);
        continue;
      }
      const options = this.checkOptions();
      const progress = this.o.onProgress;
      const base = before;
      try {
        const started = performance.now();
        const result = await verifyPack(pack.idxPath, this.repo.format, {
          // Unless told, index-pack's rule: git's thread count, one thread for a small pack.
          ...(this.o.threads !== undefined ? { threads: this.o.threads } : {}),
          visitor: { name: PACK_CHECKER, types: CHECKED_TYPES, options },
          // git's verify_packfile walks the entries the index lists: so does this pass 1, which
          // needs the pack held whole (up to index-pack's memoryLimit, 1 GiB): fsck is not under
          // index-pack's ceiling (git's fsck holds a struct for every object as well).
          extentsFromIndex: true,
          maxMemory: Infinity,
          existingIndex: index,
          workerScript: FSCK_WORKER,
          ...(this.o.signal !== undefined ? { signal: this.o.signal } : {}),
          ...(progress !== undefined ? { onProgress: (_phase: string, done: number) => progress('checking objects', base + Math.min(done, index.count), total) } : {}),
        });
        this.ms['verify'] = (this.ms['verify'] ?? 0) + performance.now() - started;
        for (const [phase, ms] of Object.entries(result.stats.phases)) this.ms[`verify ${phase}`] = (this.ms[`verify ${phase}`] ?? 0) + ms;
        const scan = result.scan;
        const H = this.H;
        const numberOf = new Int32Array(scan.count);
        // The verify checked each entry's id against the index at its position (pack order).
        const numbers = this.packNumbers.get(pack);
        const { positions } = index.packOrder();
        for (let k = 0; k < scan.count; k++) {
          const n = numbers !== undefined ? (numbers[positions[k] as number] as number) : this.table.find(scan.ids, k * H);
          numberOf[k] = n;
          if (n < 0) continue;
          this.flags[n] = (this.flags[n] as number) | HAS_OBJ;
          this.table.types[n] = scan.resolvedTypes[k] as number;
        }
        this.checked += scan.count;
        const idHex = (k: number): string => Buffer.from(scan.ids.buffer, scan.ids.byteOffset + k * H, H).toString('hex');
        // Each thread's links stay its own chunk: merging them would copy them all once more.
        this.takeFindings(result.visits as CheckFindings[], numberOf, idHex, FSCK_ERROR_PACK, pack.markers.promisor);
        for (let k = 0; k < scan.count && this.gitmodules.size + this.gitattributes.size > 0; k++) {
          if (scan.resolvedTypes[k] !== OBJ_BLOB) continue;
          const hex = idHex(k);
          // git checks a special blob as it verifies the pack when a tree named it earlier (trees
          // come before blobs in a pack): its findings then count against the pack.
          if (this.gitmodules.has(hex) || this.gitattributes.has(hex)) this.specialInPack.add(hex);
        }
      } catch (e) {
        if (!isPackwrightError(e) || e.code === 'ABORTED') throw e;
        this.error(e.message, FSCK_ERROR_PACK);
        if (!packChecksumMatches(pack, this.H)) this.error(`${pack.packPath} pack checksum mismatch`, FSCK_ERROR_PACK);
      }
      before += index.count;
      progress?.('checking objects', before, total);
    }
  }

  /** Special blobs found in a pack after (or in) the one whose tree named them. */
  private readonly specialInPack = new Set<string>();

  /**
   * Reports a checker's findings in order and keeps its links. An error counts as `bit`: git's
   * fsck_loose sets ERROR_OBJECT, while a packed object's errors make the pack's verification fail.
   */
  private takeFindings(parts: CheckFindings[], numberOf: Int32Array, idHex: (k: number) => string, bit: number, promisor = false): void {
    const f = { findings: parts.flatMap((p) => p.findings), treeErrors: parts.flatMap((p) => p.treeErrors) };
    const typeOfK = (k: number): number => {
      const n = numberOf[k] as number;
      return n >= 0 ? (this.table.types[n] as number) : 0;
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
        this.say('error', `error: ${e}`, { id: hex });
        this.objectError(OBJ_TREE, hex, 'broken links');
      }
      for (const x of byK.get(k) ?? []) {
        if (x.severity === 'error') this.status |= bit;
        const kind = x.severity === 'error' ? 'error' : 'warning';
        this.say(kind, `${kind === 'error' ? 'error' : 'warning'} in ${TYPE_NAMES[x.type || typeOfK(k)] || 'unknown'} ${this.describe(hex)}: ${x.msgId}: ${x.message}`, { id: hex, msgId: x.msgId });
      }
    }
    const tagNames = new Map(parts.flatMap((p) => p.tagNames));
    // `root` and `tagged` lines in pack order, as git prints them while verifying, whichever thread checked the object.
    const shown: [number, FsckMessageKind, string, string][] = [];
    for (const part of parts) {
      for (const id of part.gitmodules) this.gitmodules.add(id);
      for (const id of part.gitattributes) this.gitattributes.add(id);
      const unknown = this.internUnknown(part.links);
      for (const records of part.links.records) {
        this.chunks.push({ records, numberOf, unknown });
        if (promisor) this.promisorChunks.add(this.chunks.length - 1);
        if (this.o.root === true || this.o.tags === true) this.rootsAndTags(this.chunks.length - 1, tagNames, idHex, shown);
      }
    }
    for (const [, kind, text, id] of shown.sort((a, b) => a[0] - b[0])) this.say(kind, text, { id });
  }

  private readonly promisorChunks = new Set<number>();

  private internUnknown(links: LinkRecords): Int32Array {
    const H = this.H;
    const count = links.unknown.length / H;
    const out = new Int32Array(count);
    for (let i = 0; i < count; i++) {
      out[i] = this.table.intern(links.unknown, i * H);
      if (this.table.added) this.growFlags();
    }
    return out;
  }

  private growFlags(): void {
    if (this.flags.length >= this.table.count) return;
    const grown = new Uint8Array(Math.max(this.table.count, this.flags.length * 2));
    grown.set(this.flags);
    this.flags = grown;
  }

  /** `root <id>` for parentless commits and `tagged …` for tags, as git prints them while checking. */
  private rootsAndTags(chunkIndex: number, tagNames: Map<number, string>, idHex: (k: number) => string, into: [number, FsckMessageKind, string, string][]): void {
    const chunk = this.chunks[chunkIndex] as LinkChunk;
    const r = chunk.records;
    for (let p = 0; p < r.length;) {
      const k = r[p] as number;
      const count = r[p + 1] as number;
      const n = chunk.numberOf?.[k] ?? k;
      const type = this.table.types[n] as number;
      if (type === OBJ_COMMIT && this.o.root === true) {
        let parents = 0;
        for (let i = 0; i < count; i++) if (r[p + 3 + 2 * i] === OBJ_COMMIT) parents++;
        if (parents === 0) into.push([k, 'root', `root ${this.describe(idHex(k))}`, idHex(k)]);
      }
      if (type === OBJ_TAG && this.o.tags === true && count > 0) {
        const t = this.target(chunk, r[p + 2] as number);
        const linkType = r[p + 3] as number;
        const hex = this.hexOf(t);
        into.push([k, 'tagged', `tagged ${TYPE_NAMES[linkType] || 'unknown'} ${this.describe(hex)} (${tagNames.get(k) ?? ''}) in ${this.describe(idHex(k))}`, hex]);
      }
      p += 2 + 2 * count;
    }
  }

  private target(chunk: LinkChunk, t: number): number {
    return t >= 0 ? t : (chunk.unknown[-t - 1] as number);
  }

  private hexOf(n: number): string {
    return Buffer.from(this.table.id(n)).toString('hex');
  }

  // ---- links ---------------------------------------------------------------------------------

  /**
   * Indexes every recorded object's links by object number, marks what they point to as used
   * (git's mark_used), and reports links whose target is an object of another type.
   */
  private resolveLinks(): void {
    this.growFlags();
    const count = this.table.count;
    this.linkChunk = new Uint16Array(count);
    this.linkAt = new Int32Array(count);
    const types = this.table.types;
    this.chunks.forEach((chunk, c) => {
      const r = chunk.records;
      const promisor = this.promisorChunks.has(c);
      for (let p = 0; p < r.length;) {
        const k = r[p] as number;
        const links = r[p + 1] as number;
        const n = chunk.numberOf !== undefined ? (chunk.numberOf[k] as number) : k;
        if (n >= 0 && this.linkChunk[n] === 0) {
          this.linkChunk[n] = c + 1;
          this.linkAt[n] = p;
        }
        let wrong: string | undefined;
        for (let i = 0; i < links; i++) {
          const t = this.target(chunk, r[p + 2 + 2 * i] as number);
          const linkType = r[p + 3 + 2 * i] as number;
          this.flags[t] = (this.flags[t] as number) | USED | (promisor ? PROMISOR : 0);
          if (types[t] === 0) types[t] = linkType;
          else if (linkType !== 0 && types[t] !== linkType && ((this.flags[t] as number) & HAS_OBJ)) {
            wrong ??= `object ${this.hexOf(t)} is a ${TYPE_NAMES[types[t] as number]}, not a ${TYPE_NAMES[linkType]}`;
          }
        }
        if (wrong !== undefined && n >= 0) {
          this.say('error', `error: ${wrong}`);
          this.objectError(types[n] as number, this.hexOf(n), 'broken links');
        }
        p += 2 + 2 * links;
      }
    });
  }

  /** git's objerror: `error in <type> <id>: <what>`. */
  private objectError(type: number, hex: string, what: string): void {
    this.status |= FSCK_ERROR_OBJECT;
    this.say('error', `error in ${TYPE_NAMES[type] || 'unknown'} ${this.describe(hex)}: ${what}`, { id: hex });
  }

  /** git's fsck_finish: `.gitmodules` and `.gitattributes` blobs that trees named. */
  private checkSpecialBlobs(): void {
    const kinds: ['gitmodules' | 'gitattributes', Set<string>, FsckMessageKey, FsckMessageKey][] = [
      ['gitmodules', this.gitmodules, 'GITMODULES_MISSING', 'GITMODULES_BLOB'],
      ['gitattributes', this.gitattributes, 'GITATTRIBUTES_MISSING', 'GITATTRIBUTES_BLOB'],
    ];
    for (const [kind, ids, missingKey, blobKey] of kinds) {
      for (const hex of [...ids].sort()) {
        const id = Buffer.from(hex, 'hex');
        const n = this.table.find(id);
        const report = (key: FsckMessageKey, message: string, type = OBJ_BLOB): boolean => {
          const severity = this.rules.severity(key);
          if (severity === 'ignore' || this.rules.skip.has(hex)) return false;
          const isError = severity === 'error' || severity === 'fatal';
          if (isError) this.status |= this.specialInPack.has(hex) ? FSCK_ERROR_PACK : FSCK_ERROR_OBJECT;
          const word = isError ? 'error' : 'warning';
          this.say(isError ? 'error' : 'warning', `${word} in ${TYPE_NAMES[type]} ${this.describe(hex)}: ${fsckMessageId(key)}: ${message}`, { id: hex, msgId: fsckMessageId(key) });
          return isError;
        };
        let object: { type: number; data: Buffer } | undefined;
        try {
          object = this.handle.read(id);
        } catch (e) {
          if (!isPackwrightError(e)) throw e;
        }
        if (object === undefined) {
          if (n >= 0 && ((this.flags[n] as number) & PROMISOR)) continue;
          report(missingKey, `unable to read ${kind === 'gitmodules' ? '.gitmodules' : '.gitattributes'} blob`);
          continue;
        }
        if (object.type !== OBJ_BLOB) {
          report(blobKey, `non-blob found at ${kind === 'gitmodules' ? '.gitmodules' : '.gitattributes'}`, object.type);
          continue;
        }
        if (this.rules.skip.has(hex)) continue;
        checkSpecialBlob(kind, object.data, (key, message) => report(key, message));
      }
    }
  }

  // ---- heads ---------------------------------------------------------------------------------

  private describe(hex: string, n?: number): string {
    if (this.o.nameObjects !== true) return hex;
    const number = n ?? this.table.find(Buffer.from(hex, 'hex'));
    const name = number >= 0 ? this.names.get(number) : undefined;
    return name === undefined ? hex : `${hex} (${name})`;
  }

  private putName(n: number, name: string): void {
    if (this.o.nameObjects === true && !this.names.has(n)) this.names.set(n, name);
  }

  /** The object number of `id`, added (with no flags) when the store does not list it. */
  private numberOf(id: Uint8Array): number {
    const n = this.table.intern(id);
    if (this.table.added) this.growFlags();
    return n;
  }

  private isPresent(n: number): boolean {
    return ((this.flags[n] as number) & (HAS_OBJ | IN_PACK)) !== 0 || this.handle.has(this.table.id(n));
  }

  /** git's fsck_handle_ref: a ref's object is a head. */
  private handleRef(refname: string, id: Buffer): void {
    const n = this.numberOf(id);
    if (!this.isPresent(n)) {
      if (((this.flags[n] as number) & PROMISOR)) {
        this.defaultRefs++;
        return;
      }
      this.error(`${refname}: invalid sha1 pointer ${id.toString('hex')}`, FSCK_ERROR_REACHABLE);
      return;
    }
    const type = this.typeOf(n);
    if (type === 0) {
      // Listed, but not readable (its pack failed): git's parse_object fails the same way.
      this.error(`${refname}: invalid sha1 pointer ${id.toString('hex')}`, FSCK_ERROR_REACHABLE);
      return;
    }
    if (type !== OBJ_COMMIT && refname.startsWith('refs/heads/')) this.error(`${refname}: not a commit`, FSCK_ERROR_REFS);
    this.defaultRefs++;
    this.flags[n] = (this.flags[n] as number) | USED;
    this.putName(n, refname);
    this.markReachable(n);
  }

  private typeOf(n: number): number {
    let type = this.table.types[n] as number;
    if (type === 0 || !(((this.flags[n] as number) & HAS_OBJ))) {
      try {
        type = this.handle.header(this.table.id(n)).type;
        this.table.types[n] = type;
      } catch (e) {
        if (!isPackwrightError(e)) throw e;
      }
    }
    return type;
  }

  /** The heads: the given objects, or every ref, each worktree's HEAD and reflogs, and the index. */
  private heads(reflogs: boolean): void {
    const o = this.o;
    const objects = o.objects ?? [];
    for (const arg of objects) {
      let id: Buffer;
      try {
        id = this.repo.resolve(arg);
      } catch (e) {
        if (!isPackwrightError(e)) throw e;
        this.error(`invalid parameter: expected sha1, got '${arg}'`, FSCK_ERROR_OBJECT);
        continue;
      }
      const n = this.numberOf(id);
      if (!(((this.flags[n] as number) & HAS_OBJ))) {
        if (((this.flags[n] as number) & PROMISOR)) continue;
        this.error(`${id.toString('hex')}: object missing`, FSCK_ERROR_OBJECT);
        continue;
      }
      this.flags[n] = (this.flags[n] as number) | USED;
      this.putName(n, arg);
      this.markReachable(n);
    }
    if (objects.length === 0) {
      for (const ref of this.repo.refs.list('refs/')) this.handleRef(ref.name, ref.id);
      for (const wt of worktrees(this.repo)) {
        this.headLink(wt.refName, wt.gitDir);
        if (reflogs) this.reflogs(wt);
      }
      if (this.defaultRefs === 0) {
        this.say('notice', 'notice: No default references');
        this.showUnreachable = false;
      }
    }
    if (objects.length === 0 || o.cache === true) this.cacheObjects();
  }

  /** git's fsck_head_link for one worktree's HEAD. */
  private headLink(refName: string, gitDir: string): void {
    let text: string;
    try {
      text = readFileSync(join(gitDir, 'HEAD'), 'latin1');
    } catch {
      this.error(`invalid ${refName}`, FSCK_ERROR_REFS);
      return;
    }
    const symbolic = /^ref: *(.*?)\s*$/s.exec(text);
    let id: Buffer | undefined;
    if (symbolic !== null) {
      const target = symbolic[1] as string;
      if (!target.startsWith('refs/heads/')) {
        this.error(`${refName} points to something strange (${target})`, FSCK_ERROR_REFS);
        return;
      }
      id = this.repo.refs.resolve(target);
      if (id === undefined) {
        this.say('notice', `notice: ${refName} points to an unborn branch (${target.slice(11)})`);
        return;
      }
    } else {
      const hex = text.trim();
      if (hex.length !== this.H * 2 || !isHex(hex)) {
        this.error(`invalid ${refName}`, FSCK_ERROR_REFS);
        return;
      }
      id = Buffer.from(hex, 'hex');
      if (id.every((b) => b === 0)) {
        this.error(`${refName}: detached HEAD points at nothing`, FSCK_ERROR_REFS);
        return;
      }
    }
    if (!id.every((b) => b === 0)) this.handleRef(refName, id);
  }

  /** Every entry of the worktree's reflogs (git's fsck_handle_reflog). */
  private reflogs(wt: Worktree): void {
    for (const { name, path } of wt.reflogs) {
      for (const e of readReflogFile(path, this.H)) {
        this.reflogId(name, e.old, 0);
        this.reflogId(name, e.new, e.timestamp);
      }
    }
  }

  private reflogId(refname: string, id: Buffer, timestamp: number): void {
    if (id.every((b) => b === 0)) return;
    const hex = id.toString('hex');
    const n = this.numberOf(id);
    if (((this.flags[n] as number) & HAS_OBJ)) {
      if (timestamp !== 0) this.putName(n, `${refname}@{${timestamp}}`);
      this.flags[n] = (this.flags[n] as number) | USED;
      this.markReachable(n);
    } else if (!(((this.flags[n] as number) & PROMISOR))) {
      this.error(`${refname}: invalid reflog entry ${hex}`, FSCK_ERROR_REACHABLE);
    }
  }

  /** The index's blobs, cache tree and resolve-undo stages are heads (git's --cache). */
  private cacheObjects(): void {
    const path = join(this.repo.gitDir, 'index');
    let data: Buffer;
    try {
      data = readFileSync(path);
    } catch {
      return;
    }
    const index = parseIndexFile(data, this.repo.format, path);
    for (const e of index.entries) {
      if ((e.mode & 0o170000) === 0o160000) continue;
      const n = this.numberOf(e.id);
      if (this.table.types[n] === 0) this.table.types[n] = OBJ_BLOB;
      this.flags[n] = (this.flags[n] as number) | USED;
      this.putName(n, `:${e.path}`);
      this.markReachable(n);
    }
    for (const node of index.cacheTree) {
      if (node.entryCount < 0 || node.id === undefined) continue;
      const n = this.numberOf(node.id);
      if (!this.isPresent(n)) {
        this.error(`${node.id.toString('hex')}: invalid sha1 pointer in cache-tree`, FSCK_ERROR_REFS);
        continue;
      }
      this.flags[n] = (this.flags[n] as number) | USED;
      this.putName(n, ':');
      this.markReachable(n);
      if (this.typeOf(n) !== OBJ_TREE) this.objectError(this.typeOf(n), node.id.toString('hex'), 'non-tree in cache-tree');
    }
    for (const ru of index.resolveUndo) {
      ru.modes.forEach((mode, stage) => {
        const id = ru.ids[stage];
        if (id === undefined || (mode & 0o170000) !== 0o100000) return;
        const n = this.numberOf(id);
        if (!this.isPresent(n)) {
          this.error(`${id.toString('hex')}: invalid sha1 pointer in resolve-undo`, FSCK_ERROR_REFS);
          return;
        }
        this.flags[n] = (this.flags[n] as number) | USED;
        this.putName(n, `:(${stage + 1}):${ru.path}`);
        this.markReachable(n);
      });
    }
  }

  // ---- connectivity --------------------------------------------------------------------------

  /** git's mark_object for a head (no parent). */
  private markReachable(n: number): void {
    this.mark(n, 0, -1);
  }

  /** git's mark_object: reach `n` through a link of type `type` from `parent` (-1: a head). */
  private mark(n: number, type: number, parent: number): void {
    const f = this.flags[n] as number;
    if (f & REACHABLE) return;
    this.flags[n] = f | REACHABLE;
    if (f & PROMISOR) return;
    if (!(f & HAS_OBJ)) {
      if (parent >= 0 && !this.isPresent(n)) {
        this.status |= FSCK_ERROR_REACHABLE;
        const parentHex = this.hexOf(parent);
        const hex = this.hexOf(n);
        const pType = (TYPE_NAMES[this.table.types[parent] as number] || 'unknown').padStart(7);
        const cType = (TYPE_NAMES[(this.table.types[n] as number) || type] || 'unknown').padStart(7);
        this.say('broken-link', `broken link from ${pType} ${this.describe(parentHex, parent)}\n              to ${cType} ${this.describe(hex, n)}`, { id: hex });
      }
      return;
    }
    this.pending.push(n);
  }

  /** Walks everything reachable from the heads (git's traverse_reachable, a stack). */
  private traverse(): void {
    const progress = this.o.onProgress;
    let done = 0;
    while (this.pending.length > 0) {
      const n = this.pending.pop() as number;
      this.walkLinks(n, (t, type) => this.mark(t, type, n));
      if (progress !== undefined && (++done & 4095) === 0) progress('checking connectivity', done, 0);
    }
  }

  /**
   * Calls `visit` for each link of object `n`, from its recorded links or, for an object not
   * checked (connectivity only, or names wanted), by reading it. Names the targets as git does.
   */
  /** Commits the repository is shallow at (`$GIT_DIR/shallow`): their parents are not theirs to link, as in git. */
  private shallowCommits: Set<number> | undefined;

  private isShallow(n: number): boolean {
    if (this.shallowCommits === undefined) {
      this.shallowCommits = new Set();
      const text = readFileIfPresent(join(this.repo.commonDir, 'shallow'), 'shallow file');
      for (const line of text?.toString('latin1').split('\n') ?? []) {
        const id = fromHex(line.trim(), this.H);
        const k = id === undefined ? -1 : this.table.find(id);
        if (k >= 0) this.shallowCommits.add(k);
      }
    }
    return this.shallowCommits.size > 0 && this.shallowCommits.has(n);
  }

  private walkLinks(n: number, visit: (target: number, type: number) => void): void {
    if (this.isShallow(n)) {
      const all = visit;
      visit = (target, type) => {
        if (type !== OBJ_COMMIT) all(target, type);
      };
    }
    const c = this.linkChunk[n] as number;
    if (c !== 0 && this.o.nameObjects !== true) {
      const chunk = this.chunks[c - 1] as LinkChunk;
      const r = chunk.records;
      const p = this.linkAt[n] as number;
      const links = r[p + 1] as number;
      for (let i = 0; i < links; i++) visit(this.target(chunk, r[p + 2 + 2 * i] as number), r[p + 3 + 2 * i] as number);
      return;
    }
    const type = this.table.types[n] as number;
    if (type === OBJ_BLOB) return;
    let object: { type: number; data: Buffer };
    try {
      object = this.handle.read(this.table.id(n));
    } catch (e) {
      if (!isPackwrightError(e)) throw e;
      this.error(`${e.message}`, FSCK_ERROR_OBJECT, this.hexOf(n));
      return;
    }
    this.table.types[n] = object.type;
    if (object.type === OBJ_BLOB) return;
    const name = this.o.nameObjects === true ? this.names.get(n) : undefined;
    const targets: [number, number, string | undefined][] = [];
    const data = object.data;
    if (object.type === OBJ_TREE && name !== undefined) {
      const e = new TreeEntryReader(data, this.H);
      while (e.next()) {
        const kind = e.mode & 0o170000;
        const t = kind === 0o040000 ? OBJ_TREE : kind === 0o100000 || kind === 0o120000 ? OBJ_BLOB : 0;
        if (t === 0) continue;
        const path = data.toString('utf8', e.nameStart, e.nameEnd);
        targets.push([this.numberOf(data.subarray(e.idStart, e.idStart + this.H)), t, `${name}${path}${t === OBJ_TREE ? '/' : ''}`]);
      }
      if (e.error !== undefined) this.error(e.error, 0);
    } else {
      const error = objectLinks(object.type, data, this.H, (bytes, at, t) => targets.push([this.numberOf(bytes.subarray(at, at + this.H)), t, undefined]));
      if (error !== undefined && object.type === OBJ_TREE) this.error(error, 0);
      if (name !== undefined) nameLinks(object.type, name, targets);
    }
    for (const [t, linkType, childName] of targets) {
      if (this.table.types[t] === 0) this.table.types[t] = linkType;
      if (childName !== undefined) this.putName(t, childName);
      visit(t, linkType);
    }
  }

  /** With --connectivity-only, unreachable objects are read so what they point to counts as used. */
  private markUnreachableReferents(): void {
    for (let n = 0; n < this.table.count; n++) {
      const f = this.flags[n] as number;
      if (!(f & HAS_OBJ) || f & REACHABLE) continue;
      if (this.typeOf(n) === OBJ_BLOB) continue;
      this.walkLinks(n, (t) => { this.flags[t] = (this.flags[t] as number) | USED; });
    }
  }

  /** git's check_connectivity's last loop: missing, unreachable and dangling objects, in git's hash order. */
  private report(lostFound: boolean): void {
    const table = this.table;
    const missing: number[] = [];
    const loose: number[] = [];
    for (let n = 0; n < table.count; n++) {
      const f = this.flags[n] as number;
      if (f & REACHABLE) {
        if (!(f & HAS_OBJ) && !(f & PROMISOR) && !(f & IN_PACK)) missing.push(n);
      } else if (f & HAS_OBJ && (this.showUnreachable || !(f & USED))) {
        loose.push(n);
      }
    }
    const order = hashOrder(table);
    const sorted = (list: number[]): number[] => list.sort((a, b) => (order(a) - order(b)) || Buffer.compare(table.id(a), table.id(b)));
    const all = sorted([...missing, ...loose]);
    for (const n of all) {
      const f = this.flags[n] as number;
      const hex = this.hexOf(n);
      const type = TYPE_NAMES[this.typeOf(n)] || 'unknown';
      if (f & REACHABLE) {
        this.status |= FSCK_ERROR_REACHABLE;
        this.say('missing', `missing ${type} ${this.describe(hex, n)}`, { id: hex });
      } else if (this.showUnreachable) {
        this.say('unreachable', `unreachable ${type} ${this.describe(hex, n)}`, { id: hex });
      } else {
        if (this.o.dangling !== false) this.say('dangling', `dangling ${type} ${this.describe(hex, n)}`, { id: hex });
        if (lostFound) this.writeLostFound(n, hex, type);
      }
    }
  }

  private writeLostFound(n: number, hex: string, type: string): void {
    const dir = join(this.repo.gitDir, 'lost-found', type === 'commit' ? 'commit' : 'other');
    mkdirSync(dir, { recursive: true });
    const content = type === 'blob' ? this.handle.read(this.table.id(n)).data : Buffer.from(`${hex}\n`);
    writeFileSync(join(dir, hex), content);
  }

  /** `git multi-pack-index verify` of the store's file when core.multiPackIndex is on (git runs it as a child). */
  /**
   * `git commit-graph verify` of every object directory (the repository's and its alternates')
   * when core.commitGraph is on, as git's fsck runs it: its errors count as ERROR_COMMIT_GRAPH.
   */
  private verifyCommitGraphs(): void {
    if (this.repo.config.getBool('core.commitGraph') === false) return;
    const H = this.H;
    const lookup: CommitLookup = (id) => {
      try {
        const obj = this.handle.read(id);
        if (obj.type !== OBJ_COMMIT) return undefined;
        const c = parseCommit(obj.data, H);
        return { tree: c.tree, parents: c.parents, date: c.time };
      } catch (e) {
        if (isPackwrightError(e)) return undefined;
        throw e;
      }
    };
    for (const dir of this.handle.looseDirs()) {
      for (const line of verifyCommitGraph(dir, H, lookup)) {
        this.status |= FSCK_ERROR_COMMIT_GRAPH;
        this.say('error', line);
      }
    }
  }

  private verifyMidx(): void {
    if (this.repo.config.getBool('core.multiPackIndex') === false) return;
    for (const e of verifyMultiPackIndex(this.repo.store)) this.error(e, FSCK_ERROR_MULTI_PACK_INDEX);
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
    return false;
  }
}

/**
 * The order git's fsck lists objects in at the end: its object hash table's, where an object sits
 * at its id's first four bytes (little-endian) modulo the table's size, a power of two at least
 * twice the number of objects (and 32). Collisions are ordered by id here.
 */
function hashOrder(table: ObjectTable): (n: number) => number {
  let size = 32;
  while (table.count * 2 > size) size *= 2;
  const mask = size - 1;
  const ids = table.ids;
  const H = table.hashLength;
  return (n) => {
    const p = n * H;
    return (((ids[p] as number) | ((ids[p + 1] as number) << 8) | ((ids[p + 2] as number) << 16) | ((ids[p + 3] as number) << 24)) >>> 0) & mask;
  };
}

/** A commit's or tag's link names from its own (git's fsck_walk_commit and fsck_walk_tag). */
function nameLinks(type: number, name: string, targets: [number, number, string | undefined][]): void {
  if (type === OBJ_TAG) {
    for (const t of targets) t[2] = name;
    return;
  }
  if (type !== OBJ_COMMIT) return;
  let generation = 0;
  let prefix = name.length;
  const m = /^(.*)~(\d+)$/.exec(name);
  if (name.endsWith('^')) {
    generation = 1;
    prefix = name.length - 1;
  } else if (m !== null) {
    generation = Number(m[2]);
    prefix = (m[1] as string).length;
  }
  let parent = 0;
  for (const t of targets) {
    if (t[1] === OBJ_TREE && parent === 0 && t[2] === undefined) {
      t[2] = `${name}:`;
      parent = -1;
      continue;
    }
    if (t[1] !== OBJ_COMMIT) continue;
    const count = parent < 0 ? 0 : parent;
    parent = count + 1;
    if (count > 0) t[2] = `${name}^${count + 1}`;
    else if (generation > 0) t[2] = `${name.slice(0, prefix)}~${generation + 1}`;
    else t[2] = `${name}^`;
  }
}

interface Worktree {
  /** How git names its HEAD here (`HEAD`, `main-worktree/HEAD`, `worktrees/<id>/HEAD`). */
  refName: string;
  gitDir: string;
  /** Its reflogs: ref name (as git names it from here) and file. */
  reflogs: ReflogFile[];
}

/** The main worktree and every linked one, with their HEADs' names as seen from this repository. */
function worktrees(repo: Repository): Worktree[] {
  const common = repo.commonDir;
  const inLinked = repo.gitDir !== common;
  const list: Worktree[] = [];
  const logsOf = (gitDir: string, prefix: string, shared: boolean): ReflogFile[] => {
    // The worktree's own: HEAD; the shared ones (refs/...) only for the main worktree.
    const out = [{ name: `${prefix}HEAD`, path: join(gitDir, 'logs', 'HEAD') }];
    if (shared) out.push(...reflogFiles(join(common, 'logs', 'refs'), 'refs'));
    return out;
  };
  list.push({ refName: inLinked ? 'main-worktree/HEAD' : 'HEAD', gitDir: common, reflogs: logsOf(common, inLinked ? 'main-worktree/' : '', true) });
  let ids: string[] = [];
  try {
    ids = readdirSync(join(common, 'worktrees')).sort();
  } catch {
    ids = [];
  }
  for (const id of ids) {
    const gitDir = join(common, 'worktrees', id);
    const current = inLinked && gitDir === repo.gitDir;
    const prefix = current ? '' : `worktrees/${id}/`;
    list.push({ refName: `${prefix}HEAD`, gitDir, reflogs: logsOf(gitDir, prefix, false) });
  }
  return list;
}

