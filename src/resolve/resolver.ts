import { closeSync, openSync } from 'node:fs';
import { readExactly } from '../io/read-exactly.js';
import { PackwrightError } from '../errors/packwright-error.js';
import { applyDelta, DeltaFormatError, readDeltaHeader } from '../delta/apply-delta.js';
import { collisionAttack } from '../hash/collision-attack.js';
import { threadLanes, type Sha1dcLanes } from '../hash/sha1dc/sha1dc-lanes.js';
import { hashInto, MAX_HEADER_LENGTH, writeHeaderBefore } from '../hash/hash-object.js';
import { detectsCollisions, hashLength } from '../hash/object-format.js';
import { BufferPool } from '../memory/buffer-pool.js';
import { crc32 } from '../zlib/crc32.js';
import { Inflater, inflateCodeName } from '../zlib/inflater.js';
import { findRefGroup, mayBeRefBase, refGroupMembers } from './delta-tree.js';
import { acquire, DEPTH, field, offer, release, slotCount, slotData, takeChild, TYPE } from './offer-board.js';
import type { PackVisitor } from './pack-visitor.js';
import { CONTROL_ABORT, CONTROL_BOARD_VERSION, CONTROL_HEARTBEAT, CONTROL_IDLE, CONTROL_NEXT_LEAF, CONTROL_NEXT_ROOT, CONTROL_RESOLVED, CONTROL_STARTED, CONTROL_WORKERS, type ResolveState } from './resolve-state.js';
import type { KeptDeltas } from './kept-deltas.js';

/**
 * An idle thread gives up waiting for the others after this long without a heartbeat: a worker
 * killed outside our control (out of memory) cannot report, and the calling thread, busy here,
 * cannot hear its 'error' event. Generous, since one huge delta can take a while.
 */
const STALL_MS = 30_000;

export interface ResolverStats {
  resolved: number;
  /** Children this thread took from branches other threads offered. */
  stolen: number;
  /** Branches this thread offered. */
  offered: number;
  /** histogram[d] = deltas this thread resolved at depth d. */
  histogram: number[];
  peakLiveBytes: number;
  /** What this thread's visitor found (`PackVisitor.finish`). */
  visited?: unknown;
}

/** Room kept in front of every resolved object for `"<type> <size>\0"`, so it hashes as one range. */
const HEAD_ROOM = MAX_HEADER_LENGTH;
const STAGE_START = 0;
const STAGE_ROOTS = 1;
const STAGE_HELP = 2;
const STAGE_DONE = 3;

/**
 * Pack read-back cache per thread (a pack not held in memory): 512 blocks of 16 KiB = 8 MiB.
 * Small blocks, because the walk's reads are scattered: gitoxide.pack (111 MB, 226k entries) at
 * --threads=1 took 39k misses with 128 KiB blocks (5 GB read back, pass 2 3.2 s) and 45k with
 * 16 KiB blocks (0.7 GB, 2.5 s), against 2.3 s from a resident copy.
 */
const BLOCK = 16 * 1024;
const BLOCKS = 512;
/** Shared counters are updated once per this many objects (an atomic per object costs too much). */
const BATCH = 256;

/**
 * Resolves delta subtrees depth first, in whichever thread it runs. Roots are taken from a shared
 * counter over `state.roots`, so threads split the work as they go. Children are found lazily when
 * their parent has been resolved, and a parent's buffer is released as soon as its last child has
 * its result: a linear chain holds about two object buffers, whatever its depth.
 */
export class Resolver {
  private readonly H: number;
  private readonly pool = new BufferPool(16 * 1024 * 1024);
  private readonly inflater = new Inflater();
  private deltaData: Buffer;
  private compressed = Buffer.allocUnsafeSlow(1 << 16);
  private readonly blocks = new Map<number, Buffer>();
  private readonly fd: number;
  private readonly ids: Buffer;
  private readonly refCount: number;
  /** Set when ids are hashed four at a time (see the constructor). */
  private readonly lanes: Sha1dcLanes | undefined;
  private live = 0;
  private unreported = 0;
  /** Size of the object `resolveChild` produced last. */
  private objectSize = 0;
  readonly stats: ResolverStats = { resolved: 0, stolen: 0, offered: 0, histogram: [0], peakLiveBytes: 0 };

