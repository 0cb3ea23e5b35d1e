import { OBJ_OFS_DELTA, OBJ_REF_DELTA } from '../pack/entry-header.js';
import { compareBytes } from '../hash/hex.js';
import { lowerBound } from '../idx/sorted-ids.js';
import { hashLength } from '../hash/object-format.js';
import { PackwrightError } from '../errors/packwright-error.js';
import { allocArray, type PackScan } from './pack-scan.js';
import { sortIds } from '../idx/sort-ids.js';

/**
 * The delta tree of a scanned pack, in flat arrays that worker threads share.
 * - OFS children as CSR: `childList[childStart[b] .. childStart[b + 1])` are the deltas based on
 *   entry b (4 bytes a delta, 4 an entry), leaves first, then by subtree weight (see below).
 * - REF deltas in the order of their base ids (`refOrder`, positions in pass 1's pack-order list
 *   `refEntries`/`refBaseIds`): any thread that resolves an object finds the REF deltas waiting
 *   for it by binary search, so REF-to-REF chains and bases that come later in the pack work.
 *   `refClaims` (one Int32 per group of equal base ids, at its first position) makes sure a group
 *   is resolved once even if the pack holds its base twice.
 * - `roots`: non-delta entries with children (every one, when pass 1 left them unhashed),
 *   heaviest subtree first so the big ones start early (longest-processing-time-first keeps
 *   threads busy until the end); in pack order when pass 2 reads the pack back from the file
 *   (see `buildDeltaTree`).
 */
export interface DeltaTree {
  childStart: Int32Array;
  childList: Int32Array;
  /** Pass 1's REF deltas (PackScan.refs, which may have room beyond `refOrder.length`). */
  refBaseIds: Uint8Array;
  refEntries: Int32Array;
  refOrder: Int32Array;
  refClaims: Int32Array;
  /** A bit for each REF base id's first 24 bits (mayBeRefBase): most objects skip the search. */
  refFilter: Uint8Array;
  roots: Int32Array;
  deltaCount: number;
}

/**
 * With `releaseOfsBase`, `scan.ofsBase` is emptied once its links are in the tree, and its buffer
 * then holds the subtree weights while the tree is built (the peak of index-pack's memory at 10M
 * objects: 40 MB less), then waits in `scan.spare` for the index's sorted order.
 */
export function buildDeltaTree(scan: PackScan, shared: boolean, releaseOfsBase = false): DeltaTree {
  const n = scan.count;
  const H = hashLength(scan.format);
  const { types, ofsBase, sizes } = scan;
  const childStart = allocArray(Int32Array, n + 1, shared);
  let deltaCount = 0;
  let refCount = 0;
  for (let k = 0; k < n; k++) {
    const b = ofsBase[k] as number;
    if (b >= 0) childStart[b + 1] = (childStart[b + 1] as number) + 1;
    const t = types[k] as number;
    if (t >= OBJ_OFS_DELTA) deltaCount++;
    if (t === OBJ_REF_DELTA) refCount++;
  }
  // Counts in childStart[b + 1] become starts in childStart[b]; each child placed moves its
  // base's start on to its end (= the next base's start), so one shift right restores the starts
  // (no second array of n entries: 40 MB at 10M).
  for (let k = 0; k < n; k++) childStart[k + 1] = (childStart[k + 1] as number) + (childStart[k] as number);
  const childList = allocArray(Int32Array, childStart[n] as number, shared);
  for (let k = 0; k < n; k++) {
    const b = ofsBase[k] as number;
    if (b < 0) continue;
    const at = childStart[b] as number;
    childStart[b] = at + 1;
    childList[at] = k;
  }
  for (let b = n; b > 0; b--) childStart[b] = childStart[b - 1] as number;
  childStart[0] = 0;

  // REF deltas in the order of their base ids: positions in pass 1's list (pack order), which
  // stays where it is (4 bytes a REF delta here instead of a sorted copy of H + 4).
  if (refCount > 0 && !(scan.refs.entries.buffer instanceof SharedArrayBuffer) && shared) {
    throw new PackwrightError('INVALID_ARGUMENT', 'a scan resolved on worker threads must be in shared memory (ScanOptions.shared)');
  }
  const refEntries = scan.refs.entries;
  const refBaseIds = scan.refs.ids;
  const refOrder = allocArray(Int32Array, refCount, shared);
  if (refCount > 0) sortIds(refBaseIds, refCount, H, { into: new Uint32Array(refOrder.buffer, refOrder.byteOffset, refCount) });
  const refClaims = allocArray(Int32Array, refCount, shared);

  // Subtree weight (bytes of delta data below each entry, itself included). OFS children come
  // after their base, so one backward pass over the child lists accumulates; REF children are not
  // counted (an estimate, kept in 32-bit floats: it only orders siblings and roots, and 4 bytes an
  // entry are 40 MB at 10M).
  let weight: Float32Array;
  if (releaseOfsBase) {
    weight = new Float32Array(ofsBase.buffer, ofsBase.byteOffset, n);
    scan.ofsBase = new Int32Array(0);
  } else {
    weight = new Float32Array(n);
  }
  for (let k = n - 1; k >= 0; k--) {
    let w = sizes[k] as number;
    for (let i = childStart[k] as number, to = childStart[k + 1] as number; i < to; i++) w += weight[childList[i] as number] as number;
    weight[k] = w;
  }
  // Siblings in the order the resolver takes them: leaves first, then subtrees lightest first. A
  // base stays live until its last child has its result, so while it still has children to do
  // it is held through each earlier sibling's whole subtree; with the heaviest subtree last, it
  // is released before the walk goes deep (on a 4000-revision chain: ~12 live objects -> ~3).
  const hasKids = (k: number): number => ((childStart[k + 1] as number) > (childStart[k] as number) ? 1 : 0);
  const segment: number[] = [];
  for (let b = 0; b < n; b++) {
    const from = childStart[b] as number;
    const to = childStart[b + 1] as number;
    if (to - from < 2) continue;
    segment.length = 0;
    for (let i = from; i < to; i++) segment.push(childList[i] as number);
    segment.sort((x, y) => hasKids(x) - hasKids(y) || (weight[x] as number) - (weight[y] as number) || x - y);
    for (let i = from; i < to; i++) childList[i] = segment[i - from] as number;
  }
  // Roots heaviest first, ties in pack order, through one native sort of packed keys: the weight's
  // float bits (which order like the weights) cut to their top 21, inverted, above the entry
  // number. Weights equal in their first 12 bits of mantissa count as equal. (A JS array of roots
  // sorted with a comparator took 75 MB of heap at 10M objects.)
  // A pack not held in memory is read back through each thread's cache of 16 KiB blocks
  // (resolver.ts), and a git-made pack keeps a delta family's entries near each other: roots in
  // pack order then take a third of the misses of roots by weight (gitoxide.pack at
  // --threads=2: 8k against 23-27k on the main thread), and verify-pack -v took 2.57-2.66 s
  // against 2.63-2.77. Work stealing still evens out a heavy root met late. A pack in memory
  // keeps the weight order: there, isomorphic-git.pack at --threads=2 took 1.43-1.50 s by weight
  // against 1.52-1.58 in pack order.
  const byWeight = scan.data !== undefined;
  const refFilter = buildRefFilter(refBaseIds, refCount, H, shared);
  const weightBits = new Uint32Array(weight.buffer, weight.byteOffset, n);
  const keys = new Float64Array(n - deltaCount);
  let rootCount = 0;
  for (let k = 0; k < n; k++) {
    if ((types[k] as number) >= OBJ_OFS_DELTA) continue;
    const hasOfs = (childStart[k + 1] as number) > (childStart[k] as number);
    // Unhashed (scan-with-index.ts): every non-delta is a root, hashed before its REF children are sought.
    if (hasOfs || scan.unhashed === true || (refCount > 0 && mayBeRefBase(refFilter, scan.ids, k * H) && findRefGroup(refBaseIds, refOrder, H, scan.ids, k * H) >= 0)) {
      keys[rootCount++] = byWeight ? (0x1fffff - ((weightBits[k] as number) >>> 11)) * 2 ** 32 + k : k;
    }
  }
  const sorted = byWeight ? keys.subarray(0, rootCount).sort() : keys;
  const roots = allocArray(Int32Array, rootCount, shared);
  for (let i = 0; i < rootCount; i++) roots[i] = (sorted[i] as number) % 2 ** 32;
  if (releaseOfsBase) scan.spare = weightBits;
  return { childStart, childList, refBaseIds, refEntries, refOrder, refClaims, refFilter, roots, deltaCount };
}

