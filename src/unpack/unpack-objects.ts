import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { ObjectTable } from '../walk/object-table.js';
import { isPackwrightError, PackwrightError } from '../errors/packwright-error.js';
import { mergeCheckFindings, type CheckFindings } from '../fsck/pack-checker.js';
import { forEachRecord } from '../fsck/link-records.js';
import { toHex } from '../hash/hex.js';
import { hashLength } from '../hash/object-format.js';
import { writeLoose } from '../loose/write-loose.js';
import { checkSpecialBlob } from '../fsck/check-object.js';
import { FsckRules, fsckMessageId, type FsckMessageKey } from '../fsck/fsck-messages.js';
import { OBJ_COMMIT, TYPE_NAMES, typeNumber } from '../objects/object-type.js';
import type { Store } from '../odb/store.js';
import { indexPack, type IndexPackResult } from '../resolve/index-pack.js';
import { ALL_VISITED_TYPES } from '../resolve/pack-visitor.js';
import { withPackHeader, type ConsumedPackHeader } from '../resolve/pack-source.js';
import { salvagePack } from './salvage-pack.js';
import { UNPACK_VISITOR, type UnpackThreadResult, type UnpackVisitorOptions } from './unpack-visitor.js';

/** The worker script: index-pack's tasks with the unpack visitor registered (unpack-worker.ts). */
const UNPACK_WORKER = new URL('./unpack-worker.js', import.meta.url);

/** Options of `unpackObjects`, as `git unpack-objects` takes them. */
export interface UnpackObjectsOptions {
  /** Check and write nothing (`-n`). */
  dryRun?: boolean | undefined;
  /**
   * Check every object by git's fsck rules and require everything it links to, in the pack or in
   * the store, before commits, trees and tags are written (`--strict`); the rules to check with.
   */
  strict?: FsckRules | undefined;
  /**
   * With `strict`: the shallow boundary, commits whose parents need not be there (the repository's
   * own, and a push's `shallow` lines: git's --shallow-file).
   */
  shallow?: readonly Uint8Array[] | undefined;
  /** Write what can be read of a damaged pack instead of failing at its first problem (`-r`). */
  recover?: boolean | undefined;
  /** Threads, this one included (default: git's index-pack rule). */
  threads?: number | undefined;
  /** Refuse packs larger than this (`--max-input-size`). */
  maxInputSize?: number | undefined;
  /** Ids by SHA-1 with collision detection (IndexPackOptions.detectCollisions; the CLI's default). */
  detectCollisions?: boolean | undefined;
  /** The pack's header was already read by the caller (`--pack_header=<version>,<count>`, as receive-pack passes it). */
  packHeader?: ConsumedPackHeader | undefined;
  signal?: AbortSignal | undefined;
  /** Progress of unpacking: objects done of total. */
  onProgress?: ((done: number, total: number) => void) | undefined;
  /**
   * Errors found along the way, and `strict`'s findings, in git's words (`error: …` and `warning: …`
   * lines); the recovering mode goes on after errors.
   */
  onError?: ((message: string) => void) | undefined;
}

/** What `unpackObjects` did: objects read and loose objects written. */
export interface UnpackObjectsResult {
  objects: number;
  /** Loose objects written (those the store already had are not written again). */
  written: number;
  /** What followed the pack in the input (git writes it to stdout). */
  trailing: Buffer;
  /** True when `recover` skipped damaged entries (git exits 1 then). */
  hadErrors: boolean;
}

/**
 * `git unpack-objects`: each object of a pack read from `input` becomes a loose object of `store`,
 * written atomically (temporary file, then link), unless the store already has it. The pack is
 * received and verified whole by index-pack's two passes (on worker threads) before any object is
 * written, so a truncated or corrupt pack writes nothing; a thin pack's bases come from the store.
 */