  // Frames of the depth-first walk, as parallel arrays.
  private readonly fNode: number[] = [];
  private readonly fKids: number[][] = [];
  private readonly fCursor: number[] = [];
  private readonly fBacking: Buffer[] = [];
  private readonly fData: Buffer[] = [];
  /** Delta depth of each frame's object (0 for a root). */
  private readonly fDepth: number[] = [];
  /** How many of a frame's kids come from the OFS child list (they come first). */
  private readonly fCsrCount: number[] = [];
  /** The board slot a frame's remaining OFS children were offered in, or -1. */
  private readonly fSlot: number[] = [];

  /** Where `run` stands: starting, taking roots, helping others, done. */
  private stage = STAGE_START;
  /** When the current slice ends (Infinity: run to the end). */
  private sliceEnd = Infinity;
  private steps = 0;
  /** `help`'s state across slices, and whether this thread is counted idle. */
  private helping: { heartbeat: number; quietSince: number; lastBatch: number } | undefined;
  private idleCounted = false;

  /** Bit `1 << type` for each type the visitor wants. */
  private readonly visitTypes: number;

  /**
   * `onBatch` runs after each batch of resolved objects (progress, in the calling thread);
   * `visitor` is shown every object of the types it asked for.
   */
  constructor(private readonly s: ResolveState, private readonly onBatch?: () => void, private readonly visitor?: PackVisitor) {
    this.H = hashLength(s.format);
    this.visitTypes = visitor !== undefined ? (s.visitor?.types ?? 0) : 0;
    this.ids = Buffer.from(s.ids.buffer, s.ids.byteOffset, s.ids.byteLength);
    this.refCount = s.refOrder.length;
    // Ids are hashed four at a time when nothing reads one before the thread is done: no REF delta
    // looks for its base by id, and no visitor is shown objects unless it reads ids only later.
    const visitorWaits = this.visitTypes === 0 || s.visitor?.idsAfterVisit === true;
    if (detectsCollisions(s.format, s.detectCollisions) && this.refCount === 0 && visitorWaits) this.lanes = threadLanes();
    this.fd = s.pack === undefined ? openSync(s.packPath, 'r') : -1;
    this.deltaData = this.pool.acquire(1 << 16);
  }

  /**
   * Takes roots until none are left, then helps with branches other threads offer. With
   * `sliceMs`, returns false after about that long with the work kept where it stands (the walk's
   * frames are this object's arrays), and the next call goes on from there: the calling thread
   * resolves in slices and lets its event loop run between them (see slices.ts). Worker threads
   * run to the end in one call.
   */
  run(sliceMs = Infinity): boolean {
    const s = this.s;
    if (Atomics.load(s.control, CONTROL_ABORT) !== 0) throw new PackwrightError('ABORTED', 'Operation aborted');
    this.sliceEnd = sliceMs === Infinity ? Infinity : performance.now() + sliceMs;
    if (this.stage === STAGE_START) {
      Atomics.add(s.control, CONTROL_STARTED, 1);
      Atomics.notify(s.control, CONTROL_STARTED);
      this.stage = STAGE_ROOTS;
    }
    if (this.stage === STAGE_ROOTS) {
      if (this.fNode.length > 0 && !this.walk()) return false;
      for (;;) {
        const i = Atomics.add(s.control, CONTROL_NEXT_ROOT, 1);
        if (i >= s.roots.length) break;
        const root = s.roots[i] as number;
        let kids: number[] | undefined;
        if (s.unhashed !== true) {
          kids = this.kidsOf(root);
          if (kids.length === 0) continue;
        }
        const size = s.sizes[root] as number;
        const type = s.types[root] as number;
        const backing = this.pool.acquire(HEAD_ROOM + size + 1);
        this.inflateEntry(root, backing, HEAD_ROOM);
        const data = backing.subarray(HEAD_ROOM, HEAD_ROOM + size);
        if (kids === undefined) {
          // Hashed before its REF children are looked up: they are found by this id.
          this.hashId(root, backing.subarray(writeHeaderBefore(backing, HEAD_ROOM, type, size), HEAD_ROOM + size));
          kids = this.kidsOf(root);
        }
        if (this.visitTypes & (1 << type)) this.visitor?.visit(root, type, data);
        if (kids.length === 0) {
          this.pool.release(backing);
          continue;
        }
        this.push(root, kids, backing, data, 0);
        if (!this.walk()) return false;
      }
      if (!this.visitLeaves()) return false;
      this.stage = STAGE_HELP;
    }
    if (this.stage === STAGE_HELP) {
      if (!this.help()) return false;
      this.lanes?.flush();
      this.flushProgress();
      this.stage = STAGE_DONE;
    }
    return true;
  }

