import { retryFetching } from './lazy-fetch.js';
import { diffTrees, type TreeChange } from '../diff/index.js';
import { PackwrightError } from '../errors/index.js';
import { toHex } from '../hash/index.js';
import { Pathspec, parseCommit, parseTag } from '../objects/index.js';
import type { Repository } from '../repo/index.js';
import type { CommandIO } from './command-io.js';
import { Output } from './output.js';
import { quoteCStyle } from './quote-path.js';
import { readAll } from './read-lines.js';
import { helpRequested, UsageError } from './usage-error.js';

const USAGE = 'usage: packwright diff-tree [-r] [-t] [--root] [--stdin] [--no-commit-id] [-z] [--raw | --name-only | --name-status] <tree-ish> [<tree-ish>] [--] [<path>...]';

type Format = 'raw' | 'name-only' | 'name-status';

/**
 * `git diff-tree`: the changes between two tree-ishes, or a commit's against its parent (its id
 * first; a merge shows nothing, a root commit only with `--root`), in git's raw format (or
 * `--name-only`, `--name-status`), `-r` into subtrees, `-t` with the subtrees' own lines, `-z`,
 * `--stdin` (commits, one a line, optionally followed by the parents to compare with).
 */
export async function diffTreeCommand(io: CommandIO, open: () => Repository, args: string[]): Promise<number> {
  const help = helpRequested(args, USAGE, io.stdout);
  if (help !== undefined) return help;
  let recursive = false, showTrees = false, root = false, stdin = false, nul = false, commitId = true;
  let format: Format = 'raw';
  const revs: string[] = [];
  const paths: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    if (a === '--') { paths.push(...args.slice(i + 1)); break; }
    if (a === '-r') recursive = true;
    else if (a === '-t') showTrees = recursive = true;
    else if (a === '--root') root = true;
    else if (a === '--stdin') stdin = true;
    else if (a === '-z') nul = true;
    else if (a === '--raw') format = 'raw';
    else if (a === '--name-only') format = 'name-only';
    else if (a === '--name-status') format = 'name-status';
    else if (a === '--no-commit-id') commitId = false;
    else if (a === '--commit-id') commitId = true;
    else if (a.startsWith('-')) throw new UsageError(`error: unknown option \`${a.replace(/^-+/, '')}'\n${USAGE}`);
    else if (paths.length === 0 && revs.length < 2 && !stdin) revs.push(a);
    else paths.push(a);
  }
  const repo = open();
  const objects = repo.objects;
  const H = objects.hashLength;
  const pathspec = paths.length > 0 ? Pathspec.parse(paths, repo.prefix, repo.workTree) : undefined;
  const out = new Output(io.stdout);
  const zero = '0'.repeat(2 * H);
  const quotePaths = repo.config.getBool('core.quotepath') !== false;
  const show = (changes: TreeChange[]): void => {
    for (const c of changes) {
      const path = nul ? Buffer.from(c.path).toString('latin1') : quoteCStyle(c.path, quotePaths);
      if (format === 'name-only') out.string(`${path}${nul ? '\0' : '\n'}`);
      else if (format === 'name-status') out.string(nul ? `${c.status}\0${path}\0` : `${c.status}\t${path}\n`);
      else {
        const mode = (m: number | undefined): string => (m ?? 0).toString(8).padStart(6, '0');
        const line = `:${mode(c.oldMode)} ${mode(c.newMode)} ${c.oldId !== undefined ? toHex(c.oldId) : zero} ${c.newId !== undefined ? toHex(c.newId) : zero} ${c.status}`;
        out.string(nul ? `${line}\0${path}\0` : `${line}\t${path}\n`);
      }
    }
  };
  const options = { recursive, showTrees, pathspec };
  /** The tree a tree-ish names (tags peeled, a commit's tree). */
  const treeOf = (id: Buffer, name: string): Buffer => {
    for (let depth = 0; depth < 64; depth++) {
      const o = objects.read(id);
      if (o.type === 'tree') return id;
      if (o.type === 'tag') id = parseTag(o.data, H, toHex(id)).object;
      else if (o.type === 'commit') id = parseCommit(o.data, H, toHex(id)).tree;
      else throw new PackwrightError('INVALID_ARGUMENT', `unable to read tree (${name})`);
    }
    throw new PackwrightError('INVALID_ARGUMENT', `unable to read tree (${name})`);
  };
  /** A commit's changes against its parents (given, or its own); undefined when nothing is shown (a merge, a root without --root). */
  const commitChanges = (commit: Buffer, given: Buffer[] | undefined, header: string): TreeChange[] | undefined => {
    let id = commit;
    let o = objects.read(id);
    while (o.type === 'tag') {
      id = parseTag(o.data, H, toHex(id)).object;
      o = objects.read(id);
    }
    if (o.type !== 'commit') throw new PackwrightError('INVALID_ARGUMENT', `${header}: not a commit`);
    const parsed = parseCommit(o.data, H, toHex(id));
    const parents = given ?? parsed.parents;
    if (parents.length > 1) return undefined;
    if (parents.length === 0 && !root) return undefined;
    return diffTrees(objects, parents.length === 0 ? undefined : treeOf(parents[0] as Buffer, header), parsed.tree, options);
  };
  /** The id line, then the changes; nothing for a commit with none. */
  const showCommit = (changes: TreeChange[] | undefined, header: string): void => {
    if (changes === undefined || changes.length === 0) return;
    if (commitId) out.string(`${header}${nul ? '\0' : '\n'}`);
    show(changes);
  };
  // Each diff is worked out before it is printed: in a partial clone, the trees it lacks are
  // fetched and the diff worked out again (git's lazy fetch; see retryFetching).
  if (stdin) {
    for (const line of readAll(io.stdin).toString('utf8').split('\n')) {
      if (line === '') continue;
      const ids = await retryFetching(io, repo, () => line.split(' ').map((w) => repo.resolve(w)));
      showCommit(await retryFetching(io, repo, () => commitChanges(ids[0] as Buffer, ids.length > 1 ? ids.slice(1) : undefined, line)), line);
    }
  } else if (revs.length === 2) {
    show(await retryFetching(io, repo, () => diffTrees(objects, treeOf(repo.resolve(revs[0] as string), revs[0] as string), treeOf(repo.resolve(revs[1] as string), revs[1] as string), options)));
  } else if (revs.length === 1) {
    const id = await retryFetching(io, repo, () => repo.resolve(revs[0] as string));
    showCommit(await retryFetching(io, repo, () => commitChanges(id, undefined, toHex(id))), toHex(id));
  } else {
    throw new UsageError(USAGE);
  }
  out.flush();
  return 0;
}
