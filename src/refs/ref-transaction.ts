// Writing refs as git's files backend does (refs/files-backend.c): every ref changed is locked
// by creating `<ref>.lock` exclusively, old values are checked under the locks, new values are
// written to the lock files and renamed over the refs; a deleted ref leaves loose and packed
// storage (packed-refs rewritten through `packed-refs.lock`); reflogs are appended as git writes
// them. Either every update of a transaction happens or none does, and every lock taken is
// removed on every way out.
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, renameSync, rmdirSync, statSync, unlinkSync, writeSync, appendFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { PackwrightError } from '../errors/packwright-error.js';
import { toHex } from '../hash/hex.js';
import { readFileIfPresent } from '../io/read-file-if-present.js';
import type { RefStore } from './ref-store.js';
import { isSafeRefname, isValidRefname } from './refname.js';

/** What a ref must be before an update: this id, absent (`'absent'`: a create), or anything (undefined). */
export type RefExpectation = Uint8Array | 'absent' | undefined;

/** Options of one update in a ref transaction: no-deref, the reflog message, whether to create a reflog. */
export interface RefUpdateOptions {
  /** Change a symbolic ref itself, not the ref it points to (git's --no-deref). */
  noDeref?: boolean | undefined;
  /** The reflog message (git's -m). */
  message?: string | undefined;
  /** Start a reflog for the ref even where core.logAllRefUpdates would not (true: git's --create-reflog), or not even where it would (false: --no-create-reflog). */
  createReflog?: boolean | undefined;
}

/**
 * Options of a ref transaction: the committer ident for the reflogs, core.logAllRefUpdates, whether it runs
 * in a quarantine, and lock timeouts.
 */
export interface RefTransactionOptions {
  /** The committer identity and time of reflog lines: `Name <email> <seconds> <+hhmm>`. */
  ident: string;
  /** core.logAllRefUpdates: false (only refs that have a reflog), true (HEAD, branches, remotes, notes), 'always'. */
  logAllRefUpdates: boolean | 'always';
  /**
   * Refuse every change (git inside a push's quarantine, GIT_QUARANTINE_PATH set: a hook's refs
   * must not name objects that may never be moved in).
   */
  quarantined?: boolean | undefined;
  /** How long to keep trying for a ref's lock another writer holds (git's core.filesRefLockTimeout; default 100 ms). */
  lockTimeoutMs?: number | undefined;
  /** The same for packed-refs.lock (git's core.packedRefsTimeout; default 1000 ms). */
  packedLockTimeoutMs?: number | undefined;
  /**
   * Told of each step a prepared transaction takes, as git's reference-transaction hook is:
   * `prepared` (every lock held; returning false aborts the transaction), then `committed` or
   * `aborted`, with one `<old-id> <new-id> <ref>` line per ref changed (zeros for none).
   */
  onStateChange?: ((state: RefTransactionState, lines: string) => boolean | void) | undefined;
  /**
   * The type of the object an id names (`'commit'`, `'tag'`, …), undefined when the repository
   * has no such object. Given, a new value is checked as git's files backend checks it
   * (write_ref_to_lockfile): no ref may name a missing object (OBJECT_NOT_FOUND), and no branch
   * (`refs/heads/*`, or HEAD itself) anything but a commit (INVALID_ARGUMENT).
   */
  objectType?: ((id: Uint8Array) => string | undefined) | undefined;
  /**
   * Rewrite packed-refs without the deleted refs even when none of them is packed (git's
   * delete_refs, which fetch --prune and other batch deletions use): a packed-refs that cannot
   * be rewritten then fails the deletion before any loose ref goes.
   */
  rewritePacked?: boolean | undefined;
}

/** The steps `RefTransactionOptions.onStateChange` is told of. */
export type RefTransactionState = 'prepared' | 'committed' | 'aborted';

/** Sleeps this thread (a ref lock is held by another process only for the moment of its write). */
function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

