import { closeSync, existsSync, fstatSync, statSync, fsyncSync, ftruncateSync, openSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';
import { nodeCrypto } from '../hash/node-crypto.js';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { cpus } from 'node:os';
import type { Readable } from 'node:stream';
import { crc32 } from 'node:zlib';
import { PackwrightError } from '../errors/packwright-error.js';
import { hashBytes, objectHeader } from '../hash/hash-object.js';
import { TYPE_NAMES } from '../objects/object-type.js';
import { hashLength, type ObjectFormat } from '../hash/object-format.js';
import { toHex } from '../hash/hex.js';
import { writeIndex, type WriteIndexOptions } from '../idx/write-index.js';
import { writeRevIndex } from '../idx/rev-index.js';
import { encodeEntryHeader } from '../pack/entry-header.js';
import { deflate } from '../zlib/deflate.js';
import { compareBytes } from '../hash/hex.js';
import { growScanTo, PackScanner, scanPack, type PackScan, type RegionScan, type ScanOptions, type WholePack } from './pack-scan.js';
import { CLAIM_MAIN, type RegionsRequest } from './scan-region.js';
import { PACK_HEADER_LENGTH } from '../pack/pack-header.js';
import { PREFAULT_CHUNK, prefaultStates, takeChunks } from '../workers/prefault.js';
import { bufferSource, fileSource, streamSource, type PackSource } from './pack-source.js';
import { resolveDeltas, type ExternalBaseLookup, type ResolveOptions } from './resolve-deltas.js';
import { sortIds } from './sort-ids.js';
import { writeFileAtomic } from '../io/write-file-atomic.js';
import { readExactly } from '../io/read-exactly.js';
import { WorkerPool } from '../workers/worker-pool.js';
import type { ResolveTasks } from './resolve-tasks.js';

/** The worker script (resolve-worker.ts; in the CLI bundle, its own bundle beside it). */
const RESOLVE_WORKER = new URL('./resolve-worker.js', import.meta.url);

export type IndexPackPhase = 'receiving' | 'indexing' | 'resolving' | 'writing';

export interface IndexPackOptions {
  objectFormat?: ObjectFormat;
  /** Worker threads for delta resolution (default: git's rule). This version resolves on one thread. */
  threads?: number;
  idxVersion?: 1 | 2;
  /** Offsets above this go to the 64-bit table (`--index-version=2,<limit>`). */
  largeOffsetLimit?: number;
  /** Also write a `.rev` file. */
  revIndex?: boolean;
  /** Write a `.keep` file with this message ('' for an empty one). */
  keep?: string;
  /** Where to write the `.idx` (default: the pack path with `.idx`). */
  indexPath?: string;
  /** For stream or buffer input: where to write the pack (its `.idx`, `.rev`, `.keep` go beside it). */
  packPath?: string;
  /** For stream or buffer input: write `pack-<hash>.pack` (and its companions) in this directory. */
  packDir?: string;
  /** Reject duplicate objects (git's `--strict` does that among its checks). */
  strict?: boolean;
  /** Complete a thin pack with bases from this lookup (git's `--fix-thin`). */
  fixThin?: ExternalBaseLookup;
  /** Do not write anything: build the index and compare it with the existing `.idx`. */
  verify?: boolean;
  /**
   * Packs up to this size are held in memory while indexing (pass 2 then reads entries without a
   * system call each); larger ones are read back from the file. Default 1 GiB.
   */
  memoryLimit?: number;
  /** Packs from this size up (default 8 MiB) have pass 1 split across threads. */
  parallelScanMinSize?: number;
  /** Refuse packs larger than this many bytes (`--max-input-size`). */
  maxInputSize?: number;
  signal?: AbortSignal;
  /** Objects done of total in the current phase; `bytes` read so far while scanning. */
  onProgress?: (phase: IndexPackPhase, done: number, total: number, bytes?: number) => void;
}

export interface IndexPackResult {
  packHash: Buffer;
  packPath: string | undefined;
  indexPath: string | undefined;
  revPath: string | undefined;
  keepPath: string | undefined;
  objectCount: number;
  /** Objects appended by `fixThin`. */
  localObjects: number;
  /** Bytes that followed the pack's trailer in the input (git echoes them for `--stdin`). */
  trailing: Buffer;
  /** The `.idx` bytes. */
  index: Buffer;
  /** Per-entry facts in pack order (for `verify-pack -v`). */
  scan: PackScan;
  /** Delta depth of each entry in pack order. */
  depths: Uint32Array;
  stats: {
    countsByType: Record<string, number>;
    deltas: number;
    chainHistogram: number[];
    peakLiveBytes: number;
    threads: number;
    /** Deltas each thread resolved. */
    perThread: number[];
    /** Children resolved from branches offered by another thread. */
    stolen: number;
    phases: Record<string, number>;
  };
}

const DEFAULT_MEMORY_LIMIT = 1 << 30;
/** Below this, splitting pass 1 across threads costs more than it saves. */
const PARALLEL_SCAN_MIN = 8 << 20;

/** Pass 1 regions: about this many bytes each (at most 256 regions). */
const REGION_BYTES = 2 << 20;

interface SplitScan {
  bounds: Float64Array;
  claims: Int32Array;
  /** The helper's scan of region i, or undefined if there is none (failed or crashed helper). */
  result(i: number): Promise<RegionScan | undefined>;
  /** Settles when every helper has finished. */
  done: Promise<void>;
}

/** Starts the helpers of a parallel pass 1 over `[PACK_HEADER_LENGTH, dataEnd)` of `buffer`. */
function splitScan(pool: WorkerPool<ResolveTasks>, base: Omit<RegionsRequest, 'bounds' | 'claims'>): SplitScan {
  const span = base.dataEnd - PACK_HEADER_LENGTH;
  const count = Math.max(pool.size + 1, Math.min(256, Math.ceil(span / REGION_BYTES)));
  const bounds = new Float64Array(new SharedArrayBuffer(8 * (count + 1)));
  for (let i = 0; i <= count; i++) bounds[i] = PACK_HEADER_LENGTH + Math.floor((span * i) / count);
  const claims = new Int32Array(new SharedArrayBuffer(4 * count));
  claims[0] = CLAIM_MAIN;
  const results = new Map<number, RegionScan>();
  const waiters = new Map<number, (r: RegionScan | undefined) => void>();
  let finished = false;
  const deliver = (i: number, r: RegionScan): void => {
    const w = waiters.get(i);
    if (w === undefined) results.set(i, r);
    else {
      waiters.delete(i);
      w(r);
    }
  };
  const request: RegionsRequest = { ...base, bounds, claims };
  const helpers = Array.from({ length: pool.size }, (_, j) =>
    pool.run(j, 'scan-regions', request, (m) => deliver(m.index, m.region)));
  const done = Promise.allSettled(helpers).then(() => {
    finished = true;
    for (const w of waiters.values()) w(undefined);
    waiters.clear();
  });
  return {
    bounds, claims, done,
    result(i) {
      const r = results.get(i);
      if (r !== undefined || finished) {
        results.delete(i);
        return Promise.resolve(r);
      }
      return new Promise((resolve) => waiters.set(i, resolve));
    },
  };
}

/** The first `size` bytes of the file open as `fd`, in shared memory if threads will read them. */
function readBack(fd: number, size: number, shared: boolean, file: string): Buffer {
  const buf = shared ? Buffer.from(new SharedArrayBuffer(Math.max(1, size)), 0, size) : Buffer.allocUnsafeSlow(size);
  // The file was written by this process: ending early means it shrank while being indexed.
  readExactly(fd, buf, 0, size, 0, file, 'PACK_TRUNCATED');
  return buf;
}

/** Packs below this are indexed on one thread unless `threads` says otherwise. */
const SMALL_PACK = 4 << 20;

function fileSize(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return Infinity;
  }
}

