import { readFileSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { PackwrightError } from '../errors/packwright-error.js';

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
 * without `objectsDir` itself and without duplicates; relative entries resolve from the objects
 * directory that names them.
 */
export function readAlternates(objectsDir: string): string[] {
  const seen = new Set<string>([resolve(objectsDir)]);
  const out: string[] = [];
  const visit = (dir: string, depth: number): void => {
    let text: string;
    try {
      text = readFileSync(join(dir, 'info', 'alternates'), 'utf8');
    } catch {
      return;
    }
    if (depth > MAX_ALTERNATE_DEPTH) {
      throw new PackwrightError('INVALID_ARGUMENT', `${dir}: alternate object store nesting too deep`, { file: join(dir, 'info', 'alternates') });
    }
    for (const raw of text.split('\n')) {
      if (raw === '' || raw.startsWith('#')) continue;
      const path = unquote(raw.trimEnd());
      const full = resolve(isAbsolute(path) ? path : join(dir, path));
      if (seen.has(full)) continue;
      seen.add(full);
      out.push(full);
      visit(full, depth + 1);
    }
  };
  visit(objectsDir, 0);
  return out;
}
