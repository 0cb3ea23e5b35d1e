/** The script of index-pack's worker threads: it hosts the resolve tasks (resolve-tasks.ts). */
import { hostTasks } from '../workers/task-host.js';
import { resolveTasks } from './resolve-tasks.js';

hostTasks(resolveTasks);
