import { receivePack } from '../serve/index.js';
import type { CommandIO } from './command-io.js';
import { enterServedRepository, type GlobalOptions } from './global-options.js';
import { serveOverStdio } from './serve-over-stdio.js';
import { helpRequested, UsageError } from './usage-error.js';

const USAGE = `usage: packwright receive-pack <git-dir>

    -q, --quiet           quiet`;

/**
 * `git receive-pack`: accepts a push into the repository at `<git-dir>` over stdin and stdout
 * (git's ssh, git:// and file:// transports run it; `git push --receive-pack=...` names it).
 * The refs change as the push asks when git's checks and the repository's hooks allow; exit
 * status 0 whatever became of each ref (the pusher reads that in the report).
 */
export async function receivePackCommand(io: CommandIO, global: GlobalOptions, agent: string, args: string[]): Promise<number> {
  const help = helpRequested(args, USAGE, io.stdout);
  if (help !== undefined) return help;
  let quiet = false;
  let statelessRpc = false;
  let advertiseRefs = false;
  let rejectThin = false;
  const positional: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    if (a === '-q' || a === '--quiet') quiet = true;
    else if (a === '--no-quiet') quiet = false;
    else if (a === '--stateless-rpc') statelessRpc = true;
    else if (a === '--no-stateless-rpc') statelessRpc = false;
    else if (a === '--advertise-refs' || a === '--http-backend-info-refs') advertiseRefs = true;
    else if (a === '--no-advertise-refs' || a === '--no-http-backend-info-refs') advertiseRefs = false;
    else if (a === '--reject-thin-pack-for-testing') rejectThin = true;
    else if (a === '--no-reject-thin-pack-for-testing') rejectThin = false;
    else if (a === '--') positional.push(...args.slice(i + 1)), (i = args.length);
    else if (a.startsWith('-')) throw new UsageError(`error: unknown option \`${a.replace(/^-+/, '')}'\n${USAGE}`);
    else positional.push(a);
  }
  if (positional.length > 1) throw new UsageError(`fatal: too many arguments\n\n${USAGE}`);
  if (positional.length === 0) throw new UsageError(`fatal: you must specify a directory\n\n${USAGE}`);
  const repo = enterServedRepository(global, positional[0] as string, false);
  // The pusher keeps its end open for the report: the pack is read to its trailer, no further.
  await serveOverStdio(io, (conversation) => receivePack(repo, { ...conversation, statelessRpc, advertiseRefs, quiet, rejectThin, agent }));
  return 0;
}
