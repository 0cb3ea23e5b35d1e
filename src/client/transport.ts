// How a client reaches a server's upload-pack or receive-pack (git's transport.c, connect.c,
// remote-curl.c): a local path or file:// (the service run in this process, or a command spawned
// as git spawns --upload-pack), git:// over TCP, and smart HTTP(S). A connection is a
// conversation: the stateful ones keep one byte stream both ways; HTTP is one request per turn.
import { packetTrace, tracePacketsSent, type PacketTrace, type TracedPacket } from '../protocol/packet-trace.js';
import { childProcess } from '../repo/lazy-child-process.js';
import { createRequire } from 'node:module';
import { PassThrough } from 'node:stream';
import { existsSync, statSync } from 'node:fs';
import { resolve as resolvePath } from 'node:path';
import { NO_INITIAL_CONTACT } from './protocol-v2.js';
import { isPackwrightError, PackwrightError } from '../errors/packwright-error.js';
import { encodePacket, PacketReader, streamSink, type Packet } from '../protocol/pkt-line.js';
import { Repository } from '../repo/repository.js';
import { receivePack } from '../serve/receive-pack.js';
import { uploadPack } from '../serve/upload-pack.js';
import type { AuthCallback, Credentials } from './client-options.js';
import { readBundleHeader, serveBundle } from './bundle-transport.js';
import { DEFAULT_POST_BUFFER, HttpClient, LARGE_PACKET_MAX, type HttpRequestInit, type HttpResponse, type HttpSettings } from './http-request.js';
import { nodeZlib } from '../zlib/node-zlib.js';
import { GitConfig } from '../config/git-config.js';
import { transportPolicy, type TransportPolicy } from './remote-call-config.js';
import { curlTrace } from './curl-trace.js';

/** The two services a client asks a git server for. */
export type ClientService = 'git-upload-pack' | 'git-receive-pack';

/** Where a URL points, as git reads it. */
export type RemoteLocation =
  /** `given`: the path as the URL gave it (git's words for a path that is no repository name it so). */
  | { kind: 'local'; path: string; given?: string }
  | { kind: 'git'; host: string; port: number; path: string }
  | { kind: 'ssh'; host: string; port: number | undefined; path: string }
  | { kind: 'http'; url: URL };

/**
 * git's reading of a remote URL (connect.c, parse_connect_url): `http(s)://`, `git://`,
 * `ssh://[user@]host[:port]/path` (and `git+ssh://`, `ssh+git://`), the scp-like
 * `[user@]host:path`, `file://` and plain paths.
 */
export function parseRemoteUrl(url: string, cwd = process.cwd()): RemoteLocation {
  if (/^https?:\/\//i.test(url)) return { kind: 'http', url: new URL(url.replace(/\/+$/, '')) };
  if (/^git:\/\//i.test(url)) {
    const u = new URL(url);
    return { kind: 'git', host: u.hostname, port: u.port === '' ? 9418 : Number(u.port), path: decodeURIComponent(u.pathname) };
  }
  if (/^(ssh|git\+ssh|ssh\+git):\/\//i.test(url)) {
    const u = new URL(url.replace(/^[^:]+:/, 'ssh:'));
    const user = u.username !== '' ? `${decodeURIComponent(u.username)}@` : '';
    const path = decodeURIComponent(u.pathname);
    // `ssh://host/~user/repo` names a path from a home directory, as git reads it.
    return { kind: 'ssh', host: `${user}${u.hostname.replace(/^\[(.*)\]$/, '$1')}`, port: u.port === '' ? undefined : Number(u.port), path: path.startsWith('/~') ? path.slice(1) : path };
  }
  if (/^file:\/\//i.test(url)) return { kind: 'local', path: decodeURIComponent(new URL(url).pathname) };
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(url)) {
    throw new PackwrightError('INVALID_ARGUMENT', `unsupported remote '${url}': packwright reaches http(s)://, ssh://, git://, file:// and local paths`);
  }
  // The scp-like form: a colon before any slash, and not a path that is there (git's url_is_local_not_ssh).
  const scp = /^(\[[^\]]+\]|[^/:]+):(.*)$/.exec(url);
  if (scp !== null && !existsSync(url)) return { kind: 'ssh', host: (scp[1] as string).replace(/^\[(.*)\]$/, '$1'), port: undefined, path: scp[2] as string };
  return { kind: 'local', path: resolvePath(cwd, url), given: url };
}

/** git's ssh variants: which options the program takes (connect.c, determine_ssh_variant). */
type SshVariant = 'ssh' | 'plink' | 'putty' | 'tortoiseplink' | 'simple';

/** `'…'` quoting for a POSIX shell, as git's sq_quote_buf writes it. */
function shellQuote(text: string): string {
  return `'${text.replace(/'/g, "'\\''").replace(/!/g, "'\\!'")}'`;
}

