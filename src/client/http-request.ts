// HTTP requests for the smart HTTP client on Node's own http and https modules (loaded on first
// use: one-shot commands that never speak HTTP should not pay for them): what git's http.c asks
// of curl that Node's fetch does not do, a proxy (plain for http, a CONNECT tunnel for https), the
// certificates to trust, and redirects left to the caller, which follows them as git does.
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import type { Agent as HttpAgent, ClientRequest, IncomingMessage, RequestOptions } from 'node:http';
import type { Socket } from 'node:net';
import { PackwrightError, throwIfAborted } from '../errors/packwright-error.js';

const load = createRequire(import.meta.url);
const http = (): typeof import('node:http') => load('node:http') as typeof import('node:http');
const https = (): typeof import('node:https') => load('node:https') as typeof import('node:https');
const tls = (): typeof import('node:tls') => load('node:tls') as typeof import('node:tls');
const zlib = (): typeof import('node:zlib') => load('node:zlib') as typeof import('node:zlib');

/** How requests reach a server (see httpSettings, which reads them as git does). */
export interface HttpSettings {
  /** The proxy: `[http://][<user>[:<password>]@]<host>[:<port>]` (port 1080 when none, as curl's); https and SOCKS proxies are refused. */
  proxy?: string | undefined;
  /** Hosts reached without the proxy (no_proxy): names separated by commas or spaces, each covering its subdomains too; `*` covers all. */
  noProxy?: string | undefined;
  /** Check the server's certificate (default true; git's http.sslVerify). */
  sslVerify?: boolean | undefined;
  /** A PEM file of the certificates to trust instead of Node's own list (git's http.sslCAInfo). */
  caInfo?: string | undefined;
  /** Which redirects to follow: of the first request only (git's default), all, or none (http.followRedirects). */
  followRedirects?: 'initial' | 'always' | 'never' | undefined;
}

/** What `httpRequest` sends. */
export interface HttpRequestInit {
  method: 'GET' | 'POST';
  headers: Readonly<Record<string, string>>;
  /** The body: bytes, or chunks as they are made (sent chunked). */
  body?: Buffer | AsyncIterable<Buffer> | undefined;
  signal?: AbortSignal | undefined;
}

/** An answer: its status, headers, and body (gzip or deflate content encoding undone). */
export interface HttpResponse {
  status: number;
  statusText: string;
  /** A header's value (the first, if sent more than once); undefined when absent. */
  header(name: string): string | undefined;
  body: Readable;
}

/** Where a proxy is, and the Proxy-Authorization its URL's user name and password make. */
interface ProxyTarget {
  host: string;
  port: number;
  authorization: string | undefined;
}

