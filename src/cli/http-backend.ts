import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { isPackwrightError, PackwrightError } from '../errors/index.js';
import { enterRepository, Repository } from '../repo/index.js';
import { serveSmartHttp } from '../serve/index.js';
import type { CommandIO } from './command-io.js';
import { openServedGitDir, type GlobalOptions } from './global-options.js';

/**
 * `git http-backend`: a CGI program answering one smart HTTP request for a repository under
 * GIT_PROJECT_ROOT (the web server's PATH_INFO after it) or at PATH_TRANSLATED, as git's is run
 * behind Apache or nginx (and by git's HTTP test scripts). Exported repositories only (a
 * `git-daemon-export-ok` file, or GIT_HTTP_EXPORT_ALL); http.uploadpack turns fetching off,
 * http.receivepack (or an authenticated user) turns pushing on. The dumb protocol's files are
 * refused (403).
 */
export async function httpBackendCommand(io: CommandIO, global: GlobalOptions, agent: string): Promise<number> {
  const env = io.env;
  let headersDone = false;
  const opened: Repository[] = [];
  // A declared length is read exactly (git's pipe_fixed_length); without one, to the end.
  const declared = env['CONTENT_LENGTH'];
  const length = declared !== undefined && declared !== '' ? Number(declared) : undefined;
  const stdin = io.stdin.stream();
  const body = length === undefined ? stdin : limited(stdin, length);
  try {
    const { method, dir } = cgiRequest(env);
    if (length !== undefined && !(Number.isSafeInteger(length) && length >= 0 && /^[0-9]+$/.test(declared as string))) {
      throw new PackwrightError('INVALID_ARGUMENT', `failed to parse CONTENT_LENGTH: ${declared as string}`);
    }
    await io.interruptible((signal) => serveSmartHttp({
      method,
      path: dir,
      query: env['QUERY_STRING'] ?? '',
      contentType: env['CONTENT_TYPE'],
      contentEncoding: env['HTTP_CONTENT_ENCODING'],
      // git's http-backend sets GIT_PROTOCOL from the header only when the server has not set it.
      gitProtocol: env['GIT_PROTOCOL'] ?? env['HTTP_GIT_PROTOCOL'],
      body,
    }, {
      start: (status, reason, headers) => {
        let text = status === 200 ? '' : `Status: ${status} ${reason}\r\n`;
        for (const [name, value] of headers) text += `${name}: ${value}\r\n`;
        io.stdout.write(`${text}\r\n`);
        headersDone = true;
      },
      write: (chunk) => io.stdout.write(chunk),
      // A CommandOutput has written the bytes when it returns.
      reusable: true,
    }, {
      repository: (path) => {
        const gitDir = enterRepository(path);
        if (gitDir === undefined) return undefined;
        if (env['GIT_HTTP_EXPORT_ALL'] === undefined && !existsSync(join(gitDir, 'git-daemon-export-ok'))) return undefined;
        // The reflogs of a push name the web server's user (git's run_service).
        const user = env['REMOTE_USER'] !== undefined && env['REMOTE_USER'] !== '' ? env['REMOTE_USER'] : 'anonymous';
        const host = env['REMOTE_ADDR'] !== undefined && env['REMOTE_ADDR'] !== '' ? env['REMOTE_ADDR'] : '(none)';
        const repoEnv = { GIT_COMMITTER_NAME: user, GIT_COMMITTER_EMAIL: `${user}@http.${host}`, ...global.env };
        const repo = openServedGitDir(global, gitDir, repoEnv);
        opened.push(repo);
        return repo;
      },
      // git's http_config: http.uploadpack (default on), http.receivepack (default: on for an
      // authenticated user, REMOTE_USER set by the web server, else off).
      authorize: (service, repo) => (service === 'upload-pack'
        ? repo.config.getBool('http.uploadpack') ?? true
        : repo.config.getBool('http.receivepack') ?? (env['REMOTE_USER'] !== undefined && env['REMOTE_USER'] !== '')),
      signal,
      agent,
      onStderr: (text) => io.stderr.write(text),
    }));
  } catch (e) {
    // git's die_webcgi: the message to the server's log, 500 if the answer had not started, and
    // a successful exit (the failure was reported).
    if (!isPackwrightError(e)) throw e;
    io.stderr.write(`fatal: ${e.message}\n`);
    if (!headersDone) io.stdout.write('Status: 500 Internal Server Error\r\nExpires: Fri, 01 Jan 1980 00:00:00 GMT\r\nPragma: no-cache\r\nCache-Control: no-cache, max-age=0, must-revalidate\r\n\r\n');
  } finally {
    // Exit when answered, whatever the server left open on stdin.
    stdin.destroy();
    for (const repo of opened) repo.close();
  }
  return 0;
}

/** The method and the directory a CGI request names (git's getdir), in git's words when they are missing. */
function cgiRequest(env: Readonly<Record<string, string | undefined>>): { method: string; dir: string } {
  const method = env['REQUEST_METHOD'];
  if (method === undefined) throw new PackwrightError('INVALID_ARGUMENT', 'No REQUEST_METHOD from server');
  const root = env['GIT_PROJECT_ROOT'];
  const pathInfo = env['PATH_INFO'];
  let dir: string;
  if (root !== undefined && root !== '') {
    if (pathInfo === undefined || pathInfo === '') throw new PackwrightError('INVALID_ARGUMENT', 'GIT_PROJECT_ROOT is set but PATH_INFO is not');
    if (pathInfo.split('/').some((part) => part === '..' || part === '.')) throw new PackwrightError('INVALID_ARGUMENT', `'${pathInfo}': aliased`);
    dir = `${root.endsWith('/') ? root : `${root}/`}${pathInfo.startsWith('/') ? pathInfo.slice(1) : pathInfo}`;
  } else if (env['PATH_TRANSLATED'] !== undefined && env['PATH_TRANSLATED'] !== '') {
    dir = env['PATH_TRANSLATED'];
  } else {
    throw new PackwrightError('INVALID_ARGUMENT', 'No GIT_PROJECT_ROOT or PATH_TRANSLATED from server');
  }
  return { method, dir };
}

/** The first `length` bytes of a stream. */
async function* limited(stream: Readable, length: number): AsyncGenerator<Buffer> {
  let left = length;
  if (left <= 0) return;
  for await (const chunk of stream) {
    const b = chunk as Buffer;
    if (b.length >= left) {
      yield b.subarray(0, left);
      return;
    }
    left -= b.length;
    yield b;
  }
}
