import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isPackwrightError, PackwrightError } from '../errors/packwright-error.js';
import { CommitGraphFile } from './commit-graph.js';

/** A layer file loaded, or undefined with git's error in `warnings` (a corrupt one, one gone). */
function tryLoad(path: string, hashLength: number, base: number, warnings: string[]): CommitGraphFile | undefined {
  try {
    return CommitGraphFile.read(path, hashLength, base);
  } catch (e) {
    if (!isPackwrightError(e) && !(e instanceof Error && 'code' in e)) throw e;
    warnings.push((e as Error).message);
    return undefined;
  }
}

/**
 * git's add_graph_to_chain: layer `below.length` of a chain names, in its BASE chunk, the layers
 * below it by the hashes the chain file gives them, and each of those is the file loaded.
 */
function matchesBelow(layer: CommitGraphFile, below: readonly CommitGraphFile[], text: string, width: number, warnings: string[]): boolean {
  const n = below.length;
  if (n > 0 && layer.baseGraphCount === 0) {
    warnings.push('commit-graph has no base graphs chunk');
    return false;
  }
  for (let k = n - 1; k >= 0; k--) {
    const hash = text.slice(k * (width + 1), k * (width + 1) + width);
    const lower = below[k] as CommitGraphFile;
    if (k >= layer.baseGraphCount || lower.trailer().toString('hex') !== hash || layer.baseGraphId(k).toString('hex') !== hash) {
      warnings.push('commit-graph chain does not match');
      return false;
    }
  }
  return true;
}

/**
 * A commit-graph as a walk reads it: one file, or the layers of a split graph, numbered as git
 * numbers them (base layers first, so a position is the same in every layer above it). A commit
 * found here is known without inflating it: its root tree, parents, date and generation.
 */
export class CommitGraphChain {
  /** Commits in every layer. */
  readonly count: number;

  private constructor(
    readonly layers: readonly CommitGraphFile[],
    /** Why a layer was left out (a chain that loads only in part is used up to there, as git does). */
    readonly warnings: readonly string[],
  ) {
    this.count = layers.reduce((n, l) => n + l.count, 0);
  }

  /**
   * The graph of `objectsDir` as git 2.39 loads it (read_commit_graph_one): `info/commit-graph`
   * if it loads, else the chain `info/commit-graphs/commit-graph-chain` names, each layer looked
   * for in `objectsDir` then in `alsoIn` (alternates: a fork's chain may sit on its alternate's
   * layers). A chain is used up to its first line that is not a hash, layer not found or not
   * loading, or layer whose BASE chunk does not name the layers below it; `warnings` has git's
   * words for why. Undefined when nothing loads.
   */
  static read(objectsDir: string, hashLength: number, alsoIn: readonly string[] = []): CommitGraphChain | undefined {
    const { layers, warnings } = CommitGraphChain.readAll(objectsDir, hashLength, alsoIn);
    return layers.length === 0 ? undefined : new CommitGraphChain(layers, warnings);
  }

  private static readAll(objectsDir: string, hashLength: number, alsoIn: readonly string[]): { layers: CommitGraphFile[]; warnings: string[] } {
    const warnings: string[] = [];
    const single = join(objectsDir, 'info', 'commit-graph');
    if (existsSync(single)) {
      const layer = tryLoad(single, hashLength, 0, warnings);
      if (layer !== undefined) return { layers: [layer], warnings };
    }
    const chainPath = join(objectsDir, 'info', 'commit-graphs', 'commit-graph-chain');
    let text: string;
    try {
      text = readFileSync(chainPath, 'latin1');
    } catch {
      // No chain (or none readable): no graph.
      return { layers: [], warnings };
    }
    const width = 2 * hashLength;
    const count = Math.floor(text.length / (width + 1));
    const layers: CommitGraphFile[] = [];
    let base = 0;
    for (let i = 0; i < count; i++) {
      const line = text.slice(i * (width + 1), i * (width + 1) + width);
      if (!/^[0-9a-fA-F]+$/.test(line) || text[i * (width + 1) + width] !== '\n') {
        warnings.push(`invalid commit-graph chain: line '${text.slice(i * (width + 1)).split('\n')[0] as string}' not a hash`);
        break;
      }
      let valid = false;
      for (const dir of [objectsDir, ...alsoIn]) {
        const path = join(dir, 'info', 'commit-graphs', `graph-${line}.graph`);
        if (!existsSync(path)) continue;
        const layer = tryLoad(path, hashLength, base, warnings);
        if (layer === undefined) continue;
        if (matchesBelow(layer, layers, text, width, warnings)) {
          layers.push(layer);
          base += layer.count;
          valid = true;
        }
        break;
      }
      if (!valid) {
        warnings.push('unable to find all commit-graph files');
        break;
      }
    }
    return { layers, warnings };
  }

