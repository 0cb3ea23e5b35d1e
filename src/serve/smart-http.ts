// git's smart HTTP protocol (gitprotocol-http, http-backend.c), apart from any web server: a
// request (method, path, query, three headers, a body) in, a status, headers and a body out. The
// node:http handler (http-handler.ts) and the CGI program (`packwright http-backend`) are both
// this function behind an adapter.
import type { PackSlots } from './pack-slots.js';
import { nodeZlib } from '../zlib/node-zlib.js';
import { Readable } from 'node:stream';
import { isPackwrightError } from '../errors/packwright-error.js';
import { encodePacket, FLUSH_PACKET, type ByteSink } from '../protocol/pkt-line.js';
import { requestedProtocolVersion } from '../protocol/capabilities.js';
import type { Repository } from '../repo/repository.js';
import { uploadPack } from './upload-pack.js';
import { receivePack, type ReceivePackOptions } from './receive-pack.js';

/**
 * The parts of an HTTP request the smart HTTP handler reads (method, URL, headers, body), so any server can
 * call it.
 */
export interface GitHttpRequest {
  /** GET, HEAD or POST. */
  method: string;
  /** The URL's path, decoded: the repository's path, then what is asked of it (`/info/refs`, `/git-upload-pack`). */
  path: string;
  /** The URL's query (`service=git-upload-pack`), without the `?`. */
  query: string;
  contentType?: string | undefined;
  contentEncoding?: string | undefined;
  /** The Git-Protocol header (`version=2`). */
  gitProtocol?: string | undefined;
  /** Every header, names in lower case (what `authorize` may look at: Authorization, cookies). */
  headers?: Readonly<Record<string, string | string[] | undefined>> | undefined;
  body: AsyncIterable<Uint8Array>;
}

/** The answer of the smart HTTP handler: status, headers, and the body as a stream. */
export interface GitHttpResponse {
  /** Called once, before any byte of the body. */
  start(status: number, reason: string, headers: readonly [string, string][]): void | Promise<void>;
  /** The body, in order; a promise holds the writer back (backpressure). */
  write: ByteSink;
  /**
   * `write` is done with a chunk once it returns or its promise settles (a socket's write
   * callback, a descriptor written at once): the pack is then framed into buffers used again
   * (UploadSessionOptions.reusableOutput). Leave unset for a write that keeps what it is given.
   */
  reusable?: boolean | undefined;
}

/** The services the smart HTTP handler serves. */
export type GitService = 'upload-pack' | 'receive-pack';

/** Who pushes: the name and email of the reflog lines a push writes (in place of the committer git would take from the environment). */
export interface Pusher {
  name: string;
  email: string;
}

/**
 * What an `authorize` callback answers: true (allowed), false (403 Forbidden), a refusal with
 * its status (401 with a `WWW-Authenticate` header makes git ask for credentials and try again),
 * or, for a push, who is pushing.
 */
export type Authorization =
  | boolean
  | { refuse: 401 | 403 | 404; message?: string | undefined; headers?: readonly [string, string][] | undefined }
  | { pusher: Pusher };

/**
 * Options of `serveSmartHttp`: how a URL maps to a repository, authorization, the services enabled and
 * their options.
 */
export interface SmartHttpOptions {
  /**
   * The repository a URL path names (what comes before `/info/refs` or `/git-upload-pack`), or
   * undefined: 404. The handler does not close what it is given.
   */
  repository: (path: string) => Repository | undefined | Promise<Repository | undefined>;
  /**
   * Whether this request may use the service (default: upload-pack yes, receive-pack no); see
   * Authorization. It sees the request, headers included, to check credentials.
   */
  authorize?: ((service: GitService, repository: Repository, path: string, request: GitHttpRequest) => Authorization | Promise<Authorization>) | undefined;
  threads?: number | undefined;
  /**
   * Packs made at once by this handler's upload-packs, the rest waiting their turn (see
   * PackSlots): `createGitHttpHandler` makes them from `maxConcurrentPacks`.
   */
  packSlots?: PackSlots | undefined;
  /**
   * With `createGitHttpHandler`: how many packs its requests make at once (default: twice the
   * cores, at least 2); Infinity for no limit.
   */
  maxConcurrentPacks?: number | undefined;
  signal?: AbortSignal | undefined;
  agent?: string | undefined;
  /** What upload-pack and receive-pack would write to their stderr (a web server's error log). */
  onStderr?: ((text: string) => void) | undefined;
  /** For pushes (once `authorize` allows receive-pack): the host's policy callbacks, and whether the repositories' hook scripts run. */
  receive?: Pick<ReceivePackOptions, 'beforeUpdate' | 'afterUpdate' | 'hooks'> | undefined;
}

/** git http-backend's headers for what must not be cached. */
const NO_CACHE: [string, string][] = [
  ['Expires', 'Fri, 01 Jan 1980 00:00:00 GMT'],
  ['Pragma', 'no-cache'],
  ['Cache-Control', 'no-cache, max-age=0, must-revalidate'],
];

/** What http-backend answers, by the end of the path; the dumb protocol's files are refused. */
const ROUTES: { method: string; pattern: RegExp; route: 'info-refs' | 'rpc' | 'dumb' }[] = [
  { method: 'GET', pattern: /\/HEAD$/, route: 'dumb' },
  { method: 'GET', pattern: /\/info\/refs$/, route: 'info-refs' },
  { method: 'GET', pattern: /\/objects\/info\/(alternates|http-alternates|packs)$/, route: 'dumb' },
  { method: 'GET', pattern: /\/objects\/[0-9a-f]{2}\/([0-9a-f]{38}|[0-9a-f]{62})$/, route: 'dumb' },
  { method: 'GET', pattern: /\/objects\/pack\/pack-([0-9a-f]{40}|[0-9a-f]{64})\.(pack|idx)$/, route: 'dumb' },
  { method: 'POST', pattern: /\/git-upload-pack$/, route: 'rpc' },
  { method: 'POST', pattern: /\/git-receive-pack$/, route: 'rpc' },
];

