export { WorkerPool } from './worker-pool.js';
export { hostTasks } from './task-host.js';
export type { Task, TaskRegistry, RequestOf, ReplyOf, ItemOf } from './task.js';