interface Update {
  /** The ref as the caller named it (errors say this name). */
  name: string;
  /** The ref written: the name, or where its symbolic refs end. */
  target: string;
  newId: Uint8Array | undefined;
  /** Make the ref a symbolic ref to this (git's create_symref). */
  symbolic?: string | undefined;
  remove: boolean;
  expect: RefExpectation;
  options: RefUpdateOptions;
  /** Also log to the reflog of these (HEAD, when the ref it points to changes). */
  alsoLog: string[];
  /** Filled by prepare: the lock file, and the id the ref had. */
  lock?: string | undefined;
  oldId?: Buffer | undefined;
  /** Filled by prepare: the ref is a symbolic one that this update replaces (no-deref). */
  replacesSymbolic?: boolean;
}

/**
 * A set of ref changes made all at once (git's ref_transaction on the files backend). Add
 * `update`, `create`, `delete` and `verify`, then `commit` (or `prepare`, then `commit` or
 * `abort`). Errors are REF_LOCKED (a lock is held: another writer), REF_MISMATCH (a ref is not
 * what was expected), REF_CONFLICT (a name clashes with an existing ref as file and directory),
 * INVALID_ARGUMENT (a bad ref name), in git's words.
 */
export class RefTransaction {
  private readonly updates: Update[] = [];
  private state: 'open' | 'prepared' | 'closed' = 'open';
  private packedLock: string | undefined;

  constructor(private readonly refs: RefStore, private readonly options: RefTransactionOptions) {}

  /** Sets `name` to `newId`, if it is now what `expect` says. */
  update(name: string, newId: Uint8Array, expect?: RefExpectation, options: RefUpdateOptions = {}): this {
    return this.add(name, newId, false, expect, options);
  }

  /** Creates `name`; it must not exist. */
  create(name: string, newId: Uint8Array, options: RefUpdateOptions = {}): this {
    return this.add(name, newId, false, 'absent', options);
  }

  /** Deletes `name` (loose, packed and its reflog), if it is now what `expect` says. */
  delete(name: string, expect?: RefExpectation, options: RefUpdateOptions = {}): this {
    return this.add(name, undefined, true, expect, options);
  }

  /**
   * Makes `name` a symbolic ref to `target` (`ref: <target>`), as `git symbolic-ref` does; the
   * reflog notes the move from what `name` resolved to, to what `target` does, when `target` exists.
   */
  setSymbolic(name: string, target: string, options: Omit<RefUpdateOptions, 'noDeref'> = {}): this {
    this.add(name, undefined, false, undefined, { ...options, noDeref: true }, true);
    (this.updates[this.updates.length - 1] as Update).symbolic = target;
    return this;
  }

  /** Checks that `name` is what `expect` says, under a lock, without changing it. */
  verify(name: string, expect: RefExpectation, options: RefUpdateOptions = {}): this {
    return this.add(name, undefined, false, expect, options);
  }

  private add(name: string, newId: Uint8Array | undefined, remove: boolean, expect: RefExpectation, options: RefUpdateOptions, symbolic = false): this {
    if (this.state !== 'open') throw new PackwrightError('INVALID_ARGUMENT', 'the ref transaction is no longer open');
    // git's ref_transaction_update: a name given a value must be well formed; one deleted or
    // checked need only be safe (a file under refs/, or a pseudoref of capitals).
    const setsValue = symbolic || (newId !== undefined && newId.some((b) => b !== 0));
    if (!(setsValue ? isValidRefname(name, { allowOneLevel: true }) : isSafeRefname(name))) {
      throw new PackwrightError('INVALID_ARGUMENT', `refusing to update ref with bad name '${name}'`);
    }
    if (this.updates.some((u) => u.name === name)) throw new PackwrightError('INVALID_ARGUMENT', `multiple updates for ref '${name}' not allowed`);
    this.updates.push({ name, target: name, newId, remove, expect, options, alsoLog: [] });
    return this;
  }

