import { hashBytes } from '../hash/hash-object.js';
import { formatId, hashLength, type ObjectFormat } from '../hash/object-format.js';
import { CHUNK_TABLE_ROW, writeChunkTable } from '../encoding/chunk-table.js';
import { BLOOM_DATA_HEADER, type BloomSettings } from './bloom-filter.js';
import { CHUNK_BASE, CHUNK_BDAT, CHUNK_BIDX, CHUNK_CDAT, CHUNK_EDGE, CHUNK_GDA2, CHUNK_GDO2, CHUNK_OIDF, CHUNK_OIDL, EDGE_LIST, GRAPH_HEADER, GRAPH_SIGNATURE, NO_PARENT, OFFSET_OVERFLOW } from './commit-graph.js';

/** The largest topological level a commit-graph stores (30 bits; git's GENERATION_NUMBER_V1_MAX). */
export const GENERATION_V1_MAX = 0x3fffffff;
/** The largest corrected-date offset GDA2 holds in place; larger ones go to GDO2. */
const OFFSET_MAX = 2 ** 31 - 1;

/** The commits of a graph file to write, in id order: what each entry holds. */
export interface GraphCommits {
  count: number;
  /** Ids back to back, sorted. */
  ids: Uint8Array;
  /** Root tree ids back to back, in the same order. */
  trees: Uint8Array;
  /** Each commit's parents as positions among these commits. */
  parents: readonly (readonly number[])[];
  /** Committer dates as git parses them. */
  dates: Float64Array;
  /** Topological levels (see computeGenerations). */
  levels: Uint32Array;
  /** Corrected commit dates (generation number v2), when written. */
  corrected?: Float64Array;
  /** Changed-path filters, one per commit, and their settings (BIDX and BDAT), when written. */
  bloom?: { settings: Pick<BloomSettings, 'hashVersion' | 'numHashes' | 'bitsPerEntry'>; filters: readonly Uint8Array[] };
  /** The layers below, base first, by their checksums (a split graph's BASE chunk). */
  baseGraphs?: readonly Uint8Array[];
}

/**
 * A single commit-graph file (gitformat-commit-graph) for `commits`, byte for byte as git's
 * write_commit_graph_file lays it out: OIDF, OIDL, CDAT, then GDA2 (with `commits.corrected`),
 * GDO2 for offsets past 31 bits, EDGE for octopus merges, BIDX and BDAT (with `commits.bloom`),
 * BASE (a split graph's layer over others); the checksum last. Parent positions count the base
 * layers' commits first.
 */
