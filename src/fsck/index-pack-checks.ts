import { ObjectTable } from '../walk/object-table.js';
import { PackwrightError } from '../errors/packwright-error.js';
import { hashLength } from '../hash/object-format.js';
import { checkObject } from './check-object.js';
import { FsckRules, fsckMessageId, type FsckMessageKey } from './fsck-messages.js';
import { OBJ_BLOB, OBJ_COMMIT, TYPE_NAMES, typeNumber } from '../objects/object-type.js';
import { DeltaBaseCache } from '../pack/delta-base-cache.js';
import { PackFile } from '../pack/pack-file.js';
import { PackReader } from '../pack/pack-reader.js';
import type { Repository } from '../repo/repository.js';
import type { IndexedPack, IndexPackOptions } from '../resolve/index-pack.js';
import { FSCK_WORKER, mergeCheckFindings, type CheckFindings, type ObjectFinding } from './pack-checker.js';
import { COMPARE_BYTES_PER_THREAD, INDEX_PACK_VISITOR, indexPackVisitorTypes, type IndexPackVisitorOptions } from './index-pack-visitor.js';
import { forEachRecord } from './link-records.js';
import { setFsckMessageTypes } from './config-rules.js';

/**
 * Options of the checks index-pack `--strict` makes: the rules, and the store to look up objects the pack
 * links to.
 */
export interface IndexPackCheckOptions {
  /**
   * The repository the pack is for. An incoming object it already has must have the same bytes
   * (git's "SHA1 COLLISION FOUND"), and with `strict` a link may name one of its objects.
   */
  repo?: Repository | undefined;
  /** git's `--fsck-objects`: check every object as fsck does. */
  fsckObjects?: boolean | undefined;
  /** git's `--strict`: `fsckObjects`, and every object a commit, tree or tag names is in the pack or the repository. */
  strict?: boolean | undefined;
  /**
   * git's `--check-self-contained-and-connected`: every object a commit, tree or tag of the pack
   * names must be in the pack or the repository (as with `strict`, without fsck's other checks),
   * and `onSelfContained` is told whether all of them are in the pack.
   */
  selfContained?: boolean | undefined;
  /**
   * Only find out whether the pack is self-contained, as `selfContained` does, with nothing
   * failing the pack: a link to an object that is nowhere, of the wrong type, or an object that
   * does not parse just makes it not self-contained (for a receiver whose own checks come later,
   * as receive-pack's connectivity walk).
   */
  observeSelfContained?: boolean | undefined;
  /**
   * Called when the pack turns out to hold every object it links to (no lookups in the store were needed).
   */
  onSelfContained?: ((selfContained: boolean) => void) | undefined;
  /** Severities for message ids, git's `--strict=<id>=<type>[,...]` (and `skiplist=<file>`). */
  messageTypes?: string | undefined;
  /** The shallow boundary: commits whose parents need not be there (git's --shallow-file). */
  shallow?: readonly Uint8Array[] | undefined;
  /** Where a relative `skiplist=<file>` of `messageTypes` is (default: the working directory). */
  baseDir?: string | undefined;
  /** Lines for stderr, in git's words: the warnings, and the error that ends the run. */
  onMessage?: ((line: string) => void) | undefined;
}

/**
 * What git's index-pack checks beyond the pack's own format, as options for `indexPack`: objects
 * checked as fsck checks them, on the resolver's threads (`--fsck-objects`), links checked
 * (`--strict`), and incoming objects compared with the repository's copies. All of it runs
 * before anything is written, so a pack that fails leaves nothing behind.
 */
