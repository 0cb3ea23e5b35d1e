import { closeSync, openSync } from 'node:fs';
import { readExactly } from '../io/read-exactly.js';
import { OBJ_OFS_DELTA, OBJ_REF_DELTA } from '../pack/entry-header.js';
import { hashLength, type ObjectFormat } from '../hash/object-format.js';
import { isPackwrightError } from '../errors/packwright-error.js';
import { EntryScanner, NEED_MORE } from './entry-scanner.js';
import { readSizeVarint, sizeVarintEnd } from '../encoding/size-varint.js';
import type { KeptData } from './kept-deltas.js';
import type { RegionScan, TypedArrayConstructor } from './pack-scan.js';

/** How far past its region start a helper looks for the first entry before giving up. */
const SEARCH_LIMIT = 1 << 20;
/** Largest declared size a boundary candidate may have. */
const SEARCH_MAX_SIZE = 8 << 20;

export interface RegionRequest {
  format: ObjectFormat;
  /** Ids by SHA-1 with collision detection; a flagged object fails the region (the main thread then meets it). */
  detectCollisions?: boolean | undefined;
  path: string;
  /**
   * The shared buffer that holds (will hold) the whole pack, offset 0 = pack offset 0; without
   * it, the region is read into a buffer of the helper's own (`scratch`) and the main thread reads
   * the bytes again as it hashes them (a pack not held in memory).
   */
  buffer?: Uint8Array | undefined;
  /** The helper's own buffer, reused from region to region (grown as needed). */
  scratch?: { buf: Uint8Array } | undefined;
  /** The kept-delta store the main thread's scan fills too: deltas go there while its budget has room. */
  kept?: KeptData | undefined;
  from: number;
  /** Stop at the first entry that starts at or after this. */
  to: number;
  /** Offset of the trailer (`size - H`): the last region ends there. */
  dataEnd: number;
}

/**
 * A helper's share of pass 1: read `[from, to)` of the file into the shared buffer (or its own),
 * find the first entry boundary at or after `from` (a candidate must have a valid
 * header and a zlib stream that inflates to exactly its declared size and passes its Adler-32
 * check, so a false boundary is all but impossible, and the main thread only adopts a region that
 * starts exactly where its own scan ended), then scan entries like the main thread does. Any
 * trouble returns `ok: false` and the main thread scans the region itself, reporting errors with
 * their real offsets.
 */
export function scanRegion(req: RegionRequest): RegionScan {
  const H = hashLength(req.format);
  const fd = openSync(req.path, 'r');
  // Pack offset p is at buf[p - base]: base 0 in the shared buffer, `from` in the helper's own.
  const own = req.buffer === undefined;
  const scratch = req.scratch ?? { buf: new Uint8Array(0) };
  let buf = req.buffer ?? scratch.buf;
  const base = own ? req.from : 0;
  const fileEnd = req.dataEnd + H;
  let readUpTo = req.from;
  // A short read means the file shrank, and the helper gives up.
  const readTo = (end: number): void => {
    end = Math.min(end, fileEnd);
    if (end <= readUpTo) return;
    if (own && end - base > buf.length) {
      const bigger = new Uint8Array(Math.max(end - base, buf.length * 2));
      bigger.set(buf.subarray(0, readUpTo - base));
      buf = scratch.buf = bigger;
    }
    readExactly(fd, buf, readUpTo - base, end - readUpTo, readUpTo, req.path, 'PACK_TRUNCATED');
    readUpTo = end;
  };
  const es = new EntryScanner(req.format, req.path, fileEnd, req.detectCollisions === true);
  // Capacity for entries of 64 bytes on average (what most packs' entries exceed), grown as needed
  // instead of reserving for the worst case of 2 bytes an entry.
  let capacity = Math.max(1024, Math.ceil((req.to - req.from) / 64));
  let r = alloc(capacity, H);
  const failed = (): RegionScan => ({ ...r, ok: false, count: 0, readUpTo });
  try {
    readTo(req.to);
    const h = es.header;
    const idScratch = new Uint8Array(H);
    // Find the first entry boundary.
    let start = -1;
    const searchEnd = Math.min(req.to, req.from + SEARCH_LIMIT);
    for (let q = req.from; q < searchEnd && start < 0; q++) {
      if (!plausible(buf, q - base, readUpTo - base, H)) continue;
      try {
        for (;;) {
          const n = es.scan(buf, q - base, readUpTo - base, q, idScratch, 0);
          if (n !== NEED_MORE) {
            if (n > 0) start = q;
            break;
          }
          if (readUpTo >= fileEnd) break;
          readTo(readUpTo + Math.max(1 << 20, h.size + (h.size >>> 3) + 64));
        }
      } catch (e) {
        if (!isPackwrightError(e)) throw e;
      }
    }
    if (start < 0) return failed();
    r.start = start;
    // Deltas are kept from here on, not while boundaries are tried (a false one would take room).
    es.kept = req.kept;
    let pos = start;
    let k = 0;
    while (pos < req.to && pos < req.dataEnd) {
      if (k >= capacity) {
        es.flush(); // ids still being hashed go to the table before it moves
        capacity *= 2;
        r = grow(r, capacity, H);
      }
      let n: number;
      for (;;) {
        n = es.scan(buf, pos - base, readUpTo - base, pos, r.ids, k * H);
        if (n !== NEED_MORE || readUpTo >= fileEnd) break;
        readTo(readUpTo + Math.max(1 << 20, h.size + (h.size >>> 3) + 64));
      }
      if (n === NEED_MORE) return failed();
      r.offsets[k] = pos;
      r.types[k] = h.type;
      r.sizes[k] = h.size;
      r.headerLengths[k] = h.headerLength;
      r.crc32[k] = es.crc;
      r.keptAt[k] = es.keptAt;
      r.baseOffsets[k] = h.type === OBJ_OFS_DELTA ? h.baseOffset : -1;
      if (h.type === OBJ_REF_DELTA) r.refIds.set(buf.subarray(h.baseIdPosition, h.baseIdPosition + H), k * H);
      // A delta's id is pass 2's to find; until then it reads as zeros, as in the main thread's table.
      if (h.type >= OBJ_OFS_DELTA) r.ids.fill(0, k * H, k * H + H);
      pos += n;
      k++;
    }
    if (pos > req.dataEnd) return failed();
    es.flush();
    return { ...r, ok: true, end: pos, count: k, readUpTo };
  } catch (e) {
    if (!isPackwrightError(e)) throw e;
    return failed();
  } finally {
    es.close();
    closeSync(fd);
  }
}

