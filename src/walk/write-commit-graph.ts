import { mkdirSync, readdirSync, renameSync, rmSync, statSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { bloomFilter, DEFAULT_BLOOM_SETTINGS, type BloomSettings } from '../commit-graph/bloom-filter.js';
import { commitGraphBytes, computeGenerations } from '../commit-graph/commit-graph-bytes.js';
import { CommitGraphChain } from '../commit-graph/commit-graph-chain.js';
import type { CommitGraphFile } from '../commit-graph/commit-graph.js';
import { PackwrightError, throwIfAborted } from '../errors/packwright-error.js';
import { toHex } from '../hash/hex.js';
import { sortIds } from '../idx/sort-ids.js';
import { temporaryPathBeside, writeFileAtomic } from '../io/write-file-atomic.js';
import { parseCommit } from '../objects/commit.js';
import type { ObjectLocation, StoreHandle } from '../odb/store-handle.js';
import type { StorePack } from '../odb/store-pack.js';
import { changedPaths, TreeBytes } from './changed-paths.js';
import { ObjectTable } from './object-table.js';

/** Options of `writeCommitGraph`, as `git commit-graph write` takes them. */
export interface WriteCommitGraphOptions {
  /**
   * The commits to start from (git's --reachable: the refs' commits; --stdin-commits: those
   * given); without them and without `packs`, every commit of every pack of the store (git's
   * default). Whatever they reach is added.
   */
  commits?: readonly Uint8Array[] | undefined;
  /** Only the commits of these packs (git's --stdin-packs: `pack-<hash>.idx` names). */
  packs?: readonly string[] | undefined;
  /** Keep the commits of the graph there now (its top layer: git's --append). */
  append?: boolean | undefined;
  /** Write corrected commit dates (git's commitGraph.generationVersion=2, the default). */
  generationData?: boolean | undefined;
  /**
   * Changed-path Bloom filters (git's --changed-paths): true writes them, false never (git's
   * --no-changed-paths); by default, only when the graph there now has them. A filter the graph
   * there has for a commit is kept, as git keeps it. `bloomSettings` replaces the defaults (git's
   * GIT_TEST_BLOOM_SETTINGS_*), unless the graph there has its own.
   */
  changedPaths?: boolean | undefined;
  bloomSettings?: Partial<BloomSettings> | undefined;
  /**
   * Compute at most this many new filters (git's --max-new-filters, commitGraph.maxNewFilters);
   * the rest get none (an empty one), and a later write fills them in. Which ones are computed
   * follows git's order: commits found in packs by pack order, else by generation then date.
   */
  maxNewFilters?: number | undefined;
  /**
   * Write a layer of a split graph (git's --split): the commits the graph there lacks, in a new
   * layer over it, merged with the layers above the first one more than `sizeMultiple` (default
   * 2) times its size or while it has more than `maxCommits`; 'no-merge' never merges, 'replace'
   * writes every commit in one layer. Layers left out, and older than `expireTime` (seconds since
   * the epoch, default now), are deleted.
   */
  split?: { mode?: 'merge' | 'no-merge' | 'replace'; sizeMultiple?: number; maxCommits?: number; expireTime?: number } | undefined;
  /** The files' mode (default 0o444; see sharedFileMode for core.sharedRepository). */
  fileMode?: number | undefined;
  /** Called now and then with how many commits have been read. */
  onProgress?: ((commits: number) => void) | undefined;
  signal?: AbortSignal | undefined;
}

/** What `writeCommitGraph` wrote: the file (or the chain's newest layer) and the commits in it. */
export interface WrittenCommitGraph {
  /** The file written (`<objects>/info/commit-graph`, or the new layer of `info/commit-graphs/`). */
  path: string;
  /** Commits in the file written. */
  commits: number;
}

/** What the write knows of each commit it read, by its number in the write's table. */
interface ReadCommits {
  trees: Uint8Array;
  parents: Int32Array[];
  dates: number[];
  /** 1 for a commit read. */
  done: number[];
}

const NO_PARENTS = new Int32Array(0);
/** A commit whose filter was not computed (past --max-new-filters): no bytes in BDAT. */
const NO_FILTER = new Uint8Array(0);

/** Commits beyond which the write has the indexes read whole (see readCommits). */
const DENSE_LOOKUPS = 1024;

/**
 * `git commit-graph write`: the commits to start from and every commit they reach, read from the
 * objects (never from a graph), sorted by id, with their topological levels and corrected commit
 * dates (and changed-path filters), byte for byte as git 2.39 writes them: `info/commit-graph`
 * through `commit-graph.lock` (a split chain there goes), or with `split` a new layer
 * `info/commit-graphs/graph-<hash>.graph` and the chain file through its lock. Undefined when
 * there is no commit to write (no file then). A commit that cannot be read, or an id that is
 * not a commit, fails the write as git's does, and nothing is replaced.
 */
export function writeCommitGraph(handle: StoreHandle, options: WriteCommitGraphOptions = {}): WrittenCommitGraph | undefined {
  const H = handle.hashLength;
  const objectsDir = handle.looseDirs()[0] as string;
  // The graph as git loads it: the first directory's that has one (the store's own, then its
  // alternates'), a chain's layers looked for in all of them.
  const before = CommitGraphChain.readFirst(handle.looseDirs(), H);
  const ownLayer = (layer: CommitGraphFile): boolean => layer.path.startsWith(`${objectsDir}/`);
  const split = options.split;
  const replace = split?.mode === 'replace';
  // In a split write, a commit the graph has is neither written nor followed (unless replacing).
  const known = (id: Uint8Array, at = 0): boolean => split !== undefined && !replace && before !== undefined && before.find(id, at) >= 0;

  const table = new ObjectTable(H);
  const queue: number[] = [];
  const add = (id: Uint8Array, at = 0): number => {
    const n = table.intern(id, at);
    if (table.added) queue.push(n);
    return n;
  };
  for (const id of options.commits ?? []) add(id);
  // git's commit_pos: the order commits were found in packs (the last time, for one in two).
  const packOrderOf = new Map<number, number>();
  let packCounter = 0;
  const orderByPack = options.packs !== undefined || options.commits === undefined;
  if (orderByPack) {
    const wanted = options.packs === undefined ? undefined : new Set(options.packs);
    const found = new Set<string>();
    for (const pack of handle.packs()) {
      const name = pack.idxPath.slice(pack.idxPath.lastIndexOf('/') + 1);
      if (wanted !== undefined && !wanted.has(name)) continue;
      found.add(name);
      const index = pack.index;
      // In pack order, as git's for_each_object_in_pack: the order filters are computed in.
      const { positions } = index.packOrder();
      for (let k = 0; k < positions.length; k++) {
        const i = positions[k] as number;
        if (pack.typeAt(i) !== 'commit') continue;
        const n = add(index.id(i));
        packOrderOf.set(n, ++packCounter);
      }
    }
    for (const name of wanted ?? []) {
      if (!found.has(name)) throw new PackwrightError('PACK_MISSING', `error adding pack ${name}`);
    }
  }
  if (options.append === true && before !== undefined) {
    const top = before.layers[before.layers.length - 1] as CommitGraphFile;
    for (let i = 0; i < top.count; i++) add(top.data, top.idOffset(i));
  }
  const read: ReadCommits = { trees: new Uint8Array(1024 * H), parents: [], dates: [], done: [] };
  readCommits(handle, table, queue, read, (n) => !known(table.ids, n * H), add, options);

  // The commits of the new file: all read, or in a split write those the graph lacks, and the
  // commits of the layers it merges.
  let members: number[] = [];
  for (let n = 0; n < table.count; n++) if (!known(table.ids, n * H)) members.push(n);
  if (members.length === 0 && !replace) return undefined;
  let kept = 0;
  if (split !== undefined && before !== undefined && !replace) {
    kept = before.layers.length;
    if (split.mode !== 'no-merge') {
      const multiple = split.sizeMultiple ?? 2;
      let count = members.length;
      while (kept > 0) {
        const top = before.layers[kept - 1] as CommitGraphFile;
        if (!(top.count <= multiple * count || (split.maxCommits !== undefined && split.maxCommits > 0 && count > split.maxCommits))) break;
        // An alternate's layers are never merged into this directory's.
        if (!ownLayer(top)) break;
        count += top.count;
        kept--;
      }
    }
    // A chain cannot sit on an alternate's single file: that file's commits go into the new layer.
    if (kept === 1 && !ownLayer(before.layers[0] as CommitGraphFile) && (before.layers[0] as CommitGraphFile).path.endsWith('/info/commit-graph')) kept = 0;
    // The merged layers' commits that are still here (git's merge_commit_graph), read unless
    // the write read them already.
    const inMembers = new Set(members);
    const unread: number[] = [];
    for (let l = kept; l < before.layers.length; l++) {
      const layer = before.layers[l] as CommitGraphFile;
      for (let i = 0; i < layer.count; i++) {
        const location = handle.locate(layer.data.subarray(layer.idOffset(i), layer.idOffset(i) + H));
        if (location === undefined || handle.typeAt(location) !== 'commit') continue;
        const n = table.intern(layer.data, layer.idOffset(i));
        if (!inMembers.has(n)) {
          inMembers.add(n);
          members.push(n);
        }
        if (read.done[n] !== 1) unread.push(n);
      }
    }
    if (unread.length > 0) readCommits(handle, table, unread, read, () => true, (id, at) => table.intern(id, at ?? 0), options);
  }
  const base = split !== undefined && before !== undefined && !replace ? before.layers.slice(0, kept) : [];
  const baseCount = base.reduce((sum, l) => sum + l.count, 0);
  const baseChain = base.length > 0 ? CommitGraphChain.of(base) : undefined;

  // Positions in id order; a parent outside the new file is found in the layers kept below it.
  const count = members.length;
  const memberIds = new Uint8Array(count * H);
  members.forEach((n, k) => memberIds.set(table.id(n), k * H));
  const order = sortIds(memberIds, count, H);
  const position = new Int32Array(table.count).fill(-1);
  for (let i = 0; i < count; i++) position[members[order[i] as number] as number] = i;
  const ids = new Uint8Array(count * H);
  const trees = new Uint8Array(count * H);
  const parents: number[][] = [];
  const dates = new Float64Array(count);
  const sorted: number[] = [];
  for (let i = 0; i < count; i++) {
    const n = members[order[i] as number] as number;
    sorted.push(n);
    ids.set(table.id(n), i * H);
    trees.set(read.trees.subarray(n * H, (n + 1) * H), i * H);
    dates[i] = read.dates[n] as number;
    parents.push(Array.from(read.parents[n] ?? NO_PARENTS, (p) => {
      if ((position[p] as number) >= 0) return (position[p] as number) + baseCount;
      const at = baseChain?.find(table.id(p)) ?? -1;
      if (at < 0) throw new PackwrightError('COMMIT_GRAPH_CORRUPT', `missing parent ${toHex(table.id(p))} for commit ${toHex(table.id(n))}`);
      return at;
    }));
  }
  // Generations: of the new commits; a parent below has them in its layer.
  // As git: corrected dates are written when asked for and the top layer kept below has them
  // (git reads that chunk only when asked for v2), and read from below only when every layer
  // there now has them (validate_mixed_generation_chain); else levels stand in.
  const configV2 = options.generationData !== false;
  const generationData = configV2 && (base.length === 0 || (base[base.length - 1] as CommitGraphFile).hasGenerationData);
  const baseV2 = configV2 && before !== undefined && before.layers.every((l) => l.hasGenerationData);
  const { levels, corrected } = computeGenerations(parents, dates, baseChain === undefined ? undefined : {
    offset: baseCount,
    level: (pos) => baseChain.level(pos),
    corrected: (pos) => (baseV2 ? baseChain.generation(pos, true) : baseChain.level(pos)),
  });

  // Changed-path filters: asked for, or kept because the graph there has them.
  const topBefore = before?.layers[before.layers.length - 1];
  const bloomOn = options.changedPaths ?? topBefore?.bloomSettings !== undefined;
  let bloom: { settings: BloomSettings; filters: Uint8Array[] } | undefined;
  if (bloomOn && options.changedPaths !== false) {
    const settings = { ...DEFAULT_BLOOM_SETTINGS, ...options.bloomSettings, ...(topBefore?.bloomSettings ?? {}) };
    const filters: Uint8Array[] = new Array<Uint8Array>(count).fill(NO_FILTER);
    // git's compute_bloom_filters: in pack order when the commits came from packs, else by
    // generation then date; ties in id order (glibc's qsort is a merge sort).
    const computeOrder = Array.from({ length: count }, (_, i) => i);
    if (orderByPack) computeOrder.sort((a, b) => (packOrderOf.get(sorted[a] as number) ?? 0) - (packOrderOf.get(sorted[b] as number) ?? 0));
    else {
      const generation = (i: number): number => (generationData ? (corrected[i] as number) : 0);
      computeOrder.sort((a, b) => generation(a) - generation(b) || (dates[a] as number) - (dates[b] as number));
    }
    const cap = options.maxNewFilters ?? count;
    let computed = 0;
    const treeBytes = new TreeBytes();
    for (const i of computeOrder) {
      const n = sorted[i] as number;
      const existing = filterFrom(before, table.id(n));
      if (existing !== undefined && existing.length > 0) {
        filters[i] = existing;
        continue;
      }
      if (computed >= cap) continue;
      computed++;
      const first = (read.parents[n] ?? NO_PARENTS)[0];
      const parentTree = first === undefined ? undefined : treeOf(handle, table, read, first, before);
      filters[i] = bloomFilter(changedPaths(handle, parentTree, read.trees.subarray(n * H, (n + 1) * H), settings.maxChangedPaths, treeBytes), settings);
      if ((computed & 255) === 255) throwIfAborted(options.signal, 'commit-graph write');
    }
    bloom = { settings, filters };
  }

  const bytes = commitGraphBytes(handle.format, {
    count, ids, trees, parents, dates, levels,
    ...(generationData ? { corrected } : {}),
    ...(bloom !== undefined ? { bloom } : {}),
    ...(base.length > 0 ? { baseGraphs: base.map((l) => l.trailer()) } : {}),
  });
  const info = join(objectsDir, 'info');
  const layersDir = join(info, 'commit-graphs');
  mkdirSync(info, { recursive: true });
  const mode = options.fileMode ?? 0o444;
  // git's expire_commit_graphs takes the time when it starts, after the layers merged away are
  // marked: taken before, a write that crosses a second kept a layer git removes.
  const expireTime = (): number => split?.expireTime ?? Math.floor(Date.now() / 1000);
  if (split === undefined) {
    const path = join(info, 'commit-graph');
    writeFileAtomic(path, bytes, mode, `${path}.lock`);
    // The single file replaces a chain (git's expire_commit_graphs for a write that is not split).
    rmSync(join(layersDir, 'commit-graph-chain'), { force: true });
    expireLayers(layersDir, new Set(), expireTime());
    return { path, commits: count };
  }
  mkdirSync(layersDir, { recursive: true });
  const hash = toHex(bytes.subarray(bytes.length - H));
  const path = join(layersDir, `graph-${hash}.graph`);
  const chainPath = join(layersDir, 'commit-graph-chain');
  const lock = `${chainPath}.lock`;
  const baseHashes = base.map((l) => toHex(l.trailer()));
  // Where the kept layers are after this write: in place, but for this directory's single file,
  // which moves into the chain under its hash.
  const single = join(info, 'commit-graph');
  const keptPaths = base.map((l, k) => (l.path === single ? join(layersDir, `graph-${baseHashes[k] as string}.graph`) : l.path));
  // The layer, then the chain through its lock: a second writer fails there, and its layer goes.
  writeFileAtomic(path, bytes, mode, temporaryPathBeside(path));
  try {
    if (base.length === 1 && base[0]?.path === single) renameSync(single, keptPaths[0] as string);
    writeFileAtomic(chainPath, Buffer.from([...baseHashes, hash].map((h) => `${h}\n`).join('')), mode, lock);
  } catch (e) {
    rmSync(path, { force: true });
    throw e;
  }
  rmSync(join(info, 'commit-graph'), { force: true });
  // The layers merged away are marked as changed now, so that an --expire-time in the past spares
  // them a while (git's mark_commit_graphs); the kept ones are in the chain.
  const now = new Date();
  const merged = (before?.layers ?? []).slice(base.length).filter(ownLayer).map((l) => l.path);
  for (const p of merged) {
    try {
      utimesSync(p, statSync(p).atime, now);
    } catch {
      // A layer gone since it was read: nothing to spare.
    }
  }
  expireLayers(layersDir, new Set([...keptPaths, path]), expireTime());
  return { path, commits: count };
}

/**
 * Reads the commits `queue` holds (and every one they reach, through `add`), in rounds: each
 * round reads the commits the one before queued in pack order, so reads run forward through the
 * packs' windows instead of jumping between branches (gitoxide, --reachable: 657 MB of reads of
 * an 117 MB pack in 64 KiB windows read again and again, in queue order). `follow(n)` false: the
 * commit is not read (a split write's commit the graph has).
 */
function readCommits(
  handle: StoreHandle, table: ObjectTable, queue: number[], into: ReadCommits, follow: (n: number) => boolean,
  add: (id: Uint8Array, at?: number) => number, options: WriteCommitGraphOptions,
): void {
  const H = handle.hashLength;
  let done = 0;
  for (let roundStart = 0; roundStart < queue.length;) {
    const roundEnd = queue.length;
    const round: { n: number; location: ObjectLocation; pack: number; offset: number }[] = [];
    for (let k = roundStart; k < roundEnd; k++) {
      const n = queue[k] as number;
      if (!follow(n)) continue;
      const id = table.id(n);
      const location = handle.locate(id);
      if (location === undefined) throw new PackwrightError('OBJECT_NOT_FOUND', `unable to parse commit ${toHex(id)}`);
      const packed = location.kind === 'pack';
      round.push({ n, location, pack: packed ? packNumber(location.pack) : -1, offset: packed ? location.pack.index.offset(location.position) : 0 });
    }
    round.sort((a, b) => a.pack - b.pack || a.offset - b.offset);
    // A history this long reads commits all over the packs: the indexes whole (a lazily read one
    // costs a read per probe), the packs through big windows.
    if (done < DENSE_LOOKUPS && done + round.length >= DENSE_LOOKUPS) handle.preferDenseReads({ whole: false });
    for (const { n, location } of round) {
      if ((++done & 1023) === 0) {
        options.onProgress?.(done);
        throwIfAborted(options.signal, 'commit-graph write');
      }
      const id = table.id(n);
      // Parsed at once: the store's buffer, not a copy.
      const obj = handle.readTransientAt(location);
      if (obj.type !== 'commit') throw new PackwrightError('OBJECT_CORRUPT', `object ${toHex(id)} is a ${obj.type}, not a commit`);
      let c;
      try {
        c = parseCommit(obj.data, H, () => toHex(id));
      } catch (e) {
        throw new PackwrightError('OBJECT_CORRUPT', `unable to parse commit ${toHex(id)}`, { cause: e });
      }
      if ((n + 1) * H > into.trees.length) {
        const grown = new Uint8Array(Math.max(into.trees.length * 2, (n + 1) * H));
        grown.set(into.trees);
        into.trees = grown;
      }
      into.trees.set(c.tree, n * H);
      // Filled in numbers' order first, so the arrays stay packed.
      while (into.parents.length <= n) {
        into.parents.push(NO_PARENTS);
        into.dates.push(0);
        into.done.push(0);
      }
      into.done[n] = 1;
      into.dates[n] = c.time;
      into.parents[n] = Int32Array.from(c.parents, (p) => add(p));
    }
    roundStart = roundEnd;
  }
  options.onProgress?.(done);
}

/** The root tree of commit `n`: read by the write, else from the graph there, else from the objects. */
function treeOf(handle: StoreHandle, table: ObjectTable, read: ReadCommits, n: number, graph: CommitGraphChain | undefined): Uint8Array {
  const H = handle.hashLength;
  if (read.done[n] === 1) return read.trees.subarray(n * H, (n + 1) * H);
  const at = graph?.find(table.id(n)) ?? -1;
  if (at >= 0) return (graph as CommitGraphChain).tree(at);
  return parseCommit(handle.read(table.id(n)).data, H, () => toHex(table.id(n))).tree;
}

/** The filter the graph there now has for commit `id`, if any. */
function filterFrom(chain: CommitGraphChain | undefined, id: Uint8Array): Uint8Array | undefined {
  if (chain === undefined) return undefined;
  const at = chain.find(id);
  if (at < 0) return undefined;
  const layer = chain.layerOf(at);
  return layer.bloomSettings === undefined ? undefined : layer.bloomFilter(at - layer.baseCount);
}

/**
 * Deletes the layer files of `dir` that are not in `keep` and were last changed no later than
 * `expireTime` (git's expire_commit_graphs).
 */
function expireLayers(dir: string, keep: ReadonlySet<string>, expireTime: number): void {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    // No layers directory: nothing to expire.
    return;
  }
  for (const name of names) {
    if (!name.endsWith('.graph')) continue;
    const path = join(dir, name);
    if (keep.has(path)) continue;
    try {
      // Whole seconds, as git compares st_mtime.
      if (Math.floor(statSync(path).mtimeMs / 1000) > expireTime) continue;
      rmSync(path, { force: true });
    } catch {
      // Gone already (another writer expired it).
    }
  }
}

/** A number per pack, in the order first asked (to sort locations by pack, then offset). */
const packNumbers = new WeakMap<StorePack, number>();
let nextPackNumber = 0;
function packNumber(pack: StorePack): number {
  let n = packNumbers.get(pack);
  if (n === undefined) packNumbers.set(pack, (n = nextPackNumber++));
  return n;
}