  /**
   * Takes every lock and checks every expectation (git's ref_transaction_prepare); after it,
   * `commit` only writes. Fails (with every lock released) when a check does not hold.
   */
  prepare(): void {
    if (this.state !== 'open') throw new PackwrightError('INVALID_ARGUMENT', 'the ref transaction is no longer open');
    if (this.options.quarantined === true) throw new PackwrightError('REQUEST_REFUSED', 'ref updates forbidden inside quarantine environment');
    this.state = 'prepared';
    try {
      const head = this.refs.read('HEAD');
      const headTarget = head?.kind === 'symbolic' ? this.finalName('HEAD') : undefined;
      for (const u of this.updates) {
        if (u.options.noDeref !== true) u.target = this.finalName(u.name);
        // git logs a change of the branch HEAD points to in HEAD's reflog too.
        if (u.name === 'HEAD' && u.target !== 'HEAD') u.alsoLog.push('HEAD');
        else if (headTarget !== undefined && u.target === headTarget && u.name !== 'HEAD') u.alsoLog.push('HEAD');
      }
      this.checkNamesTogether();
      const affected = affectedNames(this.updates);
      for (const u of this.updates) {
        // A new ref's name is checked against the others first: its lock could not be made where a ref is a directory's name.
        if (!u.remove && (u.newId !== undefined || u.symbolic !== undefined) && this.refs.read(u.target) === undefined) this.checkAvailable(u, affected);
        u.lock = this.lock(u.target, u.name, u.expect instanceof Uint8Array);
        // A loose file that holds no ref is not overwritten (git's lock_raw_ref); deleting one is allowed.
        if (!u.remove && this.refs.isBroken(u.target)) {
          throw new PackwrightError('REF_CORRUPT', `cannot lock ref '${u.name}': unable to resolve reference '${u.target}': reference broken`);
        }
        const value = this.refs.read(u.target);
        u.replacesSymbolic = value?.kind === 'symbolic';
        u.oldId = value?.kind === 'id' ? value.id : value?.kind === 'symbolic' && u.options.noDeref === true ? this.refs.resolve(u.target) : undefined;
        this.checkExpectation(u, u.replacesSymbolic);
        this.checkNewValue(u, u.replacesSymbolic);
      }
      const packedChange = this.options.rewritePacked === true ? this.updates.some((u) => u.remove) : this.updates.some((u) => u.remove && this.refs.isPacked(u.target));
      if (packedChange) this.packedLock = this.lockFile(join(this.refs.commonDir, 'packed-refs'), 'packed-refs', this.options.packedLockTimeoutMs ?? 1000);
    } catch (e) {
      this.release();
      throw e;
    }
    if (this.tell('prepared') === false) {
      this.abort();
      // git's words (refs.c, ref_transaction_prepare).
      throw new PackwrightError('REQUEST_REFUSED', 'ref updates aborted by hook');
    }
  }

  /**
   * git's write_ref_to_lockfile checks of a value about to be written (skipped, as git skips the
   * write, when the ref already has it): the object exists, and a branch gets a commit. Named as
   * git names the ref written, where symbolic refs lead.
   */
  private checkNewValue(u: Update, symbolic: boolean): void {
    const objectType = this.options.objectType;
    if (objectType === undefined || u.remove || u.newId === undefined || u.symbolic !== undefined) return;
    if (!symbolic && u.oldId !== undefined && u.oldId.equals(u.newId)) return;
    const type = objectType(u.newId);
    const hex = toHex(u.newId);
    if (type === undefined) {
      throw new PackwrightError('OBJECT_NOT_FOUND', `cannot update ref '${u.target}': trying to write ref '${u.target}' with nonexistent object ${hex}`);
    }
    if (type !== 'commit' && (u.target === 'HEAD' || u.target.startsWith('refs/heads/'))) {
      throw new PackwrightError('INVALID_ARGUMENT', `cannot update ref '${u.target}': trying to write non-commit object ${hex} to branch '${u.target}'`);
    }
  }

