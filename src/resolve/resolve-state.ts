import type { ObjectFormat } from '../hash/object-format.js';
import type { DeltaTree } from './delta-tree.js';
import type { KeptDeltas } from './kept-deltas.js';
import type { OfferBoard } from './offer-board.js';
import type { EntryOffsets } from './pack-scan.js';
import type { PackVisitorSpec } from './pack-visitor.js';

/** Everything a resolver thread reads or fills; all arrays may live in shared memory. */
export interface ResolveState extends Omit<DeltaTree, 'deltaCount'> {
  format: ObjectFormat;
  /** Ids by SHA-1 with collision detection (sha1dc): a flagged object fails the run. */
  detectCollisions?: boolean;
  name: string;
  /** The pack file: entries are read back with positioned reads (pass 1 learned their extents)... */
  packPath: string;
  /** Where the pack ends in that file (its trailer included). */
  packEnd: number;
  /** ...unless the whole pack is in (shared) memory. */
  pack: Uint8Array | undefined;
  offsets: EntryOffsets;
  types: Uint8Array;
  sizes: Uint32Array;
  headerLengths: Uint8Array;
  ids: Uint8Array;
  resolvedTypes: Uint8Array;
  /** Each entry's delta depth, when asked for (verify-pack -v); the walk itself keeps depths in its frames. */
  depths?: Uint32Array;
  control: Int32Array;
  /** Branches offered to idle threads. */
  board: OfferBoard;
  /** How long an idle thread waits without a sign of life from the others (default 30 s). */
  stallMs?: number;
  /** A visitor every thread makes its own of (see pack-visitor.ts), shown objects as they resolve. */
  visitor?: PackVisitorSpec;
  /** Non-delta entries a visitor wants that are no delta's base: inflated for it after the roots. */
  leaves?: Int32Array;
  /**
   * Pass 1 took the entries' extents from the pack's index and hashed nothing (scan-with-index.ts):
   * every non-delta is then a root, hashed here, and every stream must end at the next entry.
   */
  unhashed?: boolean;
  /** With `unhashed`: each entry's CRC32 as a v2 index gives it, checked as the entry is inflated. */
  expectedCrc32?: Uint32Array;
  /** Deltas' data as pass 1 inflated them (kept-deltas.ts): not inflated again. */
  kept?: KeptDeltas;
}

/** Slots of `ResolveState.control`. */
export const CONTROL_NEXT_ROOT = 0;
export const CONTROL_RESOLVED = 1;
export const CONTROL_ABORT = 2;
/** Threads that ran out of roots and look for offered branches. */
export const CONTROL_IDLE = 3;
/** Threads taking part (set before they start). */
export const CONTROL_WORKERS = 4;
/** Bumped on each offer; idle threads wait on it. */
export const CONTROL_BOARD_VERSION = 5;
/** Threads that have started taking roots. */
export const CONTROL_STARTED = 6;
/** Bumped by every thread as it works or waits: a thread that stops bumping it has died. */
export const CONTROL_HEARTBEAT = 7;
/** Next of `leaves` to take. */
export const CONTROL_NEXT_LEAF = 8;
export const CONTROL_LENGTH = 9;
