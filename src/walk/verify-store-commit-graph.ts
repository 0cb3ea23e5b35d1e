import { verifyCommitGraph } from '../commit-graph/verify-commit-graph.js';
import { isPackwrightError } from '../errors/packwright-error.js';
import { parseCommit } from '../objects/commit.js';
import type { StoreHandle } from '../odb/store-handle.js';

/**
 * `git commit-graph verify --object-dir <dir>` against a store: the graph of `objectsDir` (its
 * chain's layers found in any of the store's directories), each commit compared with what the
 * store reads of it (a commit that cannot be read counts as not there). git's lines, as
 * verifyCommitGraph gives them.
 */
export function verifyStoreCommitGraph(handle: StoreHandle, objectsDir: string, options: { shallow?: boolean; onLayer?: (commits: number) => void } = {}): string[] {
  const H = handle.hashLength;
  const lookup = (id: Buffer): { tree: Buffer; parents: Buffer[]; date: number } | undefined => {
    try {
      const obj = handle.read(id);
      if (obj.type !== 'commit') return undefined;
      const c = parseCommit(obj.data, H);
      return { tree: c.tree, parents: c.parents, date: c.time };
    } catch (e) {
      if (isPackwrightError(e)) return undefined;
      throw e;
    }
  };
  const alsoIn = handle.looseDirs().filter((d) => d !== objectsDir);
  return verifyCommitGraph(objectsDir, H, lookup, { ...options, alsoIn });
}
