import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { PackwrightError } from '../errors/packwright-error.js';
import type { ObjectFormat } from '../hash/object-format.js';

function isGitDir(dir: string): boolean {
  return existsSync(join(dir, 'objects')) && existsSync(join(dir, 'HEAD'));
}

/**
 * Finds the git directory for `start` as git does without GIT_DIR: `start` itself when it is a git
 * directory (bare or `.git`), its `.git` (a directory, or a file saying `gitdir: <path>`), or the
 * same for each parent.
 */
export function findGitDir(start: string): string {
  let dir = resolve(start);
  for (;;) {
    if (isGitDir(dir)) return dir;
    const dotGit = join(dir, '.git');
    if (existsSync(dotGit)) {
      if (statSync(dotGit).isFile()) {
        const m = /^gitdir: (.*)$/m.exec(readFileSync(dotGit, 'utf8'));
        if (m?.[1] !== undefined) {
          const target = m[1].trim();
          return isAbsolute(target) ? target : resolve(dir, target);
        }
      } else if (isGitDir(dotGit)) {
        return dotGit;
      }
    }
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  throw new PackwrightError('REPO_NOT_FOUND', `not a git repository (or any of the parent directories): ${resolve(start)}`, { file: resolve(start) });
}

/**
 * Reads one value from a git config file: enough for `extensions.objectformat`, without pulling in
 * a full config parser (section names are case-insensitive, keys too; later values win).
 */
export function readConfigValue(configPath: string, section: string, key: string): string | undefined {
  let text: string;
  try {
    text = readFileSync(configPath, 'utf8');
  } catch {
    return undefined;
  }
  let current = '';
  let value: string | undefined;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    const header = /^\[\s*([A-Za-z0-9.-]+)(?:\s+"[^"]*")?\s*\]/.exec(line);
    if (header?.[1] !== undefined) {
      current = header[1].toLowerCase();
      continue;
    }
    if (current !== section.toLowerCase()) continue;
    const kv = /^([A-Za-z][A-Za-z0-9-]*)\s*(?:=\s*(.*))?$/.exec(line);
    if (kv?.[1] !== undefined && kv[1].toLowerCase() === key.toLowerCase()) {
      value = (kv[2] ?? 'true').replace(/\s*[#;].*$/, '').replace(/^"(.*)"$/, '$1');
    }
  }
  return value;
}

/** The repository's object format from `extensions.objectformat` (default SHA-1). */
export function readObjectFormat(gitDir: string): ObjectFormat {
  const v = readConfigValue(join(gitDir, 'config'), 'extensions', 'objectformat')?.toLowerCase();
  if (v === undefined || v === 'sha1') return 'sha1';
  if (v === 'sha256') return 'sha256';
  throw new PackwrightError('INVALID_ARGUMENT', `${gitDir}: unknown object format "${v}"`, { file: join(gitDir, 'config') });
}
