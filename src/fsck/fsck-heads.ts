import { S_IFGITLINK, S_IFMT, S_IFREG } from '../objects/tree.js';
import { isNotFound, readDirIfPresent } from '../io/read-dir-if-present.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isPackwrightError } from '../errors/packwright-error.js';
import { isHex } from '../hash/hex.js';
import { OBJ_BLOB, OBJ_COMMIT, OBJ_TREE } from '../objects/object-type.js';
import { parseIndexFile } from '../repo/index-file.js';
import { readReflogFile, reflogFiles, type ReflogFile } from '../refs/reflog.js';
import type { Repository } from '../repo/repository.js';
import { markReachable } from './fsck-connectivity.js';
import { FsckState, HAS_OBJ, USED, PROMISOR } from './fsck-state.js';
import { FSCK_ERROR_OBJECT, FSCK_ERROR_REACHABLE, FSCK_ERROR_REFS } from './fsck-options.js';

/** git's fsck_handle_ref: a ref's object is a head. */
export function handleRef(s: FsckState, refname: string, id: Buffer): void {
  const n = s.numberOf(id);
  if (!s.isPresent(n)) {
    if (((s.flags[n] as number) & PROMISOR)) {
      s.defaultRefs++;
      return;
    }
    s.error(`${refname}: invalid sha1 pointer ${id.toString('hex')}`, FSCK_ERROR_REACHABLE);
    return;
  }
  const type = s.typeOf(n);
  if (type === 0) {
    // Listed, but not readable (its pack failed): git's parse_object fails the same way.
    s.error(`${refname}: invalid sha1 pointer ${id.toString('hex')}`, FSCK_ERROR_REACHABLE);
    return;
  }
  if (type !== OBJ_COMMIT && refname.startsWith('refs/heads/')) s.error(`${refname}: not a commit`, FSCK_ERROR_REFS);
  s.defaultRefs++;
  s.flags[n] = (s.flags[n] as number) | USED;
  s.putName(n, refname);
  markReachable(s, n);
}

/** The heads: the given objects, or every ref, each worktree's HEAD and reflogs, and the index. */
export function heads(s: FsckState, withReflogs: boolean): void {
  const o = s.o;
  const objects = o.objects ?? [];
  for (const arg of objects) {
    let id: Buffer;
    try {
      id = s.repo.resolve(arg);
    } catch (e) {
      if (!isPackwrightError(e)) throw e;
      s.error(`invalid parameter: expected sha1, got '${arg}'`, FSCK_ERROR_OBJECT);
      continue;
    }
    const n = s.numberOf(id);
    if (!(((s.flags[n] as number) & HAS_OBJ))) {
      if (((s.flags[n] as number) & PROMISOR)) continue;
      s.error(`${id.toString('hex')}: object missing`, FSCK_ERROR_OBJECT);
      continue;
    }
    s.flags[n] = (s.flags[n] as number) | USED;
    s.putName(n, arg);
    markReachable(s, n);
  }
  if (objects.length === 0) {
    for (const ref of s.repo.refs.list('refs/')) handleRef(s, ref.name, ref.id);
    for (const wt of worktrees(s.repo)) {
      headLink(s, wt.refName, wt.gitDir);
      if (withReflogs) reflogs(s, wt);
    }
    if (s.defaultRefs === 0) {
      s.say('notice', 'notice: No default references');
      s.showUnreachable = false;
    }
  }
  if (objects.length === 0 || o.cache === true) cacheObjects(s);
}

/** git's fsck_head_link for one worktree's HEAD. */
export function headLink(s: FsckState, refName: string, gitDir: string): void {
  let text: string;
  try {
    text = readFileSync(join(gitDir, 'HEAD'), 'latin1');
  } catch {
    // git's fsck reports an unreadable HEAD as invalid, whatever the reason.
    s.error(`invalid ${refName}`, FSCK_ERROR_REFS);
    return;
  }
  const symbolic = /^ref: *(.*?)\s*$/s.exec(text);
  let id: Buffer | undefined;
  if (symbolic !== null) {
    const target = symbolic[1] as string;
    if (!target.startsWith('refs/heads/')) {
      s.error(`${refName} points to something strange (${target})`, FSCK_ERROR_REFS);
      return;
    }
    id = s.repo.refs.resolve(target);
    if (id === undefined) {
      s.say('notice', `notice: ${refName} points to an unborn branch (${target.slice(11)})`);
      return;
    }
  } else {
    const hex = text.trim();
    if (hex.length !== s.H * 2 || !isHex(hex)) {
      s.error(`invalid ${refName}`, FSCK_ERROR_REFS);
      return;
    }
    id = Buffer.from(hex, 'hex');
    if (id.every((b) => b === 0)) {
      s.error(`${refName}: detached HEAD points at nothing`, FSCK_ERROR_REFS);
      return;
    }
  }
  if (!id.every((b) => b === 0)) handleRef(s, refName, id);
}

