// Refspecs as git reads them (refspec.c, remote.c): `[+]<src>:<dst>` for fetch and push, a `*`
// on both sides for a pattern, `^<src>` for a negative one. What a fetch asks a server for, where
// its refs land, and what a push sends where.
import { PackwrightError } from '../errors/packwright-error.js';
import { isValidRefname } from './refname.js';
import { DWIM_RULES } from './resolve-revision.js';

/** A parsed refspec (`+refs/heads/*:refs/remotes/origin/*`, `^refs/heads/x`, `:dst`). */
export interface Refspec {
  /** `+`: update even when it is not a fast-forward. */
  force: boolean;
  /** `^<src>`: refs matching `src` are left out. */
  negative: boolean;
  /** Both sides hold one `*`. */
  pattern: boolean;
  /** The source side ('' for `:<dst>`: a push's delete, a fetch's HEAD). */
  src: string;
  /** The destination side; undefined when the refspec has no colon. */
  dst: string | undefined;
  /** The text as given (for messages). */
  text: string;
}

/**
 * Parses a refspec (git's parse_refspec). `fetch` and `push` differ as git's do: a fetch's source
 * may be a full object id, a push's anything a revision can be. INVALID_ARGUMENT in git's words.
 */
export function parseRefspec(text: string, kind: 'fetch' | 'push'): Refspec {
  let rest = text;
  let force = false;
  let negative = false;
  if (rest.startsWith('+')) {
    force = true;
    rest = rest.slice(1);
  } else if (rest.startsWith('^')) {
    negative = true;
    rest = rest.slice(1);
  }
  const colon = rest.lastIndexOf(':');
  let src = colon < 0 ? rest : rest.slice(0, colon);
  // In a push, `@` is HEAD.
  if (kind === 'push' && src === '@') src = 'HEAD';
  const dst = colon < 0 ? undefined : rest.slice(colon + 1);
  const bad = (): never => {
    throw new PackwrightError('INVALID_ARGUMENT', `invalid refspec '${text}'`);
  };
  const srcStar = src.includes('*');
  const dstStar = dst !== undefined && dst.includes('*');
  if (negative && (dst !== undefined || force)) bad();
  // A negative refspec names refs (or a pattern of them): not empty, not an object id, a valid name.
  if (negative && (src === '' || isFullObjectId(src) || !isValidRefname(srcStar ? src.replace('*', 'x') : src, { allowOneLevel: true }))) bad();
  // A pattern needs its `*` on both sides (a `*` on one side alone is refused), one each.
  if (dst !== undefined && dst !== '' && srcStar !== dstStar) bad();
  if (src.split('*').length > 2 || (dst ?? '').split('*').length > 2) bad();
  const pattern = srcStar;
  const checkName = (name: string): boolean => isValidRefname(pattern ? name.replace('*', 'x') : name, { allowOneLevel: true });
  if (src !== '' && !negative && !checkName(src)) {
    // A fetch may name an object by its id; a push any revision (`HEAD~1:refs/heads/x`).
    if (!(kind === 'fetch' && isFullObjectId(src)) && kind !== 'push') bad();
  }
  if (src === '' && dst === undefined && kind === 'push') bad();
  if (dst !== undefined && dst !== '' && !checkName(dst)) bad();
  return { force, negative, pattern, src, dst, text };
}

/** A full object id in hex (SHA-1 or SHA-256): a fetch may ask for one by its id. */
export function isFullObjectId(text: string): boolean {
  return /^[0-9a-f]{40}([0-9a-f]{24})?$/.test(text);
}

/** The first of git's expansions of a short name (DWIM_RULES: `main`, `refs/heads/main`, …) that `exists`. */
export function expandRefName(short: string, exists: (full: string) => boolean): string | undefined {
  for (const rule of DWIM_RULES) {
    const full = rule.replace('%s', short);
    if (exists(full)) return full;
  }
  return undefined;
}

/** With a pattern refspec: what `name` maps to through `from` → `to` (undefined: no match). */
export function mapPattern(from: string, to: string, name: string): string | undefined {
  const star = from.indexOf('*');
  const prefix = from.slice(0, star);
  const suffix = from.slice(star + 1);
  if (name.length < prefix.length + suffix.length || !name.startsWith(prefix) || !name.endsWith(suffix)) return undefined;
  return to.replace('*', name.slice(prefix.length, name.length - suffix.length));
}

/** Whether `name` matches a refspec's source side. */
export function matchesSource(spec: Refspec, name: string): boolean {
  return spec.pattern ? mapPattern(spec.src, spec.src, name) !== undefined : spec.src === name;
}

/**
 * The local ref a fetch stores `dst` in (git's get_local_ref): a full name as is, `heads/…`,
 * `tags/…` and `remotes/…` under `refs/`, anything else a branch.
 */
export function fetchDestination(dst: string): string {
  if (dst.startsWith('refs/')) return dst;
  if (dst.startsWith('heads/') || dst.startsWith('tags/') || dst.startsWith('remotes/')) return `refs/${dst}`;
  return `refs/heads/${dst}`;
}

/**
 * The ref prefixes a v2 ls-refs may be limited to for these refspecs (git's
 * refspec_ref_prefixes): a pattern's text before its `*`; a plain name every expansion of it.
 */
export function refspecPrefixes(specs: readonly Refspec[]): string[] {
  const out = new Set<string>();
  for (const s of specs) {
    if (s.negative) continue;
    if (s.src === '') out.add('HEAD');
    else if (s.pattern) out.add(s.src.slice(0, s.src.indexOf('*')));
    else if (s.src.startsWith('refs/')) out.add(s.src);
    else if (!isFullObjectId(s.src)) for (const rule of DWIM_RULES) out.add(rule.replace('%s', s.src));
  }
  return [...out];
}

/** Whether a negative refspec among `specs` leaves `name` out. */
export function excludedByNegative(specs: readonly Refspec[], name: string): boolean {
  return specs.some((s) => s.negative && matchesSource(s, name));
}