export interface RegionsRequest {
  format: ObjectFormat;
  detectCollisions?: boolean | undefined;
  path: string;
  /** As in RegionRequest: the shared whole-pack buffer, or none (each helper reads into its own). */
  buffer?: Uint8Array | undefined;
  /** As in RegionRequest. */
  kept?: KeptData | undefined;
  /** Region boundaries: region i is `[bounds[i], bounds[i + 1])`. */
  bounds: Float64Array;
  /** Who scans each region: 0 nobody yet, 1 the main thread, 2 a helper. */
  claims: Int32Array;
  /**
   * `front[0]`: the region the main thread's scan is in (it scans or adopts regions in order);
   * the region count once it has stopped, for whatever reason. Waited on by idle helpers.
   */
  front: Int32Array;
  /** Helpers claim regions at most this far past `front[0]`. */
  window: number;
  /** Offset of the trailer; Infinity for a stream still arriving (see `received`). */
  dataEnd: number;
  /**
   * A pack still arriving (stream-spool.ts), cut into regions of one size: `received[0]` is how
   * much of it is in the file. A region is claimed only once the file holds it and half a region
   * more (for its last entry), and is scanned as if the pack ended where the file does then: an
   * entry that runs past that fails the region, which the main thread then scans itself.
   */
  received?: BigInt64Array | undefined;
}

export const CLAIM_MAIN = 1;
const CLAIM_HELPER = 2;
/** How long an idle helper sleeps before it looks at the front again (it is also woken when it moves). */
const IDLE_WAIT_MS = 50;

/**
 * A helper's share of a pass 1 split into many small regions. The main thread scans regions in
 * order and adopts a helper's scan of one when it gets there; helpers claim regions within
 * `window` of the main thread's, the farthest unclaimed first, so that the main thread rarely
 * reaches one still being scanned. A scan waits for the main thread to adopt it, so the window
 * bounds what waits: claiming from the back of the whole pack balanced as well, but held the
 * scans of half a pack (200 MB at 10M objects) until the main thread reached them.
 */
