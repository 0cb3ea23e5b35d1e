import { EntryHeader, OBJ_OFS_DELTA, OBJ_REF_DELTA } from '../pack/entry-header.js';
import { isPackwrightError } from '../errors/packwright-error.js';
import type { StorePack } from '../odb/store-pack.js';
import { Flag, type ObjectTable } from '../walk/object-table.js';
import { LOOSE, type ObjectLocations } from '../walk/locate-objects.js';
import { drain, type Steps } from '../walk/sliced-steps.js';

/**
 * A pack gives few enough objects for `planPackSteps` to find their entries one by one (through
 * PackIndex.entriesAt) when they are fewer than 1/SPARSE_SHARE of its entries; more, and sorting
 * the whole pack's offsets costs less than sorting theirs.
 */
const SPARSE_SHARE = 8;

/** How an object goes into the pack being made. */
export const Entry = {
  /** Its stored entry, copied byte for byte (a whole object). */
  COPY: 1,
  /** Its stored delta, copied with the base reference rewritten (the base is in this pack). */
  COPY_DELTA: 2,
  /** Its stored delta against an object the receiver has (a thin pack's REF_DELTA). */
  COPY_THIN: 3,
  /** Read, then deflated again as a whole object (loose, or a stored delta that cannot be kept). */
  RECOMPRESS: 4,
  /** A delta computed now (see delta-search.ts). */
  NEW_DELTA: 5,
  /** A delta computed now against an object the receiver has (a thin pack's REF_DELTA). */
  NEW_THIN: 6,
  /**
   * Its stored entry, in the run of entries at the start of a pack that goes into the new pack as
   * it is, at the same offsets (git's verbatim reuse; see PackPlan.verbatim): whole or a delta,
   * its header is never read.
   */
  VERBATIM: 7,
} as const;

/**
 * Options of the pack plan: whether stored deltas and entries may be reused, a thin pack, the depth limit,
 * and what the receiver has.
 */
export interface PlanOptions {
  /** Keep stored deltas (git's --no-reuse-delta turns this off). */
  reuseDelta: boolean;
  /** Copy stored data at all (git's --no-reuse-object turns this off, and reuseDelta with it). */
  reuseObject: boolean;
  /** Deltas against excluded objects may stay (REF_DELTA): a thin pack. */
  thin: boolean;
  /** Longest delta chain in the pack (git's --depth, default 50). */
  depth: number;
  /**
   * With `thin`: whether the receiver has an object the walk did not number (a bitmap's excluded
   * side), so that a stored delta on it may stay as a REF_DELTA.
   */
  receiverHas?: ((id: Uint8Array) => boolean) | undefined;
  /**
   * The first `count` entries of `pack` in pack order, all listed, go into the pack as they are
   * (see PackPlan.verbatim); their deltas' bases are among them (a bitmap's whole words of
   * wanted objects: git's reuse_partial_packfile_from_bitmap).
   */
  verbatim?: { pack: StorePack; count: number } | undefined;
}

/**
 * What the pack will hold for each listed object, by object number, and the order to write it in.
 * Stored data is kept where it can be (gitoxide calls these pack-to-pack copies): the writer then
 * copies compressed bytes instead of inflating, resolving and deflating again, which is most of
 * why `git pack-objects` of a packed repository is fast.
 */
export interface PackPlan {
  /** By object number: an `Entry` kind (0 for objects not in the pack). */
  kind: Uint8Array;
  /** By object number: the delta base's object number, or -1. */
  base: Int32Array;
  /** By object number: the stored entry's offset, its end and where its zlib stream starts. */
  sourceOffset: Float64Array;
  sourceEnd: Float64Array;
  sourceData: Float64Array;
  /** By object number: the object's size (for deltas, the delta's size), from the entry header. */
  size: Float64Array;
  /** Objects in writing order (a base is moved before its deltas when writing). */
  order: Int32Array;
  /** Delta depth by object number, for the chains the plan keeps. */
  depth: Uint16Array;
  /**
   * A run of entries written first, byte for byte as the pack `locations.packs[pack]` stores them
   * from its first entry to `end` (its `count` first entries in pack order, Entry.VERBATIM), at
   * the same offsets in the new pack: its header is as long, so OFS_DELTA distances hold. git's
   * write_reused_pack_verbatim; a clone of a bitmapped pack with a few objects pushed since.
   */
  verbatim?: { pack: number; count: number; end: number };
}

