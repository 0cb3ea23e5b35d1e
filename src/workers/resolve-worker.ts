import { parentPort } from 'node:worker_threads';
import { serializeError } from '../errors/packwright-error.js';
import { CONTROL_ABORT, Resolver, type ResolveState } from '../resolve/resolver.js';
import { prefault } from './prefault.js';

export type ResolveWorkerMessage =
  | { kind: 'prefault'; buffer: Uint8Array; states: Int32Array }
  | { kind: 'resolve'; state: ResolveState };

/**
 * A resolver thread. 'prefault' (no reply) touches a shared pack buffer's pages ahead of pass 1;
 * 'resolve' takes roots until none are left and replies with statistics, or with its error
 * serialised (errors lose `name` and `code` across postMessage).
 */
parentPort?.on('message', (message: ResolveWorkerMessage) => {
  if (message.kind === 'prefault') {
    prefault(message.buffer, message.states);
    return;
  }
  const state = message.state;
  let resolver: Resolver | undefined;
  try {
    resolver = new Resolver(state);
    resolver.run();
    parentPort?.postMessage({ ok: true, stats: resolver.stats });
  } catch (e) {
    // Tell the other threads to stop too.
    Atomics.store(state.control, CONTROL_ABORT, 1);
    parentPort?.postMessage({ ok: false, error: serializeError(e) });
  } finally {
    resolver?.close();
  }
});
