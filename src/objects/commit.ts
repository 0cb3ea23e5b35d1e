import { PackwrightError } from '../errors/packwright-error.js';
import { typeName, typeNumber, type ObjectType } from './object-type.js';
import { idFromHexBytes } from '../hash/hex.js';

/**
 * Commit and tag headers with ids as bytes (hex only at the edges): what walking history needs.
 * A header line is `<key> <value>\n`; the headers end at the first empty line (gitformat:
 * commit, tag). Only the lines a walk needs are read, and nothing after the headers.
 */

export interface CommitHeader {
  tree: Buffer;
  parents: Buffer[];
  /**
   * The committer's timestamp (seconds since the epoch), what git orders a walk by; 0 when the
   * author and committer lines do not follow the parents or the date does not parse, as git's
   * parse_commit_date gives 0.
   */
  time: number;
}

/** The first lines of an annotated tag: what it points at, that object's type, and the tag's name. */
export interface TagHeader {
  /** The tagged object's id. */
  object: Buffer;
  /** Its type, as the tag's `type` line names it. */
  type: ObjectType;
  /** The tag's name (its `tag` line), or '' when it has none. */
  name: string;
}

/** Parses the hex id at `data[at..at+2H)`, or undefined when it is not one. */
function idAt(data: Uint8Array, at: number, end: number, hashLength: number): Buffer | undefined {
  if (at + 2 * hashLength > end) return undefined;
  return idFromHexBytes(data, at, hashLength);
}

/**
 * Calls `line(keyEnd, start, end)` for each header line `data[start..end)` (its key ends at
 * `keyEnd`, its value starts after the space there) until the blank line, or until `line` returns
 * false. Continuation lines (a leading space) belong to the line before and are skipped.
 */
function forEachHeader(data: Uint8Array, line: (keyEnd: number, start: number, end: number) => boolean): void {
  let p = 0;
  while (p < data.length && data[p] !== 0x0a) {
    let end = data.indexOf(0x0a, p);
    if (end < 0) end = data.length;
    if (data[p] !== 0x20) {
      let space = data.indexOf(0x20, p);
      if (space < 0 || space > end) space = end;
      if (!line(space, p, end)) return;
    }
    p = end + 1;
  }
}

/**
 * `data[start..end)` as text, without copying the bytes first (a walk reads thousands of tags:
 * `Buffer.from(data.subarray())` copied each field before decoding it).
 */
function text(data: Uint8Array, start: number, end: number, encoding: 'latin1' | 'utf8'): string {
  return Buffer.from(data.buffer, data.byteOffset + start, end - start).toString(encoding);
}

/** An object's name for an error, made only when there is one. */
function named(id: string | (() => string)): string {
  return typeof id === 'string' ? id : id();
}

function keyIs(data: Uint8Array, start: number, keyEnd: number, key: string): boolean {
  if (keyEnd - start !== key.length) return false;
  for (let i = 0; i < key.length; i++) if (data[start + i] !== key.charCodeAt(i)) return false;
  return true;
}

/**
 * The length in bytes of the ids of a commit or tag, from its first line (`tree <hex>` or
 * `object <hex>`): 20 (SHA-1) or 32 (SHA-256), or -1 when that line holds neither.
 */
function idLengthOfFirstLine(data: Uint8Array): number {
  const end = data.indexOf(0x0a);
  const space = data.indexOf(0x20);
  if (space < 0 || end < 0 || space > end) return -1;
  const hex = end - space - 1;
  return hex === 40 ? 20 : hex === 64 ? 32 : -1;
}

/**
 * The tree and parents of a commit. Like git's parser (commit.c, parse_commit_buffer) the tree
 * line must come first and the parents follow it; a bad id is OBJECT_CORRUPT. `hashLength` (20 for
 * SHA-1, 32 for SHA-256) is taken from the tree line when not given. `idForErrors` names the
 * commit in an error: a function is called only then, so a walk of many commits makes no hex strings.
 *
 * @example const { tree, parents } = parseCommit(data);
 */
export function parseCommit(data: Uint8Array, hashLength = idLengthOfFirstLine(data), idForErrors: string | (() => string) = '<commit>'): CommitHeader {
  let tree: Buffer | undefined;
  const parents: Buffer[] = [];
  let bad: string | undefined;
  let time = 0;
  // 0: the tree line; 1: parents, then the author line; 2: the committer line.
  let state = 0;
  forEachHeader(data, (keyEnd, start, end) => {
    if (state === 0) {
      state = 1;
      if (!keyIs(data, start, keyEnd, 'tree')) { bad = 'does not start with a tree line'; return false; }
      tree = idAt(data, keyEnd + 1, end, hashLength);
      if (tree === undefined || end !== keyEnd + 1 + 2 * hashLength) bad = 'has a bad tree line';
      return bad === undefined;
    }
    if (state === 1) {
      if (keyIs(data, start, keyEnd, 'parent')) {
        const p = idAt(data, keyEnd + 1, end, hashLength);
        if (p === undefined || end !== keyEnd + 1 + 2 * hashLength) { bad = 'has a bad parent line'; return false; }
        parents.push(p);
        return true;
      }
      state = 2;
      return keyIs(data, start, keyEnd, 'author');
    }
    if (keyIs(data, start, keyEnd, 'committer')) time = lineDate(data, keyEnd, end);
    return false;
  });
  if (bad === undefined && tree === undefined) bad = 'has no tree line';
  if (bad !== undefined || tree === undefined) throw new PackwrightError('OBJECT_CORRUPT', `commit ${named(idForErrors)} ${bad ?? 'has no tree line'}`);
  return { tree, parents, time };
}

/** The timestamp after the last '>' of an ident line (`Name <mail> 1700000000 +0100`), or 0. */
function lineDate(data: Uint8Array, from: number, end: number): number {
  let p = end - 1;
  while (p > from && data[p] !== 0x3e) p--;
  if (p <= from) return 0;
  p++;
  while (p < end && data[p] === 0x20) p++;
  let t = 0;
  const digits = p;
  while (p < end && (data[p] as number) >= 0x30 && (data[p] as number) <= 0x39) t = t * 10 + ((data[p++] as number) - 0x30);
  return p === digits ? 0 : t;
}

/**
 * The object, type and name lines of an annotated tag (object first, type second, as git requires).
 * `hashLength` (20 for SHA-1, 32 for SHA-256) is taken from the object line when not given;
 * `idForErrors` as for parseCommit.
 */
export function parseTag(data: Uint8Array, hashLength = idLengthOfFirstLine(data), idForErrors: string | (() => string) = '<tag>'): TagHeader {
  let object: Buffer | undefined;
  let type = -1;
  let name = '';
  let n = 0;
  forEachHeader(data, (keyEnd, start, end) => {
    const i = n++;
    if (i === 0 && keyIs(data, start, keyEnd, 'object') && end === keyEnd + 1 + 2 * hashLength) object = idAt(data, keyEnd + 1, end, hashLength);
    else if (i === 1 && keyIs(data, start, keyEnd, 'type')) type = typeNumber(text(data, keyEnd + 1, end, 'latin1'));
    else if (i === 2 && keyIs(data, start, keyEnd, 'tag')) name = text(data, keyEnd + 1, end, 'utf8');
    return i < 2;
  });
  if (object === undefined || type < 0) throw new PackwrightError('OBJECT_CORRUPT', `tag ${named(idForErrors)} lacks a valid object or type line`);
  return { object, type: typeName(type), name };
}
