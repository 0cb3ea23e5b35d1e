import { cloneBare, configuredProtocol, extraHeaders, httpSettings, transportPolicy } from '../client/index.js';
import { PackwrightError } from '../errors/index.js';
import type { CommandIO } from './command-io.js';
import { configOutsideRepository, type GlobalOptions } from './global-options.js';
import { helpRequested, UsageError } from './usage-error.js';
import { readShallowOption, type ShallowOptions } from './shallow-options.js';
import { cliAuth } from './credentials.js';
import { remoteMessagesOn } from './remote-messages.js';

const USAGE = 'usage: packwright clone (--bare | --mirror | -n | --no-checkout) [-q] [--upload-pack=<exec>] [-b <branch>] [--[no-]single-branch] [--depth=<n>] [--shallow-since=<date>] [--shallow-exclude=<ref>] [--filter=<filter-spec>] <repository> [<directory>]';

/**
 * `git clone --bare`: every branch and tag of the repository at a URL or path into a new bare
 * repository (protocol v2; packwright does not check out a work tree, so --bare is required).
 * Progress from the server on stderr when it is a terminal (or `--progress`), none with `-q`.
 */
export async function cloneCommand(io: CommandIO, global: GlobalOptions, agent: string, args: string[]): Promise<number> {
  const help = helpRequested(args, USAGE, io.stdout);
  if (help !== undefined) return help;
  let bare = false;
  let mirror = false;
  let noCheckout = false;
  let progress = io.stderr.isTTY;
  let quiet = false;
  let uploadPack: string | undefined;
  let branch: string | undefined;
  let singleBranch: boolean | undefined;
  let filter: string | undefined;
  const shallow: ShallowOptions = {};
  const positional: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    const taken = readShallowOption(args, i, shallow, false);
    if (taken >= 0) i = taken;
    else if (a === '--bare') bare = true;
    else if (a === '--mirror') mirror = bare = true;
    else if (a === '-n' || a === '--no-checkout') noCheckout = true;
    else if (a === '-q' || a === '--quiet') (progress = false), (quiet = true);
    else if (a === '--progress') progress = true;
    else if (a.startsWith('--upload-pack=')) uploadPack = a.slice(14);
    else if ((a === '--upload-pack' || a === '-u') && i + 1 < args.length) uploadPack = args[++i];
    else if (a.startsWith('--branch=')) branch = a.slice(9);
    else if ((a === '--branch' || a === '-b') && i + 1 < args.length) branch = args[++i];
    else if (a.startsWith('--filter=')) filter = a.slice(9);
    else if (a === '--filter' && i + 1 < args.length) filter = args[++i];
    else if (a === '--no-filter') filter = undefined;
    else if (a === '--single-branch') singleBranch = true;
    else if (a === '--no-single-branch') singleBranch = false;
    else if (a === '--') positional.push(...args.slice(i + 1)), (i = args.length);
    else if (a.startsWith('-')) throw new UsageError(`error: unknown option \`${a.replace(/^-+/, '')}'\n${USAGE}`);
    else positional.push(a);
  }
  const url = positional[0];
  if (url === undefined || positional.length > 2) throw new UsageError(USAGE);
  if (!bare && !noCheckout) throw new PackwrightError('INVALID_ARGUMENT', 'packwright clone does not check out a work tree: give --no-checkout (the repository in <directory>/.git), --bare or --mirror');
  // git's default directory: the URL's last part, with `.git` for a bare clone and without it otherwise.
  const name = url.replace(/\/+$/, '').replace(/\/\.git$/, '').split(/[/:]/).pop()?.replace(/\.git$/, '') ?? 'repo';
  const dir = positional[1] ?? (bare ? `${name}.git` : name);
  const config = configOutsideRepository(global);
  if (progress) io.stderr.write(bare ? `Cloning into bare repository '${dir}'...\n` : `Cloning into '${dir}'...\n`);
  const remoteSays = remoteMessagesOn(io);
  await io.interruptible((signal) => cloneBare(url, {
    dir, uploadPack, agent, signal, cwd: global.cwd, mirror, bare, env: { ...global.env }, branch, singleBranch, filter, ...shallow,
    // The global configuration and `-c http.extraHeader=…`, as git clone takes them (CI's tokens are passed this way).
    headers: extraHeaders(config, url), http: httpSettings(config, url, global.env), ...cliAuth(config, global.env),
    protocol: configuredProtocol(config, global.env), allowTransport: transportPolicy(config, global.env),
    ...(quiet ? {} : { onWarning: (message: string) => void io.stderr.write(`warning: ${message}\n`) }),
    ...(progress ? { onProgress: (text: string) => remoteSays.text(text) } : {}),
  })).finally(() => remoteSays.end());
  return 0;
}