/** Every entry of the worktree's reflogs (git's fsck_handle_reflog). */
export function reflogs(s: FsckState, wt: Worktree): void {
  for (const { name, path } of wt.reflogs) {
    for (const e of readReflogFile(path, s.H)) {
      reflogId(s, name, e.old, 0);
      reflogId(s, name, e.new, e.timestamp);
    }
  }
}

export function reflogId(s: FsckState, refname: string, id: Buffer, timestamp: number): void {
  if (id.every((b) => b === 0)) return;
  const hex = id.toString('hex');
  const n = s.numberOf(id);
  if (((s.flags[n] as number) & HAS_OBJ)) {
    if (timestamp !== 0) s.putName(n, `${refname}@{${timestamp}}`);
    s.flags[n] = (s.flags[n] as number) | USED;
    markReachable(s, n);
  } else if (!(((s.flags[n] as number) & PROMISOR))) {
    s.error(`${refname}: invalid reflog entry ${hex}`, FSCK_ERROR_REACHABLE);
  }
}

/** The index's blobs, cache tree and resolve-undo stages are heads (git's --cache). */
export function cacheObjects(s: FsckState): void {
  const path = join(s.repo.gitDir, 'index');
  let data: Buffer;
  try {
    data = readFileSync(path);
  } catch (e) {
    if (!isNotFound(e)) throw e;
    return;
  }
  const index = parseIndexFile(data, s.repo.format, path);
  for (const e of index.entries) {
    if ((e.mode & S_IFMT) === S_IFGITLINK) continue;
    const n = s.numberOf(e.id);
    if (s.table.types[n] === 0) s.table.types[n] = OBJ_BLOB;
    s.flags[n] = (s.flags[n] as number) | USED;
    s.putName(n, `:${e.path}`);
    markReachable(s, n);
  }
  for (const node of index.cacheTree) {
    if (node.entryCount < 0 || node.id === undefined) continue;
    const n = s.numberOf(node.id);
    if (!s.isPresent(n)) {
      s.error(`${node.id.toString('hex')}: invalid sha1 pointer in cache-tree`, FSCK_ERROR_REFS);
      continue;
    }
    s.flags[n] = (s.flags[n] as number) | USED;
    s.putName(n, ':');
    markReachable(s, n);
    if (s.typeOf(n) !== OBJ_TREE) s.objectError(s.typeOf(n), node.id.toString('hex'), 'non-tree in cache-tree');
  }
  for (const ru of index.resolveUndo) {
    ru.modes.forEach((mode, stage) => {
      const id = ru.ids[stage];
      if (id === undefined || (mode & S_IFMT) !== S_IFREG) return;
      const n = s.numberOf(id);
      if (!s.isPresent(n)) {
        s.error(`${id.toString('hex')}: invalid sha1 pointer in resolve-undo`, FSCK_ERROR_REFS);
        return;
      }
      s.flags[n] = (s.flags[n] as number) | USED;
      s.putName(n, `:(${stage + 1}):${ru.path}`);
      markReachable(s, n);
    });
  }
}

export interface Worktree {
  /** How git names its HEAD here (`HEAD`, `main-worktree/HEAD`, `worktrees/<id>/HEAD`). */
  refName: string;
  gitDir: string;
  /** Its reflogs: ref name (as git names it from here) and file. */
  reflogs: ReflogFile[];
}

/** The main worktree and every linked one, with their HEADs' names as seen from this repository. */
function worktrees(repo: Repository): Worktree[] {
  const common = repo.commonDir;
  const inLinked = repo.gitDir !== common;
  const list: Worktree[] = [];
  const logsOf = (gitDir: string, prefix: string, shared: boolean): ReflogFile[] => {
    // The worktree's own: HEAD; the shared ones (refs/...) only for the main worktree.
    const out = [{ name: `${prefix}HEAD`, path: join(gitDir, 'logs', 'HEAD') }];
    if (shared) out.push(...reflogFiles(join(common, 'logs', 'refs'), 'refs'));
    return out;
  };
  list.push({ refName: inLinked ? 'main-worktree/HEAD' : 'HEAD', gitDir: common, reflogs: logsOf(common, inLinked ? 'main-worktree/' : '', true) });
  const ids = (readDirIfPresent(join(common, 'worktrees'), 'worktrees directory') ?? []).sort();
  for (const id of ids) {
    const gitDir = join(common, 'worktrees', id);
    const current = inLinked && gitDir === repo.gitDir;
    const prefix = current ? '' : `worktrees/${id}/`;
    list.push({ refName: `${prefix}HEAD`, gitDir, reflogs: logsOf(gitDir, prefix, false) });
  }
  return list;
}