  /**
   * The lines a reference-transaction hook reads, as git 2.39 writes them: `<old> <new> <ref>` for
   * each ref set or deleted, the old value the one the caller expected (zeros for none or
   * "absent"); once prepared, an update through a symbolic ref adds a line for the ref it reached
   * (git splits such an update in two), after the others.
   */
  private hookLines(): string {
    const zero = '0'.repeat(this.refs.hashLength * 2);
    const changes = this.updates.filter((u) => u.symbolic === undefined && (u.remove || u.newId !== undefined));
    const line = (u: Update, ref: string): string => `${u.expect instanceof Uint8Array ? toHex(u.expect) : zero} ${u.newId !== undefined ? toHex(u.newId) : zero} ${ref}\n`;
    const split = this.state === 'prepared' ? changes.filter((u) => u.target !== u.name) : [];
    return [...changes.map((u) => line(u, u.name)), ...split.map((u) => line(u, u.target))].join('');
  }

  /** Tells `onStateChange` of a step, when there is anything to tell of. */
  private tell(state: RefTransactionState): boolean | void {
    const lines = this.hookLines();
    return lines === '' ? undefined : this.options.onStateChange?.(state, lines);
  }

  /** Makes every change (preparing first if needed), then releases the locks. */
  commit(): void {
    if (this.state === 'open') this.prepare();
    if (this.state !== 'prepared') throw new PackwrightError('INVALID_ARGUMENT', 'the ref transaction is no longer open');
    try {
      const deleted = this.updates.filter((u) => u.remove);
      if (this.packedLock !== undefined) this.rewritePacked(new Set(deleted.map((u) => u.target)));
      for (const u of this.updates) {
        const lock = u.lock as string;
        const path = this.refs.loosePath(u.target);
        if (u.remove) {
          unlinkIfPresent(path);
          unlinkIfPresent(lock);
          this.deleteReflog(u.target);
          // git notes the deletion of the branch HEAD is on in HEAD's reflog.
          for (const other of u.alsoLog) this.log(other, u, Buffer.alloc(this.refs.hashLength));
          removeEmptyParents(dirname(path), keptDirectory(path, u.target));
          continue;
        }
        if (u.symbolic !== undefined) {
          writeWhole(lock, `ref: ${u.symbolic}\n`);
          renameSync(lock, path);
          const to = this.refs.resolve(u.symbolic);
          if (to !== undefined) this.log(u.target, u, to);
          continue;
        }
        // Nothing to write, nor to log, when the ref already has the value (git's
        // lock_ref_for_update leaves such an update out of the commit).
        if (u.newId === undefined || (u.replacesSymbolic !== true && u.oldId !== undefined && u.oldId.equals(u.newId))) {
          unlinkIfPresent(lock);
          continue;
        }
        writeWhole(lock, `${toHex(u.newId)}\n`);
        renameSync(lock, path);
        this.log(u.target, u, u.newId);
        for (const other of u.alsoLog) this.log(other, u, u.newId);
      }
    } catch (e) {
      this.abort();
      throw e;
    }
    const lines = this.hookLines();
    this.release();
    if (lines !== '') this.options.onStateChange?.('committed', lines);
  }

  /** Releases every lock without changing anything; `aborted` is told, as git runs its hook then. */
  abort(): void {
    if (this.state === 'closed') return;
    const lines = this.hookLines();
    this.release();
    if (lines !== '') this.options.onStateChange?.('aborted', lines);
  }

  private release(): void {
    for (const u of this.updates) {
      if (u.lock !== undefined) unlinkIfPresent(u.lock);
      u.lock = undefined;
    }
    if (this.packedLock !== undefined) unlinkIfPresent(this.packedLock);
    this.packedLock = undefined;
    this.state = 'closed';
  }