/**
 * The command line that reaches a service over ssh, as git's fill_ssh_args makes it: the ssh
 * program (GIT_SSH_COMMAND or core.sshCommand through the shell, else GIT_SSH or `ssh` run
 * directly), its options for the variant (the port, GIT_PROTOCOL sent along for OpenSSH), the
 * host, and the remote command `<service> '<path>'`.
 */
function sshCommandLine(location: { host: string; port: number | undefined; path: string }, remoteCommand: string, options: ConnectOptions, gitProtocol: string | undefined): { file: string; args: string[]; env: Record<string, string> } {
  const env = options.env ?? process.env;
  const viaShell = env['GIT_SSH_COMMAND'] ?? options.sshCommand;
  const program = viaShell ?? env['GIT_SSH'] ?? 'ssh';
  if (location.host.startsWith('-')) throw new PackwrightError('INVALID_ARGUMENT', `strange hostname '${location.host}' blocked`);
  const name = (viaShell !== undefined ? program.trim().split(/\s+/)[0] ?? '' : program).split('/').pop()?.toLowerCase().replace(/\.exe$/, '') ?? '';
  const forced = env['GIT_SSH_VARIANT'] ?? options.sshVariant;
  const childEnv: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined) childEnv[k] = v;
  // Another program is asked, as git asks it, whether it takes OpenSSH's options (`-G` succeeds).
  const probe = (): SshVariant => {
    const probeArgs = ['-G', ...(gitProtocol !== undefined ? ['-o', 'SendEnv=GIT_PROTOCOL'] : []), ...(location.port !== undefined ? ['-p', String(location.port)] : []), location.host];
    const run = viaShell !== undefined
      ? childProcess().spawnSync('/bin/sh', ['-c', `${program} "$@"`, program, ...probeArgs], { env: childEnv, stdio: 'ignore' })
      : childProcess().spawnSync(program, probeArgs, { env: childEnv, stdio: 'ignore' });
    return run.status === 0 ? 'ssh' : 'simple';
  };
  const variant: SshVariant = forced === 'ssh' || forced === 'plink' || forced === 'putty' || forced === 'tortoiseplink' || forced === 'simple' ? forced
    : name === 'ssh' || name === 'plink' || name === 'tortoiseplink' ? name : probe();
  const args: string[] = [];
  if (variant === 'ssh' && gitProtocol !== undefined) {
    args.push('-o', 'SendEnv=GIT_PROTOCOL');
    childEnv['GIT_PROTOCOL'] = gitProtocol;
  }
  if (variant === 'tortoiseplink') args.push('-batch');
  if (location.port !== undefined) {
    if (variant === 'simple') throw new PackwrightError('INVALID_ARGUMENT', "ssh variant 'simple' does not support setting port");
    args.push(variant === 'ssh' ? '-p' : '-P', String(location.port));
  }
  args.push(location.host, `${remoteCommand} ${shellQuote(location.path)}`);
  if (viaShell === undefined) return { file: program, args, env: childEnv };
  return { file: '/bin/sh', args: ['-c', `${program} "$@"`, program, ...args], env: childEnv };
}

/** What a request sends: its bytes, or its chunks as they are made. */
export type RequestBody = Buffer | AsyncIterable<Buffer>;

/** Writes a request's body through `write`, chunk by chunk (each write waits for the stream to drain). */
async function writeBody(write: (chunk: Buffer) => Promise<void>, body: RequestBody): Promise<void> {
  if (Buffer.isBuffer(body)) await write(body);
  else for await (const chunk of body) await write(chunk);
}

/** A conversation with a server's service. */
export interface Connection {
  /** The server's first message (the advertisement): its packets, read as they come. */
  readonly reader: PacketReader;
  /**
   * Sends a request (bytes, or chunks as they are made: a push's pack, streamed). On a stateful
   * connection it goes down the same stream and `reader` goes on with the answer; over HTTP it is
   * a POST whose answer is returned as a new reader.
   */
  request(body: RequestBody): Promise<PacketReader>;
  /** Each request is a conversation of its own (HTTP's stateless RPC): a v0 fetch says again what the server must know. */
  readonly stateless: boolean;
  /** Ends the connection (a spawned process is killed, a socket closed). */
  close(): void;
  /**
   * When GIT_TRACE_PACKET traces it: names its packets from now on as `identity`'s (over HTTP in
   * protocol v0, git's conversation is its fetch-pack or send-pack child's, traced as such).
   */
  traceAs?(identity: string): void;
}

/**
 * Options of `openConnection`: the service, the protocol version, the command to spawn, HTTP headers and
 * agent, cancellation and an idle timeout.
 */
