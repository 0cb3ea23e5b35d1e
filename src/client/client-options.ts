// What every client call (listServerRefs, cloneBare, fetch, push) takes to reach a server, and
// how fetch and push find the local repository they work on.
import type { TransportPolicy } from './remote-call-config.js';
import type { HttpSettings } from './http-request.js';
import { PackwrightError } from '../errors/packwright-error.js';
import { Repository } from '../repo/repository.js';

/** A user name and password for an HTTP server (sent as Basic authentication). */
export interface Credentials {
  username: string;
  password: string;
}

/**
 * Asked for credentials when an HTTP server answers 401: `url` is the repository's (without any
 * credentials), `failed` the ones it refused, if any. Undefined gives up (REQUEST_REFUSED,
 * git's "Authentication failed").
 */
export type AuthCallback = (url: string, failed: Credentials | undefined) => Credentials | undefined | Promise<Credentials | undefined>;

/**
 * What every call to a remote takes: HTTP headers, credentials and agent, an idle timeout,
 * cancellation, the working directory for relative paths.
 */
export interface RemoteCallOptions {
  /** Headers for every HTTP request (git's http.extraHeader; fetch and push add the configuration's). */
  headers?: Readonly<Record<string, string>> | undefined;
  /**
   * Credentials for an HTTP server that asks (401), as isomorphic-git's onAuth; a URL's own
   * `https://user:password@host/` are tried first.
   */
  onAuth?: AuthCallback | undefined;
  /**
   * Told the credentials a server took (its first answer that was not 401), once a connection, as
   * isomorphic-git's onAuthSuccess; git's credential approval (a helper's `store`).
   */
  onAuthSuccess?: ((url: string, credentials: Credentials) => void | Promise<void>) | undefined;
  /**
   * Told the credentials a server refused (401), before `onAuth` is asked again, as
   * isomorphic-git's onAuthFailure; git's credential rejection (a helper's `erase`).
   */
  onAuthFailure?: ((url: string, credentials: Credentials) => void | Promise<void>) | undefined;
  /** The agent named to the server (default `packwright`). */
  agent?: string | undefined;
  /** Give up when the server sends nothing for this long (ms): CONNECTION_CLOSED (default: wait). */
  idleTimeoutMs?: number | undefined;
  /**
   * How HTTP requests reach the server: a proxy (HTTP, HTTPS or SOCKS) and the hosts that bypass
   * it, whether to check the certificate and against which, a client certificate, which redirects
   * to follow. Each setting given wins; the rest come from git's configuration and the
   * environment as git reads them (http.proxy, https_proxy, no_proxy, http.sslVerify,
   * http.sslCAInfo, http.sslCert, http.followRedirects, ...; see httpSettings). An encrypted key's
   * passphrase and a proxy's credentials after a 407 are asked of `onAuth` (for `cert:///<path>`
   * and the proxy's URL).
   */
  http?: HttpSettings | undefined;
  /** git's warnings about the conversation, without the `warning: ` (`redirecting to <url>` when the server moved the repository). */
  onWarning?: ((message: string) => void) | undefined;
  /**
   * The lines git's remote-curl writes at `-v -v`, each with its newline: how each request of an
   * HTTP conversation goes out (`POST git-receive-pack (<n> bytes)`, `(chunked)`, `(gzip <n> to <m> bytes)`).
   */
  onVerbose?: ((line: string) => void) | undefined;
  /**
   * Which transports may be used (`file`, `git`, `ssh`, `http`, `https`; a redirect asks with
   * `fromUser` false). Default git's policy from GIT_ALLOW_PROTOCOL and protocol.*.allow
   * (transportPolicy); a host fetching URLs it was handed can allow `https` alone.
   */
  allowTransport?: TransportPolicy | undefined;
  /**
   * What a server run in this process (upload-pack or receive-pack of a local path) writes to its
   * stderr, as git shows a spawned one's: its `fatal:` line when it refuses the repository, and
   * the call then fails as git's does after it ("Could not read from remote repository").
   * Without it, the call fails with the server's own words.
   */
  onStderr?: ((text: string) => void) | undefined;
  signal?: AbortSignal | undefined;
  /** The directory a relative path is taken from (default: the process's, or the repository's). */
  cwd?: string | undefined;
}

/** The local repository a fetch or push works on: a directory to open, or an open Repository. */
export interface LocalRepositoryOptions {
  /** The local repository: its git directory, or a work tree holding `.git`… */
  dir?: string | undefined;
  /** …or a repository open already (left open). */
  repository?: Repository | undefined;
  /** The environment git's variables are read from (the reflogs' committer); default the process's. */
  env?: Record<string, string | undefined> | undefined;
}

/** Runs `work` on the repository `options` name: the one given, or one opened from `dir` and closed after. */
export async function withLocalRepository<T>(options: LocalRepositoryOptions, what: string, work: (repo: Repository) => Promise<T>): Promise<T> {
  if (options.repository !== undefined) return work(options.repository);
  if (options.dir === undefined) throw new PackwrightError('INVALID_ARGUMENT', `${what} needs \`dir\` or \`repository\``);
  const repo = Repository.open(options.dir, { defaultRefresh: 'on-miss', ...(options.env !== undefined ? { env: options.env } : {}) });
  try {
    return await work(repo);
  } finally {
    repo.close();
  }
}

/** The part of a call's options that reaching the server takes (openConnection's). */
export function remoteCallOptions(options: RemoteCallOptions): Pick<RemoteCallOptions, 'headers' | 'onAuth' | 'onAuthSuccess' | 'onAuthFailure' | 'agent' | 'idleTimeoutMs' | 'signal' | 'http' | 'onWarning' | 'onVerbose' | 'allowTransport'> & { stderr: ((text: string) => void) | undefined } {
  return { http: options.http, onWarning: options.onWarning, onVerbose: options.onVerbose, allowTransport: options.allowTransport, headers: options.headers, onAuth: options.onAuth, onAuthSuccess: options.onAuthSuccess, onAuthFailure: options.onAuthFailure, agent: options.agent, idleTimeoutMs: options.idleTimeoutMs, signal: options.signal, stderr: options.onStderr };
}
