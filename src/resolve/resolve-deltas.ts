import { PackwrightError, throwIfAborted } from '../errors/packwright-error.js';
import { applyDelta, DeltaFormatError, readDeltaHeader } from '../delta/apply-delta.js';
import { hashBytes, writeHeaderBefore, OBJ_OFS_DELTA, OBJ_REF_DELTA } from '../hash/hash-object.js';
import { hashLength } from '../hash/object-format.js';
import { toHex } from '../hash/hex.js';
import { BufferPool } from '../pack/buffer-pool.js';
import { Inflater, inflateCodeName } from '../zlib/inflater.js';
import type { PackScan } from './pack-scan.js';

export interface ResolveStats {
  deltas: number;
  /** histogram[d] = number of objects at delta depth d (0 = not a delta). */
  chainHistogram: number[];
  /** Most bytes of resolved bases held at once. */
  peakLiveBytes: number;
  /** Deltas whose base came from outside the pack (thin packs). */
  externalBases: number;
  /** Delta depth of every entry (0 for non-deltas), in pack order. */
  depths: Uint32Array;
}

/** A base found outside the pack, for thin packs (`--fix-thin`). */
export type ExternalBaseLookup = (id: Uint8Array) => { type: number; data: Buffer } | undefined;

export interface ResolveOptions {
  signal?: AbortSignal;
  onProgress?: (done: number, total: number) => void;
  name?: string;
  externalBase?: ExternalBaseLookup;
  /** Ids of external bases used, in the order they were first needed. */
  usedExternal?: Buffer[];
}

/** Room kept in front of every resolved object for `"<type> <size>\0"`, so it hashes as one range. */
const HEAD_ROOM = 32;

/**
 * Pass 2 of index-pack: resolves every delta by walking the delta tree depth first from each
 * base. Children are found lazily when their parent is resolved (OFS children from a compact
 * child list, REF children by id, so REF-to-REF chains and forward references work), and a
 * parent's buffer is released as soon as its last child has started: a linear chain holds about
 * two object buffers at any time, whatever its depth.
 */