/**
 * Reads the entry header of every listed object that is in a pack, in pack order (so the reads
 * are sequential), and decides what to copy: whole entries always (when reuseObject), deltas
 * whose base is in the pack too or, for a thin pack, known to the receiver; chains longer than
 * `depth` and cycles (A a delta of B in one pack, B of A in another) are broken by recompressing.
 */
export function planPack(table: ObjectTable, listed: Int32Array, locations: ObjectLocations, options: PlanOptions): PackPlan {
  return drain(planPackSteps(table, listed, locations, options));
}

/** `planPack` as steps (a few thousand entries each), for createPack on an event loop (`drainSliced`). */
export function* planPackSteps(table: ObjectTable, listed: Int32Array, locations: ObjectLocations, options: PlanOptions): Steps<PackPlan> {
  const n = table.count;
  const plan: PackPlan = {
    kind: new Uint8Array(n),
    base: new Int32Array(n).fill(-1),
    sourceOffset: new Float64Array(n),
    sourceEnd: new Float64Array(n),
    sourceData: new Float64Array(n),
    size: new Float64Array(n),
    order: new Int32Array(listed.length),
    depth: new Uint16Array(n),
  };
  let written = 0;
  const header = new EntryHeader();
  if (options.reuseDelta) choosePackCopies(locations, header);
  if (options.verbatim !== undefined) takeRunCopies(locations, options.verbatim);
  const byPack: number[][] = locations.packs.map(() => []);
  for (let i = 0; i < listed.length; i++) {
    if ((i & 8191) === 0) yield;
    const o = listed[i] as number;
    const k = locations.pack[o] as number;
    if (k === LOOSE || !options.reuseObject) plan.kind[o] = Entry.RECOMPRESS;
    if (k >= 0) (byPack[k] as number[]).push(o);
  }
  for (let k = 0; k < byPack.length; k++) {
    const pack = locations.packs[k] as StorePack;
    const objects = byPack[k] as number[];
    const index = pack.index;
    const file = pack.open().file;
    /** Where the entry of an OFS_DELTA's base is: its sorted position, or -1 (`r`: the delta's rank in pack order, for the dense walk). */
    let basePosition: (baseOffset: number, r: number) => number = (baseOffset, r) => index.positionOfOffset(baseOffset, r);
    const planEntry = (o: number, offset: number, end: number, r: number): void => {
      file.readEntryHeader(offset, header);
      plan.sourceOffset[o] = offset;
      plan.sourceEnd[o] = end;
      plan.sourceData[o] = offset + header.headerLength;
      plan.size[o] = header.size;
      if (header.type !== OBJ_OFS_DELTA && header.type !== OBJ_REF_DELTA) {
        plan.kind[o] = Entry.COPY;
        return;
      }
      let b = -1;
      let baseId: Uint8Array | undefined;
      if (header.type === OBJ_OFS_DELTA) {
        const position = basePosition(header.baseOffset, r);
        if (position >= 0) {
          baseId = index.id(position);
          b = table.find(baseId);
        }
      } else if (header.baseId !== undefined) {
        baseId = header.baseId;
        b = table.find(baseId);
      }
      // A base the walk did not number that the receiver has (a bitmap's excluded side).
      if (b < 0 && options.thin && options.receiverHas !== undefined && baseId !== undefined && options.receiverHas(baseId)) {
        b = table.intern(baseId);
        table.mark(b, Flag.UNINTERESTING);
      }
      if (options.reuseDelta && b >= 0 && table.is(b, Flag.LISTED) && !table.is(b, Flag.MISSING)) {
        plan.kind[o] = Entry.COPY_DELTA;
        plan.base[o] = b;
      } else if (options.reuseDelta && options.thin && b >= 0 && table.is(b, Flag.UNINTERESTING)) {
        plan.kind[o] = Entry.COPY_THIN;
        plan.base[o] = b;
      } else {
        plan.kind[o] = Entry.RECOMPRESS;
      }
    };
    /** `planEntry`, except that an entry whose header cannot be read is not copied. */
    const planOrRecompress = (o: number, offset: number, end: number, r: number): void => {
      if (plan.kind[o] === Entry.RECOMPRESS) return;
      try {
        planEntry(o, offset, end, r);
      } catch (e) {
        // An entry whose header cannot be read (a corrupt type, base reference or offset) is not
        // copied: the object is read again, from another copy if this one is unusable (git's
        // check_object gives up on the entry the same way).
        if (!isPackwrightError(e)) throw e;
        plan.kind[o] = Entry.RECOMPRESS;
        plan.base[o] = -1;
      }
    };
    const runHere = options.verbatim !== undefined && options.verbatim.pack === pack && options.reuseObject;
    if (!runHere && objects.length * SPARSE_SHARE < index.count) {
      // A few objects of a large pack (a small fetch's or push's): their entries, ends and bases
      // found by PackIndex.entriesAt, in offset order, without the whole pack's order.
      const at = new Float64Array(objects.length);
      for (let i = 0; i < objects.length; i++) at[i] = index.offset(locations.position[objects[i] as number] as number);
      const byOffset = Array.from(objects.keys()).sort((a, b) => (at[a] as number) - (at[b] as number));
      const queries = new Set<number>(at);
      for (const i of byOffset) {
        try {
          file.readEntryHeader(at[i] as number, header);
          if (header.type === OBJ_OFS_DELTA) queries.add(header.baseOffset);
        } catch (e) {
          // planOrRecompress meets it again below.
          if (!isPackwrightError(e)) throw e;
        }
      }
      yield;
      const found = index.entriesAt(queries);
      basePosition = (baseOffset) => found.get(baseOffset)?.position ?? -1;
      for (let j = 0; j < byOffset.length; j++) {
        if ((j & 2047) === 0) yield;
        const i = byOffset[j] as number;
        const o = objects[i] as number;
        const offset = at[i] as number;
        const next = (found.get(offset) as { next: number }).next;
        plan.order[written++] = o;
        planOrRecompress(o, offset, next >= 0 ? next : file.dataEnd, -1);
      }
      continue;
    }
    const { offsets } = index.packOrder();
    yield;
    // Object numbers by the pack-order rank of their entry: the pass below walks the pack front to
    // back, which is also the writing order for what this pack gives.
    const rankOf = index.packRanks();
    yield;
    const atRank = new Int32Array(index.count).fill(-1);
    for (let i = 0; i < objects.length; i++) {
      if ((i & 8191) === 0) yield;
      const o = objects[i] as number;
      atRank[rankOf[locations.position[o] as number] as number] = o;
    }
    const endOf = (r: number): number => (r + 1 < offsets.length ? (offsets[r + 1] as number) : file.dataEnd);
    // The verbatim run: every entry of it listed and stored, or no run.
    let run = runHere ? Math.min((options.verbatim as { count: number }).count, atRank.length) : 0;
    // It ends before an entry that does not go from here (a copy elsewhere chosen; none is, see takeRunCopies).
    for (let r = 0; r < run; r++) if ((atRank[r] as number) < 0 || plan.kind[atRank[r] as number] === Entry.RECOMPRESS) run = r;
    if (run > 0) plan.verbatim = { pack: k, count: run, end: run < offsets.length ? (offsets[run] as number) : file.dataEnd };
    for (let r = 0; r < atRank.length; r++) {
      if ((r & 2047) === 0) yield;
      const o = atRank[r] as number;
      if (o < 0) continue;
      plan.order[written++] = o;
      if (r < run) {
        plan.kind[o] = Entry.VERBATIM;
        plan.sourceOffset[o] = offsets[r] as number;
        plan.sourceEnd[o] = endOf(r);
        continue;
      }
      planOrRecompress(o, offsets[r] as number, endOf(r), r);
    }
  }
  for (const o of listed) if (locations.pack[o] === LOOSE) plan.order[written++] = o;
  yield* breakLongChainsSteps(plan, listed, options.depth);
  return plan;
}