export function indexPackChecks(options: IndexPackCheckOptions): Pick<IndexPackOptions, 'visitor' | 'workerScript' | 'beforeWrite' | 'visitorBytes'> {
  const fsckObjects = options.fsckObjects === true || options.strict === true;
  const say = options.onMessage ?? ((): void => undefined);
  const rules = FsckRules.defaults(false);
  // index-pack's fsck_options are FSCK_OPTIONS_MISSING_GITMODULES: a .gitmodules blob the pack
  // does not carry is someone else's to check.
  rules.set('gitmodulesMissing', 'ignore');
  if (options.messageTypes !== undefined) setFsckMessageTypes(rules, options.messageTypes, options.repo !== undefined ? 2 * hashLength(options.repo.format) : 40, options.baseDir);
  const result: Pick<IndexPackOptions, 'visitor' | 'workerScript' | 'beforeWrite' | 'visitorBytes'> = {};
  // Both run on the resolver's threads with each object in hand: the checks, and the comparison
  // with the repository's copy (git's sha1_object), which then reads only the stored copy.
  const visitorOptions: IndexPackVisitorOptions = {};
  // Observing alone fails nothing; the strict modes fail the pack on what they find.
  const observeOnly = options.observeSelfContained === true && options.strict !== true && options.selfContained !== true;
  const linksChecked = options.strict === true || options.selfContained === true || options.observeSelfContained === true;
  if (fsckObjects) visitorOptions.check = { rules: rules.toJSON(), tagNames: false };
  // Links are recorded by the checker; only objects that do not parse fail it then.
  else if (linksChecked) visitorOptions.check = { rules: FsckRules.parseOnly().toJSON(), tagNames: false, linksOnly: true };
  // A repository with no object yet (a clone's) has nothing to compare with: no visitor for it,
  // which would take the ids before the resolver's sha1dc lanes deliver them (resolver.ts).
  if (options.repo !== undefined && !options.repo.objects.isEmpty()) {
    const store = options.repo.store;
    visitorOptions.compare = { objectsDir: store.objectsDir, format: options.repo.format, multiPackIndex: store.key.multiPackIndex, alternates: store.key.alternates };
    result.visitorBytes = COMPARE_BYTES_PER_THREAD;
  }
  const types = indexPackVisitorTypes(visitorOptions);
  if (types !== 0) {
    // The checks name an object by id only for the skip list (findings name it by entry), and the
    // comparison looks it up by id: without either, ids may come later (faster hashing).
    const idsAfterVisit = visitorOptions.compare === undefined && !(fsckObjects && rules.skip.size > 0);
    result.visitor = { name: INDEX_PACK_VISITOR, types, options: visitorOptions, idsAfterVisit };
    result.workerScript = FSCK_WORKER;
  }
  result.beforeWrite = (pack) => {
    if (!fsckObjects && !linksChecked) return;
    const objects = new IndexedObjects(pack);
    try {
      const found = mergeCheckFindings(pack.visits as CheckFindings[], objects.H);
      if (fsckObjects) reportFindings(objects, found, rules, say);
      if (linksChecked) {
        const outside = observeOnly ? linksOutside(objects, found) : checkLinks(objects, found, options.repo, say, options.shallow ?? []);
        if (options.selfContained === true || options.observeSelfContained === true) options.onSelfContained?.(outside === 0);
      }
    } finally {
      objects.close();
    }
  };
  return result;
}

/** git's fsck_set_msg_types: `id=type` (or `id:type`) pairs split by spaces, commas or bars; `skiplist=<file>`. */

/**
 * Bytes of resolved bases kept while a pack just indexed is read back (IndexedObjects): only the
 * `.gitmodules` and `.gitattributes` blobs its trees name are, a few objects.
 */
const BASE_CACHE = 4 << 20;

/** The objects of a pack just indexed, read back from its file by entry number or by id. */
class IndexedObjects {
  readonly H: number;
  private objectTable: ObjectTable | undefined;
  private file: PackFile | undefined;
  private reader: PackReader | undefined;

  constructor(readonly pack: IndexedPack) {
    this.H = hashLength(pack.scan.format);
  }

