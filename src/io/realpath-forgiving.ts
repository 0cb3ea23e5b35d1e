import { realpathSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { isNotFound } from './read-dir-if-present.js';

/**
 * git's strbuf_realpath_forgiving: `path` made absolute with the symbolic links of its longest
 * existing prefix resolved, and the rest kept as written (git compares repository, include and
 * alternate paths this way, and some of them need not exist yet). A prefix that cannot be
 * resolved for another reason (a permission, a loop) leaves the path as `resolve` gives it: this
 * only normalises a name, and whoever opens the file then reports that error.
 */
export function realpathForgiving(path: string): string {
  let base = resolve(path);
  const rest: string[] = [];
  for (;;) {
    try {
      return rest.length === 0 ? realpathSync(base) : join(realpathSync(base), ...rest);
    } catch (e) {
      const parent = dirname(base);
      if (!isNotFound(e) || parent === base) return resolve(path);
      rest.unshift(base.slice(parent.length + 1));
      base = parent;
    }
  }
}