export function scanRegionsAhead(req: RegionsRequest, onRegion: (index: number, r: RegionScan) => void): void {
  const count = req.bounds.length - 1;
  const { claims, front, bounds, received } = req;
  const scratch = { buf: new Uint8Array(0) };
  for (;;) {
    const at = Atomics.load(front, 0);
    if (at >= count - 1) return;
    let last = Math.min(count - 1, at + req.window);
    let dataEnd = req.dataEnd;
    if (received !== undefined) {
      const inFile = Number(Atomics.load(received, 0));
      const slack = ((bounds[1] as number) - (bounds[0] as number)) / 2;
      while (last > at && (bounds[last + 1] as number) + slack > inFile) last--;
      dataEnd = Math.min(dataEnd, inFile - hashLength(req.format));
    }
    let i = last;
    while (i > at && !(Atomics.load(claims, i) === 0 && Atomics.compareExchange(claims, i, 0, CLAIM_HELPER) === 0)) i--;
    if (i === at) {
      // Nothing to claim: everything left is taken, or the window is full until the front moves
      // (or, for a pack still arriving, until more of it does: the spool wakes us too).
      if (last === count - 1) return;
      Atomics.wait(front, 0, at, IDLE_WAIT_MS);
      continue;
    }
    const r = scanRegion({
      format: req.format, ...(req.detectCollisions === true ? { detectCollisions: true } : {}), path: req.path, ...(req.buffer !== undefined ? { buffer: req.buffer } : { scratch }),
      ...(req.kept !== undefined ? { kept: req.kept } : {}),
      from: bounds[i] as number, to: bounds[i + 1] as number, dataEnd,
    });
    onRegion(i, r);
  }
}

/**
 * Cheap test before trying to inflate at `q`: a valid type, and a zlib header (CM 8, window at
 * most 32 KiB, FCHECK) right after the size varint and base reference.
 */
function plausible(buf: Uint8Array, q: number, end: number, H: number): boolean {
  let p = q;
  let c = buf[p++] as number;
  const type = (c >> 4) & 7;
  if (type === 0 || type === 5) return false;
  let size = c & 15;
  if (c & 0x80) {
    size = readSizeVarint(buf, p, end, size, 16);
    if (size < 0) return false;
    p = sizeVarintEnd;
  }
  // Random bytes declare random sizes: trying those would allocate and inflate for nothing. A
  // real entry this large at the boundary is skipped; the main thread then scans the region.
  if (size > SEARCH_MAX_SIZE) return false;
  if (type === OBJ_OFS_DELTA) {
    do {
      if (p >= end || p - q > 20) return false;
      c = buf[p++] as number;
    } while (c & 0x80);
  } else if (type === OBJ_REF_DELTA) {
    p += H;
  }
  if (p + 1 >= end) return false;
  const cmf = buf[p] as number;
  const flg = buf[p + 1] as number;
  return (cmf & 0x0f) === 8 && cmf >> 4 <= 7 && ((cmf << 8) | flg) % 31 === 0;
}

/** Bytes a region's scan takes per entry of capacity (alloc). */
const regionEntryBytes = (H: number): number => 8 + 8 + 4 + 4 + 4 + 1 + 1 + H + H;

/**
 * A region's tables as views of one buffer: at 1 MiB and more it is a mapping of its own, handed
 * back to the system when freed (the CLI's mmap threshold, cli/huge-pages.ts), where eight small
 * arrays a region left their pages in the allocator's heaps (10M objects at --threads=2: 78 MB
 * more resident when pass 2 began). It is also one buffer to transfer. It is not zeroed (every
 * field of the first `count` entries is written, a delta's id as zeros): a zeroed buffer that the
 * allocator takes from its heap is written whole (2 MB a region at the default capacity), where
 * each page costs a fault on first touch.
 */
function alloc(capacity: number, H: number): RegionScan {
  const buffer = Buffer.allocUnsafeSlow(capacity * regionEntryBytes(H)).buffer;
  let at = 0;
  const take = <T>(Ctor: TypedArrayConstructor<T>, n: number): T => {
    const view = new Ctor(buffer, at, n);
    at += n * Ctor.BYTES_PER_ELEMENT;
    return view;
  };
  return {
    ok: false, start: -1, end: -1, count: 0, readUpTo: 0,
    // Widest first, so that every view is aligned.
    offsets: take(Float64Array, capacity),
    baseOffsets: take(Float64Array, capacity),
    sizes: take(Uint32Array, capacity),
    crc32: take(Uint32Array, capacity),
    keptAt: take(Uint32Array, capacity),
    types: take(Uint8Array, capacity),
    headerLengths: take(Uint8Array, capacity),
    ids: take(Uint8Array, capacity * H),
    refIds: take(Uint8Array, capacity * H),
  };
}

function grow(r: RegionScan, capacity: number, H: number): RegionScan {
  const g = alloc(capacity, H);
  g.start = r.start;
  g.offsets.set(r.offsets);
  g.types.set(r.types);
  g.sizes.set(r.sizes);
  g.headerLengths.set(r.headerLengths);
  g.crc32.set(r.crc32);
  g.keptAt.set(r.keptAt);
  g.ids.set(r.ids);
  g.baseOffsets.set(r.baseOffsets);
  g.refIds.set(r.refIds);
  return g;
}