export interface ConnectOptions {
  service: ClientService;
  /** The protocol to ask for (GIT_PROTOCOL's version=; 0 asks for nothing). */
  protocol: 0 | 1 | 2;
  /** For a local repository: spawn this command (git's --upload-pack, run through the shell with the path as its argument) instead of serving it in this process. */
  command?: string | undefined;
  /** Headers for every HTTP request (git's http.extraHeader). */
  headers?: Readonly<Record<string, string>> | undefined;
  /** How HTTP requests reach the server: proxy, certificates, redirects (see httpSettings, which reads git's configuration). */
  http?: HttpSettings | undefined;
  /** git's warnings about the conversation, without the `warning: ` (an HTTP redirect followed). */
  onWarning?: ((message: string) => void) | undefined;
  /** Which transports may be used (RemoteCallOptions.allowTransport); default git's policy from the environment. */
  allowTransport?: TransportPolicy | undefined;
  /** remote-curl's lines at -v -v (RemoteCallOptions.onVerbose). */
  onVerbose?: ((line: string) => void) | undefined;
  /** Credentials for an HTTP server that answers 401 (see RemoteCallOptions.onAuth). */
  onAuth?: AuthCallback | undefined;
  /** Told the credentials the server took (see RemoteCallOptions.onAuthSuccess). */
  onAuthSuccess?: ((url: string, credentials: Credentials) => void | Promise<void>) | undefined;
  /** Told the credentials the server refused (see RemoteCallOptions.onAuthFailure). */
  onAuthFailure?: ((url: string, credentials: Credentials) => void | Promise<void>) | undefined;
  agent?: string | undefined;
  signal?: AbortSignal | undefined;
  /**
   * Give up when the server sends nothing for this long (ms): CONNECTION_CLOSED, "the server
   * stopped answering" (git's http.lowSpeedTime, for every transport). Default: wait.
   */
  idleTimeoutMs?: number | undefined;
  /** What a service run in this process writes to its stderr (a spawned one's goes to this process's). */
  stderr?: ((text: string) => void) | undefined;
  /** The ssh command, run through the shell (git's core.sshCommand; GIT_SSH_COMMAND overrides it). */
  sshCommand?: string | undefined;
  /** Which options the ssh program takes (git's ssh.variant; GIT_SSH_VARIANT overrides it). */
  sshVariant?: string | undefined;
  /** The environment GIT_SSH_COMMAND, GIT_SSH, GIT_SSH_VARIANT and GIT_TRACE_PACKET are read from (default: the process's). */
  env?: Readonly<Record<string, string | undefined>> | undefined;
  /** Whether the receiving repository has an object: a bundle's prerequisites are checked with it (none: not checked). */
  localHas?: ((id: Buffer) => boolean) | undefined;
  /** Told each packet the conversation reads (set by openConnection when GIT_TRACE_PACKET asks). */
  onPacket?: PacketReader['onPacket'];
  /** Who the conversation's packets are traced as under GIT_TRACE_PACKET (git's packet_trace_identity; default `git`). */
  traceIdentity?: string | undefined;
}

/**
 * The server's bytes as they come, as curl's low-speed check lets them: once `seconds` have
 * passed with fewer than `limit` bytes a second in them (counted each second over the last
 * `seconds`), the conversation ends with CONNECTION_CLOSED in curl's words.
 */
async function* withLowSpeedLimit(source: AsyncIterable<Uint8Array>, limit: number, seconds: number, close: () => void): AsyncGenerator<Uint8Array> {
  const iterator = source[Symbol.asyncIterator]();
  // Bytes in each of the last `seconds` seconds, the newest last. Only seconds spent waiting for
  // the server count: a reader that is busy itself (index-pack) does not make the server slow.
  const window: number[] = [0];
  let waiting = false;
  let counted = 0;
  let fail: ((e: Error) => void) | undefined;
  const tooSlow = new Promise<never>((_, reject) => {
    fail = reject;
  });
  tooSlow.catch(() => undefined);
  const timer = setInterval(() => {
    if (!waiting) return;
    counted++;
    if (counted >= seconds && window.reduce((a, b) => a + b, 0) < limit * seconds) {
      close();
      fail?.(new PackwrightError('CONNECTION_CLOSED', `Operation too slow. Less than ${limit} bytes/sec transferred the last ${seconds} seconds`));
      return;
    }
    window.push(0);
    if (window.length > seconds) window.shift();
  }, 1000);
  timer.unref();
  try {
    for (;;) {
      waiting = true;
      const r = await Promise.race([iterator.next(), tooSlow]);
      waiting = false;
      if (r.done === true) return;
      window[window.length - 1] = (window[window.length - 1] as number) + r.value.length;
      yield r.value;
    }
  } finally {
    clearInterval(timer);
  }
}

/**
 * The server's bytes as they come; with `ms`, a wait of that long for the next chunk (or for the
 * first one) ends the conversation with CONNECTION_CLOSED.
 */
async function* withIdleTimeout(source: AsyncIterable<Uint8Array>, ms: number | undefined, close: () => void): AsyncGenerator<Uint8Array> {
  if (ms === undefined) {
    yield* source;
    return;
  }
  const iterator = source[Symbol.asyncIterator]();
  for (;;) {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        close();
        reject(new PackwrightError('CONNECTION_CLOSED', `the server stopped answering (nothing for ${ms / 1000} s)`));
      }, ms);
    });
    try {
      const r = await Promise.race([iterator.next(), timeout]);
      if (r.done === true) return;
      yield r.value;
    } finally {
      clearTimeout(timer);
    }
  }
}