  /** The pack's ids numbered, with their types (made on first use: only --strict needs it). */
  get table(): ObjectTable {
    if (this.objectTable === undefined) {
      const { scan } = this.pack;
      const table = (this.objectTable = new ObjectTable(this.H, scan.count));
      for (let k = 0; k < scan.count; k++) table.types[table.intern(scan.ids, k * this.H)] = scan.resolvedTypes[k] as number;
    }
    return this.objectTable;
  }

  hex(k: number): string {
    const ids = this.pack.scan.ids;
    return Buffer.from(ids.buffer, ids.byteOffset + k * this.H, this.H).toString('hex');
  }

  /** Entry number of `id` in pack order, or -1. */
  entryOf(id: Uint8Array): number {
    return this.pack.findEntry(id);
  }

  read(k: number): { type: number; data: Buffer } {
    return this.packReader().read(this.pack.scan.offsets[k] as number);
  }

  private packReader(): PackReader {
    if (this.reader === undefined) {
      const { scan } = this.pack;
      this.file = PackFile.open(this.pack.packPath, { hashLength: this.H });
      this.reader = new PackReader(this.file, new DeltaBaseCache(BASE_CACHE), (id) => {
        const k = this.pack.findEntry(id);
        return k < 0 ? -1 : (scan.offsets[k] as number);
      });
    }
    return this.reader;
  }

  close(): void {
    this.file?.close();
  }
}

/**
 * The checkers' findings, in pack order, as git's fsck_error_function prints them; the first
 * error ends the run, as git dies with "fsck error in packed object". Blobs that trees name
 * `.gitmodules` or `.gitattributes` and that the pack carries are checked now (git's fsck_finish).
 */
function reportFindings(objects: IndexedObjects, found: CheckFindings, rules: FsckRules, say: (line: string) => void): void {
  const findings: ObjectFinding[] = [...found.findings];
  const special = (ids: string[], kind: 'gitmodules' | 'gitattributes'): void => {
    for (const hex of new Set(ids)) {
      const k = objects.entryOf(Buffer.from(hex, 'hex'));
      if (k < 0 || objects.pack.scan.resolvedTypes[k] !== OBJ_BLOB) continue;
      const { data } = objects.read(k);
      const report = (key: FsckMessageKey, message: string): boolean => {
        const severity = rules.severity(key);
        if (severity === 'ignore' || rules.skip.has(hex)) return false;
        const s = severity === 'fatal' || severity === 'error' ? 'error' : 'warn';
        findings.push({ k, type: OBJ_BLOB, severity: s, msgId: fsckMessageId(key), message });
        return s === 'error';
      };
      checkObject(OBJ_BLOB, data, objects.H, report, { strict: false, special: { gitmodules: [], gitattributes: [] }, blobKind: kind });
    }
  };
  special(found.gitmodules, 'gitmodules');
  special(found.gitattributes, 'gitattributes');
  findings.sort((a, b) => a.k - b.k);
  for (const f of findings) {
    const line = `object ${objects.hex(f.k)}: ${f.msgId}: ${f.message}`;
    if (f.severity === 'warn') {
      say(`warning: ${line}`);
      continue;
    }
    say(`error: ${line}`);
    throw new PackwrightError('OBJECT_CORRUPT', 'fsck error in packed object', { file: objects.pack.packPath, offset: objects.pack.scan.offsets[f.k] as number });
  }
}

/**
 * `--strict`: every object a commit, tree or tag of the pack names is in the pack with the type
 * the link says, or in the repository (git's mark_link and check_objects, in their words).
 * Returns how many named objects are outside the pack (git's foreign_nr).
 */
