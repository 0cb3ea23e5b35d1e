import { setMaxListeners } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { writtenSink } from '../protocol/pkt-line.js';
import { serveSmartHttp, type GitHttpResponse, type SmartHttpOptions } from './smart-http.js';
import { PackSlots } from './pack-slots.js';
import { availableParallelism } from 'node:os';

/**
 * A `node:http` request handler serving git's smart HTTP protocol (see serveSmartHttp): mount it
 * on a server, or call it from a framework's route. The URL's path (decoded) goes to
 * `options.repository`. A client that goes away mid-answer aborts its pack and frees what it held.
 * Its requests make at most `maxConcurrentPacks` packs at once (PackSlots).
 */
export function createGitHttpHandler(options: SmartHttpOptions): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  // Each request in progress listens to the server's signal: as many listeners as requests.
  if (options.signal !== undefined) setMaxListeners(0, options.signal);
  const limit = options.maxConcurrentPacks ?? Math.max(2, 2 * availableParallelism());
  if (options.packSlots === undefined && limit !== Infinity) options = { ...options, packSlots: new PackSlots(limit) };
  return async (req, res) => {
    const controller = new AbortController();
    const gone = (): void => {
      if (!res.writableFinished) controller.abort(new Error('the client went away'));
    };
    res.once('close', gone);
    const stop = (): void => controller.abort(options.signal?.reason);
    options.signal?.addEventListener('abort', stop, { once: true });
    const url = new URL(req.url ?? '/', 'http://localhost');
    let path: string;
    try {
      path = decodeURIComponent(url.pathname);
    } catch {
      path = url.pathname;
    }
    const response: GitHttpResponse = {
      start: (status, reason, headers) => {
        res.statusCode = status;
        res.statusMessage = reason;
        for (const [name, value] of headers) res.setHeader(name, value);
      },
      // Settled once the socket has the bytes, so the pack's buffers are reused (a stream's queue would keep them).
      write: writtenSink(res, 'the client went away'),
      reusable: true,
    };
    try {
      await serveSmartHttp({
        method: req.method ?? 'GET',
        path,
        query: url.search.slice(1),
        contentType: req.headers['content-type'],
        contentEncoding: req.headers['content-encoding'],
        gitProtocol: header(req.headers['git-protocol']),
        headers: req.headers,
        body: req,
      }, response, { ...options, signal: controller.signal });
    } catch (e) {
      // Before the answer started: a status; after, the connection is all there is to end.
      if (!res.headersSent && !res.destroyed) {
        res.statusCode = 500;
        res.setHeader('Content-Type', 'text/plain; charset=utf-8');
        res.write(`${e instanceof Error ? e.message : String(e)}\n`);
      }
      options.onStderr?.(`fatal: ${e instanceof Error ? e.message : String(e)}\n`);
    } finally {
      options.signal?.removeEventListener('abort', stop);
      if (!res.destroyed) res.end();
    }
  };
}

function header(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(':') : value;
}
