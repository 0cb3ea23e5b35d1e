import { parentPort } from 'node:worker_threads';
import { serializeError } from '../errors/packwright-error.js';
import type { TaskMessage, TaskRegistry, TaskReply } from './task.js';

/**
 * Runs in a worker script: answers the pool's task messages with the registered tasks. A task
 * that throws replies with its error serialised; an unknown task name is an error reply too, so
 * the pool's promise always settles.
 */
export function hostTasks(tasks: TaskRegistry): void {
  const port = parentPort;
  if (port === null) throw new Error('hostTasks runs in a worker thread');
  port.on('message', (message: TaskMessage) => {
    const post = (reply: TaskReply, transfer?: readonly import('node:worker_threads').Transferable[]): void => port.postMessage(reply, transfer);
    const task = Object.hasOwn(tasks, message.task) ? tasks[message.task] : undefined;
    try {
      if (task === undefined) throw new Error(`this worker hosts no task '${message.task}' (it hosts ${Object.keys(tasks).join(', ')})`);
      const reply = (task.run as (request: unknown, emit: (item: unknown, transfer?: readonly import('node:worker_threads').Transferable[]) => void) => unknown)(
        message.request,
        (item, transfer) => post({ id: message.id, kind: 'item', item }, transfer),
      );
      post({ id: message.id, kind: 'reply', reply });
    } catch (e) {
      post({ id: message.id, kind: 'error', error: serializeError(e) });
    }
  });
}