  /** Inflates the leaves for the visitor, taking them from a shared counter; false when the slice ended. */
  private visitLeaves(): boolean {
    const s = this.s;
    const leaves = s.leaves;
    if (this.visitor === undefined || leaves === undefined) return true;
    for (;;) {
      if (this.sliceOver()) return false;
      const i = Atomics.add(s.control, CONTROL_NEXT_LEAF, 1);
      if (i >= leaves.length) return true;
      const k = leaves[i] as number;
      const size = s.sizes[k] as number;
      const buf = this.pool.acquire(size + 1);
      this.inflateEntry(k, buf);
      this.visitor.visit(k, s.types[k] as number, buf.subarray(0, size));
      this.pool.release(buf);
      Atomics.add(s.control, CONTROL_HEARTBEAT, 1);
    }
  }

  /** True when the current slice is over (checked every 256 steps: reading the clock costs). */
  private sliceOver(): boolean {
    return this.sliceEnd !== Infinity && (++this.steps & 255) === 0 && performance.now() >= this.sliceEnd;
  }

  /**
   * Out of roots: take children from branches other threads offer, until every thread is idle
   * and nothing is on offer.
   */
  private help(): boolean {
    const s = this.s;
    const c = s.control;
    const workers = Atomics.load(c, CONTROL_WORKERS);
    if (workers <= 1) return true;
    const board = s.board;
    const slots = slotCount(board);
    const h = (this.helping ??= { heartbeat: Atomics.load(c, CONTROL_HEARTBEAT), quietSince: Date.now(), lastBatch: Date.now() });
    if (!this.idleCounted) {
      Atomics.add(c, CONTROL_IDLE, 1);
      this.idleCounted = true;
    }
    let { heartbeat, quietSince, lastBatch } = h;
    for (;;) {
      // Between rounds this thread is idle (counted in CONTROL_IDLE): a slice may end here.
      if (this.sliceEnd !== Infinity && performance.now() >= this.sliceEnd) {
        Object.assign(h, { heartbeat, quietSince, lastBatch });
        return false;
      }
      Atomics.add(c, CONTROL_HEARTBEAT, 1);
      // While others do the work, progress (and an abort) are still seen every ~20 ms.
      if (this.onBatch !== undefined && Date.now() - lastBatch >= 20) {
        lastBatch = Date.now();
        this.onBatch();
      }
      const version = Atomics.load(c, CONTROL_BOARD_VERSION);
      let worked = false;
      for (let slot = 0; slot < slots; slot++) {
        // Count as busy before taking anything, so nobody concludes that all are idle.
        Atomics.sub(c, CONTROL_IDLE, 1);
        if (acquire(board, slot) < 0) {
          Atomics.add(c, CONTROL_IDLE, 1);
          continue;
        }
        const i = takeChild(board, slot);
        if (i >= 0) {
          const child = s.childList[i] as number;
          const base = slotData(board, slot);
          const out = this.resolveChild(child, Buffer.from(base.buffer, base.byteOffset, base.byteLength), field(board, slot, TYPE), field(board, slot, DEPTH));
          release(board, slot);
          this.stats.stolen++;
          // A stolen branch is finished before the slice may end (this thread counts as busy).
          const sliceEnd = this.sliceEnd;
          this.sliceEnd = Infinity;
          this.descend(child, out, field(board, slot, DEPTH) + 1);
          this.sliceEnd = sliceEnd;
          worked = true;
        } else {
          release(board, slot);
        }
        Atomics.add(c, CONTROL_IDLE, 1);
      }
      if (Atomics.load(c, CONTROL_ABORT) !== 0) throw new PackwrightError('ABORTED', 'Operation aborted');
      // Our own bumps are one per loop plus one per object we resolved: anything beyond that
      // means another thread is alive.
      const beat = Atomics.load(c, CONTROL_HEARTBEAT);
      if (worked || beat - heartbeat > 1) quietSince = Date.now();
      heartbeat = beat;
      if (!worked) {
        if (Atomics.load(c, CONTROL_IDLE) >= workers) return true;
        const stall = s.stallMs ?? STALL_MS;
        if (Date.now() - quietSince > stall) {
          Atomics.store(c, CONTROL_ABORT, 1);
          throw new PackwrightError('WORKER_FAILED', `${s.name}: a resolver thread stopped responding for ${stall / 1000} s`);
        }
        Atomics.wait(c, CONTROL_BOARD_VERSION, version, 1);
      }
    }
  }

