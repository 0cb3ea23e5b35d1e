import { S_IFDIR, S_IFGITLINK, S_IFLNK, S_IFMT, S_IFREG, TreeCursor } from '../objects/tree.js';
import { bytesStartWith, hexLineAt, type LinkSink } from '../objects/object-links.js';

export { objectLinks, type LinkSink } from '../objects/object-links.js';
import { parseConfigText } from '../config/git-config.js';
import { isPackwrightError } from '../errors/packwright-error.js';
import { isValidRefname } from '../refs/refname.js';
import { isDotGit, isDotGitattributes, isDotGitignore, isDotGitmodules, isDotMailmap, isNtfsDotGit, isNtfsDotGitmodules } from './dotgit-names.js';
import type { FsckMessageKey } from './fsck-messages.js';
import { OBJ_BLOB, OBJ_COMMIT, OBJ_TAG, OBJ_TREE, typeNumber } from '../objects/object-type.js';

/**
 * Reports one finding; returns true when it counts as an error (the check then stops, as git's
 * report() makes fsck_commit and fsck_tag return), false for a warning or an ignored message.
 */
export type FsckReport = (key: FsckMessageKey, message: string) => boolean;

/** What a tree says about special files, for the blob checks that follow (git's gitmodules_found). */
export interface SpecialBlobs {
  /** Raw ids of blobs named `.gitmodules` (or a name a file system would take for it). */
  gitmodules: Uint8Array[];
  gitattributes: Uint8Array[];
}

/** Where `checkTree` gives the tree's links as it checks it (one pass over the entries), and its decoding error. */
export interface TreeLinks {
  sink: LinkSink;
  decodeError?: string | undefined;
}

/**
 * Checks an object's bytes by git 2.39's fsck rules (fsck.c: fsck_commit, fsck_tree, fsck_tag,
 * fsck_blob), reporting each finding through `report`; returns true if any counted as an error.
 * `special` collects `.gitmodules` / `.gitattributes` blobs a tree names; `blobKind` says what a
 * tree named a blob, for the blob checks; `strict` is git's --strict (a 100664 mode is bad).
 */
export function checkObject(type: number, data: Uint8Array, hashLength: number, report: FsckReport, options: { strict?: boolean; special?: SpecialBlobs; blobKind?: 'gitmodules' | 'gitattributes'; links?: TreeLinks } = {}): boolean {
  const { special, blobKind } = options;
  switch (type) {
    case OBJ_COMMIT: return checkCommit(data, hashLength, report);
    case OBJ_TREE: return checkTree(data, hashLength, report, special, options.strict === true, options.links);
    case OBJ_TAG: return checkTag(data, hashLength, report);
    case OBJ_BLOB: return blobKind === undefined ? false : checkSpecialBlob(blobKind, data, report);
    default: return report('UNKNOWN_TYPE', `unknown type '${type}' (internal fsck error)`);
  }
}

/** git's verify_headers: no NUL before the blank line that ends the header, and a newline at the end of it. */
export function verifyHeaders(d: Uint8Array, report: FsckReport): boolean {
  for (let i = 0; i < d.length; i++) {
    const c = d[i];
    if (c === 0) return report('NUL_IN_HEADER', `unterminated header: NUL at offset ${i}`);
    if (c === 0x0a && i + 1 < d.length && d[i + 1] === 0x0a) return false;
  }
  if (d.length > 0 && d[d.length - 1] === 0x0a) return false;
  return report('UNTERMINATED_HEADER', 'unterminated header');
}

/** Reads headers of a commit or tag from the front; the text is latin1, one char a byte. */
class HeaderReader {
  pos = 0;
  constructor(readonly text: string) {}

  skip(prefix: string): boolean {
    if (!this.text.startsWith(prefix, this.pos)) return false;
    this.pos += prefix.length;
    return true;
  }

  /** A hex id of `hexLength` digits ending in a newline; moves past the newline either way (git's parse_oid_hex then `p + 1`). */
  hexLine(hexLength: number): boolean {
    const t = this.text;
    let ok = true;
    let i = this.pos;
    for (; i < this.pos + hexLength; i++) {
      const c = t.charCodeAt(i);
      if (!((c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46))) {
        ok = false;
        break;
      }
    }
    // A bad id leaves git's `p` unset (it stops there with the default severities); moving on
    // one character is as good a guess as any when the message is demoted.
    if (!ok) {
      this.pos += 1;
      return false;
    }
    this.pos = i + 1;
    return t[i] === '\n';
  }
}

