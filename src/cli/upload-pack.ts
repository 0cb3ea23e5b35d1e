import { uploadPack } from '../serve/index.js';
import type { CommandIO } from './command-io.js';
import { enterServedRepository, type GlobalOptions } from './global-options.js';
import { serveOverStdio } from './serve-over-stdio.js';
import { helpRequested, integerOption, UsageError } from './usage-error.js';

const USAGE = `usage: packwright upload-pack [--[no-]strict] [--timeout=<n>] [--stateless-rpc]
                              [--advertise-refs] <directory>

    --stateless-rpc       quit after a single request/response exchange
    --advertise-refs      serve up the info/refs for an HTTP server (alias --http-backend-info-refs)
    --strict              do not try <directory>/.git/ if <directory> is no Git directory
    --timeout <n>         interrupt transfer after <n> seconds of inactivity`;

/**
 * `git upload-pack`: serves a clone or fetch of the repository at `<directory>` over stdin and
 * stdout, in the protocol version GIT_PROTOCOL asks for (git's ssh, git:// and file:// transports
 * run it, and `git clone --upload-pack=...` names it).
 */
export async function uploadPackCommand(io: CommandIO, global: GlobalOptions, agent: string, args: string[]): Promise<number> {
  const help = helpRequested(args, USAGE, io.stdout);
  if (help !== undefined) return help;
  let strict = false;
  let statelessRpc = false;
  let advertiseRefs = false;
  let timeout = 0;
  const positional: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    if (a === '--stateless-rpc') statelessRpc = true;
    else if (a === '--no-stateless-rpc') statelessRpc = false;
    else if (a === '--advertise-refs' || a === '--http-backend-info-refs') advertiseRefs = true;
    else if (a === '--no-advertise-refs' || a === '--no-http-backend-info-refs') advertiseRefs = false;
    else if (a === '--strict') strict = true;
    else if (a === '--no-strict') strict = false;
    else if (a.startsWith('--timeout=')) timeout = integerOption('--timeout', a.slice(10));
    else if (a === '--timeout' && i + 1 < args.length) timeout = integerOption('--timeout', args[++i] as string);
    else if (a === '--') positional.push(...args.slice(i + 1)), (i = args.length);
    else if (a.startsWith('-')) throw new UsageError(USAGE);
    else positional.push(a);
  }
  if (positional.length !== 1) throw new UsageError(USAGE);
  // git's upload-pack reads no replace refs and never fetches missing objects lazily.
  const repo = enterServedRepository(global, positional[0] as string, strict);
  await serveOverStdio(io, (conversation) => uploadPack(repo, { ...conversation, statelessRpc, advertiseRefs, ...(timeout > 0 ? { timeout } : {}), agent }));
  return 0;
}
