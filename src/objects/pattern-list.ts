import { wildmatchBytes } from '../config/wildmatch.js';

/**
 * What a pattern list says of a path (git's enum pattern_match_result): the last pattern that
 * matches decides, MATCHED unless it is negated with `!`; UNDECIDED when none matches.
 */
export type PatternMatch = -1 | 0 | 1;
export const UNDECIDED = -1;
export const NOT_MATCHED = 0;
export const MATCHED = 1;

/** git's PATTERN_FLAG_*: no `/` but a trailing one, `*literal`, a trailing `/`, a leading `!`. */
const NODIR = 1;
const ENDSWITH = 4;
const MUSTBEDIR = 8;
const NEGATIVE = 16;

interface PathPattern {
  /** The pattern without its `!` and trailing `/`, backslash escapes kept (wildmatch reads them). */
  pattern: Uint8Array;
  /** How many leading bytes hold no glob character (git's nowildcardlen). */
  literal: number;
  flags: number;
}

const SLASH = 0x2f;
const isGlobSpecial = (c: number): boolean => c === 0x2a || c === 0x3f || c === 0x5b || c === 0x5c;

/** Leading bytes of `p` before its first glob character (git's simple_length). */
function simpleLength(p: Uint8Array): number {
  let i = 0;
  while (i < p.length && !isGlobSpecial(p[i] as number)) i++;
  return i;
}

/**
 * A list of gitignore-style patterns as git reads a sparse-checkout specification from a blob
 * (dir.c's add_patterns_from_buffer, in its non-cone mode: what `--filter=sparse:oid=` uses):
 * one pattern a line, `#` lines and empty lines skipped, a UTF-8 BOM, a CR before the newline and
 * unescaped trailing spaces dropped; `!` negates, a trailing `/` matches directories only, a
 * pattern without a `/` (but a trailing one) matches the last path component anywhere, any other
 * is anchored at the top. Bytes throughout, as paths in trees are.
 */
export class PatternList {
  private constructor(private readonly patterns: readonly PathPattern[]) {}

  static parse(data: Uint8Array): PatternList {
    const patterns: PathPattern[] = [];
    let lineStart = data.length >= 3 && data[0] === 0xef && data[1] === 0xbb && data[2] === 0xbf ? 3 : 0;
    for (let i = lineStart; i <= data.length; i++) {
      if (i < data.length && data[i] !== 0x0a) continue;
      // git reads a last line without its newline as if it had one.
      if (i === data.length && (i === lineStart || data[i - 1] === 0x0a)) break;
      if (i > lineStart && data[lineStart] !== 0x23) {
        const end = data[i - 1] === 0x0d ? i - 1 : i;
        patterns.push(parsePattern(data.subarray(lineStart, trimTrailingSpaces(data, lineStart, end))));
      }
      lineStart = i + 1;
    }
    return new PatternList(patterns);
  }

  /** How many patterns the list holds. */
  get size(): number {
    return this.patterns.length;
  }

  /**
   * What the list says of `path` (no leading or trailing `/`; '' is the top), whose last
   * component starts at `basename`, a directory or not (git's path_matches_pattern_list).
   */
  match(path: Uint8Array, basename: number, isDir: boolean): PatternMatch {
    for (let i = this.patterns.length - 1; i >= 0; i--) {
      const p = this.patterns[i] as PathPattern;
      if ((p.flags & MUSTBEDIR) !== 0 && !isDir) continue;
      const hit = (p.flags & NODIR) !== 0 ? matchBasename(path.subarray(basename), p) : matchPathname(path, p);
      if (hit) return (p.flags & NEGATIVE) !== 0 ? NOT_MATCHED : MATCHED;
    }
    return UNDECIDED;
  }
}

/** The end of a line once its trailing spaces are cut, unless a backslash escapes one (git's trim_trailing_spaces). */
function trimTrailingSpaces(data: Uint8Array, start: number, end: number): number {
  let lastSpace = -1;
  for (let p = start; p < end; p++) {
    const c = data[p] as number;
    if (c === 0x20) {
      if (lastSpace < 0) lastSpace = p;
      continue;
    }
    if (c === 0x5c) {
      p++;
      if (p >= end) return end;
    }
    lastSpace = -1;
  }
  return lastSpace >= 0 ? lastSpace : end;
}

/** One line as git's parse_path_pattern reads it. */
function parsePattern(line: Uint8Array): PathPattern {
  let flags = 0;
  let p = line;
  if (p[0] === 0x21) {
    flags |= NEGATIVE;
    p = p.subarray(1);
  }
  let len = p.length;
  if (len > 0 && p[len - 1] === SLASH) {
    len--;
    flags |= MUSTBEDIR;
  }
  if (!p.subarray(0, len).includes(SLASH)) flags |= NODIR;
  // Measured on the pattern with its trailing slash, as git does, then held to its length.
  const literal = Math.min(simpleLength(p), len);
  if (p[0] === 0x2a && simpleLength(p.subarray(1)) === p.length - 1) flags |= ENDSWITH;
  return { pattern: p.subarray(0, len), literal, flags };
}

function sameBytes(a: Uint8Array, aStart: number, b: Uint8Array, bStart: number, length: number): boolean {
  for (let i = 0; i < length; i++) if (a[aStart + i] !== b[bStart + i]) return false;
  return true;
}

/** A pattern without a slash against the last component (git's match_basename). */
function matchBasename(name: Uint8Array, p: PathPattern): boolean {
  const pattern = p.pattern;
  if (p.literal === pattern.length) return name.length === pattern.length && sameBytes(name, 0, pattern, 0, pattern.length);
  if ((p.flags & ENDSWITH) !== 0) {
    const tail = pattern.length - 1;
    return tail <= name.length && sameBytes(name, name.length - tail, pattern, 1, tail);
  }
  return wildmatchBytes(pattern, name);
}

/** A pattern with a slash against the whole path, anchored at the top (git's match_pathname with no base). */
function matchPathname(path: Uint8Array, p: PathPattern): boolean {
  let pattern = p.pattern;
  let literal = p.literal;
  if (pattern[0] === SLASH) {
    pattern = pattern.subarray(1);
    literal--;
  }
  if (path.length < 1) return false;
  let name = path;
  if (literal > 0) {
    // The part without wildcards must be there as it is; with no wildcard at all it is all there is to match.
    if (literal > name.length || !sameBytes(pattern, 0, name, 0, literal)) return false;
    pattern = pattern.subarray(literal);
    name = name.subarray(literal);
    if (pattern.length === 0 && name.length === 0) return true;
  }
  return wildmatchBytes(pattern, name, { pathname: true });
}
