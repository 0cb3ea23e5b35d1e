import { S_IFGITLINK, S_IFMT, S_IFREG } from '../objects/tree.js';
import { isNotFound } from '../io/read-dir-if-present.js';
import { readShallowFile, shallowFilePath } from './shallow-file.js';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { isAbsolute, join, posix, relative, resolve as resolvePath, sep } from 'node:path';
import { PackwrightError } from '../errors/packwright-error.js';
import { parseIndexFile } from './index-file.js';
import { homedir } from 'node:os';
import { configFromEnvironment, GitConfig, parseBool } from '../config/git-config.js';
import { committerIdent } from './ident.js';
import type { RefTransaction } from '../refs/ref-transaction.js';
import { referenceTransactionHook } from './reference-transaction-hook.js';
import { hashLength, type ObjectFormat } from '../hash/object-format.js';
import { Store, objectFormatOf, type OpenStoreOptions } from '../odb/store.js';
import type { StoreHandle } from '../odb/store-handle.js';
import { parseRefreshPolicy, type RefreshPolicy } from '../odb/refresh-policy.js';
import { parseAlternateList } from '../odb/alternates.js';
import { RefStore } from '../refs/ref-store.js';
import { resolveRevision, treeishColon, type IndexedObject, type RevisionContext } from '../refs/resolve-revision.js';
import { commonDirOf, discoverRepository, gitFileTarget, type RepositoryLocation } from './discover.js';
import { ceilingFrom } from '../memory/ceiling.js';
import type { CommitObject } from '../objects/commit-object.js';
import type { TagObject } from '../objects/tag-object.js';
import { diffTreesFrom, readBlobFrom, readCommitFrom, readTagFrom, readTreeFrom, type TreeDiffEntry, type TreeEntryObject } from './read-objects.js';
import { Pathspec } from '../objects/pathspec.js';
import { writeBlobTo, writeCommitTo, writeTagTo, writeTreeTo } from './write-objects.js';
import { currentBranchOf, listRefsIn, resolveRefIn, shortNames, updateRefWith, type RefInfo, type UpdateRefRequest } from './ref-queries.js';
import type { NewCommit } from '../objects/commit-object.js';
import type { NewTag } from '../objects/tag-object.js';
import type { NewTreeEntry } from '../objects/tree.js';
import { mergeBases } from '../walk/merge-bases.js';
import { isAncestor } from '../walk/is-ancestor.js';
import { logFrom, type LogOptions } from './log.js';

/**
 * Options of `Repository.open` and `Repository.openGitDir`: the store's options, and the environment git's
 * configuration is read with.
 */
export interface OpenRepositoryOptions extends OpenStoreOptions {
  /**
   * Environment to take git's config locations from (GIT_CONFIG_NOSYSTEM, GIT_CONFIG_SYSTEM,
   * GIT_CONFIG_GLOBAL, HOME, XDG_CONFIG_HOME); default `process.env`.
   */
  env?: Record<string, string | undefined>;
  /**
   * The refresh policy when neither `refresh` nor `packwright.refreshAfter` says one: the CLI
   * passes `'on-miss'` (git's behaviour); the library's default is the store's.
   */
  defaultRefresh?: RefreshPolicy | undefined;
  /** git's `-c name=value` options, applied over every configuration file. */
  configParameters?: readonly string[] | undefined;
}

/**
 * The configuration git would use in this repository, in git's order (later wins): the system
 * file, the global ones (`$XDG_CONFIG_HOME/git/config`, then `~/.gitconfig`, or GIT_CONFIG_GLOBAL),
 * the repository's `config`, and its `config.worktree` when extensions.worktreeConfig is set.
 */
export function repositoryConfig(location: RepositoryLocation, env: Record<string, string | undefined> = process.env): GitConfig {
  return readConfig(location, env, true);
}

/**
 * git's protected configuration: the system and global files and the command line, never the
 * repository's own files, which whoever pushes to or owns the repository may write. Settings that
 * run programs on a server (uploadpack.packObjectsHook) are read from it alone.
 */
export function protectedConfig(location: RepositoryLocation, env: Record<string, string | undefined> = process.env): GitConfig {
  return readConfig(location, env, false);
}

