/**
 * The script of fsck's worker threads, and index-pack's when it checks: the resolve tasks, with
 * the pack checker and index-pack's visitor registered so each resolver thread checks the objects
 * it resolves (pack-checker.ts) and compares them with a repository's copies (index-pack-visitor.ts).
 */
import { hostTasks } from '../workers/task-host.js';
import { resolveTasks } from '../resolve/resolve-tasks.js';
import './pack-checker.js';
import './index-pack-visitor.js';

hostTasks(resolveTasks);
