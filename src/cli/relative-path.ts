import { isAbsolute } from 'node:path';

/**
 * git's relative_path (path.c), for `/`-separated paths: `path` as seen from the directory `prefix`
 * (`./` for the directory itself, `../` steps out of it, unchanged when one is absolute and the
 * other not, or when there is no prefix).
 */
export function relativePath(path: string, prefix: string | undefined): string {
  if (path === '') return './';
  if (prefix === undefined || prefix === '') return path;
  if (isAbsolute(path) !== isAbsolute(prefix)) return path;
  const isSep = (c: string | undefined): boolean => c === '/';
  let i = 0, j = 0, inOff = 0, prefixOff = 0;
  while (i < prefix.length && j < path.length && prefix[i] === path[j]) {
    if (isSep(prefix[i])) {
      while (isSep(prefix[i])) i++;
      while (isSep(path[j])) j++;
      prefixOff = i;
      inOff = j;
    } else {
      i++;
      j++;
    }
  }
  if (i >= prefix.length && prefixOff < prefix.length) {
    if (j >= path.length) inOff = path.length;
    else if (isSep(path[j])) {
      while (isSep(path[j])) j++;
      inOff = j;
    } else i = prefixOff;
  } else if (j >= path.length && inOff < path.length && isSep(prefix[i])) {
    while (isSep(prefix[i])) i++;
    inOff = path.length;
  }
  const rest = path.slice(inOff);
  if (i >= prefix.length) return rest === '' ? './' : rest;
  let out = '';
  while (i < prefix.length) {
    if (isSep(prefix[i])) {
      out += '../';
      while (isSep(prefix[i])) i++;
      continue;
    }
    i++;
  }
  if (!isSep(prefix[prefix.length - 1])) out += '../';
  return out + rest;
}

