import { OBJ_COMMIT } from '../objects/object-type.js';
import { PackwrightError } from '../errors/packwright-error.js';
import type { CommitDag } from '../walk/commit-dag.js';

/** Marks of the shallow computations (git's SHALLOW and NOT_SHALLOW in upload-pack.c). */
export const SHALLOW = 1 << 4;
export const NOT_SHALLOW = 1 << 5;

/**
 * The commits at `depth` from `heads` (git's get_shallow_commits): walking down from each head
 * (tags peeled; anything not a commit skipped), a commit `depth` commits deep becomes shallow
 * (the boundary, in the result, marked SHALLOW); one walked through is marked NOT_SHALLOW. A
 * commit met again by a shorter path is walked again from there. A commit of the server's own
 * shallow boundary (no parents in `dag`, `isGraft`) ends the walk there and is shallow too.
 * Results come newest found first, as git's list does. `depth` Infinity: no limit.
 */
export function shallowCommitsAtDepth(dag: CommitDag, heads: readonly number[], depth: number, isGraft: (n: number) => boolean): number[] {
  const result: number[] = [];
  const depths = new Map<number, number>();
  const stack: number[] = [];
  let i = 0;
  let commit = -1;
  let cur = 0;
  while (commit >= 0 || i < heads.length || stack.length > 0) {
    if (commit < 0) {
      if (i < heads.length) {
        const c = dag.peel(heads[i++] as number);
        if (c < 0 || dag.type(c) !== OBJ_COMMIT) continue;
        commit = c;
        depths.set(commit, 0);
        cur = 0;
      } else {
        commit = stack.pop() as number;
        cur = depths.get(commit) as number;
      }
    }
    const parents = dag.parents(commit);
    cur++;
    if (cur >= depth || (parents.length === 0 && isGraft(commit))) {
      result.unshift(commit);
      dag.mark(commit, SHALLOW);
      commit = -1;
      continue;
    }
    dag.mark(commit, NOT_SHALLOW);
    commit = -1;
    for (let k = 0; k < parents.length; k++) {
      const p = parents[k] as number;
      const known = depths.get(p);
      if (known !== undefined && cur >= known) continue;
      depths.set(p, cur);
      if (k < parents.length - 1) stack.push(p);
      else {
        commit = p;
        cur = depths.get(p) as number;
      }
    }
  }
  return result;
}

/**
 * The shallow boundary of a clone cut by date or by refs (git's get_shallow_commits_by_rev_list,
 * run as `rev-list --max-age=<since> --not <refs> --not <wants>`): the commits reachable from
 * `heads` that are not older than `since` and that `exclude` does not reach are marked
 * NOT_SHALLOW; of those, each with a parent outside them is the boundary (in the result, marked
 * SHALLOW and no longer NOT_SHALLOW). An old commit ends its line; with `exclude` (which makes
 * git's walk a limited one) it also excludes what it reaches.
 */
export function shallowCommitsByHistory(dag: CommitDag, heads: readonly number[], since: number | undefined, exclude: readonly number[]): number[] {
  const excluded = new Set<number>();
  const excludeFrom = (starts: readonly number[]): void => {
    const stack = [...starts];
    while (stack.length > 0) {
      const n = stack.pop() as number;
      if (excluded.has(n)) continue;
      excluded.add(n);
      for (const p of dag.parents(n)) if (!excluded.has(p)) stack.push(p);
    }
  };
  const commitsOf = (starts: readonly number[]): number[] => {
    const out: number[] = [];
    for (const s of starts) {
      const c = dag.peel(s);
      if (c >= 0 && dag.type(c) === OBJ_COMMIT) out.push(c);
    }
    return out;
  };
  excludeFrom(commitsOf(exclude));
  const limited = exclude.length > 0;
  const listed: number[] = [];
  const seen = new Set<number>();
  const stack = commitsOf(heads).reverse();
  while (stack.length > 0) {
    const n = stack.pop() as number;
    if (seen.has(n) || excluded.has(n)) continue;
    seen.add(n);
    if (since !== undefined && dag.date(n) < since) {
      if (limited) excludeFrom(dag.parents(n));
      continue;
    }
    listed.push(n);
    const parents = dag.parents(n);
    for (let k = parents.length - 1; k >= 0; k--) stack.push(parents[k] as number);
  }
  const kept = listed.filter((n) => !excluded.has(n));
  if (kept.length === 0) throw new PackwrightError('REQUEST_REFUSED', 'no commits selected for shallow requests');
  for (const n of kept) dag.mark(n, NOT_SHALLOW);
  const result: number[] = [];
  for (const n of kept) {
    if (dag.parents(n).some((p) => !dag.is(p, NOT_SHALLOW))) {
      dag.mark(n, SHALLOW);
      result.unshift(n);
    }
  }
  for (const n of result) dag.unmark(n, NOT_SHALLOW);
  return result;
}
