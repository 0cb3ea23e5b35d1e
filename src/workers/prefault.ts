/**
 * Touching fresh memory costs a page fault per 4 KiB (the first-touch cost, memory/index.ts: up
 * to 280 ms for a 111 MB pack), so while pass 1 reads a pack into a shared buffer, an otherwise idle worker touches the
 * pages ahead of it. Each 4 MiB chunk is claimed by exactly one side through `states`
 * (0 untouched, 1 being touched, 2 touched, 3 taken by the reader): the helper never writes to a
 * chunk the reader has started filling.
 */
export const PREFAULT_CHUNK = 4 << 20;
const PAGE = 4096;

const UNTOUCHED = 0;
const TOUCHING = 1;
const TOUCHED = 2;
const TAKEN = 3;

export function prefaultStates(size: number): Int32Array {
  return new Int32Array(new SharedArrayBuffer(Math.max(1, Math.ceil(size / PREFAULT_CHUNK)) * 4));
}

/** Helper side: touch every chunk nobody has taken yet, in order. */
export function prefault(buffer: Uint8Array, states: Int32Array): void {
  for (let c = 0; c < states.length; c++) {
    if (Atomics.compareExchange(states, c, UNTOUCHED, TOUCHING) !== UNTOUCHED) continue;
    const end = Math.min(buffer.length, (c + 1) * PREFAULT_CHUNK);
    for (let p = c * PREFAULT_CHUNK; p < end; p += PAGE) buffer[p] = 0;
    Atomics.store(states, c, TOUCHED);
    Atomics.notify(states, c);
  }
}

/** Reader side: take the chunks covering `[from, to)`, waiting for any the helper is touching. */
export function takeChunks(states: Int32Array, from: number, to: number): void {
  const last = Math.min(states.length - 1, Math.floor((to - 1) / PREFAULT_CHUNK));
  for (let c = Math.floor(from / PREFAULT_CHUNK); c <= last; c++) {
    const was = Atomics.compareExchange(states, c, UNTOUCHED, TAKEN);
    if (was === TOUCHING) Atomics.wait(states, c, TOUCHING);
  }
}
