/**
 * git's wildmatch (wildmatch.c), which `includeIf "gitdir:…"` and `"onbranch:…"` patterns use:
 * `?` and `*` do not match `/` with `pathname`; `**` between slashes (or at either end) matches
 * any number of directories; `[...]` classes with ranges, `!` or `^` to negate and `[:name:]`;
 * `\` quotes the next character. Works on bytes (UTF-8), as git does.
 */

const MATCH = 0;
const NO_MATCH = 1;
/** The text ran out: no later start position can match either. */
const ABORT_ALL = 2;
/** A single `*` hit a slash: only an enclosing `**` may still match. */
const ABORT_TO_STARSTAR = 3;

/** How `wildmatch` matches: `pathname` (a `*` stops at `/`), `caseFold`. */
export interface WildmatchOptions {
  /** `*` and `?` do not match `/` (git's WM_PATHNAME). */
  pathname?: boolean | undefined;
  /** Compare ASCII letters without case (WM_CASEFOLD). */
  caseFold?: boolean | undefined;
}

/**
 * Whether `text` matches the glob `pattern` as git's wildmatch.c matches (`**`, character classes, case
 * folding).
 */
export function wildmatch(pattern: string, text: string, options: WildmatchOptions = {}): boolean {
  const p = Buffer.from(pattern, 'utf8');
  const t = Buffer.from(text, 'utf8');
  return match(p, 0, t, 0, options.pathname === true, options.caseFold === true) === MATCH;
}

/** `wildmatch` on bytes as they are (paths read from trees, patterns read from a blob), with no text decoding between. */
export function wildmatchBytes(pattern: Uint8Array, text: Uint8Array, options: WildmatchOptions = {}): boolean {
  return match(pattern, 0, text, 0, options.pathname === true, options.caseFold === true) === MATCH;
}

const isUpper = (c: number): boolean => c >= 0x41 && c <= 0x5a;
const isLower = (c: number): boolean => c >= 0x61 && c <= 0x7a;
const fold = (c: number, on: boolean): number => (on && isUpper(c) ? c + 32 : c);
/** At the end of either buffer, 0 (git's NUL terminator). */
const at = (b: Uint8Array, i: number): number => (i < b.length ? (b[i] as number) : 0);
const isGlobSpecial = (c: number): boolean => c === 0x2a || c === 0x3f || c === 0x5b || c === 0x5c;

const CLASSES: Record<string, (c: number) => boolean> = {
  alnum: (c) => isUpper(c) || isLower(c) || (c >= 0x30 && c <= 0x39),
  alpha: (c) => isUpper(c) || isLower(c),
  blank: (c) => c === 0x20 || c === 0x09,
  cntrl: (c) => c < 0x20 || c === 0x7f,
  digit: (c) => c >= 0x30 && c <= 0x39,
  graph: (c) => c > 0x20 && c < 0x7f,
  lower: isLower,
  print: (c) => c >= 0x20 && c < 0x7f,
  punct: (c) => c > 0x20 && c < 0x7f && !(isUpper(c) || isLower(c) || (c >= 0x30 && c <= 0x39)),
  space: (c) => c === 0x20 || (c >= 0x09 && c <= 0x0d),
  upper: isUpper,
  xdigit: (c) => (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66),
};