/**
 * For an object stored in several packs, prefers a copy stored as a delta over a whole one (the
 * smaller entry when several are deltas). git gets the same from its most-recently-used pack
 * order: a thin pack fixed by `index-pack --fix-thin` holds the new version as a delta and the
 * appended base whole, and the pack whose trees the walk just found is searched first; taking
 * the delta keeps cross-pack chains (t5316). Cycles this makes are broken later.
 */
function choosePackCopies(locations: ObjectLocations, header: EntryHeader): void {
  for (const [o, copies] of locations.otherCopies) {
    let best = -1;
    let bestScore = copyScore(locations, locations.pack[o] as number, locations.position[o] as number, header);
    copies.forEach((c, i) => {
      const score = copyScore(locations, c.pack, c.position, header);
      if (score < bestScore) {
        bestScore = score;
        best = i;
      }
    });
    if (best < 0) continue;
    // Swap: the chosen copy becomes the object's place, the old one joins the other copies.
    const chosen = copies[best] as { pack: number; position: number };
    copies[best] = { pack: locations.pack[o] as number, position: locations.position[o] as number };
    locations.pack[o] = chosen.pack;
    locations.position[o] = chosen.position;
  }
}

/**
 * An object of the verbatim run is sent from the run's pack whatever other copy it has: the
 * newest pack holding it is where it was placed (a pushed pack completed with --fix-thin holds
 * copies of its bases), and one entry of the run sent from elsewhere would end the run there.
 */