/** git's default thread count without --threads or pack.threads (builtin/index-pack.c). */
export function defaultThreads(): number {
  const n = cpus().length;
  if (n < 4) return n;
  if (n < 6) return 3;
  if (n < 40) return Math.floor(n / 2);
  return 20;
}


/**
 * Indexes a pack as `git index-pack` does: pass 1 scans it (`scanPack`), pass 2 resolves deltas
 * (`resolveDeltas`), then the `.idx` (and `.rev`, `.keep`) are written to temporary names and
 * renamed in git's order (.keep, .pack, .rev, .idx), byte-identical to git's.
 */
export async function indexPack(input: string | Readable | Uint8Array, options: IndexPackOptions = {}): Promise<IndexPackResult> {
  const format = options.objectFormat ?? 'sha1';
  const name = typeof input === 'string' ? input : '<stdin>';
  // Starting a worker costs ~45 ms: below a few MiB one thread finishes first (unless asked).
  const small = typeof input === 'string' ? fileSize(input) < SMALL_PACK : input instanceof Uint8Array && input.length < SMALL_PACK;
  const threads = Math.max(1, options.threads ?? (small ? 1 : defaultThreads()));
  // `threads` counts this thread, like git's. Workers boot while the pack is read and scanned
  // (~45 ms each).
  const pool = threads > 1 ? new WorkerPool<ResolveTasks>(RESOLVE_WORKER, threads - 1) : undefined;
  try {
    return await indexPackWith(input, options, format, name, threads, pool);
  } finally {
    await pool?.close();
  }
}

