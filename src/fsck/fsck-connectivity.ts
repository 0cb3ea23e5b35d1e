import { TreeCursor, S_IFDIR, S_IFLNK, S_IFMT, S_IFREG } from '../objects/tree.js';
import { isPackwrightError } from '../errors/packwright-error.js';
import { objectLinks } from './check-object.js';
import { OBJ_BLOB, OBJ_COMMIT, OBJ_TAG, OBJ_TREE, TYPE_NAMES, typeNumber } from '../objects/object-type.js';
import { FsckState, REACHABLE, HAS_OBJ, USED, PROMISOR, type LinkChunk } from './fsck-state.js';
import { FSCK_ERROR_OBJECT, FSCK_ERROR_REACHABLE } from './fsck-options.js';
import type { StoredObject } from '../odb/store-pack.js';

/** git's mark_object for a head (no parent). */
export function markReachable(s: FsckState, n: number): void {
  mark(s, n, 0, -1);
}

/** git's mark_object: reach `n` through a link of type `type` from `parent` (-1: a head). */
export function mark(s: FsckState, n: number, type: number, parent: number): void {
  const f = s.flags[n] as number;
  if (f & REACHABLE) return;
  s.flags[n] = f | REACHABLE;
  if (f & PROMISOR) return;
  if (!(f & HAS_OBJ)) {
    if (parent >= 0 && !s.isPresent(n)) {
      s.status |= FSCK_ERROR_REACHABLE;
      const parentHex = s.hexOf(parent);
      const hex = s.hexOf(n);
      const pType = (TYPE_NAMES[s.table.types[parent] as number] || 'unknown').padStart(7);
      const cType = (TYPE_NAMES[(s.table.types[n] as number) || type] || 'unknown').padStart(7);
      s.say('broken-link', `broken link from ${pType} ${s.describe(parentHex, parent)}\n              to ${cType} ${s.describe(hex, n)}`, { id: hex });
    }
    return;
  }
  s.pending.push(n);
}

/** Walks everything reachable from the heads (git's traverse_reachable, a stack). */
export function traverse(s: FsckState): void {
  const progress = s.o.onProgress;
  let done = 0;
  while (s.pending.length > 0) {
    const n = s.pending.pop() as number;
    walkLinks(s, n, (t, type) => mark(s, t, type, n));
    if (progress !== undefined && (++done & 4095) === 0) progress('checking connectivity', done, 0);
  }
}

export function isShallow(s: FsckState, n: number): boolean {
  if (s.shallowCommits === undefined) {
    s.shallowCommits = new Set();
    for (const id of s.repo.shallowCommits()) {
      const k = s.table.find(id);
      if (k >= 0) s.shallowCommits.add(k);
    }
  }
  return s.shallowCommits.size > 0 && s.shallowCommits.has(n);
}

export function walkLinks(s: FsckState, n: number, visit: (target: number, type: number) => void): void {
  if (isShallow(s, n)) {
    const all = visit;
    visit = (target, type) => {
      if (type !== OBJ_COMMIT) all(target, type);
    };
  }
  const c = s.linkChunk[n] as number;
  if (c !== 0 && s.o.nameObjects !== true) {
    const chunk = s.chunks[c - 1] as LinkChunk;
    const r = chunk.records;
    const p = s.linkAt[n] as number;
    const links = r[p + 1] as number;
    for (let i = 0; i < links; i++) visit(s.target(chunk, r[p + 2 + 2 * i] as number), r[p + 3 + 2 * i] as number);
    return;
  }
  const type = s.table.types[n] as number;
  if (type === OBJ_BLOB) return;
  let object: StoredObject;
  try {
    object = s.handle.read(s.table.id(n));
  } catch (e) {
    if (!isPackwrightError(e)) throw e;
    s.error(`${e.message}`, FSCK_ERROR_OBJECT, s.hexOf(n));
    return;
  }
  const objectType = typeNumber(object.type);
  s.table.types[n] = objectType;
  if (objectType === OBJ_BLOB) return;
  const name = s.o.nameObjects === true ? s.names.get(n) : undefined;
  const targets: [number, number, string | undefined][] = [];
  const data = object.data;
  if (objectType === OBJ_TREE && name !== undefined) {
    const e = new TreeCursor(s.H).reset(data);
    while (e.tryNext()) {
      const kind = e.mode & S_IFMT;
      const t = kind === S_IFDIR ? OBJ_TREE : kind === S_IFREG || kind === S_IFLNK ? OBJ_BLOB : 0;
      if (t === 0) continue;
      const path = data.toString('utf8', e.nameStart, e.nameEnd);
      targets.push([s.numberOf(data.subarray(e.idStart, e.idStart + s.H)), t, `${name}${path}${t === OBJ_TREE ? '/' : ''}`]);
    }
    if (e.error !== undefined) s.error(e.error, 0);
  } else if (name === undefined) {
    // Each link visited as it is read: no view or array an entry (a tree walk meets tens of millions).
    // Marking only queues what it reaches, so the tree's buffer stays as it is meanwhile.
    const error = objectLinks(objectType, data, s.H, (bytes, at, linkType) => {
      const t = s.numberOf(bytes, at);
      if (s.table.types[t] === 0) s.table.types[t] = linkType;
      visit(t, linkType);
    });
    if (error !== undefined && objectType === OBJ_TREE) s.error(error, 0);
    return;
  } else {
    const error = objectLinks(objectType, data, s.H, (bytes, at, t) => targets.push([s.numberOf(bytes, at), t, undefined]));
    if (error !== undefined && objectType === OBJ_TREE) s.error(error, 0);
    nameLinks(objectType, name, targets);
  }
  for (const [t, linkType, childName] of targets) {
    if (s.table.types[t] === 0) s.table.types[t] = linkType;
    if (childName !== undefined) s.putName(t, childName);
    visit(t, linkType);
  }
}

/** With --connectivity-only, unreachable objects are read so what they point to counts as used. */
export function markUnreachableReferents(s: FsckState): void {
  for (let n = 0; n < s.table.count; n++) {
    const f = s.flags[n] as number;
    if (!(f & HAS_OBJ) || f & REACHABLE) continue;
    if (s.typeOf(n) === OBJ_BLOB) continue;
    walkLinks(s, n, (t) => { s.flags[t] = (s.flags[t] as number) | USED; });
  }
}

/** A commit's or tag's link names from its own (git's fsck_walk_commit and fsck_walk_tag). */
function nameLinks(type: number, name: string, targets: [number, number, string | undefined][]): void {
  if (type === OBJ_TAG) {
    for (const t of targets) t[2] = name;
    return;
  }
  if (type !== OBJ_COMMIT) return;
  let generation = 0;
  let prefix = name.length;
  const m = /^(.*)~(\d+)$/.exec(name);
  if (name.endsWith('^')) {
    generation = 1;
    prefix = name.length - 1;
  } else if (m !== null) {
    generation = Number(m[2]);
    prefix = (m[1] as string).length;
  }
  let parent = 0;
  for (const t of targets) {
    if (t[1] === OBJ_TREE && parent === 0 && t[2] === undefined) {
      t[2] = `${name}:`;
      parent = -1;
      continue;
    }
    if (t[1] !== OBJ_COMMIT) continue;
    const count = parent < 0 ? 0 : parent;
    parent = count + 1;
    if (count > 0) t[2] = `${name}^${count + 1}`;
    else if (generation > 0) t[2] = `${name.slice(0, prefix)}~${generation + 1}`;
    else t[2] = `${name}^`;
  }
}