/**
 * The configuration git reads outside any repository: the system and global files and what
 * `git -c` passed down (GIT_CONFIG_PARAMETERS). A clone reads it before its repository exists
 * (credential helpers, http.extraHeader, url.<base>.insteadOf).
 */
export function userConfig(env: Record<string, string | undefined> = process.env): GitConfig {
  const config = new GitConfig();
  addUserFiles(config, env, { home: env['HOME'] ?? homedir() });
  for (const { key, value } of configFromEnvironment(env)) config.addPair(key, value);
  return config;
}

function readConfig(location: RepositoryLocation, env: Record<string, string | undefined>, repositoryFiles: boolean): GitConfig {
  const home = env['HOME'] ?? homedir();
  const options = { gitDir: location.gitDir, home };
  const config = new GitConfig();
  addUserFiles(config, env, options);
  if (repositoryFiles) {
    const local = join(location.commonDir, 'config');
    config.add(local, options);
    if (GitConfig.read(local, options).getBool('extensions.worktreeConfig') === true) config.add(join(location.gitDir, 'config.worktree'), options);
  }
  // What `git -c` passed down (git runs packwright as its child: repack's pack-objects).
  for (const { key, value } of configFromEnvironment(env)) config.addPair(key, value);
  return config;
}

/** The system file, then the global ones, as git finds them. */
function addUserFiles(config: GitConfig, env: Record<string, string | undefined>, options: { gitDir?: string; home: string }): void {
  const home = options.home;
  if (env['GIT_CONFIG_NOSYSTEM'] === undefined || !['1', 'true', 'yes', 'on'].includes(env['GIT_CONFIG_NOSYSTEM'].toLowerCase())) {
    config.add(env['GIT_CONFIG_SYSTEM'] ?? '/etc/gitconfig', options);
  }
  if (env['GIT_CONFIG_GLOBAL'] !== undefined) {
    config.add(env['GIT_CONFIG_GLOBAL'], options);
  } else {
    config.add(join(env['XDG_CONFIG_HOME'] ?? join(home, '.config'), 'git', 'config'), options);
    config.add(join(home, '.gitconfig'), options);
  }
}

/**
 * A repository: where its parts are, its configuration, its refs and its objects. The object
 * store opens on first use; refs are read from the files each time they are asked for.
 */
export class Repository implements RevisionContext {
  readonly gitDir: string;
  readonly commonDir: string;
  readonly workTree: string | undefined;
  readonly format: ObjectFormat;
  readonly refs: RefStore;
  /**
   * The directory it was found from, relative to the top of the work tree (git's prefix, ending
   * in `/`; '' at the top or without a work tree): `<rev>:./<path>` and `:../<path>` start there.
   * Settable (rev-parse --prefix).
   */
  prefix: string;
  /**
   * The current directory is outside the work tree (`--work-tree` elsewhere): `./` paths of a
   * revision then have nothing to be relative to, as git says.
   */
  outsideWorkTree = false;
  /** Where warnings of revision lookups go (git prints them on stderr); none by default. */
  onWarning: ((message: string) => void) | undefined;
  private cachedConfig: GitConfig | undefined;
  private openStore: Store | undefined;

  private constructor(location: RepositoryLocation, private readonly options: OpenRepositoryOptions, from?: string) {
    this.gitDir = location.gitDir;
    let prefix = '';
    if (location.workTree !== undefined && from !== undefined) {
      const rel = relative(location.workTree, from);
      if (rel !== '' && !rel.startsWith('..') && !isAbsolute(rel)) prefix = `${rel.split(sep).join('/')}/`;
    }
    this.prefix = prefix;
    this.commonDir = location.commonDir;
    this.workTree = location.workTree;
    this.format = options.objectFormat ?? objectFormatOf(location.commonDir);
    this.refs = new RefStore(this.gitDir, this.commonDir, hashLength(this.format));
  }

  /**
   * The repository at or above `path` (a work tree, a `.git` directory or a bare repository), found as git finds it.
   * @param path A work tree, a `.git` directory or a bare repository, or any directory below one.
   * @returns The repository, open until `close()`.
   * @throws {PackwrightError} REPO_NOT_FOUND when no repository is found.
   */
  static open(path: string, options: OpenRepositoryOptions = {}): Repository {
    return new Repository(discoverRepository(path, options.env), options, resolvePath(path));
  }