/** The transport git's policy names for a location: `file` for a path, else its scheme. */
export function transportType(location: RemoteLocation): string {
  if (location.kind === 'local') return 'file';
  if (location.kind === 'http') return location.url.protocol.slice(0, -1);
  return location.kind;
}

/** Opens a conversation with the service at `location`; its packets traced when GIT_TRACE_PACKET asks. */
export async function openConnection(location: RemoteLocation, options: ConnectOptions): Promise<Connection> {
  // git's transport_check_allowed, before anything is reached.
  const allowed = options.allowTransport ?? transportPolicy(new GitConfig(), options.env ?? process.env);
  const type = transportType(location);
  if (!allowed(type)) throw new PackwrightError('TRANSPORT_NOT_ALLOWED', `transport '${type}' not allowed`);
  // git's connect.c: a path that would read as an option of the program it runs is refused, for
  // a local path as given and over ssh, even where nothing is run (packwright serves a path in process).
  const path = location.kind === 'local' ? location.given ?? location.path : location.kind === 'ssh' ? location.path : '';
  if (path.startsWith('-')) throw new PackwrightError('INVALID_ARGUMENT', `strange pathname '${path}' blocked`);
  options = { ...options, allowTransport: allowed };
  const own = packetTrace(options.env ?? process.env, options.traceIdentity ?? 'git');
  if (own === undefined) return connect(location, options);
  // A local repository served in this process: its server's packets are traced too, as the
  // upload-pack or receive-pack git would spawn traces them (the same packets, the other way).
  const server = location.kind === 'local' && options.command === undefined ? options.service.replace(/^git-/, '') : undefined;
  const trace: PacketTrace = server === undefined ? own : Object.assign((packet: TracedPacket, sent: boolean, as?: string): void => {
    own(packet, sent, as);
    if (as === undefined) own(packet, !sent, server);
  }, { close: () => own.close(), identify: (name: string) => own.identify(name) });
  try {
    // Each reader is told its packets from the first one (an HTTP server's smart header is read
    // before the connection is handed on).
    const onPacket = (p: Packet, as: string | undefined): void => trace(p.kind === 'data' ? p.data : (p.kind as Exclude<typeof p.kind, 'data' | 'eof'>), false, as);
    return traced(await connect(location, { ...options, onPacket }), trace);
  } catch (e) {
    trace.close();
    throw e;
  }
}

/** A reader of `source` for a conversation, told its packets when they are traced. */
function packetReader(source: AsyncIterable<Uint8Array>, options: ConnectOptions): PacketReader {
  const reader = new PacketReader(source);
  reader.onPacket = options.onPacket;
  return reader;
}

/** `conn` with each packet it sends told to `trace` (what it reads is, by its readers), the trace closed with it. */
function traced(conn: Connection, trace: PacketTrace): Connection {
  const sent = tracePacketsSent(trace);
  const tap = async function* (body: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
    for await (const chunk of body) {
      sent(chunk);
      yield chunk;
    }
  };
  return {
    reader: conn.reader,
    stateless: conn.stateless,
    request: async (body) => {
      if (Buffer.isBuffer(body)) sent(body);
      return conn.request(Buffer.isBuffer(body) ? body : tap(body));
    },
    close: () => {
      conn.close();
      trace.close();
    },
    traceAs: (identity) => trace.identify(identity),
  };
}

