import { parentPort } from 'node:worker_threads';
import { serializeError } from '../errors/packwright-error.js';
import { CONTROL_ABORT, Resolver, type ResolveState } from '../resolve/resolver.js';
import { prefault } from './prefault.js';
import { scanRegionsFromTheBack, type RegionsRequest } from '../resolve/scan-region.js';

export type ResolveWorkerMessage =
  | { kind: 'prefault'; buffer: Uint8Array; states: Int32Array }
  | { kind: 'scan-regions'; request: RegionsRequest }
  | { kind: 'resolve'; state: ResolveState };

/**
 * A resolver thread. 'prefault' (no reply) touches a shared pack buffer's pages ahead of pass 1;
 * 'scan-regions' scans regions of an in-memory pack for pass 1 from the back (a reply per region);
 * 'resolve' takes roots until none are left and replies with statistics, or with its error
 * serialised (errors lose `name` and `code` across postMessage).
 */
parentPort?.on('message', (message: ResolveWorkerMessage) => {
  if (message.kind === 'prefault') {
    prefault(message.buffer, message.states);
    return;
  }
  if (message.kind === 'scan-regions') {
    try {
      scanRegionsFromTheBack(message.request, (index, r) => {
        const transfer = [r.offsets, r.types, r.sizes, r.headerLengths, r.crc32, r.ids, r.baseOffsets, r.refIds].map((a) => a.buffer as ArrayBuffer);
        parentPort?.postMessage({ ok: true, item: { index, region: r } }, transfer);
      });
      parentPort?.postMessage({ ok: true, done: true });
    } catch (e) {
      parentPort?.postMessage({ ok: false, error: serializeError(e) });
    }
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