function takeRunCopies(locations: ObjectLocations, verbatim: { pack: StorePack; count: number }): void {
  const k = locations.packs.indexOf(verbatim.pack);
  if (k < 0) return;
  const rankOf = verbatim.pack.index.packRanks();
  for (const [o, copies] of locations.otherCopies) {
    if (locations.pack[o] === k) continue;
    const i = copies.findIndex((c) => c.pack === k && (rankOf[c.position] as number) < verbatim.count);
    if (i < 0) continue;
    const chosen = copies[i] as { pack: number; position: number };
    copies[i] = { pack: locations.pack[o] as number, position: locations.position[o] as number };
    locations.pack[o] = chosen.pack;
    locations.position[o] = chosen.position;
  }
}

/** Lower is better: a delta entry by its size on disk, a whole entry after every delta. */
function copyScore(locations: ObjectLocations, k: number, position: number, header: EntryHeader): number {
  const pack = locations.packs[k] as StorePack;
  const index = pack.index;
  const file = pack.open().file;
  const offset = index.offset(position);
  file.readEntryHeader(offset, header);
  const size = index.entryEnd(offset, file.dataEnd) - offset;
  return header.type === OBJ_OFS_DELTA || header.type === OBJ_REF_DELTA ? size : Number.MAX_SAFE_INTEGER / 2 + size;
}

/**
 * Gives each delta in the pack (copied or new) its depth; a delta whose chain is longer than
 * `maxDepth`, or runs into itself, is recompressed instead (git's break_delta_chains). Returns the
 * objects changed. Iterative: chains may be thousands long in a pathological pack.
 */
export function breakLongChains(plan: PackPlan, listed: Int32Array, maxDepth: number): number[] {
  return drain(breakLongChainsSteps(plan, listed, maxDepth));
}

/** `breakLongChains` as steps (a few thousand objects each), for planPackSteps. */
function* breakLongChainsSteps(plan: PackPlan, listed: Int32Array, maxDepth: number): Steps<number[]> {
  const UNKNOWN = 0xffff;
  const VISITING = 0xfffe;
  const { kind, base, depth } = plan;
  const broken: number[] = [];
  for (const o of listed) depth[o] = kind[o] === Entry.COPY_DELTA || kind[o] === Entry.NEW_DELTA ? UNKNOWN : 0;
  yield;
  const chain: number[] = [];
  for (let i = 0; i < listed.length; i++) {
    if ((i & 8191) === 0) yield;
    const start = listed[i] as number;
    if (depth[start] !== UNKNOWN) continue;
    // Walk down to a known depth (or a cycle), then assign on the way back up.
    let o = start;
    while (depth[o] === UNKNOWN) {
      depth[o] = VISITING;
      chain.push(o);
      o = base[o] as number;
    }
    if (depth[o] === VISITING) {
      // A cycle through `o`: recompress `o`, so the chain ends there.
      kind[o] = Entry.RECOMPRESS;
      base[o] = -1;
      depth[o] = 0;
      broken.push(o);
    }
    // From the bottom up, each base's depth is known by the time its delta is reached.
    while (chain.length > 0) {
      const c = chain.pop() as number;
      if (base[c] === -1) continue;
      let d = (depth[base[c] as number] as number) + 1;
      if (d > maxDepth) {
        kind[c] = Entry.RECOMPRESS;
        base[c] = -1;
        d = 0;
        broken.push(c);
      }
      depth[c] = d;
    }
  }
  return broken;
}
