// A new bare repository, as `git init --bare` makes one (the files its default template gives,
// without the sample hooks): what a clone fills.
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PackwrightError } from '../errors/packwright-error.js';
import type { ObjectFormat } from '../hash/object-format.js';

/** The config `git init --bare` writes (repositoryformatversion 1 and the extension for SHA-256). */
export function initialConfig(format: ObjectFormat): string {
  const sha256 = format === 'sha256';
  return `[core]\n\trepositoryformatversion = ${sha256 ? 1 : 0}\n\tfilemode = true\n\tbare = true\n${sha256 ? '[extensions]\n\tobjectformat = sha256\n' : ''}`;
}

/**
 * Makes `path` a bare repository (HEAD on `initialBranch`, the config, description, info/exclude,
 * the refs and objects directories). The directory must be missing or empty, as git requires of
 * a clone's destination.
 */
export function initBareRepository(path: string, format: ObjectFormat, initialBranch = 'master'): void {
  let entries: string[] = [];
  try {
    entries = readdirSync(path);
  } catch {
    // Not there yet: made below.
  }
  if (entries.length > 0) throw new PackwrightError('INVALID_ARGUMENT', `destination path '${path}' already exists and is not an empty directory.`);
  for (const dir of ['branches', 'hooks', 'info', 'objects/info', 'objects/pack', 'refs/heads', 'refs/tags']) mkdirSync(join(path, dir), { recursive: true });
  writeFileSync(join(path, 'HEAD'), `ref: refs/heads/${initialBranch}\n`);
  writeFileSync(join(path, 'config'), initialConfig(format));
  writeFileSync(join(path, 'description'), "Unnamed repository; edit this file 'description' to name the repository.\n");
  writeFileSync(join(path, 'info', 'exclude'), "# git ls-files --others --exclude-from=.git/info/exclude\n# Lines that start with '#' are comments.\n# For a project mostly in C, the following would be a good set of\n# exclude patterns (uncomment them if you want to use them):\n# *.[oa]\n# *~\n");
}