export function resolveDeltas(pack: Uint8Array, scan: PackScan, options: ResolveOptions = {}): ResolveStats {
  const name = options.name ?? '<pack>';
  const H = hashLength(scan.format);
  const n = scan.count;
  const { types, ofsBase, offsets, headerLengths, sizes, ids, resolvedTypes } = scan;

  // OFS children as CSR: childStart[b]..childStart[b+1] index into childList (4 bytes a delta).
  const childStart = new Int32Array(n + 1);
  let deltaCount = 0;
  for (let k = 0; k < n; k++) {
    const b = ofsBase[k] as number;
    if (b >= 0) childStart[b + 1] = (childStart[b + 1] as number) + 1;
    if ((types[k] as number) >= OBJ_OFS_DELTA) deltaCount++;
  }
  for (let k = 0; k < n; k++) childStart[k + 1] = (childStart[k + 1] as number) + (childStart[k] as number);
  const childList = new Int32Array(childStart[n] as number);
  const fill = childStart.slice(0, n);
  for (let k = 0; k < n; k++) {
    const b = ofsBase[k] as number;
    if (b < 0) continue;
    const at = fill[b] as number;
    fill[b] = at + 1;
    childList[at] = k;
  }
  // REF children by base id (only REF deltas pay for this map).
  const refChildren = new Map<string, number[]>();
  if (scan.refIds.length > 0) {
    const refIds = Buffer.from(scan.refIds.buffer, scan.refIds.byteOffset, scan.refIds.byteLength);
    for (let k = 0; k < n; k++) {
      if (types[k] !== OBJ_REF_DELTA) continue;
      const key = refIds.toString('latin1', k * H, k * H + H);
      const list = refChildren.get(key);
      if (list === undefined) refChildren.set(key, [k]);
      else list.push(k);
    }
  }
  const idsBuf = Buffer.from(ids.buffer, ids.byteOffset, ids.byteLength);
  const kidsOf = (k: number): number[] => {
    const kids: number[] = [];
    for (let i = childStart[k] as number; i < (childStart[k + 1] as number); i++) kids.push(childList[i] as number);
    if (refChildren.size > 0) {
      const key = idsBuf.toString('latin1', k * H, k * H + H);
      const refs = refChildren.get(key);
      if (refs !== undefined) {
        // A duplicate object in the pack must not resolve the same REF deltas twice.
        refChildren.delete(key);
        for (const r of refs) kids.push(r);
      }
    }
    return kids;
  };

  const depth = new Uint32Array(n);
  const histogram: number[] = [0];
  const pool = new BufferPool(64 * 1024 * 1024);
  const inflater = new Inflater();
  let deltaData = Buffer.allocUnsafeSlow(1 << 16);
  let live = 0;
  let peakLive = 0;
  let resolved = 0;

  // Frames of the depth-first walk, as parallel arrays.
  const fNode: number[] = [];
  const fKids: number[][] = [];
  const fCursor: number[] = [];
  const fBacking: Buffer[] = [];
  const fData: Buffer[] = [];

  const inflateEntry = (k: number, out: Buffer, at: number): void => {
    const start = (offsets[k] as number) + (headerLengths[k] as number);
    const r = inflater.inflateExact(pack, start, offsets[k + 1] as number, out, at, sizes[k] as number);
    if (r < 0) {
      throw new PackwrightError('PACK_CORRUPT', `${name}: inflate failed again for the object at offset ${offsets[k]}: ${inflateCodeName(r)}`, { file: name, offset: offsets[k] as number });
    }
  };

  const push = (k: number, kids: number[], backing: Buffer, data: Buffer): void => {
    fNode.push(k);
    fKids.push(kids);
    fCursor.push(0);
    fBacking.push(backing);
    fData.push(data);
    live += backing.length;
    if (live > peakLive) peakLive = live;
  };
  const pop = (): void => {
    fNode.pop();
    fKids.pop();
    fCursor.pop();
    const b = fBacking.pop() as Buffer;
    fData.pop();
    live -= b.length;
    pool.release(b);
  };

  /** Size of the object `resolveChild` produced last. */
  let objectSize = 0;

  /**
   * Applies delta `c` to `base`, hashes the result into the id table and returns its pooled
   * buffer (the object starts at HEAD_ROOM, its size is left in `objectSize`).
   */
  const resolveChild = (c: number, base: Buffer, type: number, baseDepth: number): Buffer => {
    const dsize = sizes[c] as number;
    if (deltaData.length < dsize + 1) deltaData = Buffer.allocUnsafeSlow(Math.max(dsize + 1, deltaData.length * 2));
    inflateEntry(c, deltaData, 0);
    let resultSize: number;
    let out: Buffer;
    try {
      resultSize = readDeltaHeader(deltaData, 0, dsize).resultSize;
      out = pool.acquire(HEAD_ROOM + resultSize + 1);
      applyDelta(base, 0, base.length, deltaData, 0, dsize, out, HEAD_ROOM);
    } catch (e) {
      if (!(e instanceof DeltaFormatError)) throw e;
      throw new PackwrightError('DELTA_CORRUPT', `${name}: failed to apply delta at offset ${offsets[c]}: ${e.message}`, { file: name, offset: offsets[c] as number, cause: e });
    }
    const start = writeHeaderBefore(out, HEAD_ROOM, type, resultSize);
    idsBuf.set(hashBytes(scan.format, out.subarray(start, HEAD_ROOM + resultSize)), c * H);
    resolvedTypes[c] = type;
    depth[c] = baseDepth + 1;
    histogram[baseDepth + 1] = (histogram[baseDepth + 1] ?? 0) + 1;
    resolved++;
    if ((resolved & 1023) === 0) {
      throwIfAborted(options.signal);
      options.onProgress?.(resolved, deltaCount);
    }
    objectSize = resultSize;
    return out;
  };

  const walk = (): void => {
    while (fNode.length > 0) {
      const top = fNode.length - 1;
      const kids = fKids[top] as number[];
      const cursor = fCursor[top] as number;
      if (cursor >= kids.length) {
        pop();
        continue;
      }
      fCursor[top] = cursor + 1;
      const c = kids[cursor] as number;
      const parent = fNode[top] as number;
      const out = resolveChild(c, fData[top] as Buffer, resolvedTypes[parent] as number, depth[parent] as number);
      // The base is no longer needed once its last child has its result.
      if (cursor + 1 >= kids.length) pop();
      const resultSize = objectSize;
      const next = kidsOf(c);
      if (next.length > 0) push(c, next, out, out.subarray(HEAD_ROOM, HEAD_ROOM + resultSize));
      else pool.release(out);
    }
  };

  for (let k = 0; k < n; k++) {
    if ((types[k] as number) >= OBJ_OFS_DELTA) continue;
    histogram[0] = (histogram[0] ?? 0) + 1;
    const kids = kidsOf(k);
    if (kids.length === 0) continue;
    const size = sizes[k] as number;
    const backing = pool.acquire(size + 1);
    inflateEntry(k, backing, 0);
    push(k, kids, backing, backing.subarray(0, size));
    walk();
  }

  // Bases outside the pack (thin packs): REF deltas still waiting after every local base.
  let externalBases = 0;
  if (refChildren.size > 0 && options.externalBase !== undefined) {
    for (const [key, refs] of [...refChildren]) {
      // Resolving one external base can resolve in-pack bases of later entries of the snapshot.
      if (!refChildren.has(key)) continue;
      const id = Buffer.from(key, 'latin1');
      const ext = options.externalBase(id);
      if (ext === undefined) continue;
      refChildren.delete(key);
      options.usedExternal?.push(id);
      externalBases++;
      const backing = pool.acquire(ext.data.length + 1);
      ext.data.copy(backing);
      // External bases are not part of the pack; their type still flows to the deltas.
      pushExternal(ext.type, refs, backing, ext.data.length);
      walk();
    }
  }

  function pushExternal(type: number, refs: number[], backing: Buffer, size: number): void {
    // The base has no entry number, so its first level of children is resolved here (depth 0).
    const base = backing.subarray(0, size);
    for (const c of refs) {
      const out = resolveChild(c, base, type, 0);
      const next = kidsOf(c);
      if (next.length > 0) {
        push(c, next, out, out.subarray(HEAD_ROOM, HEAD_ROOM + objectSize));
        walk();
      } else {
        pool.release(out);
      }
    }
    pool.release(backing);
  }

  inflater.close();
  if (resolved !== deltaCount) {
    const missing: string[] = [];
    for (let k = 0; k < n && missing.length < 3; k++) {
      if ((types[k] as number) < OBJ_OFS_DELTA || resolvedTypes[k] !== 0) continue;
      missing.push(types[k] === OBJ_REF_DELTA ? `offset ${offsets[k]} (base ${toHex(scan.refIds.subarray(k * H, k * H + H))})` : `offset ${offsets[k]}`);
    }
    const first = missing[0] ?? '';
    const firstOffset = Number(/offset (\d+)/.exec(first)?.[1] ?? 0);
    throw new PackwrightError('PACK_UNRESOLVED_DELTAS', `${name}: pack has ${deltaCount - resolved} unresolved deltas (first at ${missing.join(', ')})`, { file: name, offset: firstOffset });
  }
  options.onProgress?.(resolved, deltaCount);
  return { deltas: deltaCount, chainHistogram: histogram, peakLiveBytes: peakLive, externalBases, depths: depth };
}
