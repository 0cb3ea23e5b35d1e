import { createRequire } from 'node:module';
import type { Worker } from 'node:worker_threads';
import { deserializeError, isPackwrightError, PackwrightError } from '../errors/packwright-error.js';
import type { ItemOf, ReplyOf, RequestOf, TaskMessage, TaskRegistry, TaskReply } from './task.js';

/**
 * `node:worker_threads` is loaded when the first pool starts, not when the CLI bundle loads: it
 * pulls in several of Node's internal modules that commands without workers (cat-file) would pay
 * for at every start.
 */
function loadWorkerThreads(): typeof import('node:worker_threads') {
  return createRequire(import.meta.url)('node:worker_threads') as typeof import('node:worker_threads');
}

interface Pending {
  task: string;
  resolve: (reply: unknown) => void;
  reject: (error: unknown) => void;
  onItem: ((item: unknown) => void) | undefined;
}

interface Thread {
  worker: Worker;
  pending: Map<number, Pending>;
  /** Why the thread can take no more work (it exited or failed), once it cannot. */
  gone: PackwrightError | undefined;
}

/**
 * Worker threads running one script that hosts a registry of tasks (`hostTasks`), started ahead of
 * need: a worker takes ~45 ms to boot (docs/ARCHITECTURE.md, measured facts), so index-pack starts them before pass 1 and
 * they are ready when the delta tree is. Requests are typed by the registry: `run('resolve', …)`
 * takes that task's request and resolves with its reply.
 *
 * Every request settles: with the reply, with the task's own error (rebuilt with its code), or
 * with WORKER_FAILED when the thread throws outside a task, runs out of memory, exits or is
 * terminated while the request is pending. A task that must stop its peers when one fails does so
 * through its own shared state (the resolver's abort flag); the pool never waits on a thread that
 * is gone.
 */
export class WorkerPool<Tasks extends TaskRegistry> {
  private readonly threads: Thread[];
  private nextId = 0;
  readonly size: number;

  constructor(script: URL, count: number) {
    // Worker threads here allocate little on the JS heap (buffers are external memory), so a small
    // young generation is enough and keeps each thread's footprint down (V8's default reserves
    // up to 3 × 16 MiB of semi-spaces per isolate).
    const { Worker: WorkerThread } = loadWorkerThreads();
    this.threads = Array.from({ length: count }, (_, i) => {
      const worker = new WorkerThread(script, { resourceLimits: { maxYoungGenerationSizeMb: 4 } });
      const thread: Thread = { worker, pending: new Map(), gone: undefined };
      worker.on('message', (reply: TaskReply) => this.settle(thread, reply));
      worker.on('error', (e: Error) => this.fail(thread, `worker ${i} failed: ${e.message}`, e));
      worker.on('exit', (code: number) => this.fail(thread, `worker ${i} exited (code ${code})`));
      // An idle thread does not keep the process alive; one with work pending does (see `run`).
      worker.unref();
      return thread;
    });
    this.size = count;
  }

  /**
   * Runs `task` on worker `i`. Items the task emits go to `onItem` as they come; the promise
   * resolves with the task's reply.
   */
  run<K extends keyof Tasks & string>(
    i: number, task: K, request: RequestOf<Tasks[K]>, onItem?: (item: ItemOf<Tasks[K]>) => void,
  ): Promise<ReplyOf<Tasks[K]>> {
    const thread = this.threads[i];
    if (thread === undefined) return Promise.reject(new PackwrightError('INVALID_ARGUMENT', `the pool has no worker ${i} (it has ${this.size})`));
    if (thread.gone !== undefined) return Promise.reject(thread.gone);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      if (thread.pending.size === 0) thread.worker.ref();
      thread.pending.set(id, { task, resolve: resolve as (reply: unknown) => void, reject, onItem: onItem as ((item: unknown) => void) | undefined });
      const message: TaskMessage = { id, task, request };
      thread.worker.postMessage(message);
    });
  }

  /**
   * Runs `task` with the same request on every worker (or the first `count`) and resolves with each one's reply. When
   * some fail, it rejects with the first real error: a failing task makes its peers stop with
   * ABORTED, and that is not the news.
   */
  async runAll<K extends keyof Tasks & string>(task: K, request: RequestOf<Tasks[K]>, count = this.size): Promise<ReplyOf<Tasks[K]>[]> {
    const settled = await Promise.allSettled(this.threads.slice(0, count).map((_, i) => this.run(i, task, request)));
    const failures = settled.filter((r): r is PromiseRejectedResult => r.status === 'rejected').map((r) => r.reason as unknown);
    if (failures.length > 0) throw failures.find((e) => !isPackwrightError(e, 'ABORTED')) ?? failures[0];
    return settled.map((r) => (r as PromiseFulfilledResult<ReplyOf<Tasks[K]>>).value);
  }

  /** Stops every worker (pending requests reject with WORKER_FAILED); calling it again does nothing. */
  async close(): Promise<void> {
    const threads = this.threads.splice(0);
    await Promise.all(threads.map((t) => t.worker.terminate()));
  }

  private settle(thread: Thread, reply: TaskReply): void {
    const p = thread.pending.get(reply.id);
    if (p === undefined) return;
    if (reply.kind === 'item') {
      p.onItem?.(reply.item);
      return;
    }
    thread.pending.delete(reply.id);
    if (thread.pending.size === 0) thread.worker.unref();
    if (reply.kind === 'reply') p.resolve(reply.reply);
    else p.reject(deserializeError(reply.error));
  }

  private fail(thread: Thread, why: string, cause?: Error): void {
    thread.gone ??= new PackwrightError('WORKER_FAILED', why, cause === undefined ? {} : { cause });
    for (const [id, p] of thread.pending) {
      thread.pending.delete(id);
      p.reject(new PackwrightError('WORKER_FAILED', `${why} while running task '${p.task}'`, cause === undefined ? {} : { cause }));
    }
  }
}
