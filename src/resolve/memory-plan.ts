import { detectsCollisions, hashLength, type ObjectFormat } from '../hash/object-format.js';
import { ENGINE_BYTES } from '../hash/sha1dc/engine.js';
import { STREAMED_BUDGET } from '../hash/sha1dc/sha1dc-lanes.js';
import { RUNTIME_BYTES, SLACK_BYTES } from '../memory/ceiling.js';
import { needsWideOffsets, sizedFromHeader } from './pack-scan.js';

export { DEFAULT_MAX_MEMORY, defaultMaxMemory } from '../memory/ceiling.js';

/**
 * What the plan charges, measured on this project's machines (RSS by /usr/bin/time), beside the
 * runtime (RUNTIME_BYTES) and the slack (SLACK_BYTES) of memory/ceiling.ts:
 * - each more thread, idle: 6-9 MB (60 MB at --threads=2, 69 MB at 3);
 * - each thread at work: in pass 1, a helper's regions ahead of the main thread (REGIONS_AHEAD of
 *   2 MiB, their tables and, for a pack not held, their own read buffers); in pass 2, its buffer
 *   pool's first arena (16 MiB, more only for bases larger than that), half its board slots
 *   (4 x 4 MiB of shared memory, touched only by the branches it offers) and the inflate buffers
 *   (2-4 MiB); and, for a pack not held in memory, its read-back block cache (8 MiB, resolver.ts).
 */
const PER_WORKER = 8 << 20;
const PER_THREAD = 28 << 20;
const BLOCK_CACHE = 8 << 20;
/** With collision detection, each thread's sha1dc instance and the copies of long objects its lanes hold. */
const SHA1DC = ENGINE_BYTES + STREAMED_BUDGET;
/** The REF filter of the delta tree (delta-tree.ts), made when the pack has REF deltas. */
const REF_FILTER = 2 << 20;

/**
 * Bytes an object costs in the tables that live from pass 1 to the end, for an id of H bytes
 * (pack-scan.ts): offsets 4 (8 for a stream or a file over 4 GiB), size 4, CRC 4, OFS base 4,
 * stored and resolved type 2, header length 1, and the id: 19 + H with 32-bit offsets, 39 for
 * SHA-1. A REF delta adds its entry number and base id to pass 1's list (4 + H, more for a stream:
 * `refListBytes`), then its place in the tree's order and its claim (8).
 * With `depths` (verify-pack -v), each entry's depth takes 4 more in pass 2.
 */
export function bytesPerObject(format: ObjectFormat, depths = false, wideOffsets = true): { object: number; refDelta: number } {
  const H = hashLength(format);
  return { object: (wideOffsets ? 23 : 19) + H + (depths ? 4 : 0), refDelta: 4 + H + 8 };
}

/**
 * What index-pack's memory plan is computed from: object and delta counts, pack size, threads, the ceiling.
 */
export interface MemoryPlanInput {
  /** The ceiling in bytes (Infinity: none). */
  maxMemory: number;
  format: ObjectFormat;
  /** Threads asked for (this one included). */
  threads: number;
  /** Objects the pack declares (0 when not known yet: a stream). */
  objects: number;
  /** The pack's size when known (a file): under 4 GiB, its offsets take 32 bits (PackScan.offsets). */
  packSize?: number;
  /** Each entry's delta depth is recorded (IndexPackOptions.depths). */
  depths?: boolean;
  /**
   * Deltas among them, and REF deltas among those, once pass 1 has counted them. Before that,
   * threads are planned for the kindest mix (pass 2 is planned again with the counts) and the
   * pack's residence for the worst (it is read into memory during pass 1): no REF delta and every
   * object a delta, against every object a REF delta and the tree's build at its largest.
   */
  deltas?: number;
  refDeltas?: number;
  /** Ids by sha1dc (IndexPackOptions.detectCollisions). */
  detectCollisions?: boolean;
  /** What a visitor holds on each thread while pass 2 resolves (IndexPackOptions.visitorBytes). */
  visitorBytes?: number;
}

/** How index-pack divides its memory ceiling: threads, what is held whole, what is kept from pass 1. */
export interface MemoryPlan {
  /** Threads to run: fewer than asked when the ceiling cannot hold the working sets of all. */
  threads: number;
  /** The peak of the phases without the pack's own bytes: runtime, threads and tables. */
  fixed: number;
  /** The largest pack that may be held whole in memory (0: none). */
  residentLimit: number;
}

