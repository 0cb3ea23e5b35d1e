import type { GitConfig } from '../config/index.js';
import { ceilingFrom } from '../odb/index.js';
import { magnitudeOption } from './usage-error.js';

/**
 * The memory ceiling of index-pack, verify-pack and cat-file: `--max-memory=<n>[k|m|g]`, else the config's
 * `packwright.maxMemory`, else the library's default (256 MiB). 0 means no ceiling, as 0 means
 * unlimited for git's pack.windowMemory.
 */
export function maxMemoryOf(flag: string | undefined, config: GitConfig | undefined, usage: string): number | undefined {
  const n = flag !== undefined ? magnitudeOption('max-memory', flag, usage) : config?.getInt('packwright.maxMemory');
  return n === undefined ? undefined : ceilingFrom(n);
}
