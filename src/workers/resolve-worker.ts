import { parentPort } from 'node:worker_threads';
import { serializeError } from '../errors/packwright-error.js';
import { CONTROL_ABORT, Resolver, type ResolveState } from '../resolve/resolver.js';

/**
 * A resolver thread: receives the shared state once, takes roots until none are left, and reports
 * its statistics (or its error, serialised: errors lose `name` and `code` across postMessage).
 */
parentPort?.once('message', (state: ResolveState) => {
  const resolver = new Resolver(state);
  try {
    resolver.run();
    parentPort?.postMessage({ ok: true, stats: resolver.stats });
  } catch (e) {
    // Tell the other threads to stop too.
    Atomics.store(state.control, CONTROL_ABORT, 1);
    parentPort?.postMessage({ ok: false, error: serializeError(e) });
  } finally {
    resolver.close();
  }
});
