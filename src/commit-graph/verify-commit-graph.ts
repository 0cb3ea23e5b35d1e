import { systemMessage } from '../io/open-for-reading.js';
import { isPackwrightError } from '../errors/packwright-error.js';
import { hashBytes } from '../hash/hash-object.js';
import { formatForHashLength } from '../hash/object-format.js';
import { compareBytes } from '../idx/sorted-ids.js';
import { CommitGraphFile } from './commit-graph.js';
import { CommitGraphChain } from './commit-graph-chain.js';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { GENERATION_V1_MAX } from './commit-graph-bytes.js';


/** What the object database says of a commit, for comparing with the graph; undefined if it cannot be read. */
export type CommitLookup = (id: Buffer) => { tree: Buffer; parents: Buffer[]; date: number } | undefined;

/**
 * `git commit-graph verify --object-dir <dir>` (commit-graph.c's verify_commit_graph): the graph
 * of `objectsDir` (`info/commit-graph`, or each layer of `info/commit-graphs/commit-graph-chain`),
 * its checksum, the order of its ids and its fan-out, then every commit's tree, parents and date
 * against the object database. Returns git's lines as it prints them (a graph that does not load
 * is an "error: " line, a chain that loads in part "warning: " lines; what verify finds is
 * printed bare, as git's graph_report does), none when there is no graph. `shallow`: the top
 * layer alone; `alsoIn`: the alternates, where a chain's layers may be.
 */
export function verifyCommitGraph(objectsDir: string, hashLength: number, lookup: CommitLookup, options: { shallow?: boolean; alsoIn?: readonly string[]; onLayer?: (commits: number) => void } = {}): string[] {
  const errors: string[] = [];
  let layers: readonly CommitGraphFile[];
  const single = join(objectsDir, 'info', 'commit-graph');
  if (existsSync(single)) {
    // git's graph_verify: a file that is there must load.
    try {
      layers = [CommitGraphFile.read(single, hashLength)];
    } catch (e) {
      // A file that is there but cannot be opened (its permissions): git's graph_verify dies.
      const code = (e as NodeJS.ErrnoException).code;
      if (typeof code === 'string' && code !== 'ENOENT' && !isPackwrightError(e)) {
        errors.push(`fatal: Could not open commit-graph '${single}': ${systemMessage(e)}`);
        return errors;
      }
      if (!isPackwrightError(e)) throw e;
      errors.push(`error: ${e.code === 'COMMIT_GRAPH_CORRUPT' ? e.message : `could not read commit-graph ${single}: ${e.message}`}`);
      return errors;
    }
  } else {
    // A chain loads as far as it can, with warnings for the rest (verify goes on with what loaded).
    const chain = CommitGraphChain.read(objectsDir, hashLength, options.alsoIn ?? []);
    const warnings = chain?.warnings ?? CommitGraphChain.warningsOf(objectsDir, hashLength, options.alsoIn ?? []);
    for (const w of warnings) errors.push(`warning: ${w}`);
    if (chain === undefined) return errors;
    layers = chain.layers;
  }
  // git verifies the top layer first, then each base below it.
  // With `shallow`, only the top layer (git's verify --shallow).
  const bottom = options.shallow === true ? layers.length - 1 : 0;
  for (let l = layers.length - 1; l >= bottom; l--) {
    if (!verifyLayer(layers, l, lookup, errors)) break;
    options.onLayer?.((layers[l] as CommitGraphFile).count);
  }
  return errors;
}

/**
 * Verifies layer `l`; false when git's verify would die there (its last line then starts with
 * `fatal: `): a parent position past the layer, which git's parse of the commit dies of.
 */