async function connect(location: RemoteLocation, options: ConnectOptions): Promise<Connection> {
  const gitProtocol = options.protocol === 0 ? undefined : `version=${options.protocol}`;
  if (location.kind === 'http') return httpConnection(location.url, options, gitProtocol);
  if (location.kind === 'git') {
    // node:net is loaded for git:// only: every command would load it at start otherwise.
    const { connect } = createRequire(import.meta.url)('node:net') as typeof import('node:net');
    const socket = connect({ host: location.host, port: location.port });
    await new Promise<void>((ok, fail) => {
      socket.once('connect', ok);
      socket.once('error', (e) => fail(new PackwrightError('CONNECTION_CLOSED', `unable to connect to ${location.host}:${location.port}: ${e.message}`)));
    });
    socket.on('error', () => undefined);
    const write = streamSink(socket, 'the connection is closed');
    await write(encodePacket(`${options.service} ${location.path}\0host=${location.host}\0${gitProtocol !== undefined ? `\0${gitProtocol}\0` : ''}`));
    const reader = packetReader(withIdleTimeout(socket, options.idleTimeoutMs, () => socket.destroy()), options);
    return { reader, stateless: false, request: async (body) => { await writeBody(write, body); return reader; }, close: () => socket.destroy() };
  }
  if (location.kind === 'ssh' || options.command !== undefined) {
    // A process whose stdio is the conversation: ssh to the server's service, or a local command
    // (git's --upload-pack) run through the shell with the path as its argument.
    const { file, args, env } = location.kind === 'ssh'
      ? sshCommandLine(location, options.command ?? options.service, options, gitProtocol)
      : { file: '/bin/sh', args: ['-c', `${options.command} "$@"`, options.command as string, location.path], env: { ...process.env, ...(gitProtocol !== undefined ? { GIT_PROTOCOL: gitProtocol } : {}) } };
    const child = childProcess().spawn(file, args, { stdio: ['pipe', 'pipe', 'inherit'], env });
    child.on('error', () => undefined);
    child.stdin.on('error', () => undefined);
    const reader = packetReader(withIdleTimeout(child.stdout, options.idleTimeoutMs, () => child.kill()), options);
    const write = streamSink(child.stdin, 'the remote end hung up');
    return { reader, stateless: false, request: async (body) => { await writeBody(write, body); return reader; }, close: () => { child.stdin.end(); child.kill(); } };
  }
  // In this process: packwright's upload-pack or receive-pack on the repository, over a pair of
  // streams; what the service says on its stderr goes to `options.stderr` (git shows a spawned
  // one's stderr).
  // A bundle file (git's bundle transport): its refs and its pack, served from the file.
  if (location.kind === 'local' && options.service === 'git-upload-pack' && statSync(location.path, { throwIfNoEntry: false })?.isFile() === true) {
    const header = readBundleHeader(location.path);
    if (header !== undefined) return inProcess(serveBundle(location.path, header, options.localHas), options);
  }
  let repo: Repository;
  try {
    repo = Repository.openGitDir(existsSync(`${location.path}/.git`) ? `${location.path}/.git` : location.path, { defaultRefresh: 'on-miss' });
  } catch (e) {
    // git's upload-pack and receive-pack (enter_repo) say so in these words.
    if (!isPackwrightError(e, 'REPO_NOT_FOUND')) throw e;
    const said = `'${location.given ?? location.path}' does not appear to be a git repository`;
    // With a stderr to say it on, as a spawned server: its line, then the client's
    // die_initial_contact; without one, the server's words are the error.
    if (options.stderr === undefined) throw new PackwrightError('REPO_NOT_FOUND', said, { cause: e });
    options.stderr(`fatal: ${said}\n`);
    throw new PackwrightError('REPO_NOT_FOUND', NO_INITIAL_CONTACT, { cause: e });
  }
  const toServer = new PassThrough();
  const toClient = new PassThrough();
  const serviceOptions = {
    input: toServer, output: (chunk: Buffer) => void toClient.write(chunk), protocol: options.protocol, agent: options.agent, signal: options.signal,
    stderr: (text: string) => options.stderr?.(text),
  };
  const served = options.service === 'git-upload-pack' ? uploadPack(repo, serviceOptions) : receivePack(repo, serviceOptions);
  void served
    // A client that leaves without a request (nothing to push) is no error, as git's services take it.
    .catch((e: unknown) => (isPackwrightError(e, 'CONNECTION_CLOSED') ? undefined : options.stderr?.(`fatal: ${e instanceof Error ? e.message : String(e)}\n`)))
    .finally(() => {
      toClient.end();
      repo.close();
    });
  return inProcess({ toServer, toClient }, options);
}

/** A conversation with a service run in this process, over its pair of streams. */
function inProcess(streams: { toServer: PassThrough; toClient: PassThrough }, options: ConnectOptions): Connection {
  const reader = packetReader(streams.toClient, options);
  const write = streamSink(streams.toServer, 'the remote end hung up');
  return { reader, stateless: false, request: async (body) => { await writeBody(write, body); return reader; }, close: () => streams.toServer.end() };
}

/**
 * git's Accept-Language (http.c write_accept_language): the preferred languages, LANGUAGE's list
 * or else the messages' locale (LC_ALL, LC_MESSAGES, LANG; not C or POSIX), each as a tag
 * (`ko_KR.UTF-8` is `ko-KR`), then `*`, with falling q-values of as many decimals as the count
 * needs; undefined when none is preferred. (git takes the locale from setlocale, which falls back
 * to C for a locale the system lacks; this takes the variables as they are.)
 */
