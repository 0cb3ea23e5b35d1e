import { PackwrightError } from '../errors/packwright-error.js';
import { wildmatch } from '../config/wildmatch.js';

/** A tree entry is not wanted (but a later one may be). */
export const NOT_INTERESTING = 0;
/** A tree entry is wanted, or for a tree: some of what it holds may be. */
export const INTERESTING = 1;
/** A tree is wanted with everything it holds: its entries need no more checks. */
export const ALL_INTERESTING = 2;

/**
 * How a pathspec stands toward a tree entry: not interesting, interesting (descend and check), or
 * everything below is.
 */
export type Interest = typeof NOT_INTERESTING | typeof INTERESTING | typeof ALL_INTERESTING;

interface Item {
  /** The path from the top of the tree, with a trailing slash if it was given one (git's item->match). */
  match: string;
  /** Where its first glob character is (its length when it has none: git's nowildcard_len). */
  literal: number;
}

/** git's glob characters in a pathspec without magic (`*`, `?`, `[`, and `\` quoting). */
const WILDCARD = /[*?[\\]/;

/**
 * The paths a history walk is limited to (git's pathspec without magic), matched as git's
 * tree_entry_interesting (tree-walk.c, do_match) matches a tree entry under a directory: a path
 * names itself and everything under it (`dir/` names a directory only); a path with glob
 * characters matches with `*` and `?` crossing `/`. `recursive` is git's flag of the same name: a
 * history's tree comparison enters every directory a glob might match in (the diff is recursive),
 * where listing objects enters only those its literal start leads into.
 */
export class Pathspec {
  private constructor(private readonly items: readonly Item[]) {}

  /**
   * The pathspec of command-line paths given in `prefix` (the directory they were typed in,
   * relative to the top of the work tree, '' or ending in '/'): `.` and `..` are resolved, and a
   * path that leaves the work tree (`top`, named in the message) is INVALID_ARGUMENT. Magic
   * (`:(…)`, `:!`, `:/`) is refused.
   */
  static parse(paths: readonly string[], prefix = '', top?: string): Pathspec {
    const items: Item[] = [];
    for (const given of paths) {
      if (given === '') throw new PackwrightError('INVALID_ARGUMENT', 'empty string is not a valid pathspec. please use . instead if you meant to match all paths');
      if (given.startsWith(':')) throw new PackwrightError('INVALID_ARGUMENT', `pathspec magic is not supported: '${given}'`);
      const parts: string[] = [];
      for (const part of `${prefix}${given}`.split('/')) {
        if (part === '' || part === '.') continue;
        if (part === '..') {
          if (parts.length === 0) throw new PackwrightError('INVALID_ARGUMENT', `${given}: '${given}' is outside repository${top !== undefined ? ` at '${top}'` : ''}`);
          parts.pop();
        } else parts.push(part);
      }
      let match = parts.join('/');
      if (given.endsWith('/') && match !== '') match += '/';
      const w = WILDCARD.exec(match);
      items.push({ match, literal: w === null ? match.length : w.index });
    }
    return new Pathspec(items);
  }

  /**
   * Whether paths were given. A history walk is then simplified even by one that names the top
   * (`.`): as in git, a commit that changes nothing is left out.
   */
  get limits(): boolean {
    return this.items.length > 0;
  }

  /**
   * How the entry `name` of the tree at `base` ('' for the top, else ending in '/') stands:
   * ALL_INTERESTING when `base` lies within a path given (everything there is wanted).
   */
  interest(base: string, name: string, isDir: boolean, isGitlink: boolean, recursive: boolean): Interest {
    if (this.items.length === 0) return ALL_INTERESTING;
    // git tries the items last first and takes the first that answers.
    for (let i = this.items.length - 1; i >= 0; i--) {
      const r = itemInterest(this.items[i] as Item, base, name, isDir, isGitlink, recursive);
      if (r !== NOT_INTERESTING) return r;
    }
    return NOT_INTERESTING;
  }
}

function itemInterest(item: Item, base: string, name: string, isDir: boolean, isGitlink: boolean, recursive: boolean): Interest {
  const { match, literal } = item;
  const wildcard = literal < match.length;
  if (base.length >= match.length) {
    // The base lies in a path given: everything under it is wanted (match_dir_prefix).
    if (base.startsWith(match) && (match.length === 0 || base[match.length] === '/' || match.endsWith('/'))) return ALL_INTERESTING;
  } else if (match.startsWith(base)) {
    // The base leads toward the path given: the entry must be its next part (match_entry)…
    const rest = match.slice(base.length);
    if (name.length <= rest.length && rest.startsWith(name) && (rest.length === name.length || (rest[name.length] === '/' && (isDir || isGitlink)))) return INTERESTING;
    if (!wildcard) return NOT_INTERESTING;
    // …or match the rest of a glob (which sees only the entry's name).
    if (wildmatch(rest, name)) return INTERESTING;
    return recursive && isDir ? INTERESTING : NOT_INTERESTING;
  }
  if (!wildcard) return NOT_INTERESTING;
  // A glob that the base does not lead into literally (match_wildcard_base), tried on the whole path.
  if (literal > 0 && base.length > 0) {
    if (base.length >= literal ? !base.startsWith(match.slice(0, literal)) : !match.startsWith(base)) return NOT_INTERESTING;
  }
  if (wildmatch(match, `${base}${name}`)) return INTERESTING;
  return recursive && isDir ? INTERESTING : NOT_INTERESTING;
}
