import { OBJ_OFS_DELTA, OBJ_REF_DELTA } from '../pack/entry-header.js';
import { compareBytes } from '../hash/hex.js';
import { hashLength } from '../hash/object-format.js';
import { allocArray, type PackScan } from './pack-scan.js';
import { sortIds } from './sort-ids.js';

/**
 * The delta tree of a scanned pack, in flat arrays that worker threads share.
 * - OFS children as CSR: `childList[childStart[b] .. childStart[b + 1])` are the deltas based on
 *   entry b (4 bytes a delta, 4 an entry), leaves first, then by subtree weight (see below).
 * - REF deltas sorted by base id (`refBaseIds`, `refEntries`): any thread that resolves an object
 *   finds the REF deltas waiting for it by binary search, so REF-to-REF chains and bases that come
 *   later in the pack work. `refClaims` (one Int32 per group of equal base ids) makes sure a group
 *   is resolved once even if the pack holds its base twice.
 * - `roots`: non-delta entries with children (every one, when pass 1 left them unhashed),
 *   heaviest subtree first so the big ones start early (longest-processing-time-first keeps
 *   threads busy until the end).
 */
export interface DeltaTree {
  childStart: Int32Array;
  childList: Int32Array;
  refBaseIds: Uint8Array;
  refEntries: Int32Array;
  refClaims: Int32Array;
  roots: Int32Array;
  deltaCount: number;
}

export function buildDeltaTree(scan: PackScan, shared: boolean): DeltaTree {
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
  for (let k = 0; k < n; k++) childStart[k + 1] = (childStart[k + 1] as number) + (childStart[k] as number);
  const childList = allocArray(Int32Array, childStart[n] as number, shared);
  const fill = childStart.slice(0, n);
  for (let k = 0; k < n; k++) {
    const b = ofsBase[k] as number;
    if (b < 0) continue;
    const at = fill[b] as number;
    fill[b] = at + 1;
    childList[at] = k;
  }

  // REF deltas sorted by base id.
  const refEntries = allocArray(Int32Array, refCount, shared);
  const refBaseIds = allocArray(Uint8Array, refCount * H, shared);
  const refClaims = allocArray(Int32Array, refCount, shared);
  if (refCount > 0) {
    const { entries, ids } = scan.refs;
    const order = sortIds(ids, refCount, H);
    for (let i = 0; i < refCount; i++) {
      const j = order[i] as number;
      refEntries[i] = entries[j] as number;
      refBaseIds.set(ids.subarray(j * H, j * H + H), i * H);
    }
  }

  // Subtree weight (bytes of delta data below each entry, itself included). OFS children come
  // after their base, so one backward pass accumulates; REF children are not counted (an estimate).
  const weight = new Float64Array(n);
  for (let k = n - 1; k >= 0; k--) {
    weight[k] = (weight[k] as number) + (sizes[k] as number);
    const b = ofsBase[k] as number;
    if (b >= 0) weight[b] = (weight[b] as number) + (weight[k] as number);
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
  const rootList: number[] = [];
  for (let k = 0; k < n; k++) {
    if ((types[k] as number) >= OBJ_OFS_DELTA) continue;
    const hasOfs = (childStart[k + 1] as number) > (childStart[k] as number);
    // Unhashed (scan-with-index.ts): every non-delta is a root, hashed before its REF children are sought.
    if (hasOfs || scan.unhashed === true || (refCount > 0 && findRefGroup(refBaseIds, refCount, H, scan.ids, k * H) >= 0)) rootList.push(k);
  }
  rootList.sort((a, b) => (weight[b] as number) - (weight[a] as number) || a - b);
  const roots = allocArray(Int32Array, rootList.length, shared);
  roots.set(rootList);
  return { childStart, childList, refBaseIds, refEntries, refClaims, roots, deltaCount };
}

/** Index of the first REF delta whose base id equals `id[at..at+H)`, or -1. */
export function findRefGroup(refBaseIds: Uint8Array, refCount: number, H: number, id: Uint8Array, at: number): number {
  let lo = 0;
  let hi = refCount;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compareBytes(refBaseIds, mid * H, id, at, H) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo < refCount && compareBytes(refBaseIds, lo * H, id, at, H) === 0 ? lo : -1;
}