function checkLinks(objects: IndexedObjects, found: CheckFindings, repo: Repository | undefined, say: (line: string) => void, shallow: readonly Uint8Array[]): number {
  const H = objects.H;
  const { unknown } = found.links;
  if (found.parseErrors.length > 0) {
    // git's sha1_object dies of the first object parse_object_buffer refuses: its error, then
    // "invalid <type>".
    const [k, error] = found.parseErrors.reduce((a, b) => (b[0] < a[0] ? b : a));
    if (error !== '') say(`error: ${error} ${objects.hex(k)}`);
    throw new PackwrightError('OBJECT_CORRUPT', `invalid ${TYPE_NAMES[objects.pack.scan.resolvedTypes[k] as number]}`, { file: objects.pack.packPath, offset: objects.pack.scan.offsets[k] as number });
  }
  if (found.treeErrors.length > 0) {
    const [k, error] = found.treeErrors[0] as [number, string];
    // git's walk says why the tree does not decode (init_tree_desc_gently), then dies.
    say(`error: ${error}`);
    throw new PackwrightError('OBJECT_CORRUPT', `Not all child objects of ${objects.hex(k)} are reachable`);
  }
  const outside = new ObjectTable(H, 1024);
  const store = repo?.objects;
  // The checkers were given no table: every link is an id of `unknown`, each looked up in the
  // pack once (a thread records an id once, however many trees name it).
  const inPackOf = new Int32Array(unknown.length / H);
  for (let u = 0; u < inPackOf.length; u++) inPackOf[u] = objects.table.find(unknown, u * H);
  // A shallow commit's parents are beyond the boundary (git's parse_commit under a shallow file).
  const boundary = new Set(shallow.map((id) => Buffer.from(id).toString('hex')));
  forEachRecord(found.links, (records, p) => {
    const links = records[p + 1] as number;
    const atBoundary = boundary.size > 0 && boundary.has(objects.hex(records[p] as number));
    for (let i = 0; i < links; i++) {
      const target = records[p + 2 + 2 * i] as number;
      const type = records[p + 3 + 2 * i] as number;
      if (atBoundary && type === OBJ_COMMIT) continue;
      const at = (-1 - target) * H;
      const inPack = inPackOf[-1 - target] as number;
      if (inPack >= 0) {
        if (objects.table.types[inPack] !== type) throw new PackwrightError('OBJECT_CORRUPT', `object type mismatch at ${hexAt(unknown, at, H)}`);
        continue;
      }
      const n = outside.intern(unknown, at);
      if (!outside.added) continue;
      const info = store?.has(unknown.subarray(at, at + H), { refresh: false }) === true ? store.info(unknown.subarray(at, at + H)) : undefined;
      if (info === undefined) throw new PackwrightError('OBJECT_NOT_FOUND', `did not receive expected object ${hexAt(unknown, at, H)}`);
      if (typeNumber(info.type) !== type) {
        throw new PackwrightError('OBJECT_CORRUPT', `object ${hexAt(unknown, at, H)}: expected type ${TYPE_NAMES[type]}, found ${info.type}`);
      }
      outside.types[n] = type;
    }
  });
  return outside.count;
}

/**
 * checkLinks' look for `observeSelfContained`, where nothing throws: 0 when every object parsed
 * and every link is in the pack with its type, else Infinity (the first link outside the pack
 * ends the look).
 */
function linksOutside(objects: IndexedObjects, found: CheckFindings): number {
  if (found.treeErrors.length > 0 || found.parseErrors.length > 0 || found.findings.some((f) => f.severity === 'error')) return Infinity;
  const H = objects.H;
  const { unknown } = found.links;
  const inPackOf = new Int32Array(unknown.length / H);
  for (let u = 0; u < inPackOf.length; u++) {
    inPackOf[u] = objects.table.find(unknown, u * H);
    if ((inPackOf[u] as number) < 0) return Infinity;
  }
  let mismatch = false;
  forEachRecord(found.links, (records, p) => {
    const links = records[p + 1] as number;
    for (let i = 0; i < links && !mismatch; i++) {
      const target = records[p + 2 + 2 * i] as number;
      if (objects.table.types[inPackOf[-1 - target] as number] !== records[p + 3 + 2 * i]) mismatch = true;
    }
  });
  return mismatch ? Infinity : 0;
}

function hexAt(bytes: Uint8Array, at: number, H: number): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset + at, H).toString('hex');
}