  /**
   * The repository whose git directory is `gitDir` (git's GIT_DIR / --git-dir: no search).
   * @param gitDir The git directory itself (or a `gitdir:` file naming it).
   * @throws {PackwrightError} REPO_NOT_FOUND, telling a missing directory from one that is no git directory.
   */
  static openGitDir(gitDir: string, options: OpenRepositoryOptions = {}): Repository {
    // A `gitdir: <path>` file stands for the directory it names, as GIT_DIR may be one.
    const dir = gitFileTarget(gitDir) ?? gitDir;
    // Checked now, not at the first read: a path that is not there and one that is no git
    // directory are told apart (both REPO_NOT_FOUND, naming the path).
    let isDirectory = false;
    try {
      isDirectory = statSync(dir).isDirectory();
    } catch {
      // Not there (or not reachable): said below.
    }
    if (!isDirectory) throw new PackwrightError('REPO_NOT_FOUND', `no such directory: ${dir}`, { file: dir });
    if (!existsSync(join(dir, 'HEAD'))) throw new PackwrightError('REPO_NOT_FOUND', `not a git repository (no HEAD): ${dir}`, { file: dir });
    return new Repository({ gitDir: dir, commonDir: commonDirOf(dir), workTree: undefined }, options);
  }

  /**
   * The shallow boundary: the commits of `file` (default: GIT_SHALLOW_FILE, else the common
   * directory's `shallow`; '' for none), whose parents a walk does not follow.
   */
  shallowCommits(file = shallowFilePath(this.commonDir, this.env)): Buffer[] {
    return readShallowFile(file, hashLength(this.format));
  }

  /** The environment git's variables are read from: the options' `env`, else the process's. */
  get env(): Readonly<Record<string, string | undefined>> {
    return this.options.env ?? process.env;
  }

  /**
   * A transaction of ref changes (see RefTransaction), its reflog lines by this repository's
   * committer (committerIdent) as core.logAllRefUpdates says (default: true, but false in a bare repository);
   * inside a push's quarantine (GIT_QUARANTINE_PATH) every change is refused, as git refuses it.
   * `committer` names someone else in the reflog lines (a server's authenticated pusher). The
   * repository's reference-transaction hook, when it has one, is run at each step as git runs it.
   * A new value must name an object the repository has, and a branch's a commit, as git requires.
   * `rewritePacked`: deletions rewrite packed-refs even where it holds none of them, as git's
   * batch deletion (delete_refs) does.
   */
  refTransaction(options: { committer?: { name: string; email: string } | undefined; rewritePacked?: boolean | undefined } = {}): RefTransaction {
    const setting = this.config.get('core.logallrefupdates');
    const bare = this.config.getBool('core.bare') ?? this.workTree === undefined;
    const logAll = setting === undefined ? !bare : typeof setting === 'string' && setting.toLowerCase() === 'always' ? 'always' : parseBool(setting, 'core.logAllRefUpdates');
    const quarantined = this.env['GIT_QUARANTINE_PATH'] !== undefined && this.env['GIT_QUARANTINE_PATH'] !== '';
    const lockTimeoutMs = this.config.getInt('core.filesreflocktimeout');
    const packedLockTimeoutMs = this.config.getInt('core.packedrefstimeout');
    const env = options.committer !== undefined ? { ...this.env, GIT_COMMITTER_NAME: options.committer.name, GIT_COMMITTER_EMAIL: options.committer.email } : this.env;
    return this.refs.transaction({
      ident: committerIdent(env, this.config), logAllRefUpdates: logAll, quarantined, lockTimeoutMs, packedLockTimeoutMs, onStateChange: referenceTransactionHook(this), rewritePacked: options.rewritePacked,
      // A miss looks at the object directories again first (objects just received or migrated in).
      objectType: (id) => {
        const location = this.objects.locate(id);
        return location === undefined ? undefined : this.objects.infoAt(location).type;
      },
    });
  }

