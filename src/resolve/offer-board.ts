/**
 * Where a busy resolver thread offers the rest of a base's children to idle threads ("work
 * stealing" of branches: without it, one root with a huge subtree keeps one thread busy while
 * the others wait). An offer is a slot in shared memory holding a copy of the resolved base and
 * a range of the delta tree's child list; any thread takes children from it with one atomic add.
 *
 * Slot fields (Int32 each): STATE (FREE, WRITING, OPEN), GEN (bumped on each reuse), REFS (threads
 * that may still read the base: the owner plus takers at work), NODE, TYPE, DEPTH, LEN (bytes of
 * base), NEXT and END (the range of `childList` still to take). A slot is freed by whichever thread
 * drops REFS to zero; the owner keeps its reference until it finds the range exhausted, so REFS
 * reaching zero means nobody can take or read any more. Takers check STATE and GEN after taking a
 * reference, so a slot freed and reused meanwhile is never mistaken for the old offer.
 * Bases larger than a slot are not offered: their owner keeps the work (the memory budget).
 */
export const FREE = 0;
const WRITING = 1;
const OPEN = 2;

const STATE = 0;
const GEN = 1;
const REFS = 2;
export const NODE = 3;
export const TYPE = 4;
export const DEPTH = 5;
export const LEN = 6;
const NEXT = 7;
const END = 8;
const FIELDS = 9;

export interface OfferBoard {
  slots: Int32Array;
  data: Uint8Array;
  slotBytes: number;
}

export function createBoard(count: number, slotBytes: number): OfferBoard {
  return {
    slots: new Int32Array(new SharedArrayBuffer(Math.max(1, count) * FIELDS * 4)),
    // A growable buffer, grown by each offer to cover its slot: only slots actually used take
    // memory. A fixed one of the whole size (16-128 MiB) comes zeroed from calloc, and once
    // glibc's mmap threshold has risen (after any large free) calloc clears it from the heap: a
    // fault per page, 60 ms for 16 MiB here, paid by every index-pack however small its pack.
    data: new Uint8Array(new SharedArrayBuffer(0, { maxByteLength: Math.max(1, count * slotBytes) })),
    slotBytes,
  };
}

export function slotCount(board: OfferBoard): number {
  return board.slots.length / FIELDS;
}

export function field(board: OfferBoard, slot: number, f: number): number {
  return Atomics.load(board.slots, slot * FIELDS + f);
}

/** The base bytes of an open slot. */
export function slotData(board: OfferBoard, slot: number): Uint8Array {
  const at = slot * board.slotBytes;
  return board.data.subarray(at, at + field(board, slot, LEN));
}

/** Publishes a base and children `childList[next..end)`; returns the slot, or -1 when none is free. */
export function offer(board: OfferBoard, node: number, type: number, depth: number, data: Uint8Array, next: number, end: number): number {
  if (data.length > board.slotBytes) return -1;
  const s = board.slots;
  const n = slotCount(board);
  for (let slot = 0; slot < n; slot++) {
    const b = slot * FIELDS;
    if (Atomics.compareExchange(s, b + STATE, FREE, WRITING) !== FREE) continue;
    cover(board, slot * board.slotBytes + data.length);
    board.data.set(data, slot * board.slotBytes);
    Atomics.store(s, b + NODE, node);
    Atomics.store(s, b + TYPE, type);
    Atomics.store(s, b + DEPTH, depth);
    Atomics.store(s, b + LEN, data.length);
    Atomics.store(s, b + NEXT, next);
    Atomics.store(s, b + END, end);
    // add, not store: a late taker of the slot's previous life may hold a stray reference.
    Atomics.add(s, b + REFS, 1);
    Atomics.add(s, b + GEN, 1);
    Atomics.store(s, b + STATE, OPEN);
    return slot;
  }
  return -1;
}

/**
 * Grows the board's data to at least `bytes`. Threads grow it concurrently: a grow that another
 * thread has overtaken fails (a shared buffer never shrinks), and then the length already covers.
 */
function cover(board: OfferBoard, bytes: number): void {
  const buffer = board.data.buffer as SharedArrayBuffer;
  if (buffer.byteLength >= bytes) return;
  try {
    buffer.grow(bytes);
  } catch (e) {
    if (buffer.byteLength < bytes) throw e;
  }
}

/**
 * Takes a reference on `slot` if it is open with children left; returns its generation, or -1.
 * The caller then calls `takeChild` and, when done reading the base, `release`.
 */
export function acquire(board: OfferBoard, slot: number): number {
  const s = board.slots;
  const b = slot * FIELDS;
  if (Atomics.load(s, b + STATE) !== OPEN) return -1;
  const gen = Atomics.load(s, b + GEN);
  if (Atomics.load(s, b + NEXT) >= Atomics.load(s, b + END)) return -1;
  Atomics.add(s, b + REFS, 1);
  if (Atomics.load(s, b + STATE) !== OPEN || Atomics.load(s, b + GEN) !== gen) {
    release(board, slot);
    return -1;
  }
  return gen;
}

/** Position in `childList` of the next child to resolve, or -1 when the range is exhausted. */
export function takeChild(board: OfferBoard, slot: number): number {
  const b = slot * FIELDS;
  const i = Atomics.add(board.slots, b + NEXT, 1);
  return i < Atomics.load(board.slots, b + END) ? i : -1;
}

/** Drops a reference; the last one frees the slot. */
export function release(board: OfferBoard, slot: number): void {
  const b = slot * FIELDS;
  if (Atomics.sub(board.slots, b + REFS, 1) === 1) Atomics.compareExchange(board.slots, b + STATE, OPEN, FREE);
}
