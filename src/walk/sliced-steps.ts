import { throwIfAborted } from '../errors/packwright-error.js';

/**
 * Work that a server does on its event loop (counting and planning a pack for one of many
 * requests) is written as a generator that yields now and then; `drain` runs it in one go,
 * `drainSliced` gives the event loop a turn at least every SLICE_MS. A clone of gitoxide's
 * 130k objects planned its pack for 100-200 ms at a time, and 16 clones at once from one
 * `packwright serve` kept other requests waiting over a second (issue 38's event-loop line).
 */
export type Steps<T> = Generator<void, T, undefined>;

/**
 * How long the slices of all event-loop work running at once take together before the loop gets
 * a turn (ms): each of n runs takes SLICE_MS / n (at least MIN_SLICE_MS), since one turn of the
 * loop runs a slice of each. With 20 ms each, 16 clones at once from one server made turns of
 * 300 ms and more.
 */
export const SLICE_MS = 20;
const MIN_SLICE_MS = 1;

/** Sliced runs (SliceClock) under way in this thread. */
let running = 0;

/**
 * One run's share of the event loop: `due` once it has run its slice since the last turn (its
 * share of SLICE_MS among the runs under way), `turn()` gives the loop a turn. Counted among the
 * runs under way until `close()`.
 */
export class SliceClock {
  private since = performance.now();
  private open = true;

  constructor() {
    running++;
  }

  get due(): boolean {
    return performance.now() - this.since >= Math.max(MIN_SLICE_MS, SLICE_MS / running);
  }

  async turn(): Promise<void> {
    await new Promise<void>((resolve) => setImmediate(resolve));
    this.since = performance.now();
  }

  close(): void {
    if (this.open) running--;
    this.open = false;
  }
}

/** Runs `steps` to the end on this turn of the event loop. */
export function drain<T>(steps: Steps<T>): T {
  for (;;) {
    const r = steps.next();
    if (r.done === true) return r.value;
  }
}

/** Runs `steps` to the end, a turn of the event loop (and an abort check) between slices. */
export async function drainSliced<T>(steps: Steps<T>, signal: AbortSignal | undefined, what: string): Promise<T> {
  const clock = new SliceClock();
  try {
    for (;;) {
      const r = steps.next();
      if (r.done === true) return r.value;
      if (clock.due) {
        await clock.turn();
        throwIfAborted(signal, what);
      }
    }
  } finally {
    clock.close();
  }
}