/** git's `http.proxy` value as curl reads it: a scheme is optional (http), the port defaults to 1080. */
function parseProxy(text: string): ProxyTarget {
  const withScheme = text.includes('://') ? text : `http://${text}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    throw new PackwrightError('INVALID_ARGUMENT', `unable to use the proxy '${text}': not a URL`);
  }
  if (url.protocol !== 'http:') throw new PackwrightError('INVALID_ARGUMENT', `unable to use the proxy '${text}': packwright speaks to HTTP proxies only (not ${url.protocol.slice(0, -1)})`);
  const user = decodeURIComponent(url.username);
  const authorization = user !== '' ? `Basic ${Buffer.from(`${user}:${decodeURIComponent(url.password)}`).toString('base64')}` : undefined;
  return { host: url.hostname.replace(/^\[|\]$/g, ''), port: url.port === '' ? 1080 : Number(url.port), authorization };
}

/** Whether no_proxy covers `host` (curl's check_noproxy: a name, its subdomains, or `*`). */
export function bypassesProxy(host: string, noProxy: string | undefined): boolean {
  if (noProxy === undefined) return false;
  const name = host.replace(/^\[|\]$/g, '').toLowerCase().replace(/\.$/, '');
  for (const raw of noProxy.split(/[, ]+/)) {
    const entry = raw.trim().toLowerCase().replace(/^\./, '').replace(/\.$/, '');
    if (entry === '') continue;
    if (entry === '*') return true;
    if (name === entry || name.endsWith(`.${entry}`)) return true;
  }
  return false;
}

/**
 * The per-connection state of a client's requests: one keep-alive agent per target (the
 * advertisement and the POSTs after it share a socket, as curl's do), destroyed by `close`.
 */
export class HttpClient {
  private readonly agents = new Map<string, HttpAgent>();
  private readonly tunnels = new Set<Socket>();
  private ca: Buffer | undefined;

  constructor(readonly settings: HttpSettings = {}) {}

  /** Sends one request and resolves once the answer's headers are in (redirects are the caller's). */
  async request(url: URL, init: HttpRequestInit): Promise<HttpResponse> {
    throwIfAborted(init.signal, 'the request');
    const secure = url.protocol === 'https:';
    if (!secure && url.protocol !== 'http:') throw new PackwrightError('INVALID_ARGUMENT', `unsupported URL scheme '${url.protocol}'`);
    const port = url.port === '' ? (secure ? 443 : 80) : Number(url.port);
    const proxy = this.settings.proxy !== undefined && !bypassesProxy(url.hostname, this.settings.noProxy) ? parseProxy(this.settings.proxy) : undefined;
    const headers: Record<string, string> = { 'Accept-Encoding': 'deflate, gzip', ...init.headers };
    // A body sent whole says its length; one made as it goes is sent chunked.
    if (Buffer.isBuffer(init.body)) headers['Content-Length'] = String(init.body.length);
    const target = `${url.hostname}:${port}`;
    let options: RequestOptions & { rejectUnauthorized?: boolean; ca?: Buffer; servername?: string };
    let send: (o: RequestOptions, cb: (res: IncomingMessage) => void) => ClientRequest;
    if (proxy !== undefined && !secure) {
      // A plain request through the proxy: the whole URL as the request target.
      options = {
        host: proxy.host, port: proxy.port, method: init.method, path: url.href.replace(/#.*$/, ''),
        headers: { ...headers, Host: url.host, ...(proxy.authorization !== undefined ? { 'Proxy-Authorization': proxy.authorization } : {}) },
        agent: this.agent(`proxy ${proxy.host}:${proxy.port}`, false),
      };
      send = http().request;
    } else if (proxy !== undefined) {
      const socket = await this.tunnel(proxy, url.hostname, port, init.signal);
      options = { method: init.method, path: `${url.pathname}${url.search}`, headers: { ...headers, Host: url.host }, createConnection: () => socket, ...this.tlsOptions(url.hostname) };
      send = https().request;
    } else {
      options = { host: url.hostname.replace(/^\[|\]$/g, ''), port, method: init.method, path: `${url.pathname}${url.search}`, headers, agent: this.agent(target, secure), ...(secure ? this.tlsOptions(url.hostname) : {}) };
      send = secure ? https().request : http().request;
    }
    return new Promise<HttpResponse>((resolve, reject) => {
      const onAbort = (): void => {
        req.destroy(new PackwrightError('ABORTED', 'the request was aborted'));
      };
      const req = send(options, (res) => {
        init.signal?.removeEventListener('abort', onAbort);
        resolve(this.response(res));
      });
      req.on('error', (e) => {
        init.signal?.removeEventListener('abort', onAbort);
        reject(e instanceof PackwrightError ? e : new PackwrightError('CONNECTION_CLOSED', `unable to access '${url.href}': ${e.message}`));
      });
      init.signal?.addEventListener('abort', onAbort, { once: true });
      const body = init.body;
      if (body === undefined) req.end();
      else if (Buffer.isBuffer(body)) req.end(body);
      else {
        // A streamed body: each chunk as it is made, waiting while the socket drains.
        void (async () => {
          for await (const chunk of body) if (!req.write(chunk)) await new Promise<void>((ok) => req.once('drain', ok));
          req.end();
        })().catch((e: unknown) => req.destroy(e instanceof Error ? e : new Error(String(e))));
      }
    });
  }

  /** Ends every kept-alive socket and tunnel. */
  close(): void {
    for (const agent of this.agents.values()) agent.destroy();
    this.agents.clear();
    for (const socket of this.tunnels) socket.destroy();
    this.tunnels.clear();
  }

  private agent(key: string, secure: boolean): HttpAgent {
    let agent = this.agents.get(key);
    if (agent === undefined) {
      agent = secure ? new (https().Agent)({ keepAlive: true, ...this.tlsOptions(undefined) }) : new (http().Agent)({ keepAlive: true });
      this.agents.set(key, agent);
    }
    return agent;
  }

  private tlsOptions(servername: string | undefined): { rejectUnauthorized: boolean; ca?: Buffer; servername?: string } {
    if (this.settings.caInfo !== undefined && this.ca === undefined) {
      try {
        this.ca = readFileSync(this.settings.caInfo);
      } catch (e) {
        throw new PackwrightError('INVALID_ARGUMENT', `unable to read the certificates in '${this.settings.caInfo}' (http.sslCAInfo): ${(e as Error).message}`);
      }
    }
    return {
      rejectUnauthorized: this.settings.sslVerify !== false,
      ...(this.ca !== undefined ? { ca: this.ca } : {}),
      ...(servername !== undefined && !/^[\d.]+$|:/.test(servername) ? { servername } : {}),
    };
  }

  /** A CONNECT tunnel through the proxy to host:port, then TLS over it. */
  private tunnel(proxy: ProxyTarget, host: string, port: number, signal: AbortSignal | undefined): Promise<Socket> {
    const authority = `${host.includes(':') && !host.startsWith('[') ? `[${host}]` : host}:${port}`;
    return new Promise<Socket>((resolve, reject) => {
      const req = http().request({
        host: proxy.host, port: proxy.port, method: 'CONNECT', path: authority,
        headers: { Host: authority, ...(proxy.authorization !== undefined ? { 'Proxy-Authorization': proxy.authorization } : {}) },
        agent: false,
      });
      const onAbort = (): void => {
        req.destroy(new PackwrightError('ABORTED', 'the request was aborted'));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      req.on('connect', (res: IncomingMessage, socket: Socket) => {
        signal?.removeEventListener('abort', onAbort);
        if (res.statusCode !== 200) {
          socket.destroy();
          reject(new PackwrightError('CONNECTION_CLOSED', `unable to access 'https://${authority}/': the proxy answered CONNECT with ${res.statusCode} ${res.statusMessage ?? ''}`.trimEnd()));
          return;
        }
        const secured = tls().connect({ socket, ...this.tlsOptions(host.replace(/^\[|\]$/g, '')) });
        this.tunnels.add(secured);
        secured.once('close', () => this.tunnels.delete(secured));
        secured.once('secureConnect', () => resolve(secured));
        secured.once('error', (e) => reject(new PackwrightError('CONNECTION_CLOSED', `unable to access 'https://${authority}/': ${e.message}`)));
      });
      req.on('error', (e) => {
        signal?.removeEventListener('abort', onAbort);
        reject(e instanceof PackwrightError ? e : new PackwrightError('CONNECTION_CLOSED', `unable to reach the proxy ${proxy.host}:${proxy.port}: ${e.message}`));
      });
      req.end();
    });
  }

  private response(res: IncomingMessage): HttpResponse {
    const encoding = (res.headers['content-encoding'] ?? '').toLowerCase();
    let body: Readable = res;
    if (encoding === 'gzip' || encoding === 'x-gzip') body = res.pipe(zlib().createGunzip());
    else if (encoding === 'deflate') body = res.pipe(zlib().createInflate());
    if (body !== res) res.on('error', (e) => body.destroy(e));
    return {
      status: res.statusCode ?? 0,
      statusText: res.statusMessage ?? '',
      header: (name) => {
        const v = res.headers[name.toLowerCase()];
        return Array.isArray(v) ? v[0] : v;
      },
      body,
    };
  }
}
