// packwright's servers in the test process, on 127.0.0.1 only, for git clients (and packwright's
// own) to talk to: a clone or push then costs no node start-up. Each is an `await using` resource
// that closes its listeners and the repositories it opened.
import { createServer as createHttpServer } from 'node:http';
import { createServer, type AddressInfo } from 'node:net';
import { Repository } from '../../src/repo/index.js';
import { createGitHttpHandler, serveGitDaemonConnection, type GitDaemonOptions, type SmartHttpOptions } from '../../src/serve/index.js';

export interface DaemonOptions {
  /** The environment of the repositories it opens (the reflogs' committer). */
  env?: Record<string, string | undefined>;
  authorize?: GitDaemonOptions['authorize'];
  receive?: GitDaemonOptions['receive'];
}

/** git:// served by serveGitDaemonConnection, every path a repository; what the services write to stderr is in `errors`. */
export async function packwrightDaemon(options: DaemonOptions = {}): Promise<{ url: (path: string) => string; errors: string[]; [Symbol.asyncDispose]: () => Promise<void> }> {
  const errors: string[] = [];
  const opened: Repository[] = [];
  const server = createServer((socket) => {
    void serveGitDaemonConnection(socket, {
      repository: (path) => {
        const repo = Repository.openGitDir(path, options.env !== undefined ? { env: options.env } : {});
        opened.push(repo);
        return repo;
      },
      ...(options.authorize !== undefined ? { authorize: options.authorize } : {}),
      ...(options.receive !== undefined ? { receive: options.receive } : {}),
      threads: 1,
      onStderr: (text) => void errors.push(text),
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: (path) => `git://127.0.0.1:${port}${path}`,
    errors,
    [Symbol.asyncDispose]: async () => {
      await new Promise((resolve) => server.close(resolve));
      for (const repo of opened) repo.close();
    },
  };
}

/** One repository served over git:// (at its own path) and smart HTTP (at `/repo.git`); with `push`, receive-pack too. */
export async function packwrightServers(repo: string, env: Record<string, string | undefined>, options: { push?: boolean; authorizeHttp?: SmartHttpOptions['authorize'] } = {}): Promise<{ git: string; http: string; [Symbol.asyncDispose]: () => Promise<void> }> {
  const opened: Repository[] = [];
  const open = (): Repository => {
    const r = Repository.openGitDir(repo, { env });
    opened.push(r);
    return r;
  };
  const authorize = options.push === true ? { authorize: () => true } : {};
  const daemon = createServer((socket) => void serveGitDaemonConnection(socket, { repository: open, threads: 1, ...authorize }));
  const handler = createGitHttpHandler({ repository: (path) => (path === '/repo.git' ? open() : undefined), threads: 1, ...authorize, ...(options.authorizeHttp !== undefined ? { authorize: options.authorizeHttp } : {}) });
  const http = createHttpServer((req, res) => void handler(req, res));
  await Promise.all([daemon, http].map((s) => new Promise<void>((ok) => s.listen(0, '127.0.0.1', ok))));
  return {
    git: `git://127.0.0.1:${(daemon.address() as AddressInfo).port}${repo}`,
    http: `http://127.0.0.1:${(http.address() as AddressInfo).port}/repo.git`,
    [Symbol.asyncDispose]: async () => {
      http.closeAllConnections();
      await Promise.all([daemon, http].map((s) => new Promise((ok) => s.close(ok))));
      for (const r of opened) r.close();
    },
  };
}
