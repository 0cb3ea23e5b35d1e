/** The script of the store's worker threads: it hosts the store tasks (store-tasks.ts). */
import { hostTasks } from '../workers/task-host.js';
import { storeTasks } from './store-tasks.js';

hostTasks(storeTasks);
