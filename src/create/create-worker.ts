/** The script of pack generation's worker threads: it hosts the tree reads and the delta search (create-tasks.ts). */
import { hostTasks } from '../workers/task-host.js';
import { createTasks } from './create-tasks.js';

hostTasks(createTasks);
