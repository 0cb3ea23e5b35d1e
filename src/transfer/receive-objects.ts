// Taking in a pack that arrives on a connection (a push's, a fetch's): its header read first, then
// the objects kept as a pack (index-pack --stdin --fix-thin) or, below the unpack limit, written
// loose (unpack-objects), as git's receive-pack and fetch-pack choose.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { PackwrightError } from '../errors/packwright-error.js';
import { indexPackChecks } from '../fsck/index-pack-checks.js';
import { FsckRules } from '../fsck/fsck-messages.js';
import { setFsckMessageTypes } from '../fsck/config-rules.js';
import { PACK_HEADER_LENGTH } from '../pack/pack-header.js';
import type { Repository } from '../repo/repository.js';
import { indexPack } from '../resolve/index-pack.js';
import type { IndexPackOptions, IndexPackPhase } from '../resolve/index-pack-options.js';
import type { ConsumedPackHeader } from '../resolve/pack-source.js';
import { unpackObjects } from '../unpack/unpack-objects.js';

/** The phases `receiveObjects` reports progress for: index-pack's, or unpacking loose objects. */
export type ReceivePhase = IndexPackPhase | 'unpacking';

/**
 * Options of `receiveObjects`: the unpack limit, checks, thin-pack completion, the .keep message, progress
 * and cancellation.
 */
export interface ReceiveObjectsOptions {
  /** Packs of fewer objects than this are written as loose objects (git's receive.unpackLimit / fetch.unpackLimit; default 100). */
  unpackLimit?: number | undefined;
  /**
   * Check every object as fsck does, and that everything they name is there (git's `--strict`,
   * under receive.fsckObjects / transfer.fsckObjects); the value is git's message types
   * (`missingEmail=ignore,skiplist=<file>`), '' for the defaults.
   */
  strict?: string | undefined;
  /** Where a relative `skiplist=<file>` of `strict` is (default: the working directory). */
  baseDir?: string | undefined;
  /**
   * Commits taken as shallow beside the repository's own (a push's `shallow` lines): with
   * `strict`, their parents need not be there (git's --shallow-file).
   */
  shallow?: readonly Uint8Array[] | undefined;
  /** Refuse packs larger than this many bytes (receive.maxInputSize). */
  maxInputSize?: number | undefined;
  /** The `.keep` message of a pack kept (git's `--keep=receive-pack <pid> on <host>`), so gc leaves it alone until the refs name it. */
  keep?: string | undefined;
  /**
   * From a promisor remote (a partial clone's): the pack is kept whatever its size and marked with
   * a `.promisor` file holding this text (git writes the refs fetched, `<id> <ref>` a line).
   */
  promisor?: string | undefined;
  /**
   * Find out whether a pack kept names only objects it holds (git's
   * --check-self-contained-and-connected): `ReceivedObjects.selfContained`. A clone asks, and
   * then needs no walk to know that what it received is connected.
   */
  checkSelfContained?: boolean | undefined;
  /**
   * Find out whether a pack kept is self-contained, as `checkSelfContained` does, without failing
   * the pack for what the look finds (a link to an object that is nowhere just makes it not
   * self-contained): for receive-pack, whose connectivity walk judges the push as git's does.
   */
  observeSelfContained?: boolean | undefined;
  /** Complete a thin pack from the repository's objects (default true; git's --reject-thin-pack-for-testing is false). */
  fixThin?: boolean | undefined;
  threads?: number | undefined;
  signal?: AbortSignal | undefined;
  /** Progress of each phase: done of total, and bytes received. */
  onProgress?: ((phase: ReceivePhase, done: number, total: number, bytes?: number) => void) | undefined;
  /** The checks' warnings, in git's words. */
  onMessage?: ((line: string) => void) | undefined;
}

/** What `receiveObjects` did: the objects received, the pack kept (or none: they were written loose) and its `.keep`. */
export interface ReceivedObjects {
  /** Objects the pack held (bases a thin pack needed not counted). */
  objects: number;
  /** Where the pack was kept (undefined: its objects were written loose). */
  packPath?: string | undefined;
  /** The pack's `.keep` file, for the caller to remove once the refs name the objects. */
  keepPath?: string | undefined;
  /**
   * With `checkSelfContained` or `observeSelfContained`: true when the pack kept was complete (no base taken from the
   * repository) and every object its commits, trees and tags name is in it.
   */
  selfContained?: boolean | undefined;
}

/**
 * Reads a pack's 12-byte header from `input` (git's read_pack_header) and gives it with the
 * rest of the input, where the objects follow. Failures are git receive-pack's words.
 */
