/**
 * index-pack works on the calling thread too (pass 1, and a share of pass 2), so it runs in
 * slices of about this long and gives the event loop a turn between them: an AbortSignal fired by
 * a timer, a server's other requests and progress output then wait at most a slice. A turn costs
 * tens of microseconds, 25 times a second.
 */
export const SLICE_MS = 40;

/** Resolves after the event loop has run its pending timers and I/O callbacks once. */
export function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