const DIGIT = /[0-9]/;

/** git's fsck_ident: `Name <email> <seconds> <+-hhmm>\n`; moves the reader past the line. */
function checkIdent(r: HeaderReader, report: FsckReport): boolean {
  const t = r.text;
  let p = r.pos;
  const nl = t.indexOf('\n', p);
  r.pos = nl < 0 ? t.length : nl + 1;
  const at = (i: number): string => t[i] ?? '\0';
  if (at(p) === '<') return report('MISSING_NAME_BEFORE_EMAIL', 'invalid author/committer line - missing space before email');
  while (p < t.length && !'<>\n'.includes(at(p))) p++;
  if (at(p) === '>') return report('BAD_NAME', 'invalid author/committer line - bad name');
  if (at(p) !== '<') return report('MISSING_EMAIL', 'invalid author/committer line - missing email');
  if (at(p - 1) !== ' ') return report('MISSING_SPACE_BEFORE_EMAIL', 'invalid author/committer line - missing space before email');
  p++;
  while (p < t.length && !'<>\n'.includes(at(p))) p++;
  if (at(p) !== '>') return report('BAD_EMAIL', 'invalid author/committer line - bad email');
  p++;
  if (at(p) !== ' ') return report('MISSING_SPACE_BEFORE_DATE', 'invalid author/committer line - missing space before date');
  p++;
  if (at(p) === '0' && at(p + 1) !== ' ') return report('ZERO_PADDED_DATE', 'invalid author/committer line - zero-padded date');
  // strtoumax: leading white space and a sign are accepted; digits up to the first non-digit.
  let q = p;
  while (' \t\n\v\f\r'.includes(at(q)) && q < t.length) q++;
  if (at(q) === '+' || at(q) === '-') q++;
  const digitsStart = q;
  while (DIGIT.test(at(q))) q++;
  const end = q > digitsStart ? q : p;
  if (q > digitsStart && BigInt(t.slice(digitsStart, q)) > 0x7fffffffffffffffn) {
    return report('BAD_DATE_OVERFLOW', 'invalid author/committer line - date causes integer overflow');
  }
  if (end === p || at(end) !== ' ') return report('BAD_DATE', 'invalid author/committer line - bad date');
  p = end + 1;
  if ((at(p) !== '+' && at(p) !== '-') || !DIGIT.test(at(p + 1)) || !DIGIT.test(at(p + 2)) || !DIGIT.test(at(p + 3)) || !DIGIT.test(at(p + 4)) || at(p + 5) !== '\n') {
    return report('BAD_TIMEZONE', 'invalid author/committer line - bad time zone');
  }
  return false;
}

/** git's fsck_commit. */
export function checkCommit(data: Uint8Array, hashLength: number, report: FsckReport): boolean {
  if (verifyHeaders(data, report)) return true;
  const r = new HeaderReader(Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('latin1'));
  const hex = hashLength * 2;
  if (!r.skip('tree ')) return report('MISSING_TREE', "invalid format - expected 'tree' line");
  if (!r.hexLine(hex) && report('BAD_TREE_SHA1', "invalid 'tree' line format - bad sha1")) return true;
  while (r.skip('parent ')) {
    if (!r.hexLine(hex) && report('BAD_PARENT_SHA1', "invalid 'parent' line format - bad sha1")) return true;
  }
  let authors = 0;
  while (r.skip('author ')) {
    authors++;
    if (checkIdent(r, report)) return true;
  }
  if (authors < 1 && report('MISSING_AUTHOR', "invalid format - expected 'author' line")) return true;
  if (authors > 1 && report('MULTIPLE_AUTHORS', "invalid format - multiple 'author' lines")) return true;
  if (!r.skip('committer ')) return report('MISSING_COMMITTER', "invalid format - expected 'committer' line");
  if (checkIdent(r, report)) return true;
  if (data.indexOf(0) >= 0 && report('NUL_IN_COMMIT', 'NUL byte in the commit object body')) return true;
  return false;
}