  /** Where `name`'s symbolic refs end (itself when it is not one, or does not exist); a loop is git's "unable to resolve reference". */
  private finalName(name: string): string {
    const end = this.refs.symbolicEnd(name);
    if (end === undefined) throw new PackwrightError('REF_CORRUPT', `cannot lock ref '${name}': unable to resolve reference '${name}'`);
    return end;
  }

  /**
   * Updates of one transaction that change the same ref (one through a symbolic ref), or whose
   * names clash as file and directory, as git refuses them.
   */
  private checkNamesTogether(): void {
    const byName = new Map(this.updates.map((u) => [u.name, u]));
    for (const u of this.updates) {
      if (u.alsoLog.includes('HEAD') && u.name !== 'HEAD' && byName.get('HEAD')?.target === 'HEAD') {
        throw new PackwrightError('REF_CONFLICT', `multiple updates for 'HEAD' (including one via its referent '${u.name}') are not allowed`);
      }
      if (u.target !== u.name && byName.has(u.target)) {
        throw new PackwrightError('REF_CONFLICT', `multiple updates for '${u.target}' (including one via symref '${u.name}') are not allowed`);
      }
    }
  }

  /**
   * A ref that does not exist yet must not be a directory of refs or have a ref as a directory
   * (git's refs_verify_refname_available, as lock_raw_ref asks it): each leading name that is a
   * ref, or that another update of this transaction names, then the refs and the updates below
   * it. A ref this transaction deletes still counts, as it does for git until the deletion is
   * made: it is the clash git reports when one update deletes `a` and another creates `a/b`.
   */
  private checkAvailable(u: Update, affected: AffectedNames): void {
    const fail = (message: string): never => {
      throw new PackwrightError('REF_CONFLICT', `cannot lock ref '${u.name}': ${message}`);
    };
    const byOther = (name: string): boolean => (affected.byName.get(name) as Update[]).some((x) => x !== u);
    const parts = u.target.split('/');
    for (let k = 2; k < parts.length; k++) {
      const prefix = parts.slice(0, k).join('/');
      if (this.refs.read(prefix) !== undefined) fail(`'${prefix}' exists; cannot create '${u.target}'`);
      if (affected.byName.has(prefix) && byOther(prefix)) fail(`cannot process '${u.target}' and '${prefix}' at the same time`);
    }
    const below = this.refs.list(`${u.target}/`)[0];
    if (below !== undefined) fail(`'${below.name}' exists; cannot create '${u.target}'`);
    // The first name below it that another update names (the names sorted: a binary search to the first after `<target>/`).
    const dir = `${u.target}/`;
    let lo = 0;
    for (let hi = affected.sorted.length; lo < hi;) {
      const mid = (lo + hi) >>> 1;
      if ((affected.sorted[mid] as string) < dir) lo = mid + 1;
      else hi = mid;
    }
    for (let i = lo; i < affected.sorted.length && (affected.sorted[i] as string).startsWith(dir); i++) {
      const along = affected.sorted[i] as string;
      if (byOther(along)) fail(`cannot process '${u.target}' and '${along}' at the same time`);
    }
  }

  /**
   * The old value against the one expected, in git's words (check_old_oid; lock_raw_ref's for a
   * ref that must exist and does not). `symbolic`: the ref itself is a symbolic one, changed
   * without following it, whose old value is what it leads to.
   */
  private checkExpectation(u: Update, symbolic: boolean): void {
    const expect = u.expect;
    if (expect === undefined) return;
    const had = u.oldId;
    if (expect === 'absent') {
      if (had !== undefined) throw new PackwrightError('REF_MISMATCH', `cannot lock ref '${u.name}': reference already exists`);
      return;
    }
    if (had === undefined && symbolic) throw new PackwrightError('REF_MISMATCH', `cannot lock ref '${u.name}': reference is missing but expected ${toHex(expect)}`);
    if (had === undefined) throw new PackwrightError('REF_MISMATCH', `cannot lock ref '${u.name}': unable to resolve reference '${u.target}'`);
    if (!had.equals(expect)) throw new PackwrightError('REF_MISMATCH', `cannot lock ref '${u.name}': is at ${toHex(had)} but expected ${toHex(expect)}`);
  }

