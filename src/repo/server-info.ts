// git update-server-info (server-info.c): the files a dumb HTTP client reads, `info/refs` (every
// ref and what its tag peels to) and `objects/info/packs` (the local packs), rewritten when they
// change, through a temporary file.
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import type { Repository } from './repository.js';
import { listRefsIn } from './ref-queries.js';

/** Writes `text` to `path` unless it holds it already (git's update_info_file); whether it wrote. */
function updateFile(path: string, text: string, force: boolean): boolean {
  if (!force && existsSync(path) && readFileSync(path, 'utf8') === text) return false;
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}_${process.pid}`;
  try {
    writeFileSync(tmp, text);
    renameSync(tmp, path);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw e;
  }
  return true;
}

/**
 * Brings `info/refs` and `objects/info/packs` up to date as git's update-server-info does:
 * `<id>\t<ref>` for every ref (`<peeled>\t<ref>^{}` after a tag), and `P <pack>` for each pack of
 * the repository's own objects directory (those listed before keep their place, new ones follow),
 * then an empty line. `force` rewrites them even when unchanged.
 */
export function updateServerInfo(repo: Repository, force = false): void {
  const refs = listRefsIn(repo.refs, repo.objects, 'refs/').map((r) => `${r.id}\t${r.name}\n${r.peeled !== undefined ? `${r.peeled}\t${r.name}^{}\n` : ''}`).join('');
  updateFile(join(repo.gitDir, 'info', 'refs'), refs, force);
  const objectsDir = resolve(repo.store.objectsDir);
  const local = repo.objects.packs().filter((p) => resolve(dirname(dirname(p.packPath))) === objectsDir).map((p) => basename(p.packPath));
  const infoFile = join(objectsDir, 'info', 'packs');
  let before: string[] = [];
  if (!force && existsSync(infoFile)) before = readFileSync(infoFile, 'utf8').split('\n').filter((l) => l.startsWith('P ')).map((l) => l.slice(2));
  const kept = before.filter((name) => local.includes(name));
  const order = [...kept, ...local.filter((name) => !kept.includes(name))];
  updateFile(infoFile, `${order.map((name) => `P ${name}\n`).join('')}\n`, force);
}
