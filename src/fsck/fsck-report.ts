import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ObjectTable } from '../walk/object-table.js';
import { TYPE_NAMES } from '../objects/object-type.js';
import { verifyMultiPackIndex } from '../odb/maintain-multi-pack-index.js';
import { verifyStoreCommitGraph } from '../walk/verify-store-commit-graph.js';
import { FsckState, REACHABLE, HAS_OBJ, USED, PROMISOR, IN_PACK } from './fsck-state.js';
import { FSCK_ERROR_REACHABLE, FSCK_ERROR_COMMIT_GRAPH, FSCK_ERROR_MULTI_PACK_INDEX } from './fsck-options.js';

/** git's check_connectivity's last loop: missing, unreachable and dangling objects, in git's hash order. */
export function report(s: FsckState, lostFound: boolean): void {
  const table = s.table;
  const missing: number[] = [];
  const loose: number[] = [];
  for (let n = 0; n < table.count; n++) {
    const f = s.flags[n] as number;
    if (f & REACHABLE) {
      if (!(f & HAS_OBJ) && !(f & PROMISOR) && !(f & IN_PACK)) missing.push(n);
    } else if (f & HAS_OBJ && (s.showUnreachable || !(f & USED))) {
      loose.push(n);
    }
  }
  const order = hashOrder(table);
  const sorted = (list: number[]): number[] => list.sort((a, b) => (order(a) - order(b)) || Buffer.compare(table.id(a), table.id(b)));
  const all = sorted([...missing, ...loose]);
  for (const n of all) {
    const f = s.flags[n] as number;
    const hex = s.hexOf(n);
    const type = TYPE_NAMES[s.typeOf(n)] || 'unknown';
    if (f & REACHABLE) {
      s.status |= FSCK_ERROR_REACHABLE;
      s.say('missing', `missing ${type} ${s.describe(hex, n)}`, { id: hex });
    } else if (s.showUnreachable) {
      s.say('unreachable', `unreachable ${type} ${s.describe(hex, n)}`, { id: hex });
    } else {
      if (s.o.dangling !== false) s.say('dangling', `dangling ${type} ${s.describe(hex, n)}`, { id: hex });
      if (lostFound) writeLostFound(s, n, hex, type);
    }
  }
}

export function writeLostFound(s: FsckState, n: number, hex: string, type: string): void {
  const dir = join(s.repo.gitDir, 'lost-found', type === 'commit' ? 'commit' : 'other');
  mkdirSync(dir, { recursive: true });
  const content = type === 'blob' ? s.handle.read(s.table.id(n)).data : Buffer.from(`${hex}\n`);
  writeFileSync(join(dir, hex), content);
}

/** `git multi-pack-index verify` of the store's file when core.multiPackIndex is on (git runs it as a child). */
/**
 * `git commit-graph verify` of every object directory (the repository's and its alternates')
 * when core.commitGraph is on, as git's fsck runs it: its errors count as ERROR_COMMIT_GRAPH.
 */
export function verifyCommitGraphs(s: FsckState): void {
  if (s.repo.config.getBool('core.commitGraph') === false) return;
  for (const dir of s.handle.looseDirs()) {
    for (const line of verifyStoreCommitGraph(s.handle, dir)) {
      // A chain that loads only in part is a warning, not an error (git's verify exits 0).
      if (!line.startsWith('warning: ')) s.status |= FSCK_ERROR_COMMIT_GRAPH;
      s.say(line.startsWith('warning: ') ? 'warning' : 'error', line);
    }
  }
}

export function verifyMidx(s: FsckState): void {
  if (s.repo.config.getBool('core.multiPackIndex') === false) return;
  for (const e of verifyMultiPackIndex(s.repo.store)) s.error(e, FSCK_ERROR_MULTI_PACK_INDEX);
}

/**
 * The order git's fsck lists objects in at the end: its object hash table's, where an object sits
 * at its id's first four bytes (little-endian) modulo the table's size, a power of two at least
 * twice the number of objects (and 32). Collisions are ordered by id here.
 */
function hashOrder(table: ObjectTable): (n: number) => number {
  let size = 32;
  while (table.count * 2 > size) size *= 2;
  const mask = size - 1;
  const ids = table.ids;
  const H = table.hashLength;
  return (n) => {
    const p = n * H;
    return (((ids[p] as number) | ((ids[p + 1] as number) << 8) | ((ids[p + 2] as number) << 16) | ((ids[p + 3] as number) << 24)) >>> 0) & mask;
  };
}