export async function unpackObjects(store: Store, input: Readable | Uint8Array, options: UnpackObjectsOptions = {}): Promise<UnpackObjectsResult> {
  const H = hashLength(store.format);
  let source: Readable | Uint8Array = options.packHeader !== undefined ? withPackHeader(input, options.packHeader) : input;
  // Recovering needs the bytes again after a failure: keep them.
  if (options.recover === true && !(source instanceof Uint8Array)) source = await readAll(source);
  const handle = store.objects;
  const strict = options.strict;
  const visitorOptions: UnpackVisitorOptions = {
    objectsDir: store.objectsDir, format: store.format, alternates: store.key.alternates, dryRun: options.dryRun === true,
    loose: store.looseOptions,
    // Links are looked up on the main thread afterwards (the pack's ids are not known before it is read).
    check: strict === undefined ? undefined : { rules: strict.toJSON(), table: ObjectTable.shared(H, 1).sharedParts, tagNames: false },
  };
  const spoolDir = join(store.objectsDir, 'pack');
  let result: IndexPackResult;
  try {
    result = await indexPack(source, {
      objectFormat: store.format,
      ...(options.threads !== undefined ? { threads: options.threads } : {}),
      // Every type: unpack-objects writes blobs too.
      visitor: { name: UNPACK_VISITOR, types: ALL_VISITED_TYPES, options: visitorOptions },
      workerScript: UNPACK_WORKER,
      // The pack is spooled where git's index-pack receives one (a dry run writes nothing there).
      ...(options.dryRun !== true && existsSync(spoolDir) ? { spoolDir } : {}),
      thinBases: (id) => {
        try {
          return handle.read(id);
        } catch (e) {
          if (isPackwrightError(e)) return undefined;
          throw e;
        }
      },
      ...(options.maxInputSize !== undefined ? { maxInputSize: options.maxInputSize } : {}),
      ...(options.detectCollisions === true ? { detectCollisions: true } : {}),
      ...(options.signal !== undefined ? { signal: options.signal } : {}),
      ...(options.onProgress !== undefined ? { onProgress: (phase: string, done: number, total: number) => { if (phase === 'resolving' || phase === 'receiving') options.onProgress?.(done, total); } } : {}),
    });
  } catch (e) {
    // An attack is not damage to recover from: git's sha1dc dies on it, -r or not.
    if (options.recover !== true || !isPackwrightError(e) || e.code === 'ABORTED' || e.code === 'COLLISION_ATTACK') throw unpackError(e);
    options.onError?.(`error: ${e.message}`);
    const salvaged = salvagePack(store, source as Uint8Array, {
      dryRun: options.dryRun === true,
      ...(options.onError !== undefined ? { onError: options.onError } : {}),
      ...(options.detectCollisions === true ? { detectCollisions: true } : {}),
    });
    return { ...salvaged, hadErrors: true };
  }
  const threads = result.visits as UnpackThreadResult[];
  let written = threads.reduce((a, t) => a + t.written, 0);
  if (strict !== undefined) written += writeChecked(store, result, threads, strict, options.dryRun === true, options.onError ?? (() => {}), options.shallow ?? []);
  return { objects: result.objectCount, written, trailing: result.trailing, hadErrors: false };
}

/**
 * `--strict`'s end (git's write_rest and fsck_finish): every finding that is an error fails the
 * unpack, every link of a held commit, tree or tag must name an object of the pack or of the store
 * of the type the link says; then the held objects are written.
 */