  /**
   * The graph git loads for a store (prepare_commit_graph): that of the first of `objectsDirs`
   * (its own, then its alternates) that has one, its layers looked for in all of them.
   */
  static readFirst(objectsDirs: readonly string[], hashLength: number): CommitGraphChain | undefined {
    for (const dir of objectsDirs) {
      const chain = CommitGraphChain.read(dir, hashLength, objectsDirs.filter((d) => d !== dir));
      if (chain !== undefined) return chain;
    }
    return undefined;
  }

  /** The warnings of a read that loaded nothing (a chain none of whose layers loads). */
  static warningsOf(objectsDir: string, hashLength: number, alsoIn: readonly string[] = []): readonly string[] {
    return CommitGraphChain.readAll(objectsDir, hashLength, alsoIn).warnings;
  }

  /** A chain of these layers (base first, each with its `baseCount`): the layers a split write keeps. */
  static of(layers: readonly CommitGraphFile[]): CommitGraphChain {
    return new CommitGraphChain(layers, []);
  }

  /** The position of commit `id` (its bytes at `offset`), or -1 when no layer has it. */
  find(id: Uint8Array, offset = 0): number {
    for (let l = this.layers.length - 1; l >= 0; l--) {
      const layer = this.layers[l] as CommitGraphFile;
      const i = layer.find(id, offset);
      if (i >= 0) return layer.baseCount + i;
    }
    return -1;
  }

  /** The layer that holds position `pos` (its index there: `pos - layer.baseCount`). */
  layerOf(pos: number): CommitGraphFile {
    const layers = this.layers;
    for (let l = layers.length - 1; l >= 0; l--) {
      const layer = layers[l] as CommitGraphFile;
      if (pos >= layer.baseCount) {
        if (pos - layer.baseCount >= layer.count) break;
        return layer;
      }
    }
    // git's fill_commit_in_graph: "invalid parent position".
    throw new PackwrightError('COMMIT_GRAPH_CORRUPT', `invalid commit position ${pos}: the commit-graph has ${this.count} commits`);
  }

  /** The id of the commit at global position `i` (layers counted from the base). */
  id(pos: number): Buffer {
    const layer = this.layerOf(pos);
    return layer.id(pos - layer.baseCount);
  }

  /** The root tree id of the commit at global position `i`. */
  tree(pos: number): Buffer {
    const layer = this.layerOf(pos);
    return layer.tree(pos - layer.baseCount);
  }

  /** The commit date (seconds since the epoch) of the commit at global position `i`. */
  date(pos: number): number {
    const layer = this.layerOf(pos);
    return layer.date(pos - layer.baseCount);
  }

  /** The commit's topological level (the top 30 bits of its CDAT word). */
  level(pos: number): number {
    const layer = this.layerOf(pos);
    return layer.generation(pos - layer.baseCount, false);
  }

  /** The commit's generation: its corrected date with `v2` (see CommitGraphFile.generation), else its level. */
  generation(pos: number, v2: boolean): number {
    const layer = this.layerOf(pos);
    return layer.generation(pos - layer.baseCount, v2);
  }

  /** Positions of the commit's parents, in order. */
  parents(pos: number): number[] {
    const layer = this.layerOf(pos);
    return layer.parents(pos - layer.baseCount);
  }
}
