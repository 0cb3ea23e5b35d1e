// HTTP requests for the smart HTTP client on Node's own http and https modules (loaded on first
// use: one-shot commands that never speak HTTP should not pay for them): what git's http.c asks
// of curl that Node's fetch does not do, proxies (HTTP and HTTPS ones: plain requests in absolute
// form, CONNECT tunnels for https; SOCKS4, 4a, 5 and 5h), the certificates to trust and to show,
// and redirects left to the caller, which follows them as git does.
import { createRequire } from 'node:module';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable, Transform } from 'node:stream';
import type { Agent as HttpAgent, ClientRequest, IncomingMessage, RequestOptions } from 'node:http';
import type { Socket } from 'node:net';
import { CookieJar } from './cookie-jar.js';
import type { CurlTrace } from './curl-trace.js';
import { PackwrightError, throwIfAborted } from '../errors/packwright-error.js';
import { socksConnect, type SocksProxy } from './socks-connect.js';
import { checkProxyAuthMethod, learnChallenge, proxyAuthorizationFor, type DigestChallenge, type ProxyAuthMethod } from './proxy-auth.js';

const load = createRequire(import.meta.url);
const http = (): typeof import('node:http') => load('node:http') as typeof import('node:http');
const https = (): typeof import('node:https') => load('node:https') as typeof import('node:https');
const tls = (): typeof import('node:tls') => load('node:tls') as typeof import('node:tls');
const zlib = (): typeof import('node:zlib') => load('node:zlib') as typeof import('node:zlib');

/** How requests reach a server (see httpSettings, which reads them as git does). */
export interface HttpSettings {
  /**
   * The proxy: `[<scheme>://][<user>[:<password>]@]<host>[:<port>]`, the scheme `http` (the
   * default), `https`, `socks4`, `socks4a`, `socks5` or `socks5h` (the `a` and `h` forms let the
   * proxy resolve names), as git's http.proxy; the port is 1080 when none is given (443 for https).
   */
  proxy?: string | undefined;
  /**
   * How to authenticate to the proxy (git's http.proxyAuthMethod): `anyauth` (the default) answers
   * the scheme the proxy asks for, Digest before Basic, and sends no password before it has asked;
   * `basic` sends Basic from the first request; `digest` answers Digest challenges only;
   * `negotiate` and `ntlm`, which curl has, are refused.
   */
  proxyAuthMethod?: ProxyAuthMethod | undefined;
  /** Hosts reached without the proxy (no_proxy): names separated by commas or spaces, each covering its subdomains too; `*` covers all. */
  noProxy?: string | undefined;
  /** Check the server's certificate (default true; git's http.sslVerify). */
  sslVerify?: boolean | undefined;
  /** A PEM file of the certificates to trust instead of Node's own list (git's http.sslCAInfo). */
  caInfo?: string | undefined;
  /** A directory of PEM files of certificates to trust (git's http.sslCAPath), with caInfo's if both are given. */
  caPath?: string | undefined;
  /** A PEM file with the client certificate to show a server that asks for one (git's http.sslCert). */
  sslCert?: string | undefined;
  /** Its private key, PEM (git's http.sslKey); the certificate's file when not given. */
  sslKey?: string | undefined;
  /** Whether the key is encrypted: its passphrase is asked for (see HttpClient's `askPassphrase`; git's http.sslCertPasswordProtected). */
  sslCertPasswordProtected?: boolean | undefined;
  /** For an https proxy: the certificates to trust for it (git's http.proxySSLCAInfo). */
  proxyCaInfo?: string | undefined;
  /** For an https proxy: the client certificate and key to show it (git's http.proxySSLCert, http.proxySSLKey). */
  proxySslCert?: string | undefined;
  proxySslKey?: string | undefined;
  /** Whether the proxy's key is encrypted (git's http.proxySSLCertPasswordProtected). */
  proxySslCertPasswordProtected?: boolean | undefined;
  /** Which redirects to follow: of the first request only (git's default), all, or none (http.followRedirects). */
  followRedirects?: 'initial' | 'always' | 'never' | undefined;
  /**
   * A file of cookies to send (git's http.cookieFile): Netscape's format, as curl writes it, or
   * `Set-Cookie:` lines; cookies the server sets are sent with the requests after (cookie-jar.ts).
   */
  cookieFile?: string | undefined;
  /** Write the cookies back to `cookieFile` when the client closes (git's http.saveCookies). */
  saveCookies?: boolean | undefined;
  /**
   * The most a request body is held to be sent with its length (git's http.postBuffer, default
   * 1 MiB, at least 65520): a push that does not fit, with room for one more packet, is sent
   * chunked as it is made, after an empty request has settled the credentials.
   */
  postBuffer?: number | undefined;
  /** The User-Agent sent (git's http.userAgent, GIT_HTTP_USER_AGENT); default `git/<agent>`. */
  userAgent?: string | undefined;
  /**
   * Give up on an answer that brings fewer than `lowSpeedLimit` bytes a second for `lowSpeedTime`
   * seconds running (git's http.lowSpeedLimit and http.lowSpeedTime, both needed, as curl's).
   */
  lowSpeedLimit?: number | undefined;
  lowSpeedTime?: number | undefined;
}

