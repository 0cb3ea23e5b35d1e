import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isPackwrightError, PackwrightError } from '../errors/packwright-error.js';
import { CommitGraphFile } from './commit-graph.js';

/**
 * The commit-graph files of an object directory, in git's order: `info/commit-graph` alone, else
 * each layer `info/commit-graphs/commit-graph-chain` names, base first; none when it has neither.
 */
export function commitGraphPaths(objectsDir: string): string[] {
  const single = join(objectsDir, 'info', 'commit-graph');
  if (existsSync(single)) return [single];
  const chain = join(objectsDir, 'info', 'commit-graphs', 'commit-graph-chain');
  if (!existsSync(chain)) return [];
  return readFileSync(chain, 'utf8').split('\n').filter((l) => l !== '').map((h) => join(objectsDir, 'info', 'commit-graphs', `graph-${h}.graph`));
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
   * The graph of `objectsDir`, or undefined when it has none (or none that loads). A layer that
   * does not load ends the chain there: git keeps the layers below it.
   */
  static read(objectsDir: string, hashLength: number): CommitGraphChain | undefined {
    const layers: CommitGraphFile[] = [];
    const warnings: string[] = [];
    let base = 0;
    for (const path of commitGraphPaths(objectsDir)) {
      try {
        const layer = CommitGraphFile.read(path, hashLength, base);
        layers.push(layer);
        base += layer.count;
      } catch (e) {
        // A corrupt layer (COMMIT_GRAPH_CORRUPT) or one the chain names that is gone (ENOENT).
        if (!isPackwrightError(e) && !(e instanceof Error && 'code' in e)) throw e;
        warnings.push((e as Error).message);
        break;
      }
    }
    return layers.length === 0 ? undefined : new CommitGraphChain(layers, warnings);
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

  id(pos: number): Buffer {
    const layer = this.layerOf(pos);
    return layer.id(pos - layer.baseCount);
  }

  tree(pos: number): Buffer {
    const layer = this.layerOf(pos);
    return layer.tree(pos - layer.baseCount);
  }

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