/** git's fsck_tag (fsck_tag_standalone). */
export function checkTag(data: Uint8Array, hashLength: number, report: FsckReport): boolean {
  if (verifyHeaders(data, report)) return true;
  const r = new HeaderReader(Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('latin1'));
  const t = r.text;
  if (!r.skip('object ')) return report('MISSING_OBJECT', "invalid format - expected 'object' line");
  if (!r.hexLine(hashLength * 2) && report('BAD_OBJECT_SHA1', "invalid 'object' line format - bad sha1")) return true;
  if (!r.skip('type ')) return report('MISSING_TYPE_ENTRY', "invalid format - expected 'type' line");
  let eol = t.indexOf('\n', r.pos);
  if (eol < 0) return report('MISSING_TYPE', "invalid format - unexpected end after 'type' line");
  if (typeNumber(t.slice(r.pos, eol)) < 0 && report('BAD_TYPE', "invalid 'type' value")) return true;
  r.pos = eol + 1;
  if (!r.skip('tag ')) return report('MISSING_TAG_ENTRY', "invalid format - expected 'tag' line");
  eol = t.indexOf('\n', r.pos);
  if (eol < 0) return report('MISSING_TAG', "invalid format - unexpected end after 'type' line");
  const name = t.slice(r.pos, eol);
  if (!isValidRefname(`refs/tags/${name}`) && report('BAD_TAG_NAME', `invalid 'tag' name: ${Buffer.from(name, 'latin1').toString('utf8')}`)) return true;
  r.pos = eol + 1;
  if (!r.skip('tagger ')) {
    if (report('MISSING_TAGGER_ENTRY', "invalid format - expected 'tagger' line")) return true;
  } else if (checkIdent(r, report)) {
    return true;
  }
  if (r.pos >= t.length) return false;
  if (t[r.pos] !== '\n' && report('EXTRA_HEADER_ENTRY', "invalid format - extra header(s) after 'tagger'")) return true;
  return false;
}

const TREE_UNORDERED = -1;
const TREE_HAS_DUPS = -2;

const lessThanSlash = (c: number): boolean => c > 0 && c < 0x2f;

/**
 * git's verify_ordered: entries sort by name with a directory's name taken to end in `/`; equal
 * names are duplicates, and so are a file and a directory of one name that other entries separate
 * (`foo`, `foo.bar`, `foo/`): file names that could still meet a directory wait on `candidates`.
 */
function verifyOrdered(d: Uint8Array, mode1: number, s1: number, e1: number, mode2: number, s2: number, e2: number, candidates: [number, number][]): number {
  const len1 = e1 - s1;
  const len2 = e2 - s2;
  const len = Math.min(len1, len2);
  for (let i = 0; i < len; i++) {
    const a = d[s1 + i] as number;
    const b = d[s2 + i] as number;
    if (a < b) return 0;
    if (a > b) return TREE_UNORDERED;
  }
  let c1 = len < len1 ? (d[s1 + len] as number) : 0;
  let c2 = len < len2 ? (d[s2 + len] as number) : 0;
  if (c1 === 0 && c2 === 0) return TREE_HAS_DUPS;
  if (c1 === 0 && (mode1 & S_IFMT) === S_IFDIR) c1 = 0x2f;
  if (c2 === 0 && (mode2 & S_IFMT) === S_IFDIR) c2 = 0x2f;
  if (c1 === 0 && lessThanSlash(c2)) {
    candidates.push([s1, e1]);
  } else if (c2 === 0x2f && lessThanSlash(c1)) {
    for (;;) {
      const f = candidates.pop();
      if (f === undefined) break;
      const [fs, fe] = f;
      const flen = fe - fs;
      let prefix = flen <= len2;
      for (let i = 0; prefix && i < flen; i++) if (d[fs + i] !== d[s2 + i]) prefix = false;
      if (!prefix) continue;
      if (flen === len2) return TREE_HAS_DUPS;
      if (lessThanSlash(d[s2 + flen] as number)) {
        candidates.push(f);
        break;
      }
    }
  }
  return c1 < c2 ? 0 : TREE_UNORDERED;
}