  /**
   * The commit a revision names (tags peeled), parsed: `{ id, tree, parents, author, committer,
   * message, encoding?, gpgsig?, extraHeaders }`, ids in hex, people as `{ name, email,
   * timestamp, timezoneOffset }` (isomorphic-git's shape). Errors: REF_NOT_FOUND (no such
   * revision), INVALID_ARGUMENT (it names no commit), OBJECT_CORRUPT.
   * @param revision Any revision git accepts (`HEAD~2`, `v1.0`, `main@{1}`, an id or a prefix of one).
   * @returns The parsed commit, ids as lowercase hex.
   * @throws {PackwrightError} REF_NOT_FOUND, INVALID_ARGUMENT (not a commit), OBJECT_NOT_FOUND, OBJECT_CORRUPT.
   * @example const { author, message } = await repo.readCommit('HEAD~2');
   */
  async readCommit(revision: string): Promise<CommitObject> {
    return readCommitFrom(this, revision);
  }

  /**
   * The annotated tag a revision names (`v1.0`, `refs/tags/v1.0`, an id), parsed; INVALID_ARGUMENT for anything but a tag object.
   * @param revision A revision naming an annotated tag.
   * @returns The parsed tag: `{ id, object, type, tag, tagger?, message, gpgsig? }`.
   * @throws {PackwrightError} REF_NOT_FOUND, INVALID_ARGUMENT (not a tag object), OBJECT_CORRUPT.
   */
  async readTag(revision: string): Promise<TagObject> {
    return readTagFrom(this, revision);
  }

  /**
   * The entries of the tree a revision names (a commit's tree, tags peeled), in git's tree order:
   * `{ mode, type, id, path, pathBytes }`.
   * @param revision A revision naming a tree, or a commit or tag leading to one (`HEAD`, `HEAD:src`).
   * @returns The entries, ids in hex, paths as UTF-8 with their bytes beside them.
   * @throws {PackwrightError} REF_NOT_FOUND, PATH_NOT_FOUND, INVALID_ARGUMENT (no tree), OBJECT_CORRUPT.
   * @example for (const e of await repo.readTree('HEAD:src')) console.log(e.mode.toString(8), e.type, e.path);
   */
  async readTree(revision: string): Promise<TreeEntryObject[]> {
    return readTreeFrom(this, revision);
  }

  /**
   * A blob's bytes: by revision (`HEAD:README.md`, an id), or by `{ commit, path }`, where a
   * missing path is PATH_NOT_FOUND in git's words and one that is no blob INVALID_ARGUMENT.
   * @param target A revision naming a blob, or a commit-ish and a path in its tree.
   * @returns The blob's bytes.
   * @throws {PackwrightError} PATH_NOT_FOUND, REF_NOT_FOUND, INVALID_ARGUMENT (not a blob).
   * @example const readme = (await repo.readBlob({ commit: 'HEAD', path: 'README.md' })).toString('utf8');
   */
  async readBlob(target: string | { commit: string; path: string }): Promise<Buffer> {
    return readBlobFrom(this, target);
  }

  /** Stores a blob (a string is UTF-8); its id. */
  async writeBlob(data: Uint8Array | string): Promise<string> {
    return writeBlobTo(this.store, data);
  }

  /**
   * Stores a tree of `entries` (`{ mode, path, id }`, sorted here into git's order); its id, as
   * `git mktree` gives it.
   */
  async writeTree(entries: readonly NewTreeEntry[]): Promise<string> {
    return writeTreeTo(this.store, entries);
  }

  /**
   * Stores a commit (`{ tree, parents, author, committer?, message, encoding?, extraHeaders?,
   * gpgsig? }`) in git's bytes; its id, as `git commit-tree` gives it for the same fields.
   * @param commit The commit's fields; `committer` defaults to `author`.
   * @returns The new commit's id (hex).
   * @throws {PackwrightError} INVALID_ARGUMENT for a malformed id or person.
   * @example
   * const me = { name: 'A U Thor', email: 'a@example.com', timestamp: Math.floor(Date.now() / 1000), timezoneOffset: new Date().getTimezoneOffset() };
   * const id = await repo.writeCommit({ tree, parents: [head], author: me, message: 'Add a file\n' });
   * await repo.updateRef({ ref: 'refs/heads/main', value: id, oldValue: head, message: 'commit: Add a file' });
   */
  async writeCommit(commit: NewCommit): Promise<string> {
    return writeCommitTo(this.store, commit);
  }

  /** Stores an annotated tag (`{ object, type, tag, tagger?, message, gpgsig? }`); its id, as `git mktag` gives it. */
  async writeTag(tag: NewTag): Promise<string> {
    return writeTagTo(this.store, tag);
  }