  /**
   * Resolves the REF group starting at `group` against a base from outside the pack (thin packs).
   * Returns false if another thread already took the group.
   */
  resolveExternal(group: number, type: number, data: Buffer): boolean {
    this.sliceEnd = Infinity;
    if (Atomics.compareExchange(this.s.refClaims, group, 0, 1) !== 0) return false;
    for (const c of this.groupMembers(group)) this.descend(c, this.resolveChild(c, data, type, 0), 1);
    this.flushProgress();
    return true;
  }

  /** Resolves everything below `child` (at `depth`), whose object `resolveChild` just put in `out`. */
  private descend(child: number, out: Buffer, depth: number): void {
    const next = this.kidsOf(child);
    if (next.length > 0) {
      this.push(child, next, out, out.subarray(HEAD_ROOM, HEAD_ROOM + this.objectSize), depth);
      this.walk();
    } else {
      this.pool.release(out);
    }
  }

  close(): void {
    this.lanes?.discard(this);
    if (this.fd >= 0) closeSync(this.fd);
    this.inflater.close();
    this.pool.clear();
  }

  private groupMembers(group: number): number[] {
    return refGroupMembers(this.s, group, this.H);
  }

  /** Writes entry k's id from its "<type> <size>\0" + data; fails if sha1dc flags it. */
  private hashId(k: number, object: Uint8Array): void {
    const s = this.s;
    const offset = s.offsets[k] as number;
    if (this.lanes !== undefined) {
      this.lanes.submit(object, this.ids, k * this.H, this, (digest) => { throw collisionAttack(digest, { file: s.name, offset }); });
    } else if (hashInto(s.format, object, this.ids, k * this.H, s.detectCollisions === true)) {
      throw collisionAttack(this.ids.subarray(k * this.H, (k + 1) * this.H), { file: s.name, offset });
    }
  }

  /** OFS children from the child list, plus the REF group waiting for this object's id (claimed). */
  private kidsOf(k: number): number[] {
    const s = this.s;
    const kids: number[] = [];
    const end = s.childStart[k + 1] as number;
    for (let i = s.childStart[k] as number; i < end; i++) kids.push(s.childList[i] as number);
    if (this.refCount > 0 && mayBeRefBase(s.refFilter, s.ids, k * this.H)) {
      const group = findRefGroup(s.refBaseIds, s.refOrder, this.H, s.ids, k * this.H);
      if (group >= 0) {
        if (Atomics.compareExchange(s.refClaims, group, 0, 1) !== 0) {
          // Another copy of this object already resolved them: git's index-pack dies of a
          // duplicate base rather than resolve the same REF deltas twice.
          const first = this.groupMembers(group)[0] as number;
          const id = Buffer.from(s.ids.subarray(k * this.H, (k + 1) * this.H)).toString('hex');
          throw new PackwrightError('PACK_CORRUPT', `REF_DELTA at offset ${s.offsets[first]} already resolved (duplicate base ${id}?)`, { file: s.name, offset: s.offsets[first] as number });
        }
        for (const r of this.groupMembers(group)) kids.push(r);
      }
    }
    return kids;
  }

