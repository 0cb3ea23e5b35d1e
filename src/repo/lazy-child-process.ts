import { createRequire } from 'node:module';

/**
 * `node:child_process`, loaded on first use (a filter or a hook that runs): it pulls in net, dgram
 * and streams, which every command would otherwise load at start for features few repositories use.
 */
export function childProcess(): typeof import('node:child_process') {
  return createRequire(import.meta.url)('node:child_process') as typeof import('node:child_process');
}