  /**
   * Sets (`value`) or deletes (`value: null`) a ref in a ref transaction, if it is now `oldValue`
   * (null: absent; omitted: anything), with a reflog line (`message`) as core.logAllRefUpdates
   * says. Errors: REF_MISMATCH, REF_LOCKED, REF_CONFLICT, INVALID_ARGUMENT, in git's words.
   * @param request `{ ref, value, oldValue?, message? }`: value null deletes, oldValue null requires the ref to be absent.
   * @throws {PackwrightError} REF_MISMATCH (the ref moved), REF_LOCKED, REF_CONFLICT (a directory/file conflict), INVALID_ARGUMENT (a bad name or id).
   */
  async updateRef(request: UpdateRefRequest): Promise<void> {
    updateRefWith(this.refTransaction(), hashLength(this.format), request);
  }

  /** Branch names (`refs/heads/`), or with `remote` that remote's (`refs/remotes/<remote>/`), short and sorted. */
  async listBranches(options: { remote?: string | undefined } = {}): Promise<string[]> {
    return shortNames(this.refs, options.remote !== undefined ? `refs/remotes/${options.remote}/` : 'refs/heads/');
  }

  /**
   * Every ref under `prefix` (default `refs/`) as git for-each-ref lists it: `{ name, id, peeled?,
   * target? }`, annotated tags peeled whether loose or packed.
   */
  async listRefs(prefix = 'refs/'): Promise<RefInfo[]> {
    return listRefsIn(this.refs, this.objects, prefix);
  }

  /** Tag names (`refs/tags/`), short and sorted. */
  async listTags(): Promise<string[]> {
    return shortNames(this.refs, 'refs/tags/');
  }

  /** The branch HEAD is on (`main`; `refs/heads/main` with `fullname`), or undefined when HEAD is detached. */
  async currentBranch(options: { fullname?: boolean | undefined } = {}): Promise<string | undefined> {
    return currentBranchOf(this.refs, options.fullname === true);
  }

  /**
   * The id a ref leads to (a full name, or a short one by git's rules: `main`, `v1.0`, `origin/main`); REF_NOT_FOUND otherwise.
   * @param ref A full ref name, or a short one.
   * @returns The id (hex) the ref leads to, symbolic refs followed.
   * @throws {PackwrightError} REF_NOT_FOUND.
   */
  async resolveRef(ref: string): Promise<string> {
    return resolveRefIn(this.refs, ref);
  }

  /**
   * History as `git log` lists it: the commits reachable from `ref` (default HEAD) and not from
   * `exclude`, in git log's order (or `order: 'topo'`), with `maxCount`, `firstParent`, `paths`
   * (git's history simplification), `since` and `until`; each commit parsed as readCommit gives it.
   * @param options What to walk: `ref`, `exclude`, `maxCount`, `firstParent`, `paths`, `since`, `until`, `order`.
   * @returns An async iterable of parsed commits, in git log's order.
   * @throws {PackwrightError} REF_NOT_FOUND for a revision that names nothing, OBJECT_NOT_FOUND for a missing commit.
   * @example for await (const c of repo.log({ ref: 'main', maxCount: 10 })) console.log(c.id.slice(0, 7), c.message.split('\n')[0]);
   */
  log(options: LogOptions = {}): AsyncGenerator<CommitObject> {
    return logFrom(this, options);
  }

  /**
   * What changed from tree-ish `a` to tree-ish `b` (null: the empty tree), as
   * `git diff-tree -r --raw` lists it (`recursive: false`: a changed subtree is one entry), limited
   * to `paths` when given: `{ status: 'A' | 'D' | 'M' | 'T', path, pathBytes, oldId, newId,
   * oldMode, newMode }`, the absent side undefined.
   * @param a The old tree-ish, or null for the empty tree.
   * @param b The new tree-ish, or null for the empty tree.
   * @returns The changes in `git diff-tree -r --raw` order.
   * @throws {PackwrightError} REF_NOT_FOUND, INVALID_ARGUMENT (not a tree-ish).
   * @example for (const c of await repo.diffTrees('HEAD~1', 'HEAD')) console.log(c.status, c.path);
   */
  async diffTrees(a: string | null, b: string | null, options: { recursive?: boolean | undefined; paths?: readonly string[] | undefined } = {}): Promise<TreeDiffEntry[]> {
    const pathspec = options.paths !== undefined && options.paths.length > 0 ? Pathspec.parse(options.paths, this.prefix, this.workTree) : undefined;
    return diffTreesFrom(this, a, b, { recursive: options.recursive, pathspec });
  }

