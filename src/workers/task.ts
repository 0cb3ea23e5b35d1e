import type { Transferable } from 'node:worker_threads';

/**
 * A kind of work a pool's threads can do, by name. A worker script registers the tasks it hosts
 * (`hostTasks`); the pool that runs the script sends them requests by name. The pool knows no
 * task: index-pack's resolver registers its own (resolve/resolve-tasks.ts), and so will pack
 * generation.
 *
 * `run` gets the request and an `emit` for intermediate items (a task that streams results, like
 * a helper scanning regions of a pack, emits one per region; `transfer` lists buffers to move, not
 * copy); its return value is the reply. It may throw: the error is serialised (errors lose their
 * class and `code` across `postMessage`) and rebuilt on the pool's side.
 */
export interface Task<Request, Reply, Item = never> {
  run(request: Request, emit: (item: Item, transfer?: Transferable[]) => void): Reply;
}

/** The tasks one worker script hosts, by name. */
export type TaskRegistry = Record<string, Task<never, unknown, unknown>>;

export type RequestOf<T> = T extends Task<infer Q, unknown, unknown> ? Q : never;
export type ReplyOf<T> = T extends Task<never, infer R, unknown> ? R : never;
export type ItemOf<T> = T extends Task<never, unknown, infer I> ? I : never;

/** What the pool sends: a task's name, the request, and a sequence number for its replies. */
export interface TaskMessage {
  id: number;
  task: string;
  request: unknown;
}

/** What a worker sends back, zero or more items, then a reply or an error. */
export type TaskReply =
  | { id: number; kind: 'item'; item: unknown }
  | { id: number; kind: 'reply'; reply: unknown }
  | { id: number; kind: 'error'; error: import('../errors/packwright-error.js').SerializedError };
