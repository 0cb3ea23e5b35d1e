/** The script of pack generation's worker threads: it hosts the delta search (delta-tasks.ts). */
import { hostTasks } from '../workers/task-host.js';
import { deltaTasks } from './delta-tasks.js';

hostTasks(deltaTasks);