/** git's fsck_tree. */
export function checkTree(data: Uint8Array, hashLength: number, report: FsckReport, special?: SpecialBlobs, strict = false, links?: TreeLinks): boolean {
  let errors = false;
  const say = (key: FsckMessageKey, message: string): void => { if (report(key, message)) errors = true; };
  let nullId = false, fullPath = false, emptyName = false, dot = false, dotdot = false, dotgit = false;
  let zeroPad = false, badModes = false, dups = false, unsorted = false;
  const e = new TreeCursor(hashLength).reset(data);
  let oMode = 0, oStart = -1, oEnd = -1;
  const candidates: [number, number][] = [];
  const H = hashLength;
  let any = false;
  while (e.tryNext()) {
    any = true;
    const { mode, nameStart, nameEnd, idStart } = e;
    if (!nullId) {
      let allZero = true;
      for (let i = idStart; i < idStart + H; i++) if (data[i] !== 0) { allZero = false; break; }
      nullId = allZero;
    }
    const kind = mode & S_IFMT;
    // The links git's walk follows (fsck_walk_tree canonicalises modes: the rest are gitlinks).
    if (links !== undefined) {
      if (kind === S_IFDIR) links.sink(data, idStart, OBJ_TREE);
      else if (kind === S_IFREG || kind === S_IFLNK) links.sink(data, idStart, OBJ_BLOB);
    }
    // Most names are plain: a byte scan decides, and only names that could mean `.git`,
    // `.gitmodules` and the like (a leading `.`, `g`, `m`, an HFS-ignored code point, or a
    // backslash) are looked at as strings.
    const len = nameEnd - nameStart;
    const c0 = data[nameStart] as number;
    let backslash = false;
    for (let i = nameStart; i < nameEnd; i++) {
      const c = data[i] as number;
      if (c === 0x2f) fullPath = true;
      else if (c === 0x5c) backslash = true;
    }
    if (len === 0) emptyName = true;
    if (c0 === 0x2e && len <= 2) {
      if (len === 1) dot = true;
      else if (data[nameStart + 1] === 0x2e) dotdot = true;
    }
    zeroPad ||= data[e.entryStart] === 0x30;
    let suspect = backslash || c0 === 0x2e || c0 === 0xe2 || c0 === 0xef;
    if (!suspect && ((c0 | 0x20) === 0x67 || (c0 | 0x20) === 0x6d)) {
      // `git~1`, `gitmod~1`, `gi7eba~1`, `maba30~1`: NTFS short names have a `~` in their first eight characters.
      for (let i = nameStart + 1; i < nameEnd && i < nameStart + 8; i++) if (data[i] === 0x7e) { suspect = true; break; }
    }
    if (suspect) {
      const name = Buffer.from(data.buffer, data.byteOffset + nameStart, len).toString('latin1');
      dotgit ||= isDotGit(name);
      const isLink = kind === S_IFLNK;
      // A copy: `data` may be a view of a buffer that is reused after this call.
      const id = (): Uint8Array => new Uint8Array(data.subarray(idStart, idStart + H));
      if (isDotGitmodules(name)) {
        if (!isLink) special?.gitmodules.push(id());
        else say('GITMODULES_SYMLINK', '.gitmodules is a symbolic link');
      }
      if (isDotGitattributes(name)) {
        if (!isLink) special?.gitattributes.push(id());
        else say('GITATTRIBUTES_SYMLINK', '.gitattributes is a symlink');
      }
      if (isLink) {
        if (isDotGitignore(name)) say('GITIGNORE_SYMLINK', '.gitignore is a symlink');
        if (isDotMailmap(name)) say('MAILMAP_SYMLINK', '.mailmap is a symlink');
      }
      // A backslash is a directory separator on Windows: what follows each one is a name there.
      for (let b = name.indexOf('\\'); b >= 0; b = name.indexOf('\\', b + 1)) {
        const rest = name.slice(b + 1);
        dotgit ||= isNtfsDotGit(rest);
        if (isNtfsDotGitmodules(rest)) {
          if (!isLink) special?.gitmodules.push(id());
          else say('GITMODULES_SYMLINK', '.gitmodules is a symbolic link');
        }
      }
    }
    switch (mode) {
      case S_IFREG | 0o755: case S_IFREG | 0o644: case S_IFLNK: case S_IFDIR: case S_IFGITLINK:
        break;
      // Early git wrote 100664: accepted unless strict.
      case S_IFREG | 0o664:
        if (!strict) break;
        badModes = true;
        break;
      default:
        badModes = true;
    }
    if (oStart >= 0) {
      const order = verifyOrdered(data, oMode, oStart, oEnd, mode, nameStart, nameEnd, candidates);
      if (order === TREE_UNORDERED) unsorted = true;
      else if (order === TREE_HAS_DUPS) dups = true;
    }
    oMode = mode;
    oStart = nameStart;
    oEnd = nameEnd;
  }
  if (links !== undefined) links.decodeError = e.error;
  if (e.error !== undefined) {
    // git: a first entry that does not decode fails init_tree_desc_gently before any flag is
    // reported; a later one ends the loop with the flags gathered so far.
    say('BAD_TREE', 'cannot be parsed as a tree');
    if (!any) return errors;
  }
  if (nullId) say('NULL_SHA1', 'contains entries pointing to null sha1');
  if (fullPath) say('FULL_PATHNAME', 'contains full pathnames');
  if (emptyName) say('EMPTY_NAME', 'contains empty pathname');
  if (dot) say('HAS_DOT', "contains '.'");
  if (dotdot) say('HAS_DOTDOT', "contains '..'");
  if (dotgit) say('HAS_DOTGIT', "contains '.git'");
  if (zeroPad) say('ZERO_PADDED_FILEMODE', 'contains zero-padded file modes');
  if (badModes) say('BAD_FILEMODE', 'contains bad file modes');
  if (dups) say('DUPLICATE_ENTRIES', 'contains duplicate file entries');
  if (unsorted) say('TREE_NOT_SORTED', 'not properly sorted');
  return errors;
}

