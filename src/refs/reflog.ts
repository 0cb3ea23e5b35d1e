import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** One reflog line: `<old> <new> <ident> <time> <tz>\t<message>`. */
export interface ReflogEntry {
  old: Buffer;
  new: Buffer;
  timestamp: number;
  tz: string;
  message: string;
}

/** Refs whose logs live in a worktree's own git directory (HEAD and the per-worktree namespaces). */
function perWorktree(name: string): boolean {
  return !name.startsWith('refs/') || name.startsWith('refs/bisect/') || name.startsWith('refs/worktree/') || name.startsWith('refs/rewritten/');
}

/** The reflog of `name`, oldest first (empty when it has none); lines git could not parse are skipped, as git skips them. */
export function readReflog(gitDir: string, commonDir: string, name: string, hashLength: number): ReflogEntry[] {
  let text: string;
  try {
    text = readFileSync(join(perWorktree(name) ? gitDir : commonDir, 'logs', name), 'utf8');
  } catch {
    return [];
  }
  return parseReflog(text, hashLength);
}

/** The entries of a reflog file's text, oldest first; lines that are not entries are skipped. */
export function parseReflog(text: string, hashLength: number): ReflogEntry[] {
  const hex = hashLength * 2;
  const entries: ReflogEntry[] = [];
  const re = new RegExp(`^([0-9a-f]{${hex}}) ([0-9a-f]{${hex}}) [^\\n]*> (\\d+) ([+-]\\d{4})(?:\\t(.*))?$`);
  for (const line of text.split('\n')) {
    const m = re.exec(line);
    if (m === null) continue;
    entries.push({ old: Buffer.from(m[1] as string, 'hex'), new: Buffer.from(m[2] as string, 'hex'), timestamp: Number(m[3]), tz: m[4] as string, message: m[5] ?? '' });
  }
  return entries;
}

/** Whether `name` has a reflog file (empty or not): git resolves `<ref>@{...}` only then. */
export function reflogExists(gitDir: string, commonDir: string, name: string): boolean {
  return existsSync(join(perWorktree(name) ? gitDir : commonDir, 'logs', name));
}