  /** Whether commit `ancestor` is reachable from `descendant` (or is it), as `git merge-base --is-ancestor`. */
  async isAncestor(ancestor: string, descendant: string): Promise<boolean> {
    return isAncestor(this.objects, this.resolve(ancestor), this.resolve(descendant));
  }

  /**
   * The best common ancestors of two commits, as `git merge-base --all` lists them.
   * @returns The merge bases' ids (hex); empty when the histories share nothing.
   * @throws {PackwrightError} REF_NOT_FOUND, OBJECT_NOT_FOUND.
   */
  async mergeBase(a: string, b: string): Promise<string[]> {
    return mergeBases(this.objects, this.resolve(a), this.resolve(b)).map((id) => id.toString('hex'));
  }

  /** git's protected configuration (see protectedConfig), with this repository's `-c` parameters; read each time. */
  get protectedConfig(): GitConfig {
    const config = protectedConfig(this, this.options.env);
    for (const p of this.options.configParameters ?? []) config.addParameter(p);
    return config;
  }

  /** The configuration git would use here (read on first use). */
  get config(): GitConfig {
    if (this.cachedConfig === undefined) {
      this.cachedConfig = repositoryConfig(this, this.options.env);
      for (const p of this.options.configParameters ?? []) this.cachedConfig.addParameter(p);
    }
    return this.cachedConfig;
  }

  /**
   * The remote a partial clone's missing objects come from: `extensions.partialClone`, else the
   * first remote marked `promisor` (git's promisor_remote_init); undefined when the repository is
   * not a partial clone. The client's `fetchMissing` fetches from it.
   */
  get promisorRemote(): string | undefined {
    const named = this.config.get('extensions.partialclone');
    if (typeof named === 'string' && named !== '') return named;
    // A key without a value is true, as git_config_bool reads it.
    const marked = this.config.entries.find((e) => /^remote\..+\.promisor$/.test(e.key) && (e.value === null || !/^(false|no|off|0|)$/i.test(e.value)));
    return marked === undefined ? undefined : marked.key.slice('remote.'.length, -'.promisor'.length);
  }

  /**
   * The object store (`objects/` of the common directory, or GIT_OBJECT_DIRECTORY, with its alternates), opened on first
   * use with what the configuration says where the options do not: `packwright.refreshAfter`,
   * `packwright.maxMemory`, `core.deltaBaseCacheLimit`,
   * `core.multiPackIndex`, `core.commitGraph`, `core.looseCompression` (else `core.compression`), `core.fsync`.
   */
  get store(): Store {
    if (this.openStore === undefined) {
      const { env: _env, defaultRefresh, configParameters: _parameters, ...explicit } = this.options;
      const options: OpenStoreOptions = { ...storeOptionsFrom(this.config), ...explicit, objectFormat: this.format };
      if (options.refresh === undefined && defaultRefresh !== undefined) options.refresh = defaultRefresh;
      // GIT_OBJECT_DIRECTORY replaces the repository's own objects directory, as in git.
      const env = this.env;
      const objectsDir = env['GIT_OBJECT_DIRECTORY'] !== undefined && env['GIT_OBJECT_DIRECTORY'] !== '' ? resolvePath(env['GIT_OBJECT_DIRECTORY']) : join(this.commonDir, 'objects');
      // GIT_ALTERNATE_OBJECT_DIRECTORIES adds alternates before the repository's own.
      const alternates = env['GIT_ALTERNATE_OBJECT_DIRECTORIES'];
      if (alternates !== undefined && alternates !== '' && options.alternates === undefined) options.alternates = parseAlternateList(alternates);
      this.openStore = Store.open(objectsDir, options);
    }
    return this.openStore;
  }

  /** The store's own handle: lookups for callers that need only one. */
  get objects(): StoreHandle {
    return this.store.objects;
  }

