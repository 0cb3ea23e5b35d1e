// The git:// transport's server side (git daemon, daemon.c): one TCP connection opens with a
// packet naming the service and the repository ("git-upload-pack /path\0host=h\0\0version=2\0"),
// then the service's conversation runs on the socket.
import { setMaxListeners } from 'node:events';
import type { Duplex } from 'node:stream';
import { isPackwrightError } from '../errors/packwright-error.js';
import { encodePacket, PacketReader, writtenSink } from '../protocol/pkt-line.js';
import type { Repository } from '../repo/repository.js';
import { uploadPack } from './upload-pack.js';
import { receivePack, type ReceivePackOptions } from './receive-pack.js';
import type { GitService } from './smart-http.js';
import { requestedProtocolVersion } from '../protocol/capabilities.js';

/**
 * Options of `serveGitDaemonConnection`: the base path, exported repositories, the services allowed and an
 * authorize callback.
 */
export interface GitDaemonOptions {
  /**
   * The repository to serve for the path a client asked for (and the host it named), or
   * undefined to refuse: git daemon's --base-path, --export-all and directory list are this
   * callback's to decide. The daemon does not close what it is given.
   */
  repository: (path: string, host: string | undefined) => Repository | undefined | Promise<Repository | undefined>;
  threads?: number | undefined;
  signal?: AbortSignal | undefined;
  agent?: string | undefined;
  /** Where upload-pack's and receive-pack's stderr goes (a log). */
  onStderr?: ((text: string) => void) | undefined;
  /**
   * Whether a connection may use a service (git daemon's --enable/--disable): default
   * upload-pack yes, receive-pack no, as git daemon's defaults.
   */
  authorize?: ((service: GitService, repository: Repository, path: string) => boolean | Promise<boolean>) | undefined;
  /** For pushes (once `authorize` allows receive-pack): the host's policy callbacks, and whether hook scripts run. */
  receive?: Pick<ReceivePackOptions, 'beforeUpdate' | 'afterUpdate' | 'hooks'> | undefined;
}

/**
 * Serves one git:// connection: reads the request, runs upload-pack on the repository the
 * callback gives (or receive-pack, when `authorize` allows it), and ends the socket. A refused
 * path gets git daemon's "ERR access denied or repository not exported: <path>", a service not
 * allowed "ERR service not enabled: <path>". Resolves when the connection is over, whatever happened on it (a
 * client that goes away mid-pack aborts the pack); errors of the conversation go to `onStderr`.
 */
export async function serveGitDaemonConnection(socket: Duplex, options: GitDaemonOptions): Promise<void> {
  const reader = new PacketReader(socket);
  const controller = new AbortController();
  const abort = (): void => controller.abort(new Error('the client went away'));
  socket.once('close', abort);
  // Every connection in progress listens to the caller's signal.
  if (options.signal !== undefined) setMaxListeners(0, options.signal);
  options.signal?.addEventListener('abort', abort, { once: true });
  // Settled once the socket has the bytes, so the pack's buffers are reused (reusableOutput).
  const write = writtenSink(socket, 'the connection is closed');
  try {
    const first = await reader.read();
    if (first.kind !== 'data') return;
    const data = first.data;
    const nul = data.indexOf(0);
    const command = data.toString('utf8', 0, nul < 0 ? data.length : nul).replace(/\n$/, '');
    // After the first NUL: host=<host>[:<port>], then after a second NUL, protocol parameters.
    let host: string | undefined;
    const protocolParts: string[] = [];
    if (nul >= 0) {
      const fields = data.toString('utf8', nul + 1).split('\0');
      let k = 0;
      if (fields[0]?.startsWith('host=') === true) {
        host = fields[0].slice(5).replace(/:\d+$/, '');
        k = 1;
      }
      for (k++; k < fields.length; k++) if (fields[k] !== '') protocolParts.push(fields[k] as string);
    }
    const m = /^git-(upload-pack|receive-pack|upload-archive) (.*)$/.exec(command);
    if (m === null) return;
    const path = m[2] as string;
    const service = m[1] === 'upload-pack' ? 'upload-pack' : m[1] === 'receive-pack' ? 'receive-pack' : undefined;
    if (service === undefined) {
      await write(encodePacket(`ERR service not enabled: ${path}`));
      return;
    }
    const repo = await options.repository(path, host);
    if (repo === undefined) {
      await write(encodePacket(`ERR access denied or repository not exported: ${path}`));
      return;
    }
    const allowed = options.authorize !== undefined ? await options.authorize(service, repo, path) : service === 'upload-pack';
    if (!allowed) {
      await write(encodePacket(`ERR service not enabled: ${path}`));
      return;
    }
    const common = {
      input: reader.rest(),
      output: write,
      reusableOutput: true,
      stderr: options.onStderr,
      protocol: requestedProtocolVersion(protocolParts.join(':')),
      threads: options.threads,
      signal: controller.signal,
      agent: options.agent,
    };
    if (service === 'upload-pack') await uploadPack(repo, common);
    else await receivePack(repo, { ...common, ...options.receive });
  } catch (e) {
    if (!isPackwrightError(e) && !(e instanceof Error)) throw e;
    options.onStderr?.(`fatal: ${e.message}\n`);
  } finally {
    socket.off('close', abort);
    options.signal?.removeEventListener('abort', abort);
    socket.end();
  }
}
