import { isNotFound } from '../io/read-dir-if-present.js';
import { existsSync, readdirSync, readFileSync, type Dirent } from 'node:fs';
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
  return readReflogFile(join(perWorktree(name) ? gitDir : commonDir, 'logs', name), hashLength);
}

/** The entries of the reflog file at `path`, oldest first (empty when it cannot be read). */
export function readReflogFile(path: string, hashLength: number): ReflogEntry[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    if (!isNotFound(e)) throw e;
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

/** A reflog file and the ref it logs. */
export interface ReflogFile {
  name: string;
  path: string;
}

/**
 * The reflog files under `dir` (a `logs/` folder or one below it), named from `name` (the ref
 * prefix `dir` stands for, '' for `logs/` itself), depth first in byte order of their names.
 */
export function reflogFiles(dir: string, name: string): ReflogFile[] {
  const out: ReflogFile[] = [];
  const walk = (at: string, prefix: string): void => {
    let entries: Dirent[];
    try {
      entries = readdirSync(at, { withFileTypes: true });
    } catch (e) {
      if (!isNotFound(e)) throw e;
      return;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const d of entries) {
      const child = prefix === '' ? d.name : `${prefix}/${d.name}`;
      if (d.isDirectory()) walk(join(at, d.name), child);
      else out.push({ name: child, path: join(at, d.name) });
    }
  };
  walk(dir, name);
  return out;
}

/**
 * Every reflog this worktree sees, as git's for_each_reflog gives them: HEAD's, the shared refs'
 * (`<commonDir>/logs/refs/`), and a linked worktree's own (`<gitDir>/logs/refs/`, its bisect and
 * worktree refs).
 */
export function allReflogs(gitDir: string, commonDir: string): ReflogFile[] {
  const head = join(gitDir, 'logs', 'HEAD');
  const list: ReflogFile[] = existsSync(head) ? [{ name: 'HEAD', path: head }] : [];
  list.push(...reflogFiles(join(commonDir, 'logs', 'refs'), 'refs'));
  if (gitDir !== commonDir) list.push(...reflogFiles(join(gitDir, 'logs', 'refs'), 'refs'));
  return list;
}