function writeChecked(store: Store, result: IndexPackResult, threads: UnpackThreadResult[], rules: FsckRules, dryRun: boolean, say: (line: string) => void, shallow: readonly Uint8Array[]): number {
  const H = hashLength(store.format);
  const scan = result.scan;
  const checks = mergeCheckFindings(threads.map((t) => t.checks as CheckFindings), H);
  const idHex = (k: number): string => toHex(scan.ids.subarray(k * H, k * H + H));
  let failed = false;
  for (const f of checks.findings.sort((a, b) => a.k - b.k)) {
    say(`${f.severity === 'error' ? 'error' : 'warning'}: object ${idHex(f.k)}: ${f.msgId}: ${f.message}`);
    if (f.severity === 'error') failed = true;
  }
  if (failed) throw new PackwrightError('OBJECT_CORRUPT', 'fsck error in packed object');
  for (const [k, message] of checks.treeErrors) throw new PackwrightError('OBJECT_CORRUPT', `${message} (tree ${idHex(k)})`);
  // The pack's own objects and their types.
  const inPack = new Map<string, number>();
  for (let k = 0; k < scan.count; k++) inPack.set(idHex(k), scan.resolvedTypes[k] as number);
  const { unknown } = checks.links;
  // A shallow commit's parents are beyond the boundary (git's parse_commit under a shallow file).
  const boundary = new Set(shallow.map((id) => toHex(id)));
  forEachRecord(checks.links, (records, p) => {
    const k = records[p] as number;
    const links = records[p + 1] as number;
    const atBoundary = boundary.size > 0 && boundary.has(idHex(k));
    for (let i = 0; i < links; i++) {
      const t = records[p + 2 + 2 * i] as number;
      const type = records[p + 3 + 2 * i] as number;
      if (atBoundary && type === OBJ_COMMIT) continue;
      // Every target is "unknown" to the checker (its table is empty): the raw id is in `unknown`.
      const id = unknown.subarray((-t - 1) * H, (-t) * H);
      const hex = toHex(id);
      let actual = inPack.get(hex);
      if (actual === undefined) {
        try {
          actual = typeNumber(store.objects.header(id).type);
        } catch (e) {
          if (!isPackwrightError(e)) throw e;
          throw new PackwrightError('OBJECT_NOT_FOUND', `object of unexpected type (${hex}, linked from ${idHex(k)}, is missing)`);
        }
      }
      if (type !== 0 && actual !== type) throw new PackwrightError('OBJECT_CORRUPT', `object type mismatch (${hex} is a ${TYPE_NAMES[actual] ?? 'unknown'}, ${idHex(k)} says ${TYPE_NAMES[type]})`);
    }
  });
  // fsck_finish: blobs named .gitmodules / .gitattributes.
  const report = (hex: string) => (key: FsckMessageKey, message: string): boolean => {
    const severity = rules.severity(key);
    if (severity === 'ignore' || rules.skip.has(hex)) return false;
    const error = severity === 'error' || severity === 'fatal';
    say(`${error ? 'error' : 'warning'}: object ${hex}: ${fsckMessageId(key)}: ${message}`);
    return error;
  };
  for (const [kind, list] of [['gitmodules', checks.gitmodules], ['gitattributes', checks.gitattributes]] as const) {
    for (const hex of new Set(list)) {
      let object;
      try {
        object = store.objects.read(Buffer.from(hex, 'hex'));
      } catch (e) {
        if (!isPackwrightError(e)) throw e;
        if (report(hex)(kind === 'gitmodules' ? 'GITMODULES_MISSING' : 'GITATTRIBUTES_MISSING', `unable to read .${kind} blob`)) failed = true;
        continue;
      }
      if (object.type !== 'blob') {
        if (report(hex)(kind === 'gitmodules' ? 'GITMODULES_BLOB' : 'GITATTRIBUTES_BLOB', `non-blob found at .${kind}`)) failed = true;
      } else if (checkSpecialBlob(kind, object.data, report(hex))) {
        failed = true;
      }
    }
  }
  if (failed) throw new PackwrightError('OBJECT_CORRUPT', 'fsck error in pack objects');
  if (dryRun) return 0;
  let written = 0;
  const options = store.looseOptions;
  for (const t of threads) {
    for (const h of t.held) {
      if (store.objects.has(h.id, { refresh: false })) continue;
      if (writeLoose(store.objectsDir, toHex(h.id), h.type, h.data, options)) written++;
    }
  }
  return written;
}

/** git's words for a pack that does not unpack. */
function unpackError(e: unknown): unknown {
  if (isPackwrightError(e, 'PACK_UNRESOLVED_DELTAS')) return new PackwrightError('PACK_UNRESOLVED_DELTAS', `unresolved deltas left after unpacking (${e.message})`, { cause: e });
  return e;
}

async function readAll(input: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of input) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
