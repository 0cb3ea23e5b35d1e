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
