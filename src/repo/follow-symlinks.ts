import { isPackwrightError } from '../errors/packwright-error.js';
import { findTreeEntry, S_IFDIR, S_IFLNK, S_IFMT, S_IFREG } from '../objects/tree.js';
import type { Repository } from './repository.js';

/** Where `<rev>:<path>` leads with its symlinks followed: an object, a path outside the tree, or git's failure kinds. */
export type FollowResult = { kind: 'found'; id: Buffer } | { kind: 'symlink'; path: string } | { kind: 'missing' | 'dangling' | 'loop' | 'notdir' };

/**
 * `<rev>:<path>` with in-tree symlinks followed (git's get_tree_entry_follow_symlinks): a link's
 * target replaces its name, relative to the link's directory; `..` climbs the trees walked so far;
 * a link that leaves the tree (absolute, or above the top) gives its remaining path; at most 40
 * links.
 */
export function followSymlinks(repo: Repository, rev: string, path: string): FollowResult {
  const store = repo.objects;
  const H = store.hashLength;
  let top: Buffer;
  try {
    top = repo.resolve(`${rev}^{tree}`);
  } catch (e) {
    if (isPackwrightError(e)) return { kind: 'missing' };
    throw e;
  }
  const parents: { id: Buffer; data: Buffer }[] = [];
  let name = path;
  let failure: 'missing' | 'dangling' = 'missing';
  let follows = 40;
  let current: { id: Buffer; data: Buffer } | undefined;
  let nextTree: Buffer | undefined = top;
  for (;;) {
    if (nextTree !== undefined) {
      let obj;
      try {
        obj = store.read(nextTree);
      } catch (e) {
        if (isPackwrightError(e)) return { kind: failure };
        throw e;
      }
      if (obj.type !== 'tree') return { kind: failure };
      current = { id: nextTree, data: obj.data };
      parents.push(current);
      nextTree = undefined;
      if (name === '') return { kind: 'found', id: current.id };
      if (obj.data.length === 0) return { kind: failure };
    }
    name = name.replace(/^\/+/, '');
    const slash = name.indexOf('/');
    const first = slash < 0 ? name : name.slice(0, slash);
    const remainder = slash < 0 ? undefined : name.slice(slash + 1);
    if (first === '..') {
      if (parents.length === 1) return { kind: 'symlink', path: name };
      parents.pop();
      current = parents[parents.length - 1];
      name = remainder ?? '';
      continue;
    }
    if (first === '') return { kind: 'found', id: (parents[parents.length - 1] as { id: Buffer }).id };
    const entry = findTreeEntry((current as { data: Buffer }).data, H, Buffer.from(first, 'latin1'));
    if (entry === undefined) return { kind: failure };
    const kind = entry.mode & S_IFMT;
    if (kind === S_IFDIR) {
      if (remainder === undefined) return { kind: 'found', id: entry.id };
      nextTree = entry.id;
      name = remainder;
    } else if (kind === S_IFLNK) {
      if (follows-- === 0) return { kind: 'loop' };
      failure = 'dangling';
      let target: string;
      try {
        target = store.read(entry.id).data.toString('latin1');
      } catch (e) {
        if (isPackwrightError(e)) return { kind: 'dangling' };
        throw e;
      }
      if (target.startsWith('/')) return { kind: 'symlink', path: Buffer.from(target, 'latin1').toString('utf8') };
      current = parents[parents.length - 1];
      name = remainder === undefined ? target : `${target}/${remainder}`;
    } else if (kind === S_IFREG) {
      return remainder === undefined ? { kind: 'found', id: entry.id } : { kind: 'notdir' };
    } else {
      return { kind: 'found', id: entry.id };
    }
  }
}