/** The counts the phases are charged for. */
interface Mix {
  objects: number;
  deltas: number;
  refDeltas: number;
}

/**
 * What pass 1's REF list holds at the end (pack-scan.ts `addRefDelta`): with tables sized from
 * the header (`sized`: a file, or a stream of a count this machine could hold), room for every
 * entry from the first REF delta on, touched only as it is used; otherwise a list that starts at
 * 64 entries and doubles when full, so that its written pages and the copies it left behind for
 * the collector add up to about its room.
 */
function refListBytes(refDeltas: number, H: number, sized: boolean): number {
  if (refDeltas === 0) return 0;
  if (sized) return refDeltas * (4 + H);
  let room = 64;
  while (room < refDeltas) room *= 2;
  return room * (4 + H);
}

/**
 * The peak of index-pack's memory on `threads` threads, without the pack's bytes or the read-back
 * block caches: the largest of its phases, not their sum, since each phase's working memory is
 * gone before the next one's biggest part is made (the bench's 10M-object pack at two threads
 * peaked at 632-642 MiB in pass 2 and 622 in the write, by the kernel's high-water mark per phase,
 * against 631 MiB charged here before the slack). That holds only while no phase leaves large
 * buffers behind for the garbage collector: when it frees them is not this plan's to know, and
 * before pass 1's REF list was sized once and the index's order reused a table, 100-150 MiB of
 * them took the same run to 687-715 MiB.
 * - pass 1: every thread scanning (helpers scan regions ahead of the main thread) and the tables;
 * - the delta tree, built on this thread while the workers wait: child starts 4 an object, child
 *   lists 4 a delta, roots 4 a root (a non-delta), the roots' sort keys 8 a non-delta, the REF
 *   order (sorted in place) and claims 8 a REF delta, the REF filter; the subtree weights (4 an
 *   object) take the OFS base table's buffer, unless depths keep that table;
 * - pass 2: every thread resolving (with what its visitor holds), the tables (the OFS bases'
 *   table kept for the index's sorted order once the tree holds its links, or for the chain
 *   depths, which then cost 4 more an object), the tree less its sort keys;
 * - the write: the threads are gone (their heaps stay in the allocator), the tree's shared arrays
 *   wait for the collector, and the index's sorted order takes the OFS bases' table (4 an object
 *   more when depths keep that).
 */
function peakWithout(input: MemoryPlanInput, threads: number, mix: Mix): number {
  const H = hashLength(input.format);
  const { objects: n, deltas: d, refDeltas: r } = mix;
  const depths = input.depths === true;
  const depthTable = depths ? 4 * n : 0;
  const perThread = PER_THREAD + (detectsCollisions(input.format, input.detectCollisions) ? SHA1DC : 0);
  const idle = RUNTIME_BYTES + (threads - 1) * PER_WORKER;
  const tables = n * bytesPerObject(input.format, false, needsWideOffsets(input.packSize)).object + refListBytes(r, H, sizedFromHeader(input.format, n, input.packSize));
  const tree = 4 * (n + 1) + 4 * d + 4 * (n - d) + 8 * r + (r > 0 ? REF_FILTER : 0);
  const building = 8 * (n - d) + (depths ? 4 * n : 0);
  const pass1 = idle + threads * perThread + tables;
  const build = idle + perThread + tables + tree + building;
  const pass2 = idle + threads * (perThread + (input.visitorBytes ?? 0)) + tables + tree + depthTable;
  const write = idle + tables + tree + depthTable + (depths ? 4 * n : 0);
  return Math.max(pass1, build, pass2, write);
}

/**
 * How index-pack spends a ceiling: the runtime, the tables every object needs and each thread's
 * working set, at the peak of its phases (threads are dropped, down to one, until it fits), then
 * the pack itself if what is left holds all of it. A pack not held is read back through each
 * thread's block cache (about 5% slower in pass 2; pass 1 reads it once either way). The tables
 * are the floor: a ceiling below them is exceeded by that much, as git's own index-pack would
 * need them too.
 */
