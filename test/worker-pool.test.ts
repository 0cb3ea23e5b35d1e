import { test } from 'node:test';
import assert from 'node:assert/strict';
import { WorkerPool } from '../src/workers/worker-pool.js';
import { isPackwrightError } from '../src/errors/packwright-error.js';
import type { TestTasks } from './helpers/test-tasks-worker.js';

const SCRIPT = new URL('./helpers/test-tasks-worker.js', import.meta.url);

function withPool(count: number, body: (pool: WorkerPool<TestTasks>) => Promise<void>): () => Promise<void> {
  return async () => {
    const pool = new WorkerPool<TestTasks>(SCRIPT, count);
    try {
      await body(pool);
    } finally {
      await pool.close();
    }
  };
}

const failsWith = (code: string, text: RegExp) => (e: unknown): boolean => isPackwrightError(e) && e.code === code && text.test(e.message);

test('a pool runs registered tasks by name, with their replies and streamed items', withPool(2, async (pool) => {
  assert.deepEqual(await pool.runAll('double', 21), [42, 42]);
  const items: number[] = [];
  assert.equal(await pool.run(1, 'count', 5, (i) => items.push(i)), 'counted');
  assert.deepEqual(items, [0, 1, 2, 3, 4]);
}));

test('a task\'s packwright error comes back with its code, file and offset; any other error as WORKER_FAILED', withPool(1, async (pool) => {
  await assert.rejects(pool.run(0, 'corrupt', undefined), (e: unknown) => isPackwrightError(e, 'PACK_CORRUPT') && e.file === 'x.pack' && e.offset === 12);
  await assert.rejects(pool.run(0, 'plain', undefined), failsWith('WORKER_FAILED', /TypeError: not a packwright error/));
  // The thread survives a task's error and takes the next one.
  assert.equal(await pool.run(0, 'double', 4), 8);
}));

test('an unknown task name is an error reply, not a hang', withPool(1, async (pool) => {
  await assert.rejects((pool as unknown as WorkerPool<Record<string, never>>).run(0, 'nope', undefined as never), failsWith('WORKER_FAILED', /hosts no task 'nope'/));
}));

test('a thread that exits mid-task rejects it with WORKER_FAILED, and later requests to it at once', withPool(2, async (pool) => {
  await assert.rejects(pool.run(0, 'exit', 3), failsWith('WORKER_FAILED', /worker 0 exited \(code 3\) while running task 'exit'/));
  await assert.rejects(pool.run(0, 'double', 1), failsWith('WORKER_FAILED', /worker 0 exited/));
  // runAll reports the failure instead of waiting for the dead thread; the other still works.
  await assert.rejects(pool.runAll('double', 1), failsWith('WORKER_FAILED', /exited/));
  assert.equal(await pool.run(1, 'double', 5), 10);
}));

test('closing the pool (the threads killed) rejects the requests still running', async () => {
  const pool = new WorkerPool<TestTasks>(SCRIPT, 1);
  const running = pool.run(0, 'sleep', 10_000);
  const started = Date.now();
  const closing = pool.close();
  await assert.rejects(running, failsWith('WORKER_FAILED', /while running task 'sleep'/));
  await closing;
  assert.ok(Date.now() - started < 5000, 'terminate does not wait for the task');
});
