import { detectsCollisions, hashLength, type ObjectFormat } from '../hash/object-format.js';
import { ENGINE_BYTES } from '../hash/sha1dc/engine.js';
import { STREAMED_BUDGET } from '../hash/sha1dc/sha1dc-lanes.js';
import { RUNTIME_BYTES, SLACK_BYTES } from '../memory/ceiling.js';
import { needsWideOffsets } from './pack-scan.js';

export { DEFAULT_MAX_MEMORY } from '../memory/ceiling.js';

/**
 * What the plan charges, measured on this project's machines (RSS by /usr/bin/time), beside the
 * runtime (RUNTIME_BYTES) and the slack (SLACK_BYTES) of memory/ceiling.ts:
 * - each more thread, idle: 6-9 MB (60 MB at --threads=2, 69 MB at 3);
 * - each resolving thread at work: its buffer pool's first arena (16 MiB, more only for bases
 *   larger than that), half its board slots (4 x 4 MiB of shared memory, touched only by the
 *   branches it offers), the inflate and pass-1 region buffers (2-4 MiB), and, for a pack not held
 *   in memory, its read-back block cache (8 MiB, resolver.ts).
 */
const PER_WORKER = 8 << 20;
const PER_THREAD = 28 << 20;
const BLOCK_CACHE = 8 << 20;
/** With collision detection, each thread's sha1dc instance and the copies of long objects its lanes hold. */
const SHA1DC = ENGINE_BYTES + STREAMED_BUDGET;

/**
 * Bytes an object costs, for an id of H bytes, at the peak (measured: synthetic 10M objects peaked
 * at 733 MiB on one thread, 655 MiB of it once pass 1's tables and the delta tree existed):
 * - pass 1's tables (pack-scan.ts): 23 + H, or 19 + H with 32-bit offsets (a file under 4 GiB);
 * - the delta tree: child starts 4, child lists 4 a delta, roots 4 a root, and while it is built
 *   32-bit subtree weights 4 and the roots' sort keys 8 a non-delta (counted as 16 in all; the
 *   weights now take the buffer of pass 1's OFS base table unless depths are recorded, which this
 *   still charges: the plan has not been redone phase by phase yet);
 * - to write the index, the sorted order 4 (the `.idx` is streamed to its file);
 * - with `depths` (verify-pack -v), 4 more.
 * For SHA-1: 63 bytes (59 with 32-bit offsets), 67 with depths (1M objects: 60 MB).
 * - each REF delta: its entry and base id in pass 1's list (4 + H), its position in the tree's
 *   order and its claim (8). For SHA-1: 32 bytes.
 * Nothing of one phase is given back before the next: the tree's arrays are in shared memory that
 * only the garbage collector frees, and the exited worker threads' heaps stay in the allocator's
 * arenas (1M objects peaked 32 MB higher at --threads=2 than at 1).
 */
export function bytesPerObject(format: ObjectFormat, depths = false, wideOffsets = true): { object: number; refDelta: number } {
  const H = hashLength(format);
  return { object: (wideOffsets ? 23 : 19) + H + 16 + 4 + (depths ? 4 : 0), refDelta: 4 + H + 8 };
}

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
  /** Each entry's depth is recorded (IndexPackOptions.depths). */
  depths?: boolean;
  /**
   * REF deltas among them, once pass 1 has counted them. Before that, threads are planned as if
   * there were none (pass 2 is planned again with the count) and the pack's residence as if all
   * were (it is read into memory during pass 1).
   */
  refDeltas?: number;
  /** Ids by sha1dc (IndexPackOptions.detectCollisions). */
  detectCollisions?: boolean;
}

export interface MemoryPlan {
  /** Threads to run: fewer than asked when the ceiling cannot hold the working sets of all. */
  threads: number;
  /** Bytes charged before the pack's own: runtime, threads and tables. */
  fixed: number;
  /** The largest pack that may be held whole in memory (0: none). */
  residentLimit: number;
}

/**
 * How index-pack spends a ceiling: first the runtime, the tables every object needs and each
 * thread's working set (threads are dropped, down to one, until they fit), then the pack itself if
 * what is left holds all of it. A pack not held is read back through each thread's block cache
 * (about 5% slower in pass 2; pass 1 reads it once either way). The tables are the floor: a
 * ceiling below them is exceeded by that much, as git's own index-pack would need them too.
 */
export function planIndexPackMemory(input: MemoryPlanInput): MemoryPlan {
  const { maxMemory } = input;
  const perObject = bytesPerObject(input.format, input.depths === true, needsWideOffsets(input.packSize));
  const tables = (refDeltas: number): number => input.objects * perObject.object + refDeltas * perObject.refDelta;
  const perThread = PER_THREAD + (detectsCollisions(input.format, input.detectCollisions) ? SHA1DC : 0);
  const cost = (threads: number, refDeltas: number): number => RUNTIME_BYTES + (threads - 1) * PER_WORKER + threads * perThread + tables(refDeltas);
  let threads = Math.max(1, input.threads);
  const known = input.refDeltas ?? 0;
  while (threads > 1 && cost(threads, known) + threads * BLOCK_CACHE + SLACK_BYTES > maxMemory) threads--;
  const fixed = cost(threads, input.refDeltas ?? input.objects);
  return { threads, fixed, residentLimit: Math.max(0, maxMemory - fixed - SLACK_BYTES) };
}