/** git's LARGE_PACKET_MAX: the floor of http.postBuffer, and the room a held request keeps. */
export const LARGE_PACKET_MAX = 65520;
/** git's default http.postBuffer. */
export const DEFAULT_POST_BUFFER = 1 << 20;

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
  /** A 407's Proxy-Authenticate values, each whole. */
  challenges?: string[] | undefined;
}

/** A proxy from git's http.proxy: its kind, where it is, and the credentials in its URL. */
interface ProxyTarget {
  kind: 'http' | 'https' | 'socks4' | 'socks4a' | 'socks5' | 'socks5h';
  host: string;
  port: number;
  username: string;
  password: string;
  /** `<scheme>://<host>:<port>`, what credentials for it are asked under. */
  url: string;
  /** The scheme its 407 asked for, and its Digest challenge (proxy-auth.ts). */
  scheme: 'basic' | 'digest' | undefined;
  digest: DigestChallenge | undefined;
}

const PROXY_KINDS = new Set(['http', 'https', 'socks', 'socks4', 'socks4a', 'socks5', 'socks5h']);

/** git's `http.proxy` value as curl reads it: a scheme is optional (http), the port defaults to 1080 (443 for https). */
function parseProxy(text: string): ProxyTarget {
  const withScheme = text.includes('://') ? text : `http://${text}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    throw new PackwrightError('INVALID_ARGUMENT', `unable to use the proxy '${text}': not a URL`);
  }
  const scheme = url.protocol.slice(0, -1).toLowerCase();
  if (!PROXY_KINDS.has(scheme)) throw new PackwrightError('INVALID_ARGUMENT', `unable to use the proxy '${text}': packwright speaks to HTTP, HTTPS and SOCKS proxies (not ${scheme})`);
  // git's starts_with tests: "socks" alone is SOCKS4.
  const kind = (scheme === 'socks' ? 'socks4' : scheme) as ProxyTarget['kind'];
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const port = url.port === '' ? (kind === 'https' ? 443 : 1080) : Number(url.port);
  return { kind, host, port, username: decodeURIComponent(url.username), password: decodeURIComponent(url.password), url: `${kind}://${url.hostname}:${port}`, scheme: undefined, digest: undefined };
}

