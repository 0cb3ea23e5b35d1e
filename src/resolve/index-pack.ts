import { closeSync, existsSync, fstatSync, openSync, readFileSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { cpus } from 'node:os';
import { performance } from 'node:perf_hooks';
import type { Readable } from 'node:stream';
import { crc32 } from 'node:zlib';
import { PackwrightError } from '../errors/packwright-error.js';
import { hashBytes, objectHeader } from '../hash/hash-object.js';
import { hashLength, type ObjectFormat } from '../hash/object-format.js';
import { toHex } from '../hash/hex.js';
import { writeIndex } from '../idx/write-index.js';
import { writeRevIndex } from '../idx/rev-index.js';
import { encodeEntryHeader } from '../pack/entry-header.js';
import { deflate } from '../zlib/deflate.js';
import { compareBytes } from '../hash/hex.js';
import { scanPack, type PackScan } from './pack-scan.js';
import { resolveDeltas, type ExternalBaseLookup, type ResolveStats } from './resolve-deltas.js';
import { sortIds } from './sort-ids.js';
import { writeFileAtomic } from './write-file-atomic.js';
import { RESOLVE_WORKER, WorkerPool } from '../workers/worker-pool.js';

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
  /** Refuse packs larger than this many bytes (`--max-input-size`). */
  maxInputSize?: number;
  signal?: AbortSignal;
  onProgress?: (phase: IndexPackPhase, done: number, total: number) => void;
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
    phases: Record<string, number>;
  };
}

/** git's default thread count without --threads or pack.threads (builtin/index-pack.c). */
export function defaultThreads(): number {
  const n = cpus().length;
  if (n < 4) return n;
  if (n < 6) return 3;
  if (n < 40) return Math.floor(n / 2);
  return 20;
}

async function readAll(stream: Readable, max: number | undefined, onProgress?: (n: number) => void): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of stream) {
    const b = chunk as Buffer;
    chunks.push(b);
    total += b.length;
    if (max !== undefined && total > max) throw new PackwrightError('PACK_TOO_LARGE', `pack exceeds maximum allowed size (${max} bytes)`, { offset: max });
    onProgress?.(total);
  }
  return Buffer.concat(chunks, total);
}

/**
 * Indexes a pack as `git index-pack` does: pass 1 scans it (`scanPack`), pass 2 resolves deltas
 * (`resolveDeltas`), then the `.idx` (and `.rev`, `.keep`) are written to temporary names and
 * renamed in git's order (.keep, .pack, .rev, .idx), byte-identical to git's.
 */
export async function indexPack(input: string | Readable | Uint8Array, options: IndexPackOptions = {}): Promise<IndexPackResult> {
  const format = options.objectFormat ?? 'sha1';
  const phases: Record<string, number> = {};
  let t = performance.now();
  const lap = (name: string): void => {
    const now = performance.now();
    phases[name] = now - t;
    t = now;
  };
  const name = typeof input === 'string' ? input : '<stdin>';
  const threads = Math.max(1, options.threads ?? defaultThreads());
  // Workers boot while the pack is read and scanned (~45 ms each).
  const pool = threads > 1 ? new WorkerPool(RESOLVE_WORKER, threads) : undefined;
  try {
    return await indexPackWith(input, options, format, name, threads, pool, phases, lap);
  } finally {
    await pool?.close();
  }
}