  /**
   * The object a revision names (`HEAD~2`, `v1.0^{tree}`, `main:README.md`, an abbreviated id, …),
   * and `:<path>` / `:<stage>:<path>`: the index's entry (GIT_INDEX_FILE, else the git directory's `index`).
   */
  resolve(revision: string): Buffer {
    const m = /^:(?:([0-3]):)?(?!\/)(.+)$/s.exec(revision);
    if (m !== null) return this.indexEntry(this.fromPrefix(m[2] as string), Number(m[1] ?? 0), revision);
    // <tree-ish>:./<path> and :../<path> are relative to the current directory.
    const colon = treeishColon(revision);
    if (colon > 0) {
      const path = revision.slice(colon + 1);
      const rewritten = this.fromPrefix(path);
      if (rewritten !== path) return resolveRevision(this, `${revision.slice(0, colon + 1)}${rewritten}`);
    }
    return resolveRevision(this, revision);
  }

  /**
   * git's maybe_die_on_misspelt_object_name: for a name that is not a revision, what git says of
   * it when it looks like `<tree-ish>:<path>` or `:<path>` (a path not in the tree or the index,
   * on disk but not there, in the tree or index under another directory, at another stage), with
   * git's `hint:` lines; undefined when it has nothing to say.
   */
  diagnose(name: string): string | undefined {
    const index = /^:(?:([0-3]):)?(?!\/)(.*)$/s.exec(name);
    const onDisk = (p: string): boolean => this.workTree !== undefined && existsSync(join(this.workTree, p));
    if (index !== null) {
      const stage = Number(index[1] ?? 0);
      let path: string;
      try {
        path = this.fromPrefix(index[2] as string);
      } catch (e) {
        return (e as Error).message;
      }
      let entries: { path: string; stage: number }[] = [];
      try {
        const file = this.indexFile;
        entries = parseIndexFile(readFileSync(file), this.format, file).entries;
      } catch {
        // Only words an error message (git's "did you mean ':<n>:<path>'?"): an index that cannot
        // be read just offers no suggestion.
        entries = [];
      }
      const at = entries.find((e) => e.path === path);
      if (at !== undefined) return `path '${path}' is in the index, but not at stage ${stage}\nhint: Did you mean ':${at.stage}:${path}'?`;
      const full = `${this.prefix}${path}`;
      const under = this.prefix !== '' ? entries.find((e) => e.path === full) : undefined;
      if (under !== undefined) {
        return `path '${full}' is in the index, but not '${path}'\nhint: Did you mean ':${under.stage}:${full}' aka ':${under.stage}:./${path}'?`;
      }
      if (onDisk(path)) return `path '${path}' exists on disk, but not in the index`;
      return `path '${path}' does not exist (neither on disk nor in the index)`;
    }
    const colon = treeishColon(name);
    if (colon <= 0) return undefined;
    const treeish = name.slice(0, colon);
    let tree: Buffer;
    try {
      tree = resolveRevision(this, `${treeish}^{tree}`);
    } catch {
      // Wording a message about a name that already failed: any failure here is git's "invalid object name".
      return `invalid object name '${treeish}'.`;
    }
    let path: string;
    try {
      path = this.fromPrefix(name.slice(colon + 1));
    } catch (e) {
      return (e as Error).message;
    }
    const has = (p: string): boolean => {
      try {
        resolveRevision(this, `${tree.toString('hex')}:${p}`);
        return true;
      } catch {
        // Whether the path exists in the tree, to word a message: any failure means "no".
        return false;
      }
    };
    if (has(path)) return undefined;
    const full = `${this.prefix}${path}`;
    if (this.prefix !== '' && has(full)) return `path '${full}' exists, but not '${path}'\nhint: Did you mean '${treeish}:${full}' aka '${treeish}:./${path}'?`;
    if (onDisk(path)) return `path '${path}' exists on disk, but not in '${treeish}'`;
    return `path '${path}' does not exist in '${treeish}'`;
  }

