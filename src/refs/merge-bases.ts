import { isPackwrightError } from '../errors/packwright-error.js';
import { parseCommit } from '../objects/commit.js';
import type { StoreHandle } from '../odb/store-handle.js';

/**
 * The merge bases of two commits (git's get_merge_bases): their common ancestors that no other
 * common ancestor reaches, in the order met from `a`. What `A...B` excludes. Commits the store
 * lacks end their line of ancestry (a shallow or partial history).
 */
export function mergeBases(objects: StoreHandle, a: Uint8Array, b: Uint8Array): Buffer[] {
  const H = objects.hashLength;
  const parents = new Map<string, Buffer[]>();
  const parentsOf = (hex: string): Buffer[] => {
    let ps = parents.get(hex);
    if (ps === undefined) {
      try {
        ps = parseCommit(objects.read(Buffer.from(hex, 'hex')).data, H).parents;
      } catch (e) {
        if (!isPackwrightError(e)) throw e;
        ps = [];
      }
      parents.set(hex, ps);
    }
    return ps;
  };
  /** Every commit `start` reaches, itself included, in depth-first order. */
  const ancestors = (start: string): string[] => {
    const seen = new Set<string>();
    const order: string[] = [];
    const stack = [start];
    while (stack.length > 0) {
      const hex = stack.pop() as string;
      if (seen.has(hex)) continue;
      seen.add(hex);
      order.push(hex);
      for (const p of parentsOf(hex)) stack.push(p.toString('hex'));
    }
    return order;
  };
  const fromB = new Set(ancestors(Buffer.from(b).toString('hex')));
  const common = ancestors(Buffer.from(a).toString('hex')).filter((h) => fromB.has(h));
  const commonSet = new Set(common);
  // A common ancestor that another common ancestor reaches is not a merge base.
  const reached = new Set<string>();
  for (const h of common) {
    if (reached.has(h)) continue;
    for (const anc of ancestors(h)) if (anc !== h && commonSet.has(anc)) reached.add(anc);
  }
  return common.filter((h) => !reached.has(h)).map((h) => Buffer.from(h, 'hex'));
}