function match(p: Uint8Array, pi: number, t: Uint8Array, ti: number, pathname: boolean, caseFold: boolean): number {
  for (; pi < p.length; ti++, pi++) {
    let pc = fold(p[pi] as number, caseFold);
    let tc = fold(at(t, ti), caseFold);
    if (ti >= t.length && pc !== 0x2a) return ABORT_ALL;
    if (pc === 0x5c) {
      // A quoted character matches itself (unfolded, as in git).
      pc = at(p, ++pi);
      if (tc !== pc) return NO_MATCH;
      continue;
    }
    if (pc === 0x3f) {
      if (pathname && tc === 0x2f) return NO_MATCH;
      continue;
    }
    if (pc === 0x2a) {
      let matchSlash: boolean;
      if (at(p, ++pi) === 0x2a) {
        const before = pi - 2;
        while (at(p, ++pi) === 0x2a) { /* skip the run of stars */ }
        const next = at(p, pi);
        if ((before < 0 || p[before] === 0x2f) && (next === 0 || next === 0x2f || (next === 0x5c && at(p, pi + 1) === 0x2f))) {
          // `**/` may match no directory at all: try the rest of the pattern here first.
          if (next === 0x2f && match(p, pi + 1, t, ti, pathname, caseFold) === MATCH) return MATCH;
          matchSlash = true;
        } else {
          matchSlash = false;
        }
      } else {
        matchSlash = !pathname;
      }
      if (pi >= p.length) {
        // A trailing `**` matches everything; a trailing `*` only what has no more slashes.
        if (!matchSlash && t.indexOf(0x2f, ti) >= 0) return NO_MATCH;
        return MATCH;
      }
      if (!matchSlash && p[pi] === 0x2f) {
        // One `*` before a slash matches the rest of this directory name.
        const slash = t.indexOf(0x2f, ti);
        if (slash < 0) return NO_MATCH;
        ti = slash;
        continue;
      }
      for (;;) {
        if (ti >= t.length) break;
        if (!isGlobSpecial(p[pi] as number)) {
          // Skip ahead to the next place the literal after the star occurs.
          const want = fold(p[pi] as number, caseFold);
          while (ti < t.length && (matchSlash || t[ti] !== 0x2f)) {
            if (fold(t[ti] as number, caseFold) === want) break;
            ti++;
          }
          if (ti >= t.length || fold(t[ti] as number, caseFold) !== want) return NO_MATCH;
        }
        tc = at(t, ti);
        const r = match(p, pi, t, ti, pathname, caseFold);
        if (r !== NO_MATCH) {
          if (!matchSlash || r !== ABORT_TO_STARSTAR) return r;
        } else if (!matchSlash && tc === 0x2f) {
          return ABORT_TO_STARSTAR;
        }
        ti++;
      }
      return ABORT_ALL;
    }
    if (pc === 0x5b) {
      let c = at(p, ++pi);
      if (c === 0x5e) c = 0x21;
      const negated = c === 0x21;
      if (negated) c = at(p, ++pi);
      let prev = 0;
      let matched = false;
      do {
        if (c === 0) return ABORT_ALL;
        if (c === 0x5c) {
          c = at(p, ++pi);
          if (c === 0) return ABORT_ALL;
          if (tc === c) matched = true;
        } else if (c === 0x2d && prev !== 0 && at(p, pi + 1) !== 0 && at(p, pi + 1) !== 0x5d) {
          c = at(p, ++pi);
          if (c === 0x5c) {
            c = at(p, ++pi);
            if (c === 0) return ABORT_ALL;
          }
          if (tc <= c && tc >= prev) matched = true;
          else if (caseFold && isLower(tc) && tc - 32 <= c && tc - 32 >= prev) matched = true;
          c = 0;
        } else if (c === 0x5b && at(p, pi + 1) === 0x3a) {
          const end = p.indexOf(0x5d, pi + 2);
          if (end < 0) return ABORT_ALL;
          const name = Buffer.from(p.subarray(pi + 2, end)).toString('latin1');
          if (!name.endsWith(':')) {
            // Not a class after all: a literal '['.
            if (tc === 0x5b) matched = true;
          } else {
            const test = CLASSES[name.slice(0, -1)];
            if (test === undefined) return ABORT_ALL;
            if (test(tc) || (caseFold && name === 'upper:' && isLower(tc))) matched = true;
            pi = end;
            c = 0;
          }
        } else if (tc === c) {
          matched = true;
        }
        prev = c;
        c = at(p, ++pi);
      } while (c !== 0x5d);
      if (matched === negated || (pathname && tc === 0x2f)) return NO_MATCH;
      continue;
    }
    if (tc !== pc) return NO_MATCH;
  }
  return ti < t.length ? NO_MATCH : MATCH;
}