/** The Proxy-Authenticate values of a 407, each on its own (Node joins repeated ones with commas, which Digest's parameters hold too). */
function challengesOf(res: IncomingMessage): string[] {
  const out: string[] = [];
  for (let i = 0; i + 1 < res.rawHeaders.length; i += 2) if ((res.rawHeaders[i] as string).toLowerCase() === 'proxy-authenticate') out.push(res.rawHeaders[i + 1] as string);
  return out;
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
 * What a client's settings leave to its caller: the passphrase of an encrypted key, and
 * credentials for a proxy that answers 407 (git asks its credential helpers for both).
 */
export interface HttpClientHooks {
  /** The passphrase of the key of the certificate at `certPath` (git asks for `cert:///<path>`); undefined gives up. */
  askPassphrase?: ((certPath: string) => Promise<string | undefined>) | undefined;
  /** Shown each request's and answer's headers and bytes (GIT_TRACE_CURL: curl-trace.ts). */
  trace?: CurlTrace | undefined;
  /** Credentials for the proxy at `url` (`<scheme>://<host>:<port>`) after a 407, `failed` the ones it refused; undefined gives up. */
  askProxyCredentials?: ((url: string, failed: { username: string; password: string } | undefined) => Promise<{ username: string; password: string } | undefined>) | undefined;
}

/** The TLS options for one end: the server, or an https proxy. */
interface TlsMaterial {
  rejectUnauthorized: boolean;
  ca?: Buffer[];
  cert?: Buffer;
  key?: Buffer;
  passphrase?: string;
}

/** A proxy that answered 407 to a CONNECT (asked again by `request`, or said as REQUEST_REFUSED), with what it offered. */
class ProxyAuthRequired extends Error {
  constructor(readonly challenges: string[]) {
    super('407');
  }
}

/** How many times a proxy that answers 407 is asked again with new credentials. */
const PROXY_AUTH_ATTEMPTS = 3;

/**
 * The per-connection state of a client's requests: one keep-alive agent per target (the
 * advertisement and the POSTs after it share a socket, as curl's do), destroyed by `close`.
 */
export class HttpClient {
  private readonly agents = new Map<string, HttpAgent>();
  private readonly tunnels = new Set<Socket>();
  private readonly tls = new Map<'server' | 'proxy', Promise<TlsMaterial>>();
  /** The proxy, parsed once: credentials asked for after a 407 stay for the next requests. */
  private parsedProxy: ProxyTarget | undefined;
  /** The cookies (HttpSettings.cookieFile), read at the first request. */
  private jar: CookieJar | undefined;

  constructor(
    readonly settings: HttpSettings = {},
    private readonly hooks: HttpClientHooks = {},
  ) {}

  /** How to authenticate to a proxy (HttpSettings.proxyAuthMethod; anyauth, as git's default). */
  private get proxyAuthMethod(): ProxyAuthMethod {
    return this.settings.proxyAuthMethod ?? 'anyauth';
  }

  /** Sends one request and resolves once the answer's headers are in (redirects are the caller's). */
  async request(url: URL, init: HttpRequestInit): Promise<HttpResponse> {
    throwIfAborted(init.signal, 'the request');
    const secure = url.protocol === 'https:';
    if (!secure && url.protocol !== 'http:') throw new PackwrightError('INVALID_ARGUMENT', `unsupported URL scheme '${url.protocol}'`);
    let proxy: ProxyTarget | undefined;
    if (this.settings.proxy !== undefined && !bypassesProxy(url.hostname, this.settings.noProxy)) proxy = this.parsedProxy ??= parseProxy(this.settings.proxy);
    // A streamed body cannot be sent twice: a 407 to it is the answer.
    const again = Buffer.isBuffer(init.body) || init.body === undefined;
    if (proxy !== undefined && (proxy.kind === 'http' || proxy.kind === 'https')) checkProxyAuthMethod(this.proxyAuthMethod);
    for (let attempt = 0; ; attempt++) {
      let response: HttpResponse | undefined;
      let challenges: string[];
      try {
        response = await this.send(url, secure, proxy, init);
        if (response.status !== 407) return response;
        challenges = response.challenges ?? [];
      } catch (e) {
        if (!(e instanceof ProxyAuthRequired)) throw e;
        challenges = e.challenges;
      }
      // The scheme the proxy asked for, newly learned (or a stale nonce): the same credentials again.
      const learned = proxy !== undefined && learnChallenge(proxy, this.proxyAuthMethod, challenges);
      if (learned && proxy?.username !== '' && again && attempt < PROXY_AUTH_ATTEMPTS) {
        response?.body.resume();
        continue;
      }
      const ask = this.hooks.askProxyCredentials;
      const next = proxy !== undefined && ask !== undefined && again && attempt < PROXY_AUTH_ATTEMPTS
        ? await ask(proxy.url, proxy.username !== '' ? { username: proxy.username, password: proxy.password } : undefined)
        : undefined;
      if (next === undefined || proxy === undefined) {
        if (response !== undefined) return response;
        throw new PackwrightError('REQUEST_REFUSED', `unable to access '${url.href}': the proxy asks for credentials (407)`);
      }
      response?.body.resume();
      proxy.username = next.username;
      proxy.password = next.password;
    }
  }

  private async send(url: URL, secure: boolean, proxy: ProxyTarget | undefined, init: HttpRequestInit): Promise<HttpResponse> {
    const port = url.port === '' ? (secure ? 443 : 80) : Number(url.port);
    const host = url.hostname.replace(/^\[|\]$/g, '');
    const headers: Record<string, string> = { 'Accept-Encoding': 'deflate, gzip', ...init.headers };
    const jar = this.cookieJar();
    jar?.reload();
    const cookies = jar?.header(url);
    if (cookies !== undefined) headers['Cookie'] = cookies;
    // A body sent whole says its length; one made as it goes is sent chunked.
    if (Buffer.isBuffer(init.body)) headers['Content-Length'] = String(init.body.length);
    const path = `${url.pathname}${url.search}`;
    let options: RequestOptions & { rejectUnauthorized?: boolean; servername?: string };
    let send: (o: RequestOptions, cb: (res: IncomingMessage) => void) => ClientRequest;
    if (proxy === undefined) {
      const tlsOptions = secure ? await this.tlsOptions('server', host) : undefined;
      options = { host, port, method: init.method, path, headers, agent: this.agent(`${host}:${port}`, tlsOptions) };
      send = secure ? https().request : http().request;
    } else if ((proxy.kind === 'http' || proxy.kind === 'https') && !secure) {
      // A plain request through the proxy: the whole URL as the request target.
      const tlsOptions = proxy.kind === 'https' ? await this.tlsOptions('proxy', proxy.host) : undefined;
      options = {
        host: proxy.host, port: proxy.port, method: init.method, path: url.href.replace(/#.*$/, ''),
        headers: { ...headers, Host: url.host, ...proxyAuthorizationFor(proxy, this.proxyAuthMethod, init.method, path) },
        agent: this.agent(`proxy ${proxy.url} ${proxy.username}`, tlsOptions),
      };
      send = proxy.kind === 'https' ? https().request : http().request;
    } else {
      // A connection of its own to the server: a CONNECT tunnel, or through SOCKS; TLS over it for https.
      const raw = proxy.kind === 'http' || proxy.kind === 'https' ? await this.tunnel(proxy, url.hostname, port, init.signal) : await this.socks(proxy, url.hostname, port, init.signal);
      const socket = secure ? await this.secure(raw, host, `${url.protocol}//${url.host}/`) : raw;
      this.tunnels.add(socket);
      socket.once('close', () => this.tunnels.delete(socket));
      options = { method: init.method, path, headers: { ...headers, Host: url.host }, createConnection: () => socket };
      send = secure ? https().request : http().request;
    }
    return new Promise<HttpResponse>((resolve, reject) => {
      const onAbort = (): void => {
        req.destroy(new PackwrightError('ABORTED', 'the request was aborted'));
      };
      const trace = this.hooks.trace;
      const req = send(options, (res) => {
        init.signal?.removeEventListener('abort', onAbort);
        trace?.headerIn(`HTTP/${res.httpVersion} ${res.statusCode ?? 0} ${res.statusMessage ?? ''}`, res.rawHeaders);
        const set = res.headers['set-cookie'];
        if (jar !== undefined && set !== undefined) jar.receive(url, set);
        resolve(this.response(res));
      });
      req.on('error', (e) => {
        init.signal?.removeEventListener('abort', onAbort);
        reject(e instanceof PackwrightError ? e : new PackwrightError('CONNECTION_CLOSED', `unable to access '${url.href}': ${e.message}`));
      });
      init.signal?.addEventListener('abort', onAbort, { once: true });
      const body = init.body;
      // Node keeps the header block it wrote (`_header`) once the first bytes are out.
      let shown = trace === undefined;
      const showHeader = (): void => {
        if (shown) return;
        shown = true;
        const block = (req as unknown as { _header?: unknown })._header;
        if (typeof block === 'string') trace?.headerOut(block);
      };
      if (body === undefined) {
        req.end();
        showHeader();
      } else if (Buffer.isBuffer(body)) {
        req.end(body);
        showHeader();
        trace?.dataOut(body);
      } else {
        // A streamed body: each chunk as it is made, waiting while the socket drains.
        void (async () => {
          for await (const chunk of body) {
            const drained = req.write(chunk);
            showHeader();
            trace?.dataOut(chunk);
            if (!drained) await new Promise<void>((ok) => req.once('drain', ok));
          }
          req.end();
          showHeader();
        })().catch((e: unknown) => req.destroy(e instanceof Error ? e : new Error(String(e))));
      }
    });
  }

  /** The cookie jar, read from HttpSettings.cookieFile at the first request; undefined without one. */
  private cookieJar(): CookieJar | undefined {
    const file = this.settings.cookieFile;
    if (file === undefined || file === '') return undefined;
    return (this.jar ??= new CookieJar(file));
  }

  /** Ends every kept-alive socket and tunnel; writes the cookies back when asked to (git's http_cleanup, through curl). */
  close(): void {
    if (this.jar !== undefined && this.settings.saveCookies === true) {
      try {
        this.jar.save();
      } catch {
        // curl says nothing when it cannot write the jar, and git's command has its result already.
      }
      this.jar = undefined;
    }
    for (const agent of this.agents.values()) agent.destroy();
    this.agents.clear();
    for (const socket of this.tunnels) socket.destroy();
    this.tunnels.clear();
  }

  /** The keep-alive agent for a target, TLS with `tlsOptions` when given. */
  private agent(key: string, tlsOptions: TlsMaterial | undefined): HttpAgent {
    const full = `${tlsOptions !== undefined ? 'https' : 'http'} ${key}`;
    let agent = this.agents.get(full);
    if (agent === undefined) {
      agent = tlsOptions !== undefined ? new (https().Agent)({ keepAlive: true, ...tlsOptions }) : new (http().Agent)({ keepAlive: true });
      this.agents.set(full, agent);
    }
    return agent;
  }

  /**
   * The TLS options for the server or an https proxy, read once: whether to check its
   * certificate, the certificates to trust (a file and a directory), and a client certificate
   * with its key (its passphrase asked for when the settings say it is encrypted). With the
   * server's name for SNI when it is a name, not an address.
   */
  private async tlsOptions(end: 'server' | 'proxy', servername: string): Promise<TlsMaterial & { servername?: string }> {
    let material = this.tls.get(end);
    if (material === undefined) {
      material = this.readTlsMaterial(end);
      this.tls.set(end, material);
    }
    return { ...(await material), ...(!/^[\d.]+$|:/.test(servername) ? { servername } : {}) };
  }

  private async readTlsMaterial(end: 'server' | 'proxy'): Promise<TlsMaterial> {
    const s = this.settings;
    const server = end === 'server';
    const read = (path: string, setting: string): Buffer => {
      try {
        return readFileSync(path);
      } catch (e) {
        throw new PackwrightError('INVALID_ARGUMENT', `unable to read '${path}' (${setting}): ${(e as Error).message}`);
      }
    };
    const ca: Buffer[] = [];
    const caInfo = server ? s.caInfo : s.proxyCaInfo;
    if (caInfo !== undefined) ca.push(read(caInfo, server ? 'http.sslCAInfo' : 'http.proxySSLCAInfo'));
    if (server && s.caPath !== undefined) {
      let names: string[];
      try {
        names = readdirSync(s.caPath).sort();
      } catch (e) {
        throw new PackwrightError('INVALID_ARGUMENT', `unable to read the directory '${s.caPath}' (http.sslCAPath): ${(e as Error).message}`);
      }
      for (const name of names) {
        const bytes = read(join(s.caPath, name), 'http.sslCAPath');
        if (bytes.includes('-----BEGIN CERTIFICATE-----')) ca.push(bytes);
      }
    }
    const certPath = server ? s.sslCert : s.proxySslCert;
    const keyPath = (server ? s.sslKey : s.proxySslKey) ?? certPath;
    const material: TlsMaterial = { rejectUnauthorized: s.sslVerify !== false, ...(ca.length > 0 ? { ca } : {}) };
    if (certPath !== undefined) {
      material.cert = read(certPath, server ? 'http.sslCert' : 'http.proxySSLCert');
      material.key = read(keyPath as string, server ? 'http.sslKey' : 'http.proxySSLKey');
      if (server ? s.sslCertPasswordProtected === true : s.proxySslCertPasswordProtected === true) {
        const passphrase = await this.hooks.askPassphrase?.(certPath);
        if (passphrase === undefined) throw new PackwrightError('REQUEST_REFUSED', `the key of the certificate '${certPath}' is encrypted and no passphrase was given`);
        material.passphrase = passphrase;
      }
      try {
        tls().createSecureContext({ cert: material.cert, key: material.key, ...(material.passphrase !== undefined ? { passphrase: material.passphrase } : {}) });
      } catch (e) {
        throw new PackwrightError('INVALID_ARGUMENT', `unable to use the client certificate '${certPath}' with the key '${keyPath}': ${(e as Error).message}`);
      }
    }
    return material;
  }

  /** TLS to the server over a socket already connected to it (a tunnel, SOCKS). */
  private async secure(socket: Socket, host: string, what: string): Promise<Socket> {
    const options = await this.tlsOptions('server', host);
    return new Promise<Socket>((resolve, reject) => {
      const secured = tls().connect({ socket, ...options });
      secured.once('secureConnect', () => resolve(secured));
      secured.once('error', (e) => {
        socket.destroy();
        reject(new PackwrightError('CONNECTION_CLOSED', `unable to access '${what}': ${e.message}`));
      });
    });
  }

  /** A socket to host:port through a SOCKS proxy. */
  private socks(proxy: ProxyTarget, host: string, port: number, signal: AbortSignal | undefined): Promise<Socket> {
    const socks: SocksProxy = {
      version: proxy.kind === 'socks5' || proxy.kind === 'socks5h' ? 5 : 4,
      remoteNames: proxy.kind === 'socks5h' || proxy.kind === 'socks4a',
      host: proxy.host, port: proxy.port,
      ...(proxy.username !== '' ? { username: proxy.username, password: proxy.password } : {}),
    };
    return socksConnect(socks, host, port, signal);
  }

  /** A CONNECT tunnel through an HTTP or HTTPS proxy to host:port (ProxyAuthRequired on 407). */
  private async tunnel(proxy: ProxyTarget, host: string, port: number, signal: AbortSignal | undefined): Promise<Socket> {
    const authority = `${host.includes(':') && !host.startsWith('[') ? `[${host}]` : host}:${port}`;
    const tlsOptions = proxy.kind === 'https' ? await this.tlsOptions('proxy', proxy.host) : undefined;
    return new Promise<Socket>((resolve, reject) => {
      const req = (tlsOptions !== undefined ? https().request : http().request)({
        host: proxy.host, port: proxy.port, method: 'CONNECT', path: authority,
        headers: { Host: authority, ...proxyAuthorizationFor(proxy, this.proxyAuthMethod, 'CONNECT', authority) },
        agent: false,
        ...tlsOptions,
      });
      const onAbort = (): void => {
        req.destroy(new PackwrightError('ABORTED', 'the request was aborted'));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      req.on('connect', (res: IncomingMessage, socket: Socket) => {
        signal?.removeEventListener('abort', onAbort);
        if (res.statusCode === 407) {
          socket.destroy();
          reject(new ProxyAuthRequired(challengesOf(res)));
        } else if (res.statusCode !== 200) {
          socket.destroy();
          reject(new PackwrightError('CONNECTION_CLOSED', `unable to access 'https://${authority}/': the proxy answered CONNECT with ${res.statusCode} ${res.statusMessage ?? ''}`.trimEnd()));
        } else resolve(socket);
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
    const trace = this.hooks.trace;
    if (trace !== undefined) {
      // The bytes as they come, before any content encoding is undone (curl's DATA_IN).
      body = res.pipe(new Transform({ transform: (chunk: Buffer, _encoding, done) => {
        trace.dataIn(chunk);
        done(null, chunk);
      } }));
      res.on('error', (e) => body.destroy(e));
    }
    const raw = body;
    if (encoding === 'gzip' || encoding === 'x-gzip') body = raw.pipe(zlib().createGunzip());
    else if (encoding === 'deflate') body = raw.pipe(zlib().createInflate());
    if (body !== raw) raw.on('error', (e) => body.destroy(e));
    return {
      status: res.statusCode ?? 0,
      statusText: res.statusMessage ?? '',
      header: (name) => {
        const v = res.headers[name.toLowerCase()];
        return Array.isArray(v) ? v[0] : v;
      },
      body,
      ...(res.statusCode === 407 ? { challenges: challengesOf(res) } : {}),
    };
  }
}