  /**
   * The index's objects for `--indexed-objects`, as git's add_index_objects_to_pending takes them
   * from this worktree's index: entries (not submodules), the cache tree's valid trees (depth first,
   * with their paths), resolve-undo's regular files. No index: none. (git also reads the other
   * worktrees' indexes; this does not.)
   */
  indexedObjects(): IndexedObject[] {
    const file = this.indexFile;
    if (!existsSync(file)) return [];
    const index = parseIndexFile(readFileSync(file), this.format, file);
    const out: IndexedObject[] = [];
    for (const e of index.entries) if ((e.mode & S_IFMT) !== S_IFGITLINK) out.push({ id: e.id, path: e.path, tree: false });
    for (const node of index.cacheTree) if (node.entryCount >= 0 && node.id !== undefined) out.push({ id: node.id, path: node.path, tree: true });
    for (const ru of index.resolveUndo) {
      ru.modes.forEach((mode, stage) => {
        const id = ru.ids[stage];
        if (id !== undefined && (mode & S_IFMT) === S_IFREG) out.push({ id, path: ru.path, tree: false });
      });
    }
    return out;
  }

  /** The index file: GIT_INDEX_FILE (from the options' environment, by default the process's), else `<gitDir>/index`. */
  private get indexFile(): string {
    return this.env['GIT_INDEX_FILE'] ?? join(this.gitDir, 'index');
  }

  /** A path of a revision from the top of the work tree: `./` and `../` ones start at the prefix. */
  private fromPrefix(path: string): string {
    if (!/^\.\.?(\/|$)/.test(path)) return path;
    if (this.outsideWorkTree) throw new PackwrightError('INVALID_ARGUMENT', "relative path syntax can't be used outside working tree");
    const joined = posix.normalize(`${this.prefix}${path}`);
    // git dies of this one at once.
    if (joined === '..' || joined.startsWith('../')) throw new PackwrightError('INVALID_ARGUMENT', `'${path}' is outside repository at '${this.workTree ?? this.gitDir}'`);
    return joined === '.' || joined === './' ? '' : joined.replace(/\/$/, '');
  }

  private indexEntry(path: string, stage: number, revision: string): Buffer {
    const file = this.indexFile;
    let data: Buffer;
    try {
      data = readFileSync(file);
    } catch (e) {
      if (!isNotFound(e)) throw e;
      throw new PackwrightError('REF_NOT_FOUND', `path '${path}' does not exist (neither on disk nor in the index)`);
    }
    const entry = parseIndexFile(data, this.format, file).entries.find((e) => e.path === path && e.stage === stage);
    if (entry === undefined) throw new PackwrightError('REF_NOT_FOUND', `path '${path}' is not in the index (${revision})`);
    return entry.id;
  }

  /** Closes the repository's object store (its packs and worker threads). */
  close(): void {
    this.openStore?.close();
    this.openStore = undefined;
  }
}

/** Store options a repository's configuration sets (explicit options win over these). */
function storeOptionsFrom(config: GitConfig): OpenStoreOptions {
  const options: OpenStoreOptions = {};
  const refresh = config.get('packwright.refreshAfter');
  if (typeof refresh === 'string') options.refresh = parseRefreshPolicy(refresh, 'packwright.refreshAfter');
  // git's own key and unit suffixes; the cache holds up to this many bytes of delta bases.
  const cacheLimit = config.getInt('core.deltaBaseCacheLimit');
  if (cacheLimit !== undefined && cacheLimit >= 0) options.deltaBaseCacheLimit = cacheLimit;
  // packwright's own key, as index-pack and verify-pack read it: 0 for no ceiling.
  const ceiling = config.getInt('packwright.maxMemory');
  if (ceiling !== undefined) options.maxMemory = ceilingFrom(ceiling);
  const midx = config.getBool('core.multiPackIndex');
  if (midx !== undefined) options.multiPackIndex = midx;
  const graph = config.getBool('core.commitGraph');
  if (graph !== undefined) options.commitGraph = graph;
  const level = config.getInt('core.looseCompression') ?? config.getInt('core.compression');
  if (level !== undefined) options.looseCompression = level;
  const fsync = config.get('core.fsync');
  const legacy = config.getBool('core.fsyncObjectFiles');
  if (typeof fsync === 'string') {
    const parts = fsync.split(',').map((x) => x.trim().toLowerCase());
    options.fsyncLooseObjects = parts.some((x) => x === 'loose-object' || x === 'objects' || x === 'all' || x === 'committed');
  } else if (legacy !== undefined) {
    options.fsyncLooseObjects = legacy;
  }
  return options;
}