export function commitGraphBytes(format: ObjectFormat, commits: GraphCommits): Buffer {
  const H = hashLength(format);
  const n = commits.count;
  let extraEdges = 0;
  for (const p of commits.parents) if (p.length > 2) extraEdges += p.length - 1;
  let overflows = 0;
  const corrected = commits.corrected;
  if (corrected !== undefined) for (let i = 0; i < n; i++) if ((corrected[i] as number) - (commits.dates[i] as number) > OFFSET_MAX) overflows++;
  const chunks = [
    { id: CHUNK_OIDF, size: 256 * 4 },
    { id: CHUNK_OIDL, size: n * H },
    { id: CHUNK_CDAT, size: n * (H + 16) },
  ];
  if (corrected !== undefined) chunks.push({ id: CHUNK_GDA2, size: n * 4 });
  if (overflows > 0) chunks.push({ id: CHUNK_GDO2, size: overflows * 8 });
  if (extraEdges > 0) chunks.push({ id: CHUNK_EDGE, size: extraEdges * 4 });
  const bloom = commits.bloom;
  if (bloom !== undefined) {
    chunks.push({ id: CHUNK_BIDX, size: n * 4 });
    chunks.push({ id: CHUNK_BDAT, size: BLOOM_DATA_HEADER + bloom.filters.reduce((sum, f) => sum + f.length, 0) });
  }
  const bases = commits.baseGraphs ?? [];
  if (bases.length > 0) chunks.push({ id: CHUNK_BASE, size: bases.length * H });
  const body = GRAPH_HEADER + (chunks.length + 1) * CHUNK_TABLE_ROW + chunks.reduce((s, c) => s + c.size, 0);
  const out = Buffer.alloc(body + H);
  out.writeUInt32BE(GRAPH_SIGNATURE, 0);
  out[4] = 1;
  out[5] = formatId(format);
  out[6] = chunks.length;
  out[7] = bases.length;
  const starts = writeChunkTable(out, GRAPH_HEADER, chunks);
  const [fanoutAt, idsAt, dataAt] = starts as [number, number, number];
  // Fan-out: commits whose first byte is at most b.
  let count = 0;
  for (let b = 0; b < 256; b++) {
    while (count < n && commits.ids[count * H] === b) count++;
    out.writeUInt32BE(count, fanoutAt + 4 * b);
  }
  out.set(commits.ids.subarray(0, n * H), idsAt);
  let edgeIndex = 0;
  const edgeWords: number[] = [];
  for (let i = 0; i < n; i++) {
    const at = dataAt + i * (H + 16);
    out.set(commits.trees.subarray(i * H, (i + 1) * H), at);
    const parents = commits.parents[i] as readonly number[];
    out.writeUInt32BE(parents.length === 0 ? NO_PARENT : (parents[0] as number), at + H);
    let second = NO_PARENT;
    if (parents.length === 2) second = parents[1] as number;
    else if (parents.length > 2) {
      second = (EDGE_LIST | edgeIndex) >>> 0;
      for (let k = 1; k < parents.length; k++) edgeWords.push(k === parents.length - 1 ? (EDGE_LIST | (parents[k] as number)) >>> 0 : (parents[k] as number));
      edgeIndex += parents.length - 1;
    }
    out.writeUInt32BE(second, at + H + 4);
    const date = commits.dates[i] as number;
    // The top two bits of the 34-bit date beside the level, then its low 32 bits.
    out.writeUInt32BE((((commits.levels[i] as number) << 2) | (Math.floor(date / 2 ** 32) & 3)) >>> 0, at + H + 8);
    out.writeUInt32BE(date % 2 ** 32 >>> 0, at + H + 12);
  }
  let chunk = 3;
  if (corrected !== undefined) {
    const gdaAt = starts[chunk++] as number;
    const gdoAt = overflows > 0 ? (starts[chunk++] as number) : -1;
    let overflow = 0;
    for (let i = 0; i < n; i++) {
      const offset = (corrected[i] as number) - (commits.dates[i] as number);
      if (offset > OFFSET_MAX) {
        out.writeUInt32BE((OFFSET_OVERFLOW | overflow) >>> 0, gdaAt + 4 * i);
        out.writeBigUInt64BE(BigInt(offset), gdoAt + 8 * overflow++);
      } else {
        out.writeUInt32BE(offset, gdaAt + 4 * i);
      }
    }
  }
  if (extraEdges > 0) {
    const edgeAt = starts[chunk++] as number;
    edgeWords.forEach((w, k) => out.writeUInt32BE(w, edgeAt + 4 * k));
  }
  if (bloom !== undefined) {
    const indexAt = starts[chunk++] as number;
    const dataAt = starts[chunk++] as number;
    out.writeUInt32BE(bloom.settings.hashVersion, dataAt);
    out.writeUInt32BE(bloom.settings.numHashes, dataAt + 4);
    out.writeUInt32BE(bloom.settings.bitsPerEntry, dataAt + 8);
    let end = 0;
    for (let i = 0; i < n; i++) {
      const filter = bloom.filters[i] as Uint8Array;
      out.set(filter, dataAt + BLOOM_DATA_HEADER + end);
      end += filter.length;
      out.writeUInt32BE(end, indexAt + 4 * i);
    }
  }
  if (bases.length > 0) {
    const baseAt = starts[chunk++] as number;
    bases.forEach((b, k) => out.set(b, baseAt + k * H));
  }
  hashBytes(format, out.subarray(0, body)).copy(out, body);
  return out;
}

/**
 * Topological levels and corrected commit dates of the commits of a file (git's
 * compute_topological_levels and compute_generation_numbers): a root has level 1; a commit one
 * more than its highest parent, at most GENERATION_V1_MAX; a corrected date is the commit's date,
 * or one more than its parents' highest corrected date if that is not below it. Parents are
 * positions: from `below.offset` on, commits of this file (`position - offset` in `parents`);
 * under it, commits of the layers below, whose values `below` gives.
 */
export function computeGenerations(
  parents: readonly (readonly number[])[], dates: Float64Array,
  below?: { offset: number; level: (pos: number) => number; corrected: (pos: number) => number },
): { levels: Uint32Array; corrected: Float64Array } {
  const n = parents.length;
  const offset = below?.offset ?? 0;
  const levels = new Uint32Array(n);
  const corrected = new Float64Array(n);
  const stack: number[] = [];
  for (let i = 0; i < n; i++) {
    if (levels[i] !== 0) continue;
    stack.push(i);
    while (stack.length > 0) {
      const c = stack[stack.length - 1] as number;
      let ready = true;
      let level = 0;
      let date = 0;
      for (const pos of parents[c] as readonly number[]) {
        let parentLevel: number;
        let parentDate: number;
        if (pos < offset) {
          parentLevel = (below as NonNullable<typeof below>).level(pos);
          parentDate = (below as NonNullable<typeof below>).corrected(pos);
        } else {
          const p = pos - offset;
          if (levels[p] === 0) {
            ready = false;
            stack.push(p);
            break;
          }
          parentLevel = levels[p] as number;
          parentDate = corrected[p] as number;
        }
        level = Math.max(level, parentLevel);
        date = Math.max(date, parentDate);
      }
      if (!ready) continue;
      stack.pop();
      levels[c] = Math.min(level, GENERATION_V1_MAX - 1) + 1;
      const own = dates[c] as number;
      if (own !== 0 && own > date) date = own - 1;
      corrected[c] = date + 1;
    }
  }
  return { levels, corrected };
}