  /**
   * `<ref>.lock`, created exclusively (the directories on the way too). `mustExist`: the update
   * expects a value, so a directory in the ref's place is a missing ref, as git reports it.
   */
  private lock(target: string, name: string, mustExist = false): string {
    const path = this.refs.loosePath(target);
    try {
      mkdirSync(dirname(path), { recursive: true });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'EEXIST' || (e as NodeJS.ErrnoException).code === 'ENOTDIR') {
        throw new PackwrightError('REF_CONFLICT', `cannot lock ref '${name}': unable to create lock file ${path}.lock; non-directory in the way`);
      }
      throw e;
    }
    // A directory where the ref's file goes, left by refs since deleted: git removes it if it
    // holds only empty directories (remove_dir_recursively, REMOVE_DIR_EMPTY_ONLY).
    if (existsSync(path) && statSync(path).isDirectory() && !removeEmptyTree(path)) {
      // git reads a packed ref past the directory; with neither, the value an update expects is missing.
      if (mustExist && this.refs.read(target) === undefined) throw new PackwrightError('REF_MISMATCH', `cannot lock ref '${name}': unable to resolve reference '${target}'`);
      throw new PackwrightError('REF_CONFLICT', `cannot lock ref '${name}': there is a non-empty directory '${path}' blocking reference '${target}'`);
    }
    return this.lockFile(path, name, this.options.lockTimeoutMs ?? 100);
  }

  /**
   * Creates `<path>.lock` exclusively; while another writer holds it, tries again for up to
   * `timeoutMs` with git's backoff (lockfile.c: waits growing quadratically from 1 ms, each
   * between 75% and 125% of its step, at most a second).
   */
  private lockFile(path: string, name: string, timeoutMs: number): string {
    const lock = `${path}.lock`;
    const start = Date.now();
    // A negative timeout waits as long as it takes, as in git.
    const limit = timeoutMs < 0 ? Infinity : timeoutMs;
    for (let n = 1, multiplier = 1; ; n++) {
      try {
        closeSync(openSync(lock, 'wx'));
        return lock;
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw this.lockError(e, lock, name);
        const elapsed = Date.now() - start;
        if (elapsed >= limit) throw this.lockError(e, lock, name);
        const wait = Math.min(limit - elapsed, Math.floor(((750 + Math.random() * 500) * multiplier) / 1000));
        sleepSync(Math.max(1, wait));
        multiplier = Math.min(multiplier + 2 * n + 1, 1000);
      }
    }
  }

  /** git's words for a lock not taken: "File exists" when another writer holds it; other failures as they are. */
  private lockError(e: unknown, lock: string, name: string): unknown {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') return e;
    return new PackwrightError('REF_LOCKED', `cannot lock ref '${name}': Unable to create '${lock}': File exists.\n\nAnother git process seems to be running in this repository, e.g.\nan editor opened by 'git commit'. Please make sure all processes\nare terminated then try again. If it still fails, a git process\nmay have crashed in this repository earlier:\nremove the file manually to continue.`, { file: lock });
  }

  /** packed-refs without the deleted refs (and their peeled lines), through packed-refs.lock. */
  private rewritePacked(deleted: ReadonlySet<string>): void {
    const path = join(this.refs.commonDir, 'packed-refs');
    const text = readFileIfPresent(path, 'packed refs', false)?.toString('utf8') ?? '';
    const out: string[] = [];
    let dropping = false;
    for (const line of text.split('\n')) {
      if (line === '') continue;
      if (line.startsWith('^')) {
        if (!dropping) out.push(line);
        continue;
      }
      dropping = !line.startsWith('#') && deleted.has(line.slice(line.indexOf(' ') + 1));
      if (!dropping) out.push(line);
    }
    // As git's packed backend: with packed-refs.lock held, the new file is written to
    // packed-refs.new (created exclusively: one there already fails the transaction, as git's
    // create_tempfile) and renamed over packed-refs; the lock is released after.
    const fresh = `${path}.new`;
    let fd: number;
    try {
      fd = openSync(fresh, 'wx');
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      throw new PackwrightError('REF_LOCKED', `unable to create file ${fresh}: ${code === 'EEXIST' ? 'File exists' : (e as Error).message}`, { file: fresh });
    }
    try {
      try {
        writeSync(fd, out.length > 0 ? `${out.join('\n')}\n` : '');
      } finally {
        closeSync(fd);
      }
      renameSync(fresh, path);
    } catch (e) {
      unlinkIfPresent(fresh);
      throw e;
    }
    this.refs.forgetPacked();
  }

  /** Appends a reflog line for `name`, when it has a reflog or should get one (git's log_ref_write). */
  private log(name: string, u: Update, newId: Uint8Array): void {
    const path = this.refs.reflogPath(name);
    const auto = this.options.logAllRefUpdates;
    const wanted = u.options.createReflog ?? (auto === 'always'
      || (auto === true && (name === 'HEAD' || name.startsWith('refs/heads/') || name.startsWith('refs/remotes/') || name.startsWith('refs/notes/'))));
    if (!wanted && !existsSync(path)) return;
    const old = u.oldId !== undefined ? toHex(u.oldId) : '0'.repeat(2 * this.refs.hashLength);
    const message = reflogMessage(u.options.message ?? '');
    mkdirSync(dirname(path), { recursive: true });
    appendFileSync(path, `${old} ${toHex(newId)} ${this.options.ident}${message !== '' ? `\t${message}` : ''}\n`);
  }

  private deleteReflog(name: string): void {
    const path = this.refs.reflogPath(name);
    unlinkIfPresent(path);
    removeEmptyParents(dirname(path), keptDirectory(path, name));
  }
}