async function indexPackWith(
  input: string | Readable | Uint8Array, options: IndexPackOptions, format: ObjectFormat, name: string, threads: number,
  pool: WorkerPool | undefined, phases: Record<string, number>, lap: (name: string) => void,
): Promise<IndexPackResult> {
  const H = hashLength(format);
  const shared = pool !== undefined;
  let data: Buffer;
  if (typeof input === 'string') {
    data = readPackFile(input, shared, options.maxInputSize);
  } else if (input instanceof Uint8Array) {
    data = shared ? toShared(input) : Buffer.from(input.buffer, input.byteOffset, input.byteLength);
  } else {
    data = await readAll(input, options.maxInputSize, (n) => options.onProgress?.('receiving', n, 0));
    if (shared) data = toShared(data);
  }
  lap('read');
  const scanOptions: Parameters<typeof scanPack>[1] = { format, name, shared };
  if (options.signal !== undefined) scanOptions.signal = options.signal;
  if (options.onProgress !== undefined) {
    const p = options.onProgress;
    scanOptions.onProgress = (d, n) => p('indexing', d, n);
  }
  let scan = scanPack(data, scanOptions);
  lap('scan');
  const trailing = Buffer.from(data.subarray(scan.end));
  if (trailing.length > 0 && typeof input === 'string') {
    throw new PackwrightError('PACK_JUNK', `${name}: pack has junk at the end (${trailing.length} bytes after offset ${scan.end})`, { file: name, offset: scan.end });
  }
  let pack = data.subarray(0, scan.end);
  const usedExternal: Buffer[] = [];
  const resolveOptions: Parameters<typeof resolveDeltas>[2] = { name, usedExternal };
  if (pool !== undefined) resolveOptions.pool = pool;
  if (options.signal !== undefined) resolveOptions.signal = options.signal;
  if (options.fixThin !== undefined) resolveOptions.externalBase = options.fixThin;
  if (options.onProgress !== undefined) {
    const p = options.onProgress;
    resolveOptions.onProgress = (d, n) => p('resolving', d, n);
  }
  const stats: ResolveStats = await resolveDeltas(pack, scan, resolveOptions);
  lap('resolve');
  let localObjects = 0;
  if (usedExternal.length > 0 && options.fixThin !== undefined) {
    ({ pack, scan } = appendBases(pack, scan, usedExternal, options.fixThin, format));
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
  for (let i = 1; i < n; i++) {
    if (compareBytes(sortedIds, (i - 1) * H, sortedIds, i * H, H) === 0 && options.strict) {
      throw new PackwrightError('PACK_DUPLICATE_OBJECT', `${name}: the same object ${toHex(sortedIds.subarray(i * H, i * H + H))} appears twice in the pack`, { file: name, offset: sortedOffsets[i] as number });
    }
  }
  const writeOptions: Parameters<typeof writeIndex>[3] = {};
  if (options.idxVersion !== undefined) writeOptions.version = options.idxVersion;
  if (options.largeOffsetLimit !== undefined) writeOptions.largeOffsetLimit = options.largeOffsetLimit;
  const index = writeIndex(format, { ids: sortedIds, offsets: sortedOffsets, crc32: sortedCrc }, scan.packHash, writeOptions);
  const basePath = typeof input === 'string' && localObjects === 0
    ? input.replace(/\.pack$/, '')
    : options.packPath?.replace(/\.pack$/, '') ?? (options.packDir !== undefined ? join(options.packDir, `pack-${scan.packHash.toString('hex')}`) : undefined);
  const indexPath = options.indexPath ?? (basePath !== undefined ? `${basePath}.idx` : undefined);
  let packPath: string | undefined;
  let revPath: string | undefined;
  let keepPath: string | undefined;
  if (options.verify) {
    if (indexPath === undefined || !existsSync(indexPath)) throw new PackwrightError('INVALID_ARGUMENT', `${name}: no index to verify against`);
    const existing = readFileSync(indexPath);
    if (!existing.equals(index)) throw new PackwrightError('IDX_MISMATCH', `${indexPath}: the index does not match the one built from ${name}`, { file: indexPath });
  } else {
    if (basePath !== undefined && (typeof input !== 'string' || localObjects > 0)) {
      if (options.keep !== undefined) {
        keepPath = `${basePath}.keep`;
        writeFileAtomic(keepPath, Buffer.from(options.keep === '' ? '' : `${options.keep}\n`));
      }
      packPath = `${basePath}.pack`;
      writeFileAtomic(packPath, pack);
    } else if (typeof input === 'string') {
      packPath = input;
      if (options.keep !== undefined && basePath !== undefined) {
        keepPath = `${basePath}.keep`;
        writeFileAtomic(keepPath, Buffer.from(options.keep === '' ? '' : `${options.keep}\n`));
      }
    }
    if (options.revIndex) {
      // .rev lists, in pack order, each entry's idx position: the inverse of `order`.
      const inPackOrder = new Uint32Array(n);
      for (let i = 0; i < n; i++) inPackOrder[order[i] as number] = i;
      revPath = indexPath !== undefined ? indexPath.replace(/\.idx$/, '') + '.rev' : undefined;
      if (revPath !== undefined) writeFileAtomic(revPath, writeRevIndex(format, inPackOrder, scan.packHash));
    }
    if (indexPath !== undefined) writeFileAtomic(indexPath, index);
  }
  lap('write');
  const countsByType: Record<string, number> = { commit: 0, tree: 0, blob: 0, tag: 0 };
  const names = ['', 'commit', 'tree', 'blob', 'tag'];
  for (let k = 0; k < n; k++) {
    const key = names[scan.resolvedTypes[k] as number] as string;
    countsByType[key] = (countsByType[key] ?? 0) + 1;
  }
  return {
    packHash: scan.packHash, packPath, indexPath, revPath, keepPath, objectCount: n, localObjects, trailing, index, scan, depths: stats.depths,
    stats: { countsByType, deltas: stats.deltas, chainHistogram: stats.chainHistogram, peakLiveBytes: stats.peakLiveBytes, threads, perThread: stats.perThread, phases },
  };
}

/** Reads a pack file whole, into shared memory when worker threads will read it too. */
function readPackFile(path: string, shared: boolean, max: number | undefined): Buffer {
  const fd = openSync(path, 'r');
  try {
    const size = fstatSync(fd).size;
    if (max !== undefined && size > max) {
      throw new PackwrightError('PACK_TOO_LARGE', `${path}: pack exceeds maximum allowed size (${max} bytes)`, { file: path });
    }
    const buf = shared ? Buffer.from(new SharedArrayBuffer(Math.max(1, size)), 0, size) : Buffer.allocUnsafeSlow(size);
    let done = 0;
    while (done < size) {
      const got = readSync(fd, buf, done, Math.min(size - done, 1 << 30), done);
      if (got === 0) break;
      done += got;
    }
    return buf.subarray(0, done);
  } finally {
    closeSync(fd);
  }
}

function toShared(data: Uint8Array): Buffer {
  if (data.buffer instanceof SharedArrayBuffer) return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  const buf = Buffer.from(new SharedArrayBuffer(Math.max(1, data.length)), 0, data.length);
  buf.set(data);
  return buf;
}

/**
 * `--fix-thin`: appends each external base as a whole object, rewrites the object count and the
 * trailer, and extends the scan so the index covers the new entries.
 */
function appendBases(pack: Uint8Array, scan: PackScan, ids: Buffer[], lookup: ExternalBaseLookup, format: ObjectFormat): { pack: Buffer; scan: PackScan } {
  const H = hashLength(format);
  const body = pack.subarray(0, scan.offsets[scan.count] as number);
  const parts: Buffer[] = [Buffer.from(body)];
  const n = scan.count + ids.length;
  const grown: PackScan = {
    ...scan,
    count: n,
    offsets: new Float64Array(n + 1),
    types: new Uint8Array(n),
    resolvedTypes: new Uint8Array(n),
    sizes: new Float64Array(n),
    headerLengths: new Uint8Array(n),
    crc32: new Uint32Array(n),
    ofsBase: new Int32Array(n).fill(-1),
    ids: new Uint8Array(n * H),
  };
  grown.offsets.set(scan.offsets.subarray(0, scan.count));
  grown.types.set(scan.types);
  grown.resolvedTypes.set(scan.resolvedTypes);
  grown.sizes.set(scan.sizes);
  grown.headerLengths.set(scan.headerLengths);
  grown.crc32.set(scan.crc32);
  grown.ids.set(scan.ids);
  let offset = body.length;
  for (let i = 0; i < ids.length; i++) {
    const id = ids[i] as Buffer;
    const obj = lookup(id);
    if (obj === undefined) throw new PackwrightError('OBJECT_NOT_FOUND', `base ${toHex(id)} vanished while completing the thin pack`);
    const entry = Buffer.concat([encodeEntryHeader(obj.type, obj.data.length), deflate(obj.data, 1)]);
    const k = scan.count + i;
    grown.offsets[k] = offset;
    grown.types[k] = obj.type;
    grown.resolvedTypes[k] = obj.type;
    grown.sizes[k] = obj.data.length;
    grown.crc32[k] = crc32(entry);
    grown.ids.set(hashBytes(format, Buffer.concat([objectHeader(obj.type, obj.data.length), obj.data])), k * H);
    parts.push(entry);
    offset += entry.length;
  }
  grown.offsets[n] = offset;
  const full = Buffer.concat(parts);
  full.writeUInt32BE(n, 8);
  grown.packHash = hashBytes(format, full);
  grown.end = offset + H;
  return { pack: Buffer.concat([full, grown.packHash]), scan: grown };
}

