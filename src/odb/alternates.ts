import { isNotFound } from '../io/read-dir-if-present.js';
import { statSync } from 'node:fs';
import { realpathForgiving } from '../io/realpath-forgiving.js';
import { isAbsolute, join, resolve } from 'node:path';
import { readFileIfPresent } from '../io/read-file-if-present.js';

/** git's limit on alternates of alternates (object-file.c: "nesting too deep"). */
const MAX_ALTERNATE_DEPTH = 5;

/** Undoes git's C quoting of a path ("\"a\\tb\"" -> "a\tb"). */
function unquote(line: string): string {
  if (!line.startsWith('"') || !line.endsWith('"') || line.length < 2) return line;
  const bytes: number[] = [];
  const body = line.slice(1, -1);
  for (let i = 0; i < body.length; i++) {
    const c = body[i] as string;
    if (c !== '\\') {
      for (const b of Buffer.from(c, 'utf8')) bytes.push(b);
      continue;
    }
    const n = body[++i] ?? '';
    const simple: Record<string, number> = { a: 7, b: 8, t: 9, n: 10, v: 11, f: 12, r: 13, '"': 34, '\\': 92 };
    if (simple[n] !== undefined) bytes.push(simple[n]);
    else if (/[0-7]/.test(n)) {
      bytes.push(parseInt(body.slice(i, i + 3), 8));
      i += 2;
    } else bytes.push(n.charCodeAt(0));
  }
  return Buffer.from(bytes).toString('utf8');
}

/**
 * All object directories reachable through `objects/info/alternates`, depth first in file order,
 * without `objectsDir` itself and without duplicates, each by its real path (symbolic links
 * resolved, as git's link_alt_odb_entry does: an alternate that is the objects directory under
 * another name is the objects directory, and left out); relative entries resolve from the objects
 * directory that names them. As in git, what cannot be used is left out with a warning (git
 * prints them as `error:` lines and carries on): a directory that does not exist, and alternates
 * nested deeper than five.
 */
export function readAlternates(objectsDir: string, first: readonly string[] = []): { dirs: string[]; warnings: string[] } {
  const seen = new Set<string>([realpathForgiving(resolve(objectsDir))]);
  const dirs: string[] = [];
  const warnings: string[] = [];
  // `path` named by `base` (relative to it; to the working directory when undefined).
  const add = (path: string, base: string | undefined, file: string, depth: number): void => {
    const named = resolve(isAbsolute(path) || base === undefined ? path : join(base, path));
    if (!isDirectory(named)) {
      if (!seen.has(named)) warnings.push(`object directory ${named} does not exist; check ${file}`);
      seen.add(named);
      return;
    }
    const full = realpathForgiving(named);
    if (seen.has(full)) return;
    seen.add(full);
    dirs.push(full);
    visit(full, depth + 1);
  };
  const visit = (dir: string, depth: number): void => {
    const file = join(dir, 'info', 'alternates');
    const bytes = readFileIfPresent(file, 'alternates file');
    if (bytes === undefined) return;
    if (depth > MAX_ALTERNATE_DEPTH) {
      warnings.push(`${dir}: ignoring alternate object stores, nesting too deep`);
      return;
    }
    for (const raw of bytes.toString('utf8').split('\n')) {
      if (raw === '' || raw.startsWith('#')) continue;
      const path = unquote(raw.trimEnd());
      if (path !== '') add(path, dir, file, depth);
    }
  };
  // Those of GIT_ALTERNATE_OBJECT_DIRECTORIES come first, as in git's prepare_alt_odb.
  for (const path of first) add(path, undefined, 'GIT_ALTERNATE_OBJECT_DIRECTORIES', 0);
  visit(objectsDir, 0);
  return { dirs, warnings };
}


function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch (e) {
    if (!isNotFound(e)) throw e;
    return false;
  }
}

/**
 * The directories of a GIT_ALTERNATE_OBJECT_DIRECTORIES value: separated by colons, an entry that
 * starts with a double quote being C-quoted (git's parse_alt_odb_entry), so that it may hold one.
 */
export function parseAlternateList(value: string): string[] {
  const out: string[] = [];
  let i = 0;
  while (i < value.length) {
    if (value[i] === '"') {
      // The closing quote: the first one not escaped.
      let j = i + 1;
      while (j < value.length && value[j] !== '"') j += value[j] === '\\' ? 2 : 1;
      out.push(unquote(value.slice(i, j + 1)));
      i = j + 1;
      if (value[i] === ':') i++;
      continue;
    }
    const end = value.indexOf(':', i);
    out.push(value.slice(i, end < 0 ? value.length : end));
    i = end < 0 ? value.length : end + 1;
  }
  return out.filter((p) => p !== '');
}
