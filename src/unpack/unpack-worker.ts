/**
 * The script of unpack-objects' worker threads: index-pack's resolve tasks, with the visitor that
 * writes each resolved object as a loose one registered (unpack-visitor.ts).
 */
import { hostTasks } from '../workers/task-host.js';
import { resolveTasks } from '../resolve/resolve-tasks.js';
import './unpack-visitor.js';

hostTasks(resolveTasks);
