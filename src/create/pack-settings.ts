import type { GitConfig } from '../config/git-config.js';
import { parseBool } from '../config/git-config.js';
import { availableParallelism } from 'node:os';
import type { CreatePackOptions } from './create-pack-options.js';

/**
 * git's configuration for making a pack (git_pack_config in builtin/pack-objects.c), as
 * createPack options: pack.compression (else core.compression), pack.window, pack.windowMemory,
 * pack.depth, pack.threads (0: one per core, as git's online_cpus), pack.indexVersion, pack.deltaCacheSize,
 * core.bigFileThreshold, pack.useSparse (GIT_TEST_PACK_SPARSE first) and pack.allowPackReuse.
 * What a command line says goes over these (`{ ...packSettings(config, env), ...fromArguments }`).
 */
export function packSettings(config: GitConfig, env: Readonly<Record<string, string | undefined>>): Partial<CreatePackOptions> {
  const out: Partial<CreatePackOptions> = {};
  const compression = config.getInt('pack.compression') ?? config.getInt('core.compression');
  if (compression !== undefined) out.compression = compression;
  const window = config.getInt('pack.window');
  if (window !== undefined) out.window = Math.max(0, window);
  const windowMemory = config.getInt('pack.windowMemory');
  if (windowMemory !== undefined) out.windowMemory = Math.max(0, windowMemory);
  const depth = config.getInt('pack.depth');
  if (depth !== undefined) out.depth = Math.min(Math.max(0, depth), 4095);
  const threads = config.getInt('pack.threads');
  if (threads !== undefined) out.threads = threads || availableParallelism();
  const indexVersion = config.getInt('pack.indexVersion');
  if (indexVersion === 1 || indexVersion === 2) out.indexVersion = indexVersion;
  const deltaCacheSize = config.getInt('pack.deltaCacheSize');
  if (deltaCacheSize !== undefined) out.deltaCacheSize = deltaCacheSize;
  const bigFileThreshold = config.getInt('core.bigFileThreshold');
  if (bigFileThreshold !== undefined) out.bigFileThreshold = bigFileThreshold;
  // git's order: --[no-]sparse (the caller's), else GIT_TEST_PACK_SPARSE, else pack.useSparse (default true).
  const testSparse = env['GIT_TEST_PACK_SPARSE'];
  out.sparse = testSparse !== undefined && testSparse !== '-1' ? parseBool(testSparse, 'GIT_TEST_PACK_SPARSE') : (config.getBool('pack.useSparse') ?? true);
  const allowPackReuse = config.getBool('pack.allowPackReuse');
  if (allowPackReuse !== undefined) out.allowPackReuse = allowPackReuse;
  return out;
}