export async function readPackHeader(input: AsyncIterable<Uint8Array>): Promise<{ header: ConsumedPackHeader; rest: Readable }> {
  const iterator = input[Symbol.asyncIterator]();
  let head = Buffer.alloc(0);
  while (head.length < PACK_HEADER_LENGTH) {
    const r = await iterator.next();
    if (r.done === true) throw new PackwrightError('PACK_TRUNCATED', 'eof before pack header was fully read', { offset: head.length });
    head = Buffer.concat([head, r.value]);
  }
  if (head.toString('latin1', 0, 4) !== 'PACK') throw new PackwrightError('PACK_SIGNATURE', 'protocol error (pack signature mismatch detected)', { offset: 0 });
  const version = head.readUInt32BE(4);
  if (version !== 2 && version !== 3) throw new PackwrightError('PACK_VERSION', 'protocol error (pack version unsupported)', { offset: 4 });
  const after = head.subarray(PACK_HEADER_LENGTH);
  const rest = Readable.from((async function* () {
    if (after.length > 0) yield after;
    for (;;) {
      const r = await iterator.next();
      if (r.done === true) return;
      yield r.value;
    }
  })(), { objectMode: false });
  return { header: { version, count: head.readUInt32BE(8) }, rest };
}

/**
 * Takes the objects of a pack whose header was read (`readPackHeader`) into `repo` (a
 * quarantine's view, for a push): loose below the unpack limit, else a pack in its pack
 * directory with a `.keep` file. Everything is checked before anything is written; a pack that
 * fails leaves nothing behind. Reads the input to the pack's trailer and no further.
 */
export async function receiveObjects(repo: Repository, header: ConsumedPackHeader, input: Readable, options: ReceiveObjectsOptions = {}): Promise<ReceivedObjects> {
  // Loose objects cannot be marked as a promisor's: such a pack is always kept (git's fetch-pack).
  const limit = options.promisor !== undefined ? 0 : options.unpackLimit ?? 100;
  const say = options.onMessage ?? ((): void => undefined);
  const hexLength = repo.store.hashLength * 2;
  // The boundary the strict checks stop at: the repository's, and the pusher's.
  const shallow = options.strict !== undefined ? [...repo.shallowCommits(), ...(options.shallow ?? [])] : [];
  if (header.count < limit) {
    let strict: FsckRules | undefined;
    if (options.strict !== undefined) {
      strict = FsckRules.defaults(true);
      setFsckMessageTypes(strict, options.strict, hexLength, options.baseDir);
    }
    const result = await unpackObjects(repo.store, input, {
      packHeader: header,
      detectCollisions: true,
      ...(strict !== undefined ? { strict, shallow } : {}),
      ...(options.maxInputSize !== undefined ? { maxInputSize: options.maxInputSize } : {}),
      // Below the unpack limit a pack is a few objects: a worker would cost more to start (~45 ms) than it saves.
      threads: options.threads ?? 1,
      ...(options.signal !== undefined ? { signal: options.signal } : {}),
      onProgress: (done, total) => options.onProgress?.('unpacking', done, total),
      onError: say,
    });
    return { objects: result.objects };
  }
  const packDir = join(repo.store.objectsDir, 'pack');
  mkdirSync(packDir, { recursive: true });
  const indexOptions: IndexPackOptions = {
    objectFormat: repo.format,
    packDir,
    packHeader: header,
    detectCollisions: true,
    revIndex: repo.config.getBool('pack.writeReverseIndex') === true,
    // A pushed pack need not be the bytes git's index-pack would make of it: the bases a thin
    // pack lacks are deflated by Node's zlib, not the (slower) reference one.
    fixThinGitBytes: false,
    ...(options.keep !== undefined ? { keep: options.keep } : {}),
    ...(options.promisor !== undefined ? { promisor: options.promisor } : {}),
    ...(options.maxInputSize !== undefined ? { maxInputSize: options.maxInputSize } : {}),
    // Threads as asked, else as indexPack plans them (one for a pack of a few thousand objects).
    ...(options.threads !== undefined ? { threads: options.threads } : {}),
    ...(options.signal !== undefined ? { signal: options.signal } : {}),
    ...(options.onProgress !== undefined ? { onProgress: options.onProgress } : {}),
  };
  if (options.fixThin !== false) {
    const store = repo.objects;
    indexOptions.fixThin = (id) => (store.has(id) ? store.read(id) : undefined);
    const level = repo.config.getInt('core.looseCompression') ?? repo.config.getInt('core.compression');
    if (level !== undefined) indexOptions.fixThinCompression = level;
  }
  const types = options.strict;
  const strict = types !== undefined;
  let linksInPack: boolean | undefined;
  const tell = (ok: boolean): void => {
    linksInPack = ok;
  };
  const selfContained = options.checkSelfContained === true ? { selfContained: true, onSelfContained: tell } : options.observeSelfContained === true ? { observeSelfContained: true, onSelfContained: tell } : {};
  // git's --strict and --check-self-contained-and-connected both refuse a pack with an object twice.
  if (strict || options.checkSelfContained === true) indexOptions.strict = true;
  Object.assign(indexOptions, indexPackChecks({ repo, strict, fsckObjects: strict, ...selfContained, ...(types !== undefined && types !== '' ? { messageTypes: types } : {}), ...(options.baseDir !== undefined ? { baseDir: options.baseDir } : {}), ...(shallow.length > 0 ? { shallow } : {}), onMessage: say }));
  const result = await indexPack(input, indexOptions);
  const objects = result.objectCount - result.localObjects;
  return {
    objects, packPath: result.packPath, keepPath: result.keepPath,
    ...(linksInPack !== undefined ? { selfContained: linksInPack && result.localObjects === 0 } : {}),
  };
}