  /**
   * Reads entry `k`'s zlib stream back from the file and inflates it into `out`. Reads go through
   * a small per-thread cache of aligned blocks: a pread costs ~6 µs on these machines, and a
   * subtree's entries tend to sit near each other in the pack.
   */
  private inflateEntry(k: number, out: Buffer, outOffset = 0): void {
    const s = this.s;
    const start = (s.offsets[k] as number) + (s.headerLengths[k] as number);
    const end = s.offsets[k + 1] as number;
    let src: Uint8Array;
    let at: number;
    const expected = s.expectedCrc32;
    // Checked first, as git does: damage is then named as such, not as a zlib error. The whole
    // pack is in memory in this mode (scan-with-index.ts).
    if (expected !== undefined && s.pack !== undefined && crc32(s.pack, s.offsets[k] as number, end) !== expected[k]) {
      throw new PackwrightError('PACK_CORRUPT', `${s.name}: index CRC mismatch for the object at offset ${s.offsets[k]}`, { file: s.name, offset: s.offsets[k] as number });
    }
    const blockIndex = Math.floor(start / BLOCK);
    if (s.pack !== undefined) {
      src = s.pack;
      at = start;
    } else if (Math.floor((end - 1) / BLOCK) === blockIndex) {
      src = this.block(blockIndex);
      at = start - blockIndex * BLOCK;
    } else {
      const length = end - start;
      if (this.compressed.length < length) this.compressed = Buffer.allocUnsafeSlow(Math.max(length, this.compressed.length * 2));
      readExactly(this.fd, this.compressed, 0, length, start, s.name, 'PACK_TRUNCATED');
      src = this.compressed;
      at = 0;
    }
    const r = this.inflater.inflateExact(src, at, at + end - start, out, outOffset, s.sizes[k] as number);
    if (r < 0) {
      throw new PackwrightError('PACK_CORRUPT', `${s.name}: inflate failed ${s.unhashed === true ? '' : 'again '}for the object at offset ${s.offsets[k]}: ${inflateCodeName(r)}`, { file: s.name, offset: s.offsets[k] as number });
    }
    if (r !== end - start && s.unhashed === true) {
      throw new PackwrightError('PACK_CORRUPT', `${s.name}: the zlib stream of the object at offset ${s.offsets[k]} ends at ${start + r}, not where the next entry starts (${end})`, { file: s.name, offset: s.offsets[k] as number });
    }
  }

  /** Block `index` of the pack file, from the cache or read now (least recently used out). */
  private block(index: number): Buffer {
    const hit = this.blocks.get(index);
    if (hit !== undefined) {
      this.blocks.delete(index);
      this.blocks.set(index, hit);
      return hit;
    }
    let buf: Buffer;
    if (this.blocks.size >= BLOCKS) {
      const [oldest, old] = this.blocks.entries().next().value as [number, Buffer];
      this.blocks.delete(oldest);
      buf = old;
    } else {
      buf = Buffer.allocUnsafeSlow(BLOCK);
    }
    // The last block of the file is short: read what there is of it (entries end before the trailer).
    const at = index * BLOCK;
    readExactly(this.fd, buf, 0, Math.min(BLOCK, this.s.packEnd - at), at, this.s.name, 'PACK_TRUNCATED');
    this.blocks.set(index, buf);
    return buf;
  }

  /**
   * Applies delta `c` to `base`, hashes the result into the id table and returns its pooled
   * buffer (the object starts at HEAD_ROOM, its size is left in `objectSize`).
   */
  private resolveChild(c: number, base: Buffer, type: number, baseDepth: number): Buffer {
    const s = this.s;
    const dsize = s.sizes[c] as number;
    // Kept from pass 1, or inflated again.
    const keptAt = s.kept !== undefined ? (s.kept.at[c] as number) : 0;
    let delta: Uint8Array;
    let from = 0;
    if (keptAt !== 0) {
      delta = (s.kept as KeptDeltas).data;
      from = keptAt - 1;
    } else {
      if (this.deltaData.length < dsize + 1) {
        // From the pool, so delta and objects share the arena and copies need no views (applyDelta).
        this.pool.release(this.deltaData);
        this.deltaData = this.pool.acquire(Math.max(dsize + 1, this.deltaData.length * 2));
      }
      delta = this.deltaData;
      this.inflateEntry(c, this.deltaData);
    }
    let resultSize: number;
    let out: Buffer;
    try {
      resultSize = readDeltaHeader(delta, from, from + dsize, base.length).resultSize;
      out = this.pool.acquire(HEAD_ROOM + resultSize + 1);
      applyDelta(base, 0, base.length, delta, from, from + dsize, out, HEAD_ROOM);
    } catch (e) {
      if (!(e instanceof DeltaFormatError)) throw e;
      throw new PackwrightError('DELTA_CORRUPT', `${s.name}: failed to apply delta at offset ${s.offsets[c]}: ${e.message}`, { file: s.name, offset: s.offsets[c] as number, cause: e });
    }
    const start = writeHeaderBefore(out, HEAD_ROOM, type, resultSize);
    this.hashId(c, out.subarray(start, HEAD_ROOM + resultSize));
    s.resolvedTypes[c] = type;
    if (s.depths !== undefined) s.depths[c] = baseDepth + 1;
    if (this.visitTypes & (1 << type)) this.visitor?.visit(c, type, out.subarray(HEAD_ROOM, HEAD_ROOM + resultSize));
    const h = this.stats.histogram;
    h[baseDepth + 1] = (h[baseDepth + 1] ?? 0) + 1;
    this.stats.resolved++;
    Atomics.add(s.control, CONTROL_HEARTBEAT, 1);
    if (++this.unreported >= BATCH) this.flushProgress();
    this.objectSize = resultSize;
    return out;
  }

