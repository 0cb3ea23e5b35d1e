// git's pre-push hook (githooks(5), transport.c's run_pre_push_hook): run before anything is
// sent, with the remote's name and URL as arguments and a line a ref on stdin; a failure stops the
// push.
import { findHook } from '../repo/find-hook.js';
import { childProcess } from '../repo/lazy-child-process.js';
import type { Repository } from '../repo/repository.js';

/** One ref a push is about to send, as a pre-push hook reads it. */
export interface PrePushUpdate {
  /** What is pushed as it was named (`HEAD`, `refs/heads/main`, `HEAD~`), or `(delete)`. */
  localRef: string;
  /** The id sent (zeros for a deletion). */
  localOid: string;
  remoteRef: string;
  /** The server's id now (zeros for a new ref). */
  remoteOid: string;
}

/**
 * Runs the repository's `pre-push` hook when it has one (core.hooksPath, else hooks/), in the work
 * tree (the git directory when bare) with the repository's environment, as git runs it. Resolves
 * to its exit status (0 when there is none). A hook that reads none of its input is not failed for
 * it (git ignores SIGPIPE there).
 */
export function runPrePushHook(repo: Repository, remoteName: string, url: string, updates: readonly PrePushUpdate[], output: (chunk: Buffer, stream: 'stdout' | 'stderr') => void): Promise<number> {
  const path = findHook(repo, 'pre-push');
  if (path === undefined) return Promise.resolve(0);
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(repo.env)) if (v !== undefined) env[k] = v;
  return new Promise((resolve) => {
    const child = childProcess().spawn(path, [remoteName, url], { cwd: repo.workTree ?? repo.gitDir, env, stdio: ['pipe', 'pipe', 'pipe'] });
    child.stdout.on('data', (chunk: Buffer) => output(chunk, 'stdout'));
    child.stderr.on('data', (chunk: Buffer) => output(chunk, 'stderr'));
    child.stdin.on('error', () => undefined);
    child.stdin.end(updates.map((u) => `${u.localRef} ${u.localOid} ${u.remoteRef} ${u.remoteOid}\n`).join(''));
    // A hook that cannot be started fails the push, as git's start_command failure does.
    child.on('error', () => resolve(1));
    child.on('close', (code, signal) => resolve(code ?? (signal !== null ? 128 : 1)));
  });
}
