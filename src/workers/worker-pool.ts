import { createRequire } from 'node:module';
import type { Worker } from 'node:worker_threads';
import { deserializeError, isPackwrightError, type SerializedError } from '../errors/packwright-error.js';

/**
 * `node:worker_threads` is loaded when the first pool starts, not when the CLI bundle loads: it
 * pulls in several of Node's internal modules that commands without workers (cat-file) would pay
 * for at every start.
 */
function loadWorkerThreads(): typeof import('node:worker_threads') {
  return createRequire(import.meta.url)('node:worker_threads') as typeof import('node:worker_threads');
}

export interface WorkerReply<T> {
  ok: boolean;
  stats?: T;
  error?: SerializedError;
}

/**
 * Worker threads started ahead of need: a worker takes ~45 ms to boot (DESIGN.md), so index-pack
 * starts them before pass 1 and they are ready when the delta tree is.
 */
export class WorkerPool {
  private workers: Worker[];

  constructor(script: URL, count: number) {
    // Resolver threads allocate little on the JS heap (buffers are external memory), so a small
    // young generation is enough and keeps each thread's footprint down (V8's default reserves
    // up to 3 × 16 MiB of semi-spaces per isolate).
    const { Worker: WorkerThread } = loadWorkerThreads();
    this.workers = Array.from({ length: count }, () => new WorkerThread(script, { resourceLimits: { maxYoungGenerationSizeMb: 4 } }));
    for (const w of this.workers) w.unref();
    this.size = count;
  }

  readonly size: number;

  /** Sends a message that expects no reply to worker `i`. */
  post(i: number, message: unknown): void {
    this.workers[i]?.postMessage(message);
  }

  /**
   * Sends `message` to worker `i`, which replies several times: each `{ ok: true, item }` goes to
   * `onItem`, and `{ ok: true, done: true }` ends it.
   */
  stream<T>(i: number, message: unknown, onItem: (item: T) => void): Promise<void> {
    const w = this.workers[i] as Worker;
    return new Promise<void>((resolve, reject) => {
      const listener = (reply: WorkerReply<T> & { item?: T; done?: boolean }): void => {
        if (!reply.ok) {
          w.off('message', listener);
          reject(deserializeError(reply.error as SerializedError));
        } else if (reply.done) {
          w.off('message', listener);
          resolve();
        } else {
          onItem(reply.item as T);
        }
      };
      w.on('message', listener);
      w.postMessage(message);
    });
  }

  /** Sends `message` to every worker and resolves with each one's single reply. */
  async runAll<T>(message: unknown): Promise<T[]> {
    const replies = this.workers.map((w) => new Promise<T>((resolve, reject) => {
      w.once('message', (reply: WorkerReply<T>) => {
        if (reply.ok) resolve(reply.stats as T);
        else reject(deserializeError(reply.error as SerializedError));
      });
      w.once('error', reject);
      w.postMessage(message);
    }));
    const settled = await Promise.allSettled(replies);
    // One thread's real error makes the others stop with ABORTED: report the real one.
    const failures = settled.filter((r): r is PromiseRejectedResult => r.status === 'rejected').map((r) => r.reason as unknown);
    if (failures.length > 0) throw failures.find((e) => !isPackwrightError(e, 'ABORTED')) ?? failures[0];
    return settled.map((r) => (r as PromiseFulfilledResult<T>).value);
  }

  /** Stops every worker; calling it again does nothing. */
  async close(): Promise<void> {
    const workers = this.workers.splice(0);
    await Promise.all(workers.map((w) => w.terminate()));
  }
}

export const RESOLVE_WORKER = new URL('./resolve-worker.js', import.meta.url);