function verifyLayer(layers: readonly CommitGraphFile[], l: number, lookup: CommitLookup, errors: string[]): boolean {
  const g = layers[l] as CommitGraphFile;
  const H = g.hashLength;
  const before = errors.length;
  let checksumOnly = false;
  if (!hashBytes(formatForHashLength(H), g.checksummed()).equals(g.trailer())) {
    errors.push('the commit-graph file has incorrect checksum and is likely corrupt');
    checksumOnly = true;
  }
  const hex = (b: Buffer): string => b.toString('hex');
  let fanoutPos = 0;
  for (let i = 0; i < g.count; i++) {
    const id = g.id(i);
    if (i > 0 && compareBytes(g.id(i - 1), 0, id, 0, H) >= 0) errors.push(`commit-graph has incorrect OID order: ${hex(g.id(i - 1))} then ${hex(id)}`);
    while ((id[0] as number) > fanoutPos) {
      const value = g.fanoutAt(fanoutPos);
      if (value !== i) errors.push(`commit-graph has incorrect fanout value: fanout[${fanoutPos}] = ${value} != ${i}`);
      fanoutPos++;
    }
    // git parses each commit from the graph here (parse_commit_in_graph_one), and its
    // insert_parent_or_die dies of a position past this layer's commits.
    for (const p of g.parents(i)) {
      if (p >= g.baseCount + g.count) {
        errors.push(`fatal: invalid parent position ${p}`);
        return false;
      }
    }
  }
  for (; fanoutPos < 256; fanoutPos++) {
    const value = g.fanoutAt(fanoutPos);
    if (value !== g.count) errors.push(`commit-graph has incorrect fanout value: fanout[${fanoutPos}] = ${value} != ${g.count}`);
  }
  // Only a bad checksum lets the commits be checked (git's VERIFY_COMMIT_GRAPH_ERROR_HASH).
  if (errors.length - before > (checksumOnly ? 1 : 0)) return true;
  const total = layers.reduce((n, x) => n + x.count, 0);
  const layerOf = (position: number): CommitGraphFile | undefined => {
    if (position >= total) return undefined;
    for (const x of layers) if (position < x.baseCount + x.count) return x;
    return undefined;
  };
  const idAt = (position: number): Buffer | undefined => {
    const x = layerOf(position);
    return x?.id(position - x.baseCount);
  };
  // Corrected commit dates when every layer has them (git's read_generation_data), else levels.
  const v2 = layers.every((x) => x.hasGenerationData);
  const generationAt = (position: number): number => {
    const x = layerOf(position);
    return x === undefined ? 0 : x.generation(position - x.baseCount, v2);
  };
  let zeroSeen = false;
  for (let i = 0; i < g.count; i++) {
    const id = g.id(i);
    const odb = lookup(id);
    if (odb === undefined) {
      errors.push(`failed to parse commit ${hex(id)} from object database for commit-graph`);
      continue;
    }
    if (!g.tree(i).equals(odb.tree)) errors.push(`root tree OID for commit ${hex(id)} in commit-graph is ${hex(g.tree(i))} != ${hex(odb.tree)}`);
    const parents = g.parents(i);
    let maxGeneration = 0;
    let p = 0;
    for (; p < parents.length; p++) {
      if (p >= odb.parents.length) {
        errors.push(`commit-graph parent list for commit ${hex(id)} is too long`);
        break;
      }
      const parent = idAt(parents[p] as number);
      const expected = odb.parents[p] as Buffer;
      if (parent === undefined || !parent.equals(expected)) {
        errors.push(`commit-graph parent for ${hex(id)} is ${parent === undefined ? '(none)' : hex(parent)} != ${hex(expected)}`);
      }
      maxGeneration = Math.max(maxGeneration, generationAt(parents[p] as number));
    }
    if (p === parents.length && odb.parents.length > parents.length) errors.push(`commit-graph parent list for commit ${hex(id)} terminates early`);
    const generation = g.generation(i, v2);
    // As git 2.39: a zero generation (a graph from before generation numbers) is remembered,
    // and from then on a non-zero one is an error and nothing more is checked.
    if (generation === 0) {
      zeroSeen = true;
    } else if (zeroSeen) {
      errors.push(`commit-graph has non-zero generation number for commit ${hex(id)}, but zero elsewhere`);
    }
    if (zeroSeen) continue;
    // A parent at the largest topological level makes its children that level too.
    if (!v2 && maxGeneration === GENERATION_V1_MAX) maxGeneration--;
    if (generation < maxGeneration + 1) errors.push(`commit-graph generation for commit ${hex(id)} is ${generation} < ${maxGeneration + 1}`);
    if (g.date(i) !== odb.date) errors.push(`commit date for commit ${hex(id)} in commit-graph is ${g.date(i)} != ${odb.date}`);
  }
  return true;
}
