import { updateServerInfo, type Repository } from '../repo/index.js';
import type { CommandIO } from './command-io.js';
import { helpRequested, UsageError } from './usage-error.js';

const USAGE = 'usage: packwright update-server-info [-f | --force]';

/** `git update-server-info`: `info/refs` and `objects/info/packs` for dumb HTTP clients, rewritten when they change (always with `--force`). */
export function updateServerInfoCommand(io: CommandIO, open: () => Repository, args: string[]): number {
  const help = helpRequested(args, USAGE, io.stdout);
  if (help !== undefined) return help;
  let force = false;
  for (const a of args) {
    if (a === '-f' || a === '--force') force = true;
    else if (a === '--no-force') force = false;
    else throw new UsageError(USAGE);
  }
  updateServerInfo(open(), force);
  return 0;
}