/** git's ATTR_MAX_FILE_SIZE and ATTR_MAX_LINE_LENGTH (attr.h). */
const ATTR_MAX_FILE_SIZE = 100 * 1024 * 1024;
const ATTR_MAX_LINE_LENGTH = 2048;

/** git's fsck_blob for a blob a tree names `.gitmodules` or `.gitattributes`. */
export function checkSpecialBlob(kind: 'gitmodules' | 'gitattributes', data: Uint8Array, report: FsckReport): boolean {
  if (kind === 'gitattributes') {
    if (data.length > ATTR_MAX_FILE_SIZE) return report('GITATTRIBUTES_LARGE', '.gitattributes too large to parse');
    // Lines up to the first NUL, as git's loop over a C string sees them.
    let end = data.indexOf(0);
    if (end < 0) end = data.length;
    for (let p = 0; p < end;) {
      let eol = data.indexOf(0x0a, p);
      if (eol < 0 || eol > end) eol = end;
      if (eol - p >= ATTR_MAX_LINE_LENGTH) return report('GITATTRIBUTES_LINE_LENGTH', '.gitattributes has too long lines to parse');
      p = eol + 1;
    }
    return false;
  }
  let errors = false;
  const say = (key: FsckMessageKey, message: string): void => { if (report(key, message)) errors = true; };
  try {
    parseConfigText(Buffer.from(data.buffer, data.byteOffset, data.byteLength), '.gitmodules', (key, value) => {
      const first = key.indexOf('.');
      const last = key.lastIndexOf('.');
      if (key.slice(0, first) !== 'submodule' || first === last) return;
      const name = key.slice(first + 1, last);
      const variable = key.slice(last + 1);
      if (!isValidSubmoduleName(name)) say('GITMODULES_NAME', `disallowed submodule name: ${name}`);
      if (variable === 'url' && value !== null && !isValidSubmoduleUrl(value)) say('GITMODULES_URL', `disallowed submodule url: ${value}`);
      if (variable === 'path' && value !== null && value.startsWith('-')) say('GITMODULES_PATH', `disallowed submodule path: ${value}`);
      if (variable === 'update' && value !== null && value.startsWith('!')) say('GITMODULES_UPDATE', `disallowed submodule update setting: ${value}`);
    });
  } catch (e) {
    if (!isPackwrightError(e, 'CONFIG_INVALID')) throw e;
    say('GITMODULES_PARSE', 'could not parse gitmodules blob');
  }
  return errors;
}

/** git's check_submodule_name: not empty, no `..` component (either slash separates). */
function isValidSubmoduleName(name: string): boolean {
  if (name === '') return false;
  return !name.split(/[/\\]/).includes('..');
}

