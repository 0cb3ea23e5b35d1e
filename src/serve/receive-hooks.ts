// git's hook scripts around a push (githooks(5)): pre-receive, update, post-receive and
// post-update, found where git finds them and run as git runs them: in the git directory with
// GIT_DIR=., their standard output and error together going to the pusher (side band 2).
import { childProcess } from '../repo/lazy-child-process.js';
import { isAbsolute, relative } from 'node:path';
import type { Repository } from '../repo/repository.js';
import { findHook } from '../repo/find-hook.js';

export type ReceiveHookName = 'pre-receive' | 'update' | 'post-receive' | 'post-update' | 'push-to-checkout';

export interface HookRun {
  args?: readonly string[];
  /** What the hook reads on stdin (nothing: stdin is closed at once). */
  stdin?: string;
  /** Variables set (a string) or removed (undefined) over the repository's environment. */
  env?: Record<string, string | undefined>;
  /** Where the hook's stdout and stderr go, in the order written. */
  output: (text: Buffer) => void | Promise<void>;
  signal?: AbortSignal | undefined;
}

/**
 * Runs hook `name` when the repository has one, and resolves to its exit status (a signal counts
 * as failure, 128 + its number as git reports it), or undefined when there is no hook.
 */
export function runHook(repo: Repository, name: ReceiveHookName, run: HookRun): Promise<number | undefined> {
  const path = findHook(repo, name);
  if (path === undefined) return Promise.resolve(undefined);
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries({ ...repo.env, GIT_DIR: '.', ...run.env })) if (v !== undefined) env[k] = v;
  return new Promise((resolve, reject) => {
    // Through sh only to send stderr where stdout goes (git's stdout_to_stderr), in one pipe, so
    // the lines arrive in the order the hook wrote them.
    // git names a hook of the repository by its path from the git directory (`hooks/update`), as its $0 shows.
    const within = relative(repo.gitDir, path);
    const named = within !== '' && !within.startsWith('..') && !isAbsolute(within) ? within : path;
    const child = childProcess().spawn('/bin/sh', ['-c', 'exec "$0" "$@" 2>&1', named, ...(run.args ?? [])], {
      cwd: repo.gitDir,
      env,
      stdio: ['pipe', 'pipe', 'inherit'],
      ...(run.signal !== undefined ? { signal: run.signal } : {}),
    });
    let writing: Promise<void> = Promise.resolve();
    child.stdout.on('data', (chunk: Buffer) => {
      child.stdout.pause();
      writing = writing.then(() => run.output(chunk)).finally(() => child.stdout.resume());
    });
    // A hook that does not read its input closes the pipe: git ignores SIGPIPE there, and so does this.
    child.stdin.on('error', () => undefined);
    child.stdin.end(run.stdin ?? '');
    child.on('error', reject);
    child.on('close', (code, signal) => {
      writing.then(() => resolve(code ?? (signal !== null ? 128 : 1)), reject);
    });
  });
}