async function indexPackWith(
  input: string | Readable | Uint8Array, options: IndexPackOptions, format: ObjectFormat, name: string, threads: number,
  pool: WorkerPool<ResolveTasks> | undefined,
): Promise<IndexPackResult> {
  const H = hashLength(format);
  const phases: Record<string, number> = {};
  let t = performance.now();
  const lap = (phase: string): void => {
    const now = performance.now();
    phases[phase] = now - t;
    t = now;
  };
  // A stream or buffer is written to a temporary pack file as pass 1 reads it; pass 2 reads
  // entries back from that file, and it is renamed into place once everything succeeded.
  let tmpPack: string | undefined;
  let readFd: number | undefined;
  let writeFd: number | undefined;
  let size: number | undefined;
  let whole: WholePack | undefined;
  let split: SplitScan | undefined;
  try {
    let source: PackSource;
    let packPath: string;
    if (typeof input === 'string') {
      packPath = input;
      readFd = openSync(input, 'r');
      size = fstatSync(readFd).size;
      if (options.maxInputSize !== undefined && size > options.maxInputSize) {
        throw new PackwrightError('PACK_TOO_LARGE', `${name}: pack exceeds maximum allowed size (${options.maxInputSize} bytes)`, { file: name });
      }
      source = fileSource(readFd);
      if (size <= (options.memoryLimit ?? DEFAULT_MEMORY_LIMIT)) {
        // Keep the pack in (shared) memory so pass 2 reads entries without a syscall each.
        const buffer = pool !== undefined ? Buffer.from(new SharedArrayBuffer(Math.max(1, size)), 0, size) : Buffer.allocUnsafeSlow(size);
        whole = { buffer };
        if (pool !== undefined && size >= (options.parallelScanMinSize ?? PARALLEL_SCAN_MIN)) {
          // Pass 1 in parallel: many small regions; this thread claims them from the front as its
          // scan reaches them, helpers from the back (see scanRegionsFromTheBack).
          split = splitScan(pool, { format, path: input, buffer, dataEnd: size - H });
        } else if (pool !== undefined && size > 2 * PREFAULT_CHUNK) {
          const states = prefaultStates(size);
          // Help only: if it fails, pass 1 touches the pages itself.
          pool.run(0, 'prefault', { buffer, states }).catch(() => undefined);
          whole.claim = (from, to) => takeChunks(states, from, to);
        }
      }
    } else {
      const dir = options.packPath !== undefined ? dirname(options.packPath) : options.packDir ?? tmpdir();
      tmpPack = join(dir, `tmp_pack_${process.pid}_${nodeCrypto().randomBytes(4).toString('hex')}`);
      writeFd = openSync(tmpPack, 'wx+', 0o444);
      packPath = tmpPack;
      source = input instanceof Uint8Array ? bufferSource(input) : streamSource(input);
    }
    const scanOptions: ScanOptions = { format, name, shared: pool !== undefined };
    if (whole !== undefined) scanOptions.whole = whole;
    if (size !== undefined) scanOptions.size = size;
    if (options.maxInputSize !== undefined) scanOptions.maxInputSize = options.maxInputSize;
    if (options.signal !== undefined) scanOptions.signal = options.signal;
    if (writeFd !== undefined) {
      const fd = writeFd;
      scanOptions.sink = (bytes) => {
        let done = 0;
        while (done < bytes.length) done += writeSync(fd, bytes, done, bytes.length - done);
      };
    }
    if (options.onProgress !== undefined) {
      const p = options.onProgress;
      const phase: IndexPackPhase = typeof input === 'string' ? 'indexing' : 'receiving';
      scanOptions.onProgress = (d, n, bytes) => p(phase, d, n, bytes);
    }
    let scan: PackScan;
    if (split === undefined) {
      scan = await scanPack(source, scanOptions);
    } else {
      const scanner = new PackScanner(source, scanOptions);
      await scanner.begin();
      const { bounds, claims } = split;
      for (let i = 1; i < claims.length; i++) {
        await scanner.scanUntil(bounds[i] as number);
        if (Atomics.compareExchange(claims, i, 0, CLAIM_MAIN) === 0) continue;
        // A helper has (or is scanning) region i. It is adopted only if it starts exactly where
        // this scan stands; otherwise this thread scans it too, and reports any error in it.
        const r = await split.result(i);
        if (r !== undefined) scanner.adopt(r);
      }
      scan = await scanner.finish();
      await split.done;
    }
    lap('scan');
    if (typeof input === 'string' && scan.trailing.length > 0) {
      throw new PackwrightError('PACK_JUNK', `${name}: pack has junk at the end (${scan.trailing.length} bytes after offset ${scan.end})`, { file: name, offset: scan.end });
    }
    if (writeFd !== undefined) {
      fsyncSync(writeFd);
      if (scan.data === undefined && scan.end <= (options.memoryLimit ?? DEFAULT_MEMORY_LIMIT)) {
        // A received pack that fits is read back whole for pass 2, as a pack file would have
        // been: one read here instead of a pread per entry (~6 µs each) while resolving
        // (gitoxide.pack from stdin at --threads=1: 6.5 s -> 4.9 s).
        scan.data = readBack(writeFd, scan.end, pool !== undefined, packPath);
      }
    }

    const usedExternal: Buffer[] = [];
    const resolveOptions: ResolveOptions = { name, usedExternal };
    if (pool !== undefined) resolveOptions.pool = pool;
    if (options.signal !== undefined) resolveOptions.signal = options.signal;
    if (options.fixThin !== undefined) resolveOptions.externalBase = options.fixThin;
    if (options.onProgress !== undefined) {
      const p = options.onProgress;
      resolveOptions.onProgress = (d, n) => p('resolving', d, n);
    }
    const stats = await resolveDeltas(packPath, scan, resolveOptions);
    // The threads are done: let their memory go before the index is built.
    await pool?.close();
    lap('resolve');
    let localObjects = 0;
    if (usedExternal.length > 0 && options.fixThin !== undefined) {
      if (writeFd === undefined) throw new PackwrightError('INVALID_ARGUMENT', `${name}: a thin pack can only be completed from a stream (--stdin)`);
      scan = appendBases(writeFd, packPath, scan, usedExternal, options.fixThin, format);
      localObjects = usedExternal.length;
    }

    const n = scan.count;
    const order = sortIds(scan.ids, n, H);
    const sortedIds = new Uint8Array(n * H);
    const sortedOffsets = new Float64Array(n);
    const sortedCrc = new Uint32Array(n);
    for (let i = 0; i < n; i++) {
      const k = order[i] as number;
      sortedIds.set(scan.ids.subarray(k * H, k * H + H), i * H);
      sortedOffsets[i] = scan.offsets[k] as number;
      sortedCrc[i] = scan.crc32[k] as number;
    }
    if (options.strict) {
      for (let i = 1; i < n; i++) {
        if (compareBytes(sortedIds, (i - 1) * H, sortedIds, i * H, H) === 0) {
          throw new PackwrightError('PACK_DUPLICATE_OBJECT', `${name}: the same object ${toHex(sortedIds.subarray(i * H, i * H + H))} appears twice in the pack`, { file: name, offset: sortedOffsets[i] as number });
        }
      }
    }
    const writeOptions: WriteIndexOptions = {};
    if (options.idxVersion !== undefined) writeOptions.version = options.idxVersion;
    if (options.largeOffsetLimit !== undefined) writeOptions.largeOffsetLimit = options.largeOffsetLimit;
    const index = writeIndex(format, { ids: sortedIds, offsets: sortedOffsets, crc32: sortedCrc }, scan.packHash, writeOptions);

    const basePath = typeof input === 'string'
      ? input.replace(/\.pack$/, '')
      : options.packPath?.replace(/\.pack$/, '') ?? (options.packDir !== undefined ? join(options.packDir, `pack-${scan.packHash.toString('hex')}`) : undefined);
    const indexPath = options.indexPath ?? (basePath !== undefined ? `${basePath}.idx` : undefined);
    let finalPack: string | undefined = typeof input === 'string' ? input : undefined;
    let revPath: string | undefined;
    let keepPath: string | undefined;
    if (options.verify) {
      if (indexPath === undefined || !existsSync(indexPath)) throw new PackwrightError('INVALID_ARGUMENT', `${name}: no index to verify against`);
      if (!readFileSync(indexPath).equals(index)) throw new PackwrightError('IDX_MISMATCH', `${indexPath}: the index does not match the one built from ${name}`, { file: indexPath });
    } else {
      // git's order: .keep, .pack, .rev, .idx (the index last: a pack is visible once complete).
      if (options.keep !== undefined && basePath !== undefined) {
        keepPath = `${basePath}.keep`;
        writeFileAtomic(keepPath, Buffer.from(options.keep === '' ? '' : `${options.keep}\n`));
      }
      if (tmpPack !== undefined && basePath !== undefined) {
        closeSync(writeFd as number);
        writeFd = undefined;
        finalPack = `${basePath}.pack`;
        renameSync(tmpPack, finalPack);
        tmpPack = undefined;
      }
      if (options.revIndex && indexPath !== undefined) {
        // .rev lists, in pack order, each entry's idx position: the inverse of `order`.
        const inPackOrder = new Uint32Array(n);
        for (let i = 0; i < n; i++) inPackOrder[order[i] as number] = i;
        revPath = indexPath.replace(/\.idx$/, '') + '.rev';
        writeFileAtomic(revPath, writeRevIndex(format, inPackOrder, scan.packHash));
      }
      if (indexPath !== undefined) writeFileAtomic(indexPath, index);
    }
    lap('write');
    const countsByType: Record<string, number> = { commit: 0, tree: 0, blob: 0, tag: 0 };
    for (let k = 0; k < n; k++) {
      const key = TYPE_NAMES[scan.resolvedTypes[k] as number] as string;
      countsByType[key] = (countsByType[key] ?? 0) + 1;
    }
    return {
      packHash: scan.packHash, packPath: finalPack, indexPath, revPath, keepPath, objectCount: n, localObjects,
      trailing: scan.trailing, index, scan, depths: stats.depths,
      stats: { countsByType, deltas: stats.deltas, chainHistogram: stats.chainHistogram, peakLiveBytes: stats.peakLiveBytes, threads, perThread: stats.perThread, stolen: stats.stolen, phases },
    };
  } finally {
    if (readFd !== undefined) closeSync(readFd);
    if (writeFd !== undefined) closeSync(writeFd);
    if (tmpPack !== undefined) rmSync(tmpPack, { force: true });
  }
}

