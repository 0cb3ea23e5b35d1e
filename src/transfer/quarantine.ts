// receive-pack's quarantine (git's tmp-objdir.c): the objects of a push land in a temporary
// object directory inside the repository's own, which the repository's readers do not look in,
// and move in only once the push is accepted. Everything that runs before that (the connectivity
// check, pre-receive hooks, a JavaScript policy) sees the repository's objects and the quarantined
// ones together, through GIT_OBJECT_DIRECTORY and GIT_ALTERNATE_OBJECT_DIRECTORIES.
import { linkSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, statSync, unlinkSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { PackwrightError } from '../errors/packwright-error.js';
import { Repository } from '../repo/repository.js';

/** git's order of a pack's files when they move: the .keep first, the .idx last, so no reader finds an index without its pack. */
function packCopyPriority(name: string): number {
  if (!name.startsWith('pack')) return 0;
  if (name.endsWith('.keep')) return 1;
  if (name.endsWith('.pack')) return 2;
  if (name.endsWith('.rev')) return 3;
  if (name.endsWith('.idx')) return 4;
  return 5;
}

/**
 * A temporary object directory inside a repository's (git's tmp_objdir): create it, receive into
 * its `repository` view, then `migrate` what it holds into the repository when accepted, or
 * `destroy` it.
 */
export class Quarantine {
  private migrated = false;
  private view: Repository | undefined;

  private constructor(
    /** The repository the objects are for. */
    readonly repo: Repository,
    /** The temporary object directory (git's GIT_QUARANTINE_PATH). */
    readonly path: string,
    /** The repository's own objects directory, where the objects move. */
    readonly objectsDir: string,
  ) {}

  /**
   * Creates `objects/tmp_objdir-<prefix>-XXXXXX` with its `pack/` directory. The `tmp_` name is
   * what git prune recognises: a quarantine a killed server leaves behind is removed by the next
   * prune, and no reader ever looks inside it.
   */
  static create(repo: Repository, prefix = 'incoming'): Quarantine {
    const objectsDir = resolve(repo.store.objectsDir);
    const path = mkdtempSync(join(objectsDir, `tmp_objdir-${prefix}-`));
    try {
      mkdirSync(join(path, 'pack'));
    } catch (e) {
      rmSync(path, { recursive: true, force: true });
      throw e;
    }
    return new Quarantine(repo, path, objectsDir);
  }

  /** The environment of a program that must see the quarantined objects (hooks; git's tmp_objdir_env). */
  get env(): Record<string, string> {
    const before = this.repo.env['GIT_ALTERNATE_OBJECT_DIRECTORIES'];
    // A path holding the separator (or starting with a quote) goes C-quoted, as git's env_append writes it.
    const own = this.objectsDir.includes(':') || this.objectsDir.startsWith('"') ? `"${this.objectsDir.replace(/[\\"]/g, (c) => `\\${c}`)}"` : this.objectsDir;
    return {
      GIT_ALTERNATE_OBJECT_DIRECTORIES: before !== undefined && before !== '' ? `${before}:${own}` : own,
      GIT_OBJECT_DIRECTORY: this.path,
      GIT_QUARANTINE_PATH: this.path,
    };
  }

  /**
   * The repository as a program in the quarantine sees it: its refs and configuration, and an
   * object store of the quarantined objects with the repository's as an alternate. Opened on
   * first use; closed with the quarantine.
   */
  get repository(): Repository {
    if (this.view === undefined) {
      if (this.migrated) throw new PackwrightError('INVALID_ARGUMENT', 'the quarantine was migrated already');
      this.view = Repository.openGitDir(this.repo.gitDir, { env: { ...this.repo.env, ...this.env }, defaultRefresh: 'on-miss' });
    }
    return this.view;
  }

  /**
   * Moves every quarantined file into the repository's objects directory (git's
   * tmp_objdir_migrate): directories first made, files linked into place (an object already there
   * is kept: it has the same name, so the same content), packs in git's order. The quarantine is
   * then removed. A failure leaves what did not move in the quarantine, for `destroy`.
   */
  migrate(): void {
    this.closeView();
    this.migrateDir(this.path, this.objectsDir);
    this.migrated = true;
    rmSync(this.path, { recursive: true, force: true });
  }

  private migrateDir(from: string, to: string): void {
    const names = readdirSync(from).sort((a, b) => packCopyPriority(a) - packCopyPriority(b) || (a < b ? -1 : a > b ? 1 : 0));
    for (const name of names) {
      const src = join(from, name);
      const dst = join(to, name);
      if (statSync(src).isDirectory()) {
        mkdirSync(dst, { recursive: true });
        this.migrateDir(src, dst);
        continue;
      }
      finalizeFile(src, dst);
    }
  }

  /** Removes the quarantine and what is left in it (a push refused, or one that failed). */
  destroy(): void {
    this.closeView();
    rmSync(this.path, { recursive: true, force: true });
  }

  private closeView(): void {
    this.view?.close();
    this.view = undefined;
  }
}

/** git's finalize_object_file: a hard link into place, the existing file kept; a rename where links cannot be made. */
function finalizeFile(src: string, dst: string): void {
  try {
    linkSync(src, dst);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') {
      unlinkSync(src);
      return;
    }
    if (code === 'EXDEV' || code === 'EPERM' || code === 'ENOTSUP' || code === 'EMLINK') {
      renameSync(src, dst);
      return;
    }
    throw new PackwrightError('IO_ERROR', `unable to move ${src} into ${dst}: ${(e as Error).message}`);
  }
  unlinkSync(src);
}
