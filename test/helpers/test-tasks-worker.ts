/** A worker script for the pool's tests: tasks that reply, stream, throw, exit and block. */
import { hostTasks } from '../../src/workers/task-host.js';
import { PackwrightError } from '../../src/errors/packwright-error.js';
import type { Task } from '../../src/workers/task.js';

export const testTasks = {
  double: { run: (n: number): number => n * 2 } satisfies Task<number, number>,
  count: {
    run(n: number, emit): string {
      for (let i = 0; i < n; i++) emit(i);
      return 'counted';
    },
  } satisfies Task<number, string, number>,
  corrupt: {
    run(): never {
      throw new PackwrightError('PACK_CORRUPT', 'bad entry at offset 12', { file: 'x.pack', offset: 12 });
    },
  } satisfies Task<void, never>,
  plain: {
    run(): never {
      throw new TypeError('not a packwright error');
    },
  } satisfies Task<void, never>,
  exit: {
    run(code: number): void {
      process.exit(code);
    },
  } satisfies Task<number, void>,
  /** Blocks the thread for `ms` (a long task, to be interrupted). */
  sleep: {
    run(ms: number): void {
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
    },
  } satisfies Task<number, void>,
};

export type TestTasks = typeof testTasks;

hostTasks(testTasks);
