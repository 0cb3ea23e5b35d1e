import { existsSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { basename, join, resolve } from 'node:path';
import { PackwrightError } from '../errors/index.js';
import { enterRepository, Repository } from '../repo/index.js';
import { createGitHttpHandler } from '../serve/index.js';
import type { CommandIO } from './command-io.js';
import { openServedGitDir, type GlobalOptions } from './global-options.js';
import { helpRequested, integerOption, UsageError } from './usage-error.js';

const USAGE = `usage: packwright serve [--listen=<addr>] [--port=<n>] [--base-path=<dir>] [--export-all]
                        [--enable=receive-pack] [--max-requests=<n>] [--idle-timeout=<seconds>] [--stats-file=<path>]
                        [<directory>]

Serves git's smart HTTP protocol (clone and fetch, protocol v0, v1 and v2; push with
--enable=receive-pack or a repository's http.receivepack) from this process.
Without --base-path: the repository at <directory> (default: the one here), at / and at
/<its name>. With --base-path: the repositories under it, by path, those with a
git-daemon-export-ok file (or all, with --export-all).

    --listen=<addr>           address to listen on (default 127.0.0.1)
    --port=<n>                port (default 0: any free one; the URL is printed)
    --enable=receive-pack     accept pushes (as git daemon's --enable; a repository's
                              http.receivepack=false still refuses them)
    --max-requests=<n>        stop after answering n requests
    --idle-timeout=<seconds>  stop after that long without a request
    --stats-file=<path>       on stopping, write JSON there: requests answered, the event loop's
                              delay (p50, p99, max ms) and the peak RSS (MB)`;

/**
 * `packwright serve`: an HTTP server for clones and fetches, printing the URL to clone from. It
 * stops on ^C (or SIGTERM), or by itself with --max-requests or --idle-timeout. One repository
 * (and its object store) per path, shared by every request.
 */
export async function serveCommand(io: CommandIO, global: GlobalOptions, agent: string, args: string[]): Promise<number> {
  const help = helpRequested(args, USAGE, io.stdout);
  if (help !== undefined) return help;
  let listen = '127.0.0.1';
  let port = 0;
  let basePath: string | undefined;
  let exportAll = false;
  let receivePack = false;
  let maxRequests = Infinity;
  let idleTimeout = Infinity;
  let statsFile: string | undefined;
  const positional: string[] = [];
  for (const a of args) {
    const value = a.slice(a.indexOf('=') + 1);
    if (a.startsWith('--listen=')) listen = value;
    else if (a.startsWith('--port=')) port = integerOption('--port', value);
    else if (a.startsWith('--base-path=')) basePath = resolve(global.cwd, value);
    else if (a === '--export-all') exportAll = true;
    else if (a === '--enable=receive-pack') receivePack = true;
    else if (a === '--disable=receive-pack') receivePack = false;
    else if (a.startsWith('--max-requests=')) maxRequests = integerOption('--max-requests', value);
    else if (a.startsWith('--idle-timeout=')) idleTimeout = integerOption('--idle-timeout', value);
    else if (a.startsWith('--stats-file=')) statsFile = resolve(global.cwd, value);
    else if (a.startsWith('-')) throw new UsageError(USAGE);
    else positional.push(a);
  }
  if (positional.length > 1 || (basePath !== undefined && positional.length > 0)) throw new UsageError(USAGE);
  const repos = new Map<string, Repository>();
  const open = (gitDir: string): Repository => {
    let repo = repos.get(gitDir);
    if (repo === undefined) {
      repo = openServedGitDir(global, gitDir);
      repos.set(gitDir, repo);
    }
    return repo;
  };
  let repository: (path: string) => Repository | undefined;
  let urlPath: string;
  if (basePath === undefined) {
    const start = positional[0] !== undefined ? resolve(global.cwd, positional[0]) : global.cwd;
    const gitDir = enterRepository(start) ?? Repository.open(start, { env: global.env }).gitDir;
    const name = basename(gitDir === join(start, '.git') ? start : gitDir);
    repository = (path) => (path === '' || path === '/' || path === `/${name}` ? open(gitDir) : undefined);
    urlPath = `/${name}`;
  } else {
    const base = basePath;
    if (!existsSync(base)) throw new PackwrightError('INVALID_ARGUMENT', `--base-path: no such directory: ${base}`);
    repository = (path) => {
      if (path.split('/').some((part) => part === '..')) return undefined;
      const gitDir = enterRepository(join(base, path));
      if (gitDir === undefined || !gitDir.startsWith(base)) return undefined;
      if (!exportAll && !existsSync(join(gitDir, 'git-daemon-export-ok'))) return undefined;
      return open(gitDir);
    };
    urlPath = '/';
  }
  // Loaded here, not with every command: the bin's start-up pays only for what a command uses.
  const { createServer } = await import('node:http');
  const { monitorEventLoopDelay } = await import('node:perf_hooks');
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  return io.interruptible(async (signal) => {
    const handler = createGitHttpHandler({
      repository,
      signal,
      agent,
      onStderr: (text) => io.stderr.write(text),
      // http.uploadpack and http.receivepack say no for their repository, as with git http-backend.
      authorize: (service, repo) => (service === 'upload-pack'
        ? repo.config.getBool('http.uploadpack') ?? true
        : repo.config.getBool('http.receivepack') ?? receivePack),
    });
    let answered = 0;
    let idle: NodeJS.Timeout | undefined;
    const server = createServer((req, res) => {
      if (idle !== undefined) clearTimeout(idle);
      void handler(req, res).finally(() => {
        answered++;
        if (answered >= maxRequests) stop();
        else armIdle();
      });
    });
    const stopped = new Promise<void>((done) => server.once('close', done));
    const stop = (): void => {
      server.close();
      server.closeIdleConnections();
    };
    const armIdle = (): void => {
      // One timer at a time: requests that end together must not leave earlier ones running.
      if (idle !== undefined) clearTimeout(idle);
      if (idleTimeout !== Infinity) idle = setTimeout(stop, idleTimeout * 1000);
    };
    signal.addEventListener('abort', stop, { once: true });
    await new Promise<void>((ready, fail) => {
      server.once('error', fail);
      server.listen(port, listen, () => ready());
    });
    const address = server.address() as AddressInfo;
    const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
    io.stdout.write(`http://${host}:${address.port}${urlPath}\n`);
    armIdle();
    await stopped;
    if (idle !== undefined) clearTimeout(idle);
    delay.disable();
    if (statsFile !== undefined) {
      const ms = (ns: number): number => Math.round(ns / 1e4) / 100;
      const stats = { requests: answered, eventLoopDelayMs: { p50: ms(delay.percentile(50)), p99: ms(delay.percentile(99)), max: ms(delay.max) }, peakRssMB: Math.round(process.resourceUsage().maxRSS / 1024) };
      writeFileSync(statsFile, `${JSON.stringify(stats)}\n`);
    }
    for (const repo of repos.values()) repo.close();
    return 0;
  });
}