/**
 * Answers one smart HTTP request as git http-backend does: `GET .../info/refs?service=git-upload-pack`
 * (the advertisement, after `# service=` for v0 and v1), `POST .../git-upload-pack` (one stateless
 * exchange; a gzip body is inflated), and the same for git-receive-pack (a push). The dumb
 * protocol's files get 403 (packwright serves git's smart protocol only); receive-pack is refused
 * unless the caller's `authorize` allows it. Errors
 * before the answer starts are statuses (404, 403, 405, 415, 500), after it the client's to read
 * in the protocol (ERR, band 3); resolves when the answer is complete.
 */
export async function serveSmartHttp(request: GitHttpRequest, response: GitHttpResponse, options: SmartHttpOptions): Promise<void> {
  const method = request.method === 'HEAD' ? 'GET' : request.method;
  const plain = async (status: number, reason: string, text: string): Promise<void> => {
    await response.start(status, reason, [...NO_CACHE, ['Content-Type', 'text/plain; charset=utf-8']]);
    if (text !== '') await response.write(Buffer.from(`${text}\n`));
  };
  const matched = ROUTES.find((r) => r.pattern.test(request.path));
  if (matched === undefined) return plain(404, 'Not Found', `Request not supported: '${request.path}'`);
  if (matched.method !== method) {
    await response.start(405, 'Method Not Allowed', [['Allow', matched.method === 'GET' ? 'GET, HEAD' : matched.method], ...NO_CACHE]);
    return;
  }
  const m = matched.pattern.exec(request.path) as RegExpExecArray;
  const repoPath = request.path.slice(0, m.index);
  const arg = request.path.slice(m.index + 1);
  const repo = await options.repository(repoPath);
  if (repo === undefined) return plain(404, 'Not Found', `Not a git repository: '${repoPath}'`);
  if (matched.route === 'dumb') return plain(403, 'Forbidden', 'Unsupported service: getanyfile (packwright serves the smart protocol only)');
  const serviceName = matched.route === 'rpc' ? arg : new URLSearchParams(request.query).get('service');
  if (serviceName === null) return plain(403, 'Forbidden', 'Unsupported service: getanyfile (packwright serves the smart protocol only)');
  const service = serviceName === 'git-upload-pack' ? 'upload-pack' : serviceName === 'git-receive-pack' ? 'receive-pack' : undefined;
  if (service === undefined) return plain(403, 'Forbidden', `Unsupported service: '${serviceName}'`);
  const decision = options.authorize !== undefined ? await options.authorize(service, repo, repoPath, request) : service === 'upload-pack';
  if (decision === false) return plain(403, 'Forbidden', `Service not enabled: '${service}'`);
  if (typeof decision === 'object' && 'refuse' in decision) {
    const reason = decision.refuse === 401 ? 'Unauthorized' : decision.refuse === 404 ? 'Not Found' : 'Forbidden';
    await response.start(decision.refuse, reason, [...NO_CACHE, ['Content-Type', 'text/plain; charset=utf-8'], ...(decision.headers ?? [])]);
    await response.write(Buffer.from(`${decision.message ?? reason}\n`));
    return;
  }
  const pusher = typeof decision === 'object' && 'pusher' in decision ? decision.pusher : undefined;
  const protocol = requestedProtocolVersion(request.gitProtocol);
  const common = { output: response.write, reusableOutput: response.reusable === true, stderr: options.onStderr, protocol, threads: options.threads, packSlots: options.packSlots, signal: options.signal, agent: options.agent };
  if (matched.route === 'info-refs') {
    await response.start(200, 'OK', [...NO_CACHE, ['Content-Type', `application/x-git-${service}-advertisement`]]);
    if (protocol !== 2) {
      await response.write(encodePacket(`# service=git-${service}\n`));
      await response.write(FLUSH_PACKET);
    }
    const input = Readable.from([]);
    await runService(() => (service === 'upload-pack'
      ? uploadPack(repo, { ...common, input, advertiseRefs: true })
      : receivePack(repo, { ...common, input, advertiseRefs: true }).then(() => undefined)), options);
    return;
  }
  const expected = `application/x-git-${service}-request`;
  if (request.contentType !== expected) {
    return plain(415, 'Unsupported Media Type', `Expected POST with Content-Type '${expected}', but received '${request.contentType ?? ''}' instead.`);
  }
  const encoding = request.contentEncoding;
  const body = encoding === 'gzip' || encoding === 'x-gzip' ? Readable.from(request.body).pipe(nodeZlib().createGunzip()) : request.body;
  await response.start(200, 'OK', [...NO_CACHE, ['Content-Type', `application/x-git-${service}-result`]]);
  await runService(() => (service === 'upload-pack'
    ? uploadPack(repo, { ...common, input: body, statelessRpc: true })
    : receivePack(repo, { ...common, ...options.receive, ...(pusher !== undefined ? { pusher } : {}), input: body, statelessRpc: true }).then(() => undefined)), options);
}

/** Runs a service whose answer has started: its failure is the client's to read in the protocol, and the log's. */
async function runService(work: () => Promise<void>, options: SmartHttpOptions): Promise<void> {
  try {
    await work();
  } catch (e) {
    if (!isPackwrightError(e) && !(e instanceof Error)) throw e;
    options.onStderr?.(`fatal: ${e.message}\n`);
  }
}
