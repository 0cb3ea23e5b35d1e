import { toHex } from '../hash/hex.js';
import type { Repository } from './repository.js';

/**
 * git's replace refs for reading: a function from an id to the object to read instead
 * (`refs/replace/<id>`, or GIT_REPLACE_REF_BASE's), following a replacement of a replacement
 * as git does; the identity when the repository's environment sets GIT_NO_REPLACE_OBJECTS or
 * core.useReplaceRefs is false. The refs are listed once, when it is made.
 */
export function replaceRefs(repo: Repository): (id: Buffer) => Buffer {
  const env = repo.env;
  if (env['GIT_NO_REPLACE_OBJECTS'] !== undefined || repo.config.getBool('core.useReplaceRefs') === false) return (id) => id;
  const base = env['GIT_REPLACE_REF_BASE'] ?? 'refs/replace/';
  const prefix = base.endsWith('/') ? base : `${base}/`;
  const map = new Map<string, Buffer>();
  for (const ref of repo.refs.list(prefix)) map.set(ref.name.slice(prefix.length), ref.id);
  if (map.size === 0) return (id) => id;
  return (id) => {
    let current = id;
    // A replacement of a replacement is followed too, a bounded number of times (git: MAXREPLACEDEPTH 5).
    for (let depth = 0; depth < 5; depth++) {
      const next = map.get(toHex(current));
      if (next === undefined) return current;
      current = next;
    }
    return current;
  };
}