  private flushProgress(): void {
    if (this.unreported > 0) Atomics.add(this.s.control, CONTROL_RESOLVED, this.unreported);
    this.unreported = 0;
    this.onBatch?.();
    if (Atomics.load(this.s.control, CONTROL_ABORT) !== 0) throw new PackwrightError('ABORTED', 'Operation aborted');
  }

  private push(k: number, kids: number[], backing: Buffer, data: Buffer, depth: number): void {
    this.fDepth.push(depth);
    this.fCsrCount.push((this.s.childStart[k + 1] as number) - (this.s.childStart[k] as number));
    this.fSlot.push(-1);
    this.fNode.push(k);
    this.fKids.push(kids);
    this.fCursor.push(0);
    this.fBacking.push(backing);
    this.fData.push(data);
    this.live += backing.length;
    if (this.live > this.stats.peakLiveBytes) this.stats.peakLiveBytes = this.live;
  }

  private pop(): void {
    this.fDepth.pop();
    this.fCsrCount.pop();
    this.fSlot.pop();
    this.fNode.pop();
    this.fKids.pop();
    this.fCursor.pop();
    this.fData.pop();
    const b = this.fBacking.pop() as Buffer;
    this.live -= b.length;
    this.pool.release(b);
  }

  /** Resolves the frames on the stack; false when the slice ended first (see `run`). */
  private walk(): boolean {
    const s = this.s;
    const board = s.board;
    while (this.fNode.length > 0) {
      if (this.sliceOver()) return false;
      const top = this.fNode.length - 1;
      const kids = this.fKids[top] as number[];
      const parent = this.fNode[top] as number;
      const slot = this.fSlot[top] as number;
      let c: number;
      let last = false;
      if (slot >= 0) {
        // Our offered branch: take children from it like everybody else.
        const i = takeChild(board, slot);
        if (i < 0) {
          release(board, slot);
          this.fSlot[top] = -1;
          continue;
        }
        c = s.childList[i] as number;
      } else {
        const cursor = this.fCursor[top] as number;
        if (cursor >= kids.length) {
          this.pop();
          continue;
        }
        const csr = this.fCsrCount[top] as number;
        if (csr - cursor >= 2 && Atomics.load(s.control, CONTROL_IDLE) > 0 && this.offer(top, parent, cursor, csr)) continue;
        this.fCursor[top] = cursor + 1;
        c = kids[cursor] as number;
        last = cursor + 1 >= kids.length;
      }
      const depth = this.fDepth[top] as number;
      const out = this.resolveChild(c, this.fData[top] as Buffer, s.resolvedTypes[parent] as number, depth);
      // The base is no longer needed once its last child has its result.
      if (last) this.pop();
      const next = this.kidsOf(c);
      if (next.length > 0) this.push(c, next, out, out.subarray(HEAD_ROOM, HEAD_ROOM + this.objectSize), depth + 1);
      else this.pool.release(out);
    }
    return true;
  }

  /** Offers the frame's remaining OFS children to idle threads; false if no slot was free. */
  private offer(top: number, parent: number, cursor: number, csr: number): boolean {
    const s = this.s;
    const first = (s.childStart[parent] as number) + cursor;
    const end = (s.childStart[parent] as number) + csr;
    const slot = offer(s.board, parent, s.resolvedTypes[parent] as number, this.fDepth[top] as number, this.fData[top] as Buffer, first, end);
    if (slot < 0) return false;
    this.fSlot[top] = slot;
    this.fCursor[top] = csr;
    this.stats.offered++;
    Atomics.add(s.control, CONTROL_BOARD_VERSION, 1);
    Atomics.notify(s.control, CONTROL_BOARD_VERSION);
    return true;
  }
}
