import { PackIndex } from '../../src/idx/index.js';
import type { Format } from './git.js';

/**
 * The object ids a pack index lists, in its (sorted) order, as hex: what `git verify-pack -v`
 * would print for it, read with packwright's reader rather than by a process per pack.
 */
export function indexIds(path: string, format: Format): string[] {
  const index = PackIndex.open(path, format === 'sha1' ? 20 : 32, { lazyMin: Infinity });
  try {
    return Array.from({ length: index.count }, (_, i) => index.id(i).toString('hex'));
  } finally {
    index.close();
  }
}
