// The tips of the repositories this one borrows objects from (git's for_each_alternate_ref):
// receive-pack advertises them as `.have`, so a pusher does not send what an alternate holds, and
// a fetch offers them as haves, so a server does not send it either.
import { childProcess } from './lazy-child-process.js';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { tryFromHex } from '../hash/hex.js';
import { readAlternates } from '../odb/alternates.js';
import { RefStore } from '../refs/ref-store.js';
import type { Repository } from './repository.js';

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/**
 * The ids the refs of each alternate repository name: for an alternate `<repo>/objects` whose
 * `<repo>/refs` is a directory, its refs (under core.alternateRefsPrefixes when set), or the ids
 * core.alternateRefsCommand prints for it, as git runs it (through the shell in the git
 * directory, the repository's path as its argument). Alternates that are no repository give nothing.
 */
export function alternateRefIds(repo: Repository): Buffer[] {
  const store = repo.store;
  const { dirs } = readAlternates(store.objectsDir, store.key.alternates);
  const H = store.hashLength;
  const command = repo.config.get('core.alternaterefscommand');
  const prefixes = repo.config.get('core.alternaterefsprefixes');
  const out: Buffer[] = [];
  for (const dir of dirs) {
    if (!dir.endsWith('/objects')) continue;
    const path = dir.slice(0, -'/objects'.length);
    if (!isDirectory(join(path, 'refs'))) continue;
    if (typeof command === 'string') {
      const run = childProcess().spawnSync('/bin/sh', ['-c', `${command} "$@"`, command, path], { cwd: repo.gitDir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
      for (const line of (run.stdout ?? '').split('\n')) {
        if (line === '') continue;
        const id = line.length === 2 * H ? tryFromHex(line, H) : undefined;
        // git warns of the line and reads no further.
        if (id === undefined) break;
        out.push(id);
      }
      continue;
    }
    const patterns = typeof prefixes === 'string' ? prefixes.split(/\s+/).filter((p) => p !== '') : undefined;
    for (const ref of new RefStore(path, path, H).list('refs/')) {
      if (patterns !== undefined && !patterns.some((p) => ref.name === p || ref.name.startsWith(p.endsWith('/') ? p : `${p}/`))) continue;
      out.push(ref.id);
    }
  }
  return out;
}