export function acceptLanguage(env: Readonly<Record<string, string | undefined>>): string | undefined {
  const nonEmpty = (v: string | undefined): string | undefined => (v !== undefined && v !== '' ? v : undefined);
  let list = nonEmpty(env['LANGUAGE']);
  if (list === undefined) {
    const locale = nonEmpty(env['LC_ALL']) ?? nonEmpty(env['LC_MESSAGES']) ?? nonEmpty(env['LANG']);
    if (locale === undefined || locale === 'C' || locale === 'POSIX') return undefined;
    list = locale;
  }
  const tags: string[] = [];
  for (const part of list.split(':')) {
    const tag = (/^[A-Za-z0-9_]*/.exec(part)?.[0] ?? '').replace(/_/g, '-');
    if (tag !== '') tags.push(tag);
    if (tags.length >= 999) break;
  }
  if (tags.length === 0) return undefined;
  tags.push('*');
  let places = 0;
  let maxQ = 1;
  for (; maxQ < tags.length && places <= 3; places++) maxQ *= 10;
  let out = '';
  for (let i = 0; i < tags.length; i++) {
    const next = `${i > 0 ? ', ' : ''}${tags[i] as string}${i > 0 ? `;q=0.${String(maxQ - i).padStart(places, '0')}` : ''}`;
    // git stops before the header passes 4000 bytes ("Accept-Language: " counted).
    if (17 + out.length + next.length > 4000) break;
    out += next;
  }
  return out;
}

/**
 * The first `limit` bytes of a request made as it goes: all of it (`whole`) when it ends within
 * them, else `rest`, the same chunks from the first on (those read, then the ones still to come).
 */
async function holdUpTo(chunks: AsyncIterable<Buffer>, limit: number): Promise<{ whole: Buffer; rest: undefined } | { whole: undefined; rest: AsyncIterable<Buffer> }> {
  const it = chunks[Symbol.asyncIterator]();
  const read: Buffer[] = [];
  let size = 0;
  for (;;) {
    const next = await it.next();
    if (next.done === true) return { whole: Buffer.concat(read), rest: undefined };
    read.push(next.value);
    size += next.value.length;
    if (size > limit) break;
  }
  return {
    whole: undefined,
    rest: (async function* () {
      yield* read;
      for (;;) {
        const next = await it.next();
        if (next.done === true) return;
        yield next.value;
      }
    })(),
  };
}

/** How many times a server that keeps answering 401 is asked again with new credentials (git asks once). */
const AUTH_ATTEMPTS = 3;

/** Redirects followed for one request before giving up (git sets curl's CURLOPT_MAXREDIRS to 20). */
const MAX_REDIRECTS = 20;

