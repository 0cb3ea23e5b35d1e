/**
 * The script of fsck's worker threads: index-pack's resolve tasks, with the pack checker
 * registered so each resolver thread checks the objects it resolves (pack-checker.ts).
 */
import { hostTasks } from '../workers/task-host.js';
import { resolveTasks } from '../resolve/resolve-tasks.js';
import './pack-checker.js';

hostTasks(resolveTasks);
