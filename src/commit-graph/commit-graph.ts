import { readFileSync } from 'node:fs';
import { PackwrightError } from '../errors/packwright-error.js';
import { CHUNK_TABLE_ROW, readChunkTable, type Chunk } from '../encoding/chunk-table.js';
import { findId } from '../idx/sorted-ids.js';

/** `CGPH`, version 1 (gitformat-commit-graph). */
export const GRAPH_SIGNATURE = 0x43475048;
export const GRAPH_HEADER = 8;
export const CHUNK_OIDF = 0x4f494446;
export const CHUNK_OIDL = 0x4f49444c;
export const CHUNK_CDAT = 0x43444154;
export const CHUNK_EDGE = 0x45444745;
export const CHUNK_GDA2 = 0x47444132;
export const CHUNK_GDO2 = 0x47444f32;
export const CHUNK_BIDX = 0x42494458;
export const CHUNK_BDAT = 0x42444154;
export const CHUNK_BASE = 0x42415345;
/** A generation data entry with this bit is an index into the GDO2 overflow chunk. */
export const OFFSET_OVERFLOW = 0x80000000;
/** A parent slot that names no parent; with the top bit, the second slot points into EDGE. */
export const NO_PARENT = 0x70000000;
export const EDGE_LIST = 0x80000000;

/**
 * One commit-graph file (a whole graph, or one layer of a chain): its fan-out, ids and commit
 * data, read whole. The checks git makes when it loads a graph (parse_commit_graph) fail with
 * COMMIT_GRAPH_CORRUPT in git's words; what `git commit-graph verify` adds is in
 * verify-commit-graph.ts.
 */
export class CommitGraphFile {
  readonly count: number;
  readonly hashLength: number;
  /** Commits in the layers below this one (a chain's base graphs). */
  readonly baseCount: number;
  private readonly fanout: number;
  private readonly view: DataView;
  private readonly ids: number;
  private readonly commits: number;
  private readonly edges: number;
  private readonly edgesEnd: number;
  private readonly generationData: number;
  private readonly generationOverflow: number;
  /** The file has corrected commit dates (generation number v2, the GDA2 chunk). */
  readonly hasGenerationData: boolean;
  /** The changed-path filters' settings, when the file has filters (BIDX and BDAT, hash version 1). */
  readonly bloomSettings: { hashVersion: number; numHashes: number; bitsPerEntry: number } | undefined;
  /** How many layers below this one its BASE chunk names. */
  readonly baseGraphCount: number;
  private readonly baseGraphs: number;
  private readonly bloomIndex: number;
  private readonly bloomData: number;
  private readonly bloomDataEnd: number;

  constructor(readonly path: string, readonly data: Buffer, hashLength: number, baseCount = 0) {
    const fail = (message: string): never => {
      throw new PackwrightError('COMMIT_GRAPH_CORRUPT', message, { file: path });
    };
    this.hashLength = hashLength;
    this.baseCount = baseCount;
    if (data.length < GRAPH_HEADER + CHUNK_TABLE_ROW + hashLength) fail('commit-graph file is too small');
    const signature = data.readUInt32BE(0);
    if (signature !== GRAPH_SIGNATURE) fail(`commit-graph signature ${signature.toString(16).toUpperCase()} does not match signature ${GRAPH_SIGNATURE.toString(16).toUpperCase()}`);
    if (data[4] !== 1) fail(`commit-graph version ${(data[4] as number).toString(16).toUpperCase()} does not match version 1`);
    const hashVersion = hashLength === 20 ? 1 : 2;
    if (data[5] !== hashVersion) fail(`commit-graph hash version ${(data[5] as number).toString(16).toUpperCase()} does not match version ${hashVersion}`);
    const chunks = data[6] as number;
    if (data.length < GRAPH_HEADER + (chunks + 1) * CHUNK_TABLE_ROW + hashLength) fail(`commit-graph file is too small to hold ${chunks} chunks`);
    const found = readChunkTable(data, GRAPH_HEADER, chunks, data.length - hashLength, (message) => fail(message));
    // git 2.39's words for a missing chunk (verify_commit_graph_lite); the sizes it does not
    // check, checked here in later git's words, so that no read runs past a chunk.
    const chunk = (id: number, what: string): Chunk => found.get(id) ?? fail(`commit-graph is missing the ${what} chunk`);
    const fanout = chunk(CHUNK_OIDF, 'OID Fanout');
    if (fanout.size !== 256 * 4) fail('commit-graph required OID fanout chunk missing or corrupted');
    this.fanout = fanout.start;
    this.view = new DataView(data.buffer, data.byteOffset, data.byteLength);
    // The count comes from the lookup chunk, as in git 2.39: a fan-out that disagrees is for verify to report.
    const ids = chunk(CHUNK_OIDL, 'OID Lookup');
    if (ids.size % hashLength !== 0) fail('commit-graph required OID lookup chunk missing or corrupted');
    this.count = ids.size / hashLength;
    this.ids = ids.start;
    const commits = chunk(CHUNK_CDAT, 'Commit Data');
    if (commits.size !== this.count * (hashLength + 16)) fail('commit-graph required commit data chunk missing or corrupted');
    this.commits = commits.start;
    const edges = found.get(CHUNK_EDGE);
    this.edges = edges?.start ?? -1;
    this.edgesEnd = edges === undefined ? -1 : edges.start + edges.size;
    const generations = found.get(CHUNK_GDA2);
    this.hasGenerationData = generations !== undefined && generations.size === 4 * this.count;
    this.generationData = this.hasGenerationData ? (generations as Chunk).start : -1;
    this.generationOverflow = found.get(CHUNK_GDO2)?.start ?? -1;
    const bases = found.get(CHUNK_BASE);
    this.baseGraphs = bases?.start ?? -1;
    this.baseGraphCount = bases === undefined ? 0 : Math.floor(bases.size / hashLength);
    // Filters as git 2.39 reads them (graph_read_bloom_data): only hash version 1, and only with
    // both chunks; what does not fit is not used.
    const bidx = found.get(CHUNK_BIDX);
    const bdat = found.get(CHUNK_BDAT);
    if (bidx !== undefined && bdat !== undefined && bidx.size === 4 * this.count && bdat.size >= 12 && data.readUInt32BE(bdat.start) === 1) {
      this.bloomSettings = { hashVersion: 1, numHashes: data.readUInt32BE(bdat.start + 4), bitsPerEntry: data.readUInt32BE(bdat.start + 8) };
      this.bloomIndex = bidx.start;
      this.bloomData = bdat.start + 12;
      this.bloomDataEnd = bdat.start + bdat.size;
    } else {
      this.bloomSettings = undefined;
      this.bloomIndex = this.bloomData = this.bloomDataEnd = -1;
    }
  }

