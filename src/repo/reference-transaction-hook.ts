import type { RefTransactionState } from '../refs/ref-transaction.js';
import { findHook } from './find-hook.js';
import { childProcess } from './lazy-child-process.js';
import type { Repository } from './repository.js';

/**
 * git's reference-transaction hook for a ref transaction's `onStateChange`, or undefined when the
 * repository has none: run with the step as its argument and the changed refs on stdin, in the
 * work tree's top (the git directory when bare), its output to stderr as git sends it. It says
 * yes (lets a `prepared` transaction go on) when it exits 0.
 */
export function referenceTransactionHook(repo: Repository): ((state: RefTransactionState, lines: string) => boolean) | undefined {
  const hook = findHook(repo, 'reference-transaction');
  if (hook === undefined) return undefined;
  return (state, lines) => {
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(repo.env)) if (v !== undefined) env[k] = v;
    const run = childProcess().spawnSync(hook, [state], { cwd: repo.workTree ?? repo.gitDir, env, input: lines, stdio: ['pipe', 2, 2] });
    return run.status === 0;
  };
}