/** git's check_submodule_url: no option-like URL, no newline smuggled in, no escape above the root, a host for curl's schemes. */
function isValidSubmoduleUrl(url: string): boolean {
  if (url.startsWith('-')) return false;
  const relative = /^\.\.?[/\\]/.test(url);
  if (relative || url.startsWith('git://')) {
    let decoded: string;
    try {
      decoded = decodeURIComponent(url.replace(/\+/g, ' '));
    } catch {
      // A malformed %-escape stays as written, as git's url_decode leaves it.
      decoded = url;
    }
    if (decoded.includes('\n')) return false;
    let rest = url;
    let dotdots = 0;
    for (;;) {
      if (/^\.\.[/\\]/.test(rest)) { dotdots++; rest = rest.slice(3); continue; }
      if (/^\.[/\\]/.test(rest)) { rest = rest.slice(2); continue; }
      break;
    }
    return !(dotdots > 0 && (rest[0] === ':' || rest[0] === '/'));
  }
  const curl = /^(?:https?|ftps?)::(.*)$/s.exec(url)?.[1] ?? (/^(?:https?|ftps?):\/\//.test(url) ? url : undefined);
  if (curl === undefined) return true;
  const m = /^[a-z][a-z0-9+.-]*:\/\/([^/?#]*)/is.exec(curl);
  if (m === null) return false;
  let host = m[1] as string;
  const atSign = host.lastIndexOf('@');
  if (atSign >= 0) host = host.slice(atSign + 1);
  let decodedAll: string;
  try {
    decodedAll = decodeURIComponent(curl);
  } catch {
    // A malformed %-escape stays as written, as git's url_decode leaves it.
    decodedAll = curl;
  }
  return host !== '' && !decodedAll.includes('\n');
}

/**
 * What git's parsers say of an object that `hash-object` (without `--literally`) or
 * `unpack-objects --strict` must refuse: a tree whose entries do not decode, a commit
 * parse_commit_buffer rejects ("corrupt commit"), a tag parse_tag_buffer rejects ("corrupt
 * tag"). Undefined when git would accept it. Blobs are always accepted.
 */
export function objectFormatError(type: number, data: Uint8Array, hashLength: number): string | undefined {
  if (type === OBJ_TREE) {
    const e = new TreeCursor(hashLength).reset(data);
    while (e.tryNext());
    return e.error;
  }
  if (type === OBJ_COMMIT || type === OBJ_TAG) {
    if (commitOrTagParseError(type, data, hashLength) === undefined) return undefined;
    return type === OBJ_COMMIT ? 'corrupt commit' : 'corrupt tag';
  }
  return undefined;
}

/**
 * What git's parse_commit_buffer or parse_tag_buffer says of a commit or tag it refuses, the words
 * before the object's id: a commit's tree line out of shape ("bogus commit object"), its id not
 * hex ("bad tree pointer in commit"), a parent line that does not parse ("bad parents in
 * commit"); a tag of an unknown type. Its other refusals say nothing (''). Undefined when git
 * parses it. Capital hex digits pass, as get_oid_hex reads them.
 */
export function commitOrTagParseError(type: number, data: Uint8Array, hashLength: number): string | undefined {
  const hex = hashLength * 2;
  if (type === OBJ_COMMIT) {
    if (data.length <= 5 + hex + 1 || !bytesStartWith(data, 0, 'tree ') || data[5 + hex] !== 0x0a) return 'bogus commit object';
    if (!hexLineAt(data, 5, hex, true)) return 'bad tree pointer in commit';
    let p = 5 + hex + 1;
    while (p + 7 + hex < data.length && bytesStartWith(data, p, 'parent ')) {
      if (data.length <= p + 7 + hex + 1 || data[p + 7 + hex] !== 0x0a || !hexLineAt(data, p + 7, hex, true)) return 'bad parents in commit';
      p += 7 + hex + 1;
    }
    return undefined;
  }
  if (data.length < hex + 24 || !bytesStartWith(data, 0, 'object ') || data[7 + hex] !== 0x0a || !hexLineAt(data, 7, hex, true)) return '';
  let p = 7 + hex + 1;
  if (!bytesStartWith(data, p, 'type ')) return '';
  p += 5;
  // git reads the type into a char[20].
  const nl = data.indexOf(0x0a, p);
  if (nl < 0 || nl - p >= 20) return '';
  const name = Buffer.from(data.buffer, data.byteOffset + p, nl - p).toString('latin1');
  if (typeNumber(name) < 0) return `unknown tag type '${name}' in`;
  p = nl + 1;
  if (!(p + 4 < data.length && bytesStartWith(data, p, 'tag '))) return '';
  if (data.indexOf(0x0a, p + 4) < 0) return '';
  return undefined;
}