  /** The checksum of base layer `k` (0: the lowest) as the BASE chunk gives it. */
  baseGraphId(k: number): Buffer {
    return this.data.subarray(this.baseGraphs + k * this.hashLength, this.baseGraphs + (k + 1) * this.hashLength);
  }

  /** The changed-path filter of commit `i` (a view; empty when the graph has none for it). */
  bloomFilter(i: number): Buffer {
    if (this.bloomIndex < 0) return this.data.subarray(0, 0);
    const end = this.data.readUInt32BE(this.bloomIndex + 4 * i);
    const start = i === 0 ? 0 : this.data.readUInt32BE(this.bloomIndex + 4 * (i - 1));
    if (start > end || this.bloomData + end > this.bloomDataEnd) return this.data.subarray(0, 0);
    return this.data.subarray(this.bloomData + start, this.bloomData + end);
  }

  /**
   * Commit `i`'s generation number as git reads it (fill_commit_graph_info): with `v2`, its
   * corrected commit date (date plus the GDA2 offset, or the GDO2 overflow value); otherwise its
   * topological level, the top 30 bits of the CDAT word.
   */
  generation(i: number, v2: boolean): number {
    const at = this.commits + i * (this.hashLength + 16) + this.hashLength + 8;
    if (!v2) return this.data.readUInt32BE(at) >>> 2;
    const offset = this.data.readUInt32BE(this.generationData + 4 * i);
    if (!(offset & OFFSET_OVERFLOW)) return this.date(i) + offset;
    return this.date(i) + Number(this.data.readBigUInt64BE(this.generationOverflow + 8 * (offset & ~OFFSET_OVERFLOW)));
  }

  /** Reads and checks a commit-graph file (COMMIT_GRAPH_CORRUPT when it is malformed). */
  static read(path: string, hashLength: number, baseCount = 0): CommitGraphFile {
    return new CommitGraphFile(path, readFileSync(path), hashLength, baseCount);
  }

  /** `fanout[b]`: commits whose id starts with a byte up to b. */
  fanoutAt(b: number): number {
    return this.data.readUInt32BE(this.fanout + 4 * b);
  }

  /** The position in this layer of the id at `key[offset]`, or -1. */
  find(key: Uint8Array, offset = 0): number {
    if (this.count === 0) return -1;
    const ids = this.ids;
    const H = this.hashLength;
    const i = findId(this.data, (i) => ids + i * H, this.view, this.fanout, key, offset, H);
    // A fan-out that overstates the count (which verify reports) finds nothing past the ids.
    return i < this.count ? i : -1;
  }

  /** The id at position `i` of this layer (a view of the file). */
  id(i: number): Buffer {
    return this.data.subarray(this.idOffset(i), this.idOffset(i) + this.hashLength);
  }

  /** Where in `data` the id at position `i` starts. */
  idOffset(i: number): number {
    return this.ids + i * this.hashLength;
  }

  /** The root tree id of the commit at position `i`. */
  tree(i: number): Buffer {
    return this.data.subarray(this.treeOffset(i), this.treeOffset(i) + this.hashLength);
  }

  /** Where in `data` the root tree id of the commit at position `i` starts. */
  treeOffset(i: number): number {
    return this.commits + i * (this.hashLength + 16);
  }

  /**
   * Positions (in the whole chain: base layers first) of commit `i`'s parents, in order; a bad
   * octopus list ends early at what the EDGE chunk holds.
   */
  parents(i: number): number[] {
    const at = this.commits + i * (this.hashLength + 16) + this.hashLength;
    const first = this.data.readUInt32BE(at);
    const second = this.data.readUInt32BE(at + 4);
    if (first === NO_PARENT) return [];
    if (second === NO_PARENT) return [first];
    if (!(second & EDGE_LIST)) return [first, second];
    const out = [first];
    for (let p = this.edges + 4 * (second & ~EDGE_LIST); this.edges >= 0 && p + 4 <= this.edgesEnd; p += 4) {
      const v = this.data.readUInt32BE(p);
      out.push(v & ~EDGE_LIST);
      if (v & EDGE_LIST) break;
    }
    return out;
  }

  /** Commit time: 34 bits, the top two in the low bits of the generation word. */
  date(i: number): number {
    const at = this.commits + i * (this.hashLength + 16) + this.hashLength + 8;
    return (this.data.readUInt32BE(at) & 3) * 2 ** 32 + this.data.readUInt32BE(at + 4);
  }

  /** The checksummed part and the trailer. */
  checksummed(): Buffer {
    return this.data.subarray(0, this.data.length - this.hashLength);
  }

  /** The file's checksum (its last hash-length bytes). */
  trailer(): Buffer {
    return this.data.subarray(this.data.length - this.hashLength);
  }
}
