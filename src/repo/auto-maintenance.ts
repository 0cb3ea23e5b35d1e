import type { Repository } from './repository.js';
import { runGit } from './run-git.js';

/**
 * What `git fetch` does last (run_auto_maintenance): `git maintenance run --auto`, `--quiet` or
 * `--no-quiet`, in the repository, unless `maintenance.auto` is false. Whether anything is repacked
 * is git's maintenance's to judge (gc.auto, gc.autoPackLimit, its tasks); packwright runs git's when
 * it is installed, as its receive-pack runs git's `gc --auto`, and does nothing otherwise. The
 * store then lists its packs again. Resolves to git's exit status (0 when skipped, 127 without git).
 */
export async function runAutoMaintenance(repo: Repository, options: { quiet: boolean; stdout: (chunk: Buffer) => void; stderr: (chunk: Buffer) => void }): Promise<number> {
  if (repo.config.getBool('maintenance.auto') === false) return 0;
  const status = await runGit(['maintenance', 'run', '--auto', options.quiet ? '--quiet' : '--no-quiet'], repo.gitDir, { ...repo.env, GIT_DIR: repo.gitDir }, options.stdout, options.stderr);
  repo.store.refresh();
  return status;
}
