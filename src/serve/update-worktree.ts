// receive.denyCurrentBranch=updateInstead (git's update_worktree): a push to the branch a work
// tree has checked out updates that work tree too, when it is clean. packwright has no work tree
// code of its own: as git's receive-pack does, it runs git's (update-index, diff-files,
// diff-index, read-tree), or the repository's push-to-checkout hook in their place.
import { runGit } from '../repo/run-git.js';
import { resolve } from 'node:path';
import type { CheckedOut } from '../repo/checked-out-branch.js';
import type { Repository } from '../repo/repository.js';
import { runHook } from './receive-hooks.js';

/**
 * Updates `worktree` to the commit `newHex` before its branch moves there: the push-to-checkout
 * hook when the repository has one, else git's push_to_deploy. Resolves to git's reason for
 * refusing, or undefined when the work tree was updated.
 */
export async function updateWorktree(repo: Repository, newHex: string, worktree: CheckedOut, output: (text: Buffer) => void | Promise<void>, hooks: boolean): Promise<string | undefined> {
  if (worktree.bare) return 'denyCurrentBranch = updateInstead needs a worktree';
  const env = { ...repo.env, GIT_DIR: resolve(worktree.gitDir) };
  if (hooks) {
    const status = await runHook(repo, 'push-to-checkout', { args: [newHex], env: { GIT_DIR: env.GIT_DIR, GIT_WORK_TREE: resolve(worktree.path) }, output });
    if (status !== undefined) return status === 0 ? undefined : 'push-to-checkout hook declined';
  }
  const say = (text: Buffer): void => void output(text);
  if (await runGit(['update-index', '-q', '--ignore-submodules', '--refresh'], worktree.path, env, say) !== 0) return 'Up-to-date check failed';
  if (await runGit(['diff-files', '--quiet', '--ignore-submodules', '--'], worktree.path, env, say) !== 0) return 'Working directory has unstaged changes';
  // Against HEAD, or the empty tree while the branch is unborn.
  const head = repo.refs.resolve('HEAD') !== undefined ? 'HEAD' : repo.format === 'sha1' ? '4b825dc642cb6eb9a060e54bf8d69288fbee4904' : '6ef19b41225c5369f1c104d45d8d85efa9b057b53b14b4b9b939dd74decc5321';
  if (await runGit(['diff-index', '--quiet', '--cached', '--ignore-submodules', head, '--'], repo.gitDir, env, say) !== 0) return 'Working directory has staged changes';
  if (await runGit(['read-tree', '-u', '-m', newHex], worktree.path, env, say) !== 0) return 'Could not update working tree to new HEAD';
  return undefined;
}