function httpConnection(given: URL, options: ConnectOptions, gitProtocol: string | undefined): Promise<Connection> {
  // An encrypted client key's passphrase and a proxy's credentials come from the same place as
  // the server's: git asks its credential helpers for cert:///<path> and for the proxy's URL.
  const onAuth = options.onAuth;
  const env = options.env ?? process.env;
  const trace = curlTrace(env);
  const client = new HttpClient(options.http ?? {}, onAuth === undefined ? { trace } : {
    trace,
    askPassphrase: async (path) => (await onAuth(`cert://${path.startsWith('/') ? '' : '/'}${path}`, undefined))?.password,
    askProxyCredentials: async (url, failed) => {
      if (failed !== undefined) await options.onAuthFailure?.(url, failed);
      return onAuth(url, failed);
    },
  });
  const follow = options.http?.followRedirects ?? 'initial';
  // Credentials in the URL are not sent in it but the first to try, as git's.
  const start = new URL(given.href);
  // As curl under git's CURLAUTH_ANY: they go only once the server has asked (a 401), and then
  // with every request after.
  let fromUrl: Credentials | undefined = start.username !== '' ? { username: decodeURIComponent(start.username), password: decodeURIComponent(start.password) } : undefined;
  let credentials: Credentials | undefined;
  start.username = '';
  start.password = '';
  // The base the service paths are added to; a redirect of the first request moves it (git's update_url_from_redirect).
  let shown = start.href.replace(/\/+$/, '');
  const language = acceptLanguage(env);
  const headers = (extra: Record<string, string>): Record<string, string> => ({
    ...(gitProtocol !== undefined ? { 'Git-Protocol': gitProtocol } : {}),
    'User-Agent': options.http?.userAgent ?? `git/${options.agent ?? 'packwright'}`,
    ...(language !== undefined ? { 'Accept-Language': language } : {}),
    ...(credentials !== undefined ? { Authorization: `Basic ${Buffer.from(`${credentials.username}:${credentials.password}`).toString('base64')}` } : {}),
    ...options.headers,
    ...extra,
  });
  const ok = (response: HttpResponse): boolean => response.status >= 200 && response.status < 300;
  const fail = async (response: HttpResponse, what: string): Promise<never> => {
    response.body.resume();
    // git's words for a 401 it could not answer (remote-curl.c).
    if (response.status === 401) throw new PackwrightError('REQUEST_REFUSED', `Authentication failed for '${shown}/'`);
    if (response.status === 407) throw new PackwrightError('REQUEST_REFUSED', `${what}: the proxy asks for credentials (407 ${response.statusText}): give them in its URL (http.proxy, http_proxy) or through onAuth (a credential helper)`);
    if (response.status >= 300 && response.status < 400) throw new PackwrightError('REQUEST_REFUSED', `${what}: the server redirected to '${response.header('location') ?? ''}', which http.followRedirects=${follow} does not follow`);
    throw new PackwrightError(response.status === 404 ? 'REPO_NOT_FOUND' : 'REQUEST_REFUSED', `${what}: the server answered ${response.status} ${response.statusText}`);
  };
  /** Credentials the server has taken are approved once (git's credential_approve). */
  let approved = false;
  const approve = async (response: HttpResponse): Promise<void> => {
    if (approved || !ok(response) || credentials === undefined) return;
    approved = true;
    await options.onAuthSuccess?.(shown, credentials);
  };
  /** After a 401: the credentials sent are rejected (git's credential_reject), then new ones from `onAuth` (true: ask again), or none (false: give up). */
  const askAgain = async (response: HttpResponse): Promise<boolean> => {
    if (response.status !== 401) return false;
    if (fromUrl !== undefined) {
      response.body.resume();
      credentials = fromUrl;
      fromUrl = undefined;
      return true;
    }
    if (credentials !== undefined) await options.onAuthFailure?.(shown, credentials);
    if (options.onAuth === undefined) return false;
    response.body.resume();
    const next = await options.onAuth(shown, credentials);
    if (next === undefined) return false;
    credentials = next;
    return true;
  };
  const lowSpeed = options.http?.lowSpeedLimit !== undefined && options.http.lowSpeedTime !== undefined ? { limit: options.http.lowSpeedLimit, seconds: options.http.lowSpeedTime } : undefined;
  const body = (response: HttpResponse): PacketReader => {
    const close = (): void => void response.body.destroy();
    const bytes = withIdleTimeout(response.body, options.idleTimeoutMs, close);
    return packetReader(lowSpeed !== undefined ? withLowSpeedLimit(bytes, lowSpeed.limit, lowSpeed.seconds, close) : bytes, options);
  };
  // Until the answer's headers come, the same limit holds (a server that never answers at all).
  // (Not while a streamed body goes out: its answer comes only once it is all sent.)
  const sendOnce = async (url: URL, init: HttpRequestInit, streamed: boolean): Promise<HttpResponse> => {
    // http.lowSpeedTime holds for the wait for an answer too (no bytes are fewer than any limit).
    const ms = streamed ? undefined : options.idleTimeoutMs ?? (lowSpeed !== undefined ? lowSpeed.seconds * 1000 : undefined);
    if (ms === undefined) return client.request(url, { ...init, signal: options.signal });
    // One controller for the caller's signal and the wait for headers; the timer stops once they come
    // (the body has its own limit, between chunks).
    const controller = new AbortController();
    const outer = options.signal;
    const forward = (): void => controller.abort(outer?.reason);
    outer?.addEventListener('abort', forward, { once: true });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, ms);
    try {
      return await client.request(url, { ...init, signal: controller.signal });
    } catch (e) {
      if (timedOut) throw new PackwrightError('CONNECTION_CLOSED', `the server stopped answering (nothing for ${ms / 1000} s)`);
      throw e;
    } finally {
      clearTimeout(timer);
      outer?.removeEventListener('abort', forward);
    }
  };
  /**
   * A request, and the redirects `redirects` allows followed (a GET; a POST's body sent whole goes
   * again, as curl resends it on 307 and 308 and turns 301-303 into a GET, which a service refuses).
   * A redirect to another server drops the credentials (curl sends none to another host): `init`
   * is made again for each hop, so its headers say the credentials as they are then. Resolves to
   * the answer and the URL that gave it.
   */
  const send = async (url: URL, init: () => HttpRequestInit, redirects: boolean, streamed = false): Promise<{ response: HttpResponse; url: URL }> => {
    let at = url;
    for (let hops = 0; ; hops++) {
      const response = await sendOnce(at, init(), streamed);
      const location = response.header('location');
      if (!redirects || response.status < 300 || response.status >= 400 || response.status === 304 || location === undefined) return { response, url: at };
      response.body.resume();
      if (hops >= MAX_REDIRECTS) throw new PackwrightError('CONNECTION_CLOSED', `unable to access '${shown}/': Maximum (${MAX_REDIRECTS}) redirects followed`);
      const next = new URL(location, at);
      if (next.protocol !== 'http:' && next.protocol !== 'https:') throw new PackwrightError('REQUEST_REFUSED', `unable to access '${shown}/': a redirect to '${next.href}', which is no HTTP URL`);
      // A redirect is no URL the user gave: a transport allowed only from the user is refused (curl's CURLOPT_REDIR_PROTOCOLS as git sets them).
      if (options.allowTransport?.(next.protocol.slice(0, -1), false) === false) throw new PackwrightError('TRANSPORT_NOT_ALLOWED', `unable to access '${shown}/': a redirect to '${next.href}', whose transport is not allowed`);
      if (next.origin !== at.origin) credentials = undefined;
      at = next;
    }
  };
  return (async () => {
    const suffix = `/info/refs?service=${options.service}`;
    const asked = new URL(`${shown}${suffix}`);
    const get = (): HttpRequestInit => ({ method: 'GET', headers: headers({}) });
    let { response, url } = await send(asked, get, follow !== 'never');
    for (let attempt = 0; attempt < AUTH_ATTEMPTS && await askAgain(response); attempt++) ({ response, url } = await send(url, get, follow !== 'never'));
    if (!ok(response)) await fail(response, url.href);
    if (url.href !== asked.href) {
      // git's update_url_from_redirect: the new base is the redirect's target less what was asked after the base.
      if (!url.href.endsWith(suffix)) throw new PackwrightError('PROTOCOL_ERROR', `unable to update url base from redirection:\n  asked for: ${asked.href}\n   redirect: ${url.href}`);
      shown = url.href.slice(0, -suffix.length);
      options.onWarning?.(`redirecting to ${shown}/`);
    }
    await approve(response);
    const type = response.header('content-type') ?? '';
    if (type !== `application/x-${options.service}-advertisement`) {
      response.body.resume();
      throw new PackwrightError('PROTOCOL_ERROR', `${url.href}: not a smart HTTP server (content type '${type}'): packwright speaks git's smart protocol only`);
    }
    const reader = body(response);
    // v0 and v1 begin with "# service=<service>" and a flush; v2 with "version 2".
    const first = await reader.peek();
    if (first.kind === 'data' && first.line.startsWith('# service=')) {
      await reader.read();
      const flush = await reader.read();
      if (flush.kind !== 'flush') throw new PackwrightError('PROTOCOL_ERROR', `${url.href}: expected a flush after the service line`);
    }
    return {
      reader,
      stateless: true,
      request: async (requestBody: RequestBody) => {
        const service = options.service;
        const post = new URL(`${shown}/${service}`);
        const types = { 'Content-Type': `application/x-${service}-request`, Accept: `application/x-${service}-result` };
        const verbose = options.onVerbose ?? ((): void => undefined);
        // git's post_rpc: a request held whole while it fits in http.postBuffer with room for one
        // more packet goes with its length (an upload-pack one of over 1 KiB gzipped); a larger
        // one (a push's pack) goes chunked as it is made, once an empty request ("0000") has
        // settled the credentials, since a streamed body cannot be sent again (probe_rpc).
        const held = Buffer.isBuffer(requestBody) ? { whole: requestBody, rest: undefined } : await holdUpTo(requestBody, (options.http?.postBuffer ?? DEFAULT_POST_BUFFER) - LARGE_PACKET_MAX);
        let sent: Buffer | AsyncIterable<Buffer>;
        let encoding: Record<string, string> = {};
        // What -v -v says before each attempt (git's retry after a 401 says it again).
        let says: string;
        if (held.whole !== undefined) {
          sent = held.whole;
          if (service === 'git-upload-pack' && held.whole.length > 1024) {
            sent = nodeZlib().gzipSync(held.whole, { level: 9 });
            encoding = { 'Content-Encoding': 'gzip' };
            says = `POST ${service} (gzip ${held.whole.length} to ${sent.length} bytes)\n`;
          } else {
            says = `POST ${service} (${held.whole.length} bytes)\n`;
          }
        } else {
          const probeHeaders = (): Record<string, string> => {
            const h = headers(types);
            delete h['Accept-Language'];
            return h;
          };
          const probeIt = async (): Promise<HttpResponse> => (await send(post, () => ({ method: 'POST', headers: probeHeaders(), body: Buffer.from('0000') }), follow === 'always', false)).response;
          let probe = await probeIt();
          for (let attempt = 0; attempt < AUTH_ATTEMPTS && await askAgain(probe); attempt++) probe = await probeIt();
          if (!ok(probe)) await fail(probe, post.href);
          probe.body.resume();
          sent = held.rest as AsyncIterable<Buffer>;
          says = `POST ${service} (chunked)\n`;
        }
        const streamed = !Buffer.isBuffer(sent);
        const postIt = async (): Promise<HttpResponse> => {
          verbose(says);
          const init = (): HttpRequestInit => ({ method: 'POST', headers: headers({ ...types, ...encoding }), body: sent });
          return (await send(post, init, follow === 'always' && !streamed, streamed)).response;
        };
        let r = await postIt();
        // A body sent whole can go again with new credentials; a streamed one is spent.
        for (let attempt = 0; attempt < AUTH_ATTEMPTS && !streamed && await askAgain(r); attempt++) r = await postIt();
        // A streamed body is not sent again, but the credentials it was refused with are rejected all the same.
        if (r.status === 401 && streamed && credentials !== undefined) await options.onAuthFailure?.(shown, credentials);
        if (!ok(r)) await fail(r, post.href);
        await approve(r);
        return body(r);
      },
      close: () => {
        client.close();
        trace?.close();
      },
    };
  })().catch((e: unknown) => {
    client.close();
    trace?.close();
    throw e;
  });
}
