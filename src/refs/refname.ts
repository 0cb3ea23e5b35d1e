/**
 * git's check_refname_format with no flags (refs.c): every `/`-separated component non-empty, not
 * starting with `.`, not ending with `.lock`, without `..`, `@{`, control characters, space or any
 * of `~^:?*[\`; the whole name not `@`, not ending with `.` or `/`, and of at least two components (but one
 * with `allowOneLevel`, git's REFNAME_ALLOW_ONELEVEL: HEAD, ORIG_HEAD and other pseudorefs).
 */
export function isValidRefname(name: string, options: { allowOneLevel?: boolean } = {}): boolean {
  if (name === '@') return false;
  const parts = name.split('/');
  if (parts.length < 2 && options.allowOneLevel !== true) return false;
  for (const part of parts) {
    if (part === '' || part.startsWith('.') || part.endsWith('.lock')) return false;
    let last = '';
    for (const ch of part) {
      const c = ch.charCodeAt(0);
      if (c < 0x20 || c === 0x7f || ' ~^:?*[\\'.includes(ch)) return false;
      if ((ch === '.' && last === '.') || (ch === '{' && last === '@')) return false;
      last = ch;
    }
  }
  return !name.endsWith('.');
}

/**
 * git's refname_is_safe (refs.c), what a deletion or a check needs of a name (a bad one may be
 * deleted, as git lets `update-ref -d` remove `refs/heads/broken...ref`): under `refs/`, a
 * path that stays there (no empty, `.` or `..` component, nothing after a final `/`); elsewhere,
 * capitals and underscores only (HEAD, FETCH_HEAD), so no other file of the git directory is
 * taken for a ref.
 */
export function isSafeRefname(name: string): boolean {
  if (name.startsWith('refs/')) {
    const rest = name.slice(5);
    return rest !== '' && rest.split('/').every((part) => part !== '' && part !== '.' && part !== '..');
  }
  return /^[A-Z_]+$/.test(name);
}