export function planIndexPackMemory(input: MemoryPlanInput): MemoryPlan {
  const { maxMemory } = input;
  const n = input.objects;
  const counted = input.deltas !== undefined;
  // Threads for the mix counted, else the kindest one: a pass 2 that then does not fit runs on
  // fewer threads (resolveDeltas' `threads`).
  const kind: Mix = { objects: n, deltas: input.deltas ?? n, refDeltas: input.refDeltas ?? 0 };
  // The pack's residence for the mix counted, else the worst: the tree's build is largest with no
  // delta, pass 1's REF list with every object a REF delta (each phase takes its own worst).
  const worst = (threads: number): number => counted
    ? peakWithout(input, threads, kind)
    : Math.max(peakWithout(input, threads, { objects: n, deltas: 0, refDeltas: 0 }), peakWithout(input, threads, { objects: n, deltas: n, refDeltas: n }));
  let threads = Math.max(1, input.threads);
  while (threads > 1 && peakWithout(input, threads, kind) + readBackBytes(threads) + SLACK_BYTES > maxMemory) threads--;
  const fixed = worst(threads);
  return { threads, fixed, residentLimit: Math.max(0, maxMemory - fixed - SLACK_BYTES) };
}

/** The most delta data pass 1 keeps, whatever the ceiling leaves (kept-deltas.ts). */
const KEPT_DELTAS_MAX = 1 << 30;

/**
 * A stream's kept deltas are budgeted at this much per declared object at most: its size is not
 * known, and the budget is allocated up front. Deltas average about 1 KiB (gitoxide.pack: 126 MiB
 * for 130k objects), so packs of every size keep what they kept; without it a push of 40 objects
 * allocated what the ceiling left, 131 MB, which took 7-21 ms in a long-lived process. A delta
 * beyond the budget is inflated again in pass 2, as when none are kept.
 */
const KEPT_BYTES_PER_OBJECT = 16 << 10;

/** What pass 1 keeps in memory for pass 2 besides the tables. */
export interface PackHolding {
  /** Bytes of delta data pass 1 keeps for pass 2 (0: none): its budget, used as it comes. */
  keepDeltas: number;
  /** Read the pack whole into memory. */
  holdPack: boolean;
}

/**
 * How pass 1 spends what the plan leaves (`residentLimit`) on a pack of `packSize` bytes (undefined
 * for a stream). The deltas' data, which pass 2 would otherwise inflate again, comes first, up to
 * twice the pack's size (gitoxide.pack inflates to 1.24 times its size in deltas), or for a
 * stream `KEPT_BYTES_PER_OBJECT` an object: keeping them
 * made index-pack --threads=1 of gitoxide.pack 12% faster, where holding the pack instead of
 * reading entries back gains 1%. The pack is held if it fits in what is left. Deltas are kept
 * when `keep`: for a stream always (pass 1's helpers keep theirs in the same store; --stdin of a
 * clone of gitoxide at --threads=2: 3.63 → 3.5 CPU-s), for a file only when this thread scans it
 * whole (a file's split pass 1 holds the pack in memory instead, which its helpers scan into).
 */
export function planPackHolding(residentLimit: number, objects: number, packSize: number | undefined, threads: number, keep: boolean): PackHolding {
  const room = keptDeltasRoom(residentLimit, objects, threads);
  const wanted = packSize === undefined ? objects * KEPT_BYTES_PER_OBJECT : 2 * packSize;
  const keepDeltas = keep && room >= 1 << 20 ? Math.floor(Math.min(room, wanted)) : 0;
  const holdPack = packSize !== undefined && packSize <= residentLimit - (keepDeltas > 0 ? keepDeltas + 4 * objects : 0);
  return { keepDeltas, holdPack };
}

/**
 * The most kept deltas may take of `residentLimit` for a pack of `objects`, whatever its size:
 * what is left beside their table (4 bytes an entry) and a pack read back through block caches.
 * A stream's store is made this large before its count is known (pages untouched stay unused).
 */
export function keptDeltasRoom(residentLimit: number, objects: number, threads: number): number {
  return Math.min(KEPT_DELTAS_MAX, residentLimit - 4 * objects - readBackBytes(threads));
}

/** What the pack costs besides its tables when it is not held whole: each thread's block cache. */
export function readBackBytes(threads: number): number {
  return threads * BLOCK_CACHE;
}
