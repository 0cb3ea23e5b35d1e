import { join } from 'node:path';
import { mkdirSync } from 'node:fs';
import { commitGraphBytes, computeGenerations } from '../commit-graph/commit-graph-bytes.js';
import { CommitGraphChain } from '../commit-graph/commit-graph-chain.js';
import { PackwrightError, throwIfAborted } from '../errors/packwright-error.js';
import { toHex } from '../hash/hex.js';
import { sortIds } from '../idx/sort-ids.js';
import { writeFileAtomic } from '../io/write-file-atomic.js';
import { parseCommit } from '../objects/commit.js';
import { OBJ_COMMIT, typeName } from '../objects/object-type.js';
import type { ObjectLocation, StoreHandle } from '../odb/store-handle.js';
import type { StorePack } from '../odb/store-pack.js';
import { ObjectTable } from './object-table.js';

/** Commits beyond which the write reads the packs through big windows (as a walk of most of the store does). */
const DENSE_COMMITS = 2048;

export interface WriteCommitGraphOptions {
  /**
   * The commits to start from (git's --reachable: the refs' commits; --stdin-commits: those
   * given); without them and without `packs`, every commit of every pack of the store (git's
   * default). Whatever they reach is added.
   */
  commits?: readonly Uint8Array[];
  /** Only the commits of these packs (git's --stdin-packs: `pack-<hash>.idx` names). */
  packs?: readonly string[];
  /** Keep the commits of the graph there now (git's --append). */
  append?: boolean;
  /** Write corrected commit dates (git's commitGraph.generationVersion=2, the default). */
  generationData?: boolean;
  /** Called now and then with how many commits have been read. */
  onProgress?: (commits: number) => void;
  signal?: AbortSignal;
}

const NO_PARENTS = new Int32Array(0);

/** A number per pack, in the order first asked (to sort locations by pack, then offset). */
const packNumbers = new WeakMap<StorePack, number>();
let nextPackNumber = 0;
function packNumber(pack: StorePack): number {
  let n = packNumbers.get(pack);
  if (n === undefined) packNumbers.set(pack, (n = nextPackNumber++));
  return n;
}

export interface WrittenCommitGraph {
  /** The file written (`<objects>/info/commit-graph`). */
  path: string;
  commits: number;
}

/**
 * `git commit-graph write` (not split); undefined when there is no commit to write (no file then): the commits to start from and every commit they reach,
 * each read from the objects (never from a graph), sorted by id, with their topological levels
 * and corrected commit dates, written to `info/commit-graph` of the store's own directory through
 * `commit-graph.lock`, byte for byte as git writes it. A commit that cannot be read, or an id
 * that is not a commit, fails the write as git's does, and nothing is replaced.
 */