/**
 * `--fix-thin`: appends each external base as a whole object after the last entry (over the old
 * trailer), rewrites the object count, re-hashes the file and writes the new trailer, as git's
 * `fix_unresolved_deltas` + `fixup_pack_header_footer` do; the scan grows to cover the new entries.
 */
function appendBases(fd: number, path: string, scan: PackScan, ids: Buffer[], lookup: ExternalBaseLookup, format: ObjectFormat): PackScan {
  const H = hashLength(format);
  const first = scan.count;
  const n = first + ids.length;
  const grown = growScanTo(scan, n);
  let offset = scan.offsets[first] as number;
  for (let i = 0; i < ids.length; i++) {
    const id = ids[i] as Buffer;
    const obj = lookup(id);
    if (obj === undefined) throw new PackwrightError('OBJECT_NOT_FOUND', `base ${toHex(id)} vanished while completing the thin pack`);
    const entry = Buffer.concat([encodeEntryHeader(obj.type, obj.data.length), deflate(obj.data)]);
    const k = first + i;
    grown.offsets[k] = offset;
    grown.types[k] = obj.type;
    grown.resolvedTypes[k] = obj.type;
    grown.sizes[k] = obj.data.length;
    grown.crc32[k] = crc32(entry);
    grown.ids.set(hashBytes(format, Buffer.concat([objectHeader(obj.type, obj.data.length), obj.data])), k * H);
    writeSync(fd, entry, 0, entry.length, offset);
    offset += entry.length;
  }
  grown.offsets[n] = offset;
  grown.count = n;
  ftruncateSync(fd, offset);
  const count = Buffer.alloc(4);
  count.writeUInt32BE(n);
  writeSync(fd, count, 0, 4, 8);
  // Re-hash the whole file: the trailer covers every byte before it.
  const hash = nodeCrypto().createHash(format);
  const buf = Buffer.allocUnsafeSlow(1 << 20);
  for (let at = 0; at < offset;) {
    const got = Math.min(buf.length, offset - at);
    readExactly(fd, buf, 0, got, at, path, 'PACK_TRUNCATED');
    hash.update(buf.subarray(0, got));
    at += got;
  }
  grown.packHash = hash.digest();
  writeSync(fd, grown.packHash, 0, H, offset);
  fsyncSync(fd);
  grown.end = offset + H;
  return grown;
}