/** An id's first 24 bits. */
function prefix24(id: Uint8Array, at: number): number {
  return ((id[at] as number) << 16) | ((id[at + 1] as number) << 8) | (id[at + 2] as number);
}

/** 2 MiB: one bit for each value of an id's first 24 bits. */
const FILTER_BYTES = 1 << 21;

function buildRefFilter(refBaseIds: Uint8Array, refCount: number, H: number, shared: boolean): Uint8Array {
  const filter = allocArray(Uint8Array, refCount > 0 ? FILTER_BYTES : 0, shared);
  for (let r = 0; r < refCount; r++) {
    const top = prefix24(refBaseIds, r * H);
    filter[top >>> 3] = (filter[top >>> 3] as number) | (1 << (top & 7));
  }
  return filter;
}

/**
 * False when no REF delta's base id starts like `id[at..]`: every resolved object asks whether REF
 * deltas wait for it, and a binary search through `refOrder` touches ids all over memory (on 10M
 * objects with 2M REF deltas, 6 s of pass 2 without this test; 1 in 8 objects still searches).
 */
export function mayBeRefBase(refFilter: Uint8Array, id: Uint8Array, at: number): boolean {
  const top = prefix24(id, at);
  return ((refFilter[top >>> 3] as number) & (1 << (top & 7))) !== 0;
}

/**
 * The group of REF deltas whose base id equals `id[at..at+H)`: the position in `refOrder` of its
 * first member, or -1. Members follow it while their ids are equal (see `refGroupMembers`).
 */
export function findRefGroup(refBaseIds: Uint8Array, refOrder: Int32Array, H: number, id: Uint8Array, at: number): number {
  const idAt = (i: number): number => (refOrder[i] as number) * H;
  const i = lowerBound(refBaseIds, idAt, 0, refOrder.length, id, at, 0, H);
  return i < refOrder.length && compareBytes(refBaseIds, idAt(i), id, at, H) === 0 ? i : -1;
}

/** The entries of the REF group at `group` (from findRefGroup), in pack order. */
export function refGroupMembers(tree: Pick<DeltaTree, 'refBaseIds' | 'refEntries' | 'refOrder'>, group: number, H: number): number[] {
  const { refBaseIds, refEntries, refOrder } = tree;
  const first = (refOrder[group] as number) * H;
  const members: number[] = [];
  for (let i = group; i < refOrder.length; i++) {
    const r = refOrder[i] as number;
    if (i > group && compareBytes(refBaseIds, r * H, refBaseIds, first, H) !== 0) break;
    members.push(refEntries[r] as number);
  }
  return members;
}