/** git's copy_reflog_msg: runs of white space become one space, none at either end. */
function reflogMessage(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

function writeWhole(path: string, text: string): void {
  const fd = openSync(path, 'w');
  try {
    writeSync(fd, text);
  } finally {
    closeSync(fd);
  }
}

function unlinkIfPresent(path: string): void {
  try {
    unlinkSync(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
}

/** The directory of the first two components of ref `name` in `path` (`.../refs/heads`): git never removes it. */
function keptDirectory(path: string, name: string): string {
  const parts = name.split('/');
  return join(path.slice(0, path.length - name.length), ...parts.slice(0, Math.min(2, parts.length - 1)));
}

/** Removes `dir` if it holds nothing but directories that do (at any depth); whether it is gone. */
function removeEmptyTree(dir: string): boolean {
  let empty = true;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (!entry.isDirectory() || !removeEmptyTree(join(dir, entry.name))) empty = false;
  }
  if (!empty) return false;
  rmdirSync(dir);
  return true;
}

/** Removes `dir` and its parents while empty, up to (not including) `stop` (git's try_remove_empty_parents). */
function removeEmptyParents(dir: string, stop: string): void {
  for (let d = dir; d.length > stop.length && d.startsWith(stop); d = dirname(d)) {
    try {
      rmdirSync(d);
    } catch {
      return;
    }
  }
}

/** git's affected_refnames: every update's name, and where a symbolic ref leads; each with the updates naming it, and all of them sorted. */
interface AffectedNames {
  byName: Map<string, Update[]>;
  sorted: string[];
}

function affectedNames(updates: readonly Update[]): AffectedNames {
  const byName = new Map<string, Update[]>();
  for (const u of updates) {
    for (const name of u.name === u.target ? [u.name] : [u.name, u.target]) {
      const list = byName.get(name);
      if (list === undefined) byName.set(name, [u]);
      else list.push(u);
    }
  }
  return { byName, sorted: [...byName.keys()].sort() };
}