export function writeCommitGraph(handle: StoreHandle, options: WriteCommitGraphOptions = {}): WrittenCommitGraph | undefined {
  const H = handle.hashLength;
  const table = new ObjectTable(H);
  const queue: number[] = [];
  const add = (id: Uint8Array, at = 0): number => {
    const n = table.intern(id, at);
    if (table.added) queue.push(n);
    return n;
  };
  if (options.commits !== undefined) {
    for (const id of options.commits) add(id);
  }
  if (options.packs !== undefined || options.commits === undefined) {
    const wanted = options.packs === undefined ? undefined : new Set(options.packs);
    const found = new Set<string>();
    for (const pack of handle.packs()) {
      const name = pack.idxPath.slice(pack.idxPath.lastIndexOf('/') + 1);
      if (wanted !== undefined && !wanted.has(name)) continue;
      found.add(name);
      const index = pack.index;
      for (let i = 0; i < index.count; i++) if (pack.typeAt(i) === OBJ_COMMIT) add(index.id(i));
    }
    for (const name of wanted ?? []) {
      if (!found.has(name)) throw new PackwrightError('PACK_MISSING', `error adding pack ${name}`);
    }
  }
  if (options.append === true) {
    const existing = CommitGraphChain.read(handle.looseDirs()[0] as string, H);
    for (const layer of existing?.layers ?? []) for (let i = 0; i < layer.count; i++) add(layer.data, layer.idOffset(i));
  }
  // Read every commit, adding the parents it names (git's close_reachable), in rounds: each round
  // reads the commits queued by the one before in pack order, so reads run forward through the
  // packs' windows instead of jumping between branches (gitoxide, --reachable: 657 MB of reads of
  // an 117 MB pack in 64 KiB windows read again and again, in queue order).
  const parentLists: Int32Array[] = [];
  const commitDates: number[] = [];
  let treeBytes = new Uint8Array(1024 * H);
  let read = 0;
  for (let roundStart = 0; roundStart < queue.length;) {
    const roundEnd = queue.length;
    const round: { n: number; location: ObjectLocation; pack: number; offset: number }[] = [];
    for (let k = roundStart; k < roundEnd; k++) {
      const n = queue[k] as number;
      const id = table.id(n);
      const location = handle.locate(id);
      if (location === undefined) throw new PackwrightError('OBJECT_NOT_FOUND', `unable to parse commit ${toHex(id)}`);
      const packed = location.kind === 'pack';
      round.push({ n, location, pack: packed ? packNumber(location.pack) : -1, offset: packed ? location.pack.index.offset(location.position) : 0 });
    }
    round.sort((a, b) => a.pack - b.pack || a.offset - b.offset);
    // Filled in this round's order: room first, so the arrays stay packed.
    while (parentLists.length < roundEnd) {
      parentLists.push(NO_PARENTS);
      commitDates.push(0);
    }
    // A history this long reads commits all over the packs: through big windows, not a read each.
    if (read < DENSE_COMMITS && read + round.length >= DENSE_COMMITS) handle.preferDenseReads({ whole: false });
    for (const { n, location } of round) {
      if ((++read & 1023) === 0) {
        options.onProgress?.(read);
        throwIfAborted(options.signal, 'commit-graph write');
      }
      const id = table.id(n);
      // Parsed at once: the store's buffer, not a copy.
      const obj = handle.readTransientAt(location);
      if (obj.type !== OBJ_COMMIT) throw new PackwrightError('OBJECT_CORRUPT', `object ${toHex(id)} is a ${typeName(obj.type)}, not a commit`);
      let c;
      try {
        c = parseCommit(obj.data, H, toHex(id));
      } catch (e) {
        throw new PackwrightError('OBJECT_CORRUPT', `unable to parse commit ${toHex(id)}`, { cause: e });
      }
      if ((n + 1) * H > treeBytes.length) {
        const grown = new Uint8Array(Math.max(treeBytes.length * 2, (n + 1) * H));
        grown.set(treeBytes);
        treeBytes = grown;
      }
      treeBytes.set(c.tree, n * H);
      commitDates[n] = c.time;
      parentLists[n] = Int32Array.from(c.parents, (p) => add(p));
    }
    roundStart = roundEnd;
  }
  options.onProgress?.(queue.length);
  // Positions in id order.
  const count = table.count;
  // No commits, no file (git writes none either).
  if (count === 0) return undefined;
  const order = sortIds(table.ids, count, H);
  const position = new Int32Array(count);
  for (let i = 0; i < count; i++) position[order[i] as number] = i;
  const ids = new Uint8Array(count * H);
  const sortedTrees = new Uint8Array(count * H);
  const parents: number[][] = [];
  const dates = new Float64Array(count);
  for (let i = 0; i < count; i++) {
    const n = order[i] as number;
    ids.set(table.id(n), i * H);
    sortedTrees.set(treeBytes.subarray(n * H, (n + 1) * H), i * H);
    parents.push(Array.from(parentLists[n] as Int32Array, (p) => position[p] as number));
    dates[i] = commitDates[n] as number;
  }
  const { levels, corrected } = computeGenerations(parents, dates);
  const bytes = commitGraphBytes(handle.format, {
    count, ids, trees: sortedTrees, parents, dates, levels,
    ...(options.generationData !== false ? { corrected } : {}),
  });
  const info = join(handle.looseDirs()[0] as string, 'info');
  mkdirSync(info, { recursive: true });
  const path = join(info, 'commit-graph');
  writeFileAtomic(path, bytes, 0o444, `${path}.lock`);
  return { path, commits: count };
}
