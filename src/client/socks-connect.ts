// A TCP connection through a SOCKS proxy (RFC 1928 and 1929 for SOCKS5, the SOCKS4 and 4a
// protocol notes): what curl does for git's `socks4://`, `socks4a://`, `socks5://` and
// `socks5h://` proxies. The `a`/`h` forms let the proxy resolve the name; the others resolve it
// here, as curl does.
import { createRequire } from 'node:module';
import type { Socket } from 'node:net';
import { PackwrightError } from '../errors/packwright-error.js';

const load = createRequire(import.meta.url);
const net = (): typeof import('node:net') => load('node:net') as typeof import('node:net');
const dns = (): typeof import('node:dns') => load('node:dns') as typeof import('node:dns');

/** A SOCKS proxy and how to reach a host through it. */
export interface SocksProxy {
  version: 4 | 5;
  /** Whether the proxy resolves the host's name (socks4a, socks5h). */
  remoteNames: boolean;
  host: string;
  port: number;
  /** SOCKS5's user name and password (RFC 1929); SOCKS4's user id. */
  username?: string | undefined;
  password?: string | undefined;
}

/** SOCKS5 reply codes (RFC 1928, section 6). */
const SOCKS5_REPLIES = ['succeeded', 'general SOCKS server failure', 'connection not allowed by ruleset', 'network unreachable', 'host unreachable', 'connection refused', 'TTL expired', 'command not supported', 'address type not supported'];

/** Reads exactly the bytes asked for from a socket in its handshake (the rest stays unread). */
class HandshakeReader {
  private buffered: Buffer = Buffer.alloc(0);
  private waiting: { n: number; ok: (b: Buffer) => void; fail: (e: Error) => void } | undefined;
  private ended: Error | undefined;

  constructor(private readonly socket: Socket) {
    socket.on('data', this.onData);
    socket.once('end', this.onEnd);
    socket.once('error', this.onError);
  }

  private readonly onData = (chunk: Buffer): void => {
    this.buffered = Buffer.concat([this.buffered, chunk]);
    this.serve();
  };

  private readonly onEnd = (): void => this.stop(new Error('the proxy closed the connection during the handshake'));
  private readonly onError = (e: Error): void => this.stop(e);

  private stop(e: Error): void {
    this.ended = e;
    const w = this.waiting;
    this.waiting = undefined;
    w?.fail(e);
  }

  private serve(): void {
    const w = this.waiting;
    if (w === undefined || this.buffered.length < w.n) return;
    this.waiting = undefined;
    const out = this.buffered.subarray(0, w.n);
    this.buffered = this.buffered.subarray(w.n);
    w.ok(out);
  }

  read(n: number): Promise<Buffer> {
    return new Promise((ok, fail) => {
      if (this.ended !== undefined) return fail(this.ended);
      this.waiting = { n, ok, fail };
      this.serve();
    });
  }

  /** Hands the socket over: its listeners removed, anything read past the handshake given back. */
  release(): void {
    this.socket.off('data', this.onData);
    this.socket.off('end', this.onEnd);
    this.socket.off('error', this.onError);
    if (this.buffered.length > 0) this.socket.unshift(this.buffered);
  }
}

/**
 * A socket to `host:port` through the SOCKS proxy, ready for the request (or for TLS over it).
 * Refusals are CONNECTION_CLOSED naming the proxy, the target and the proxy's reason.
 */
export async function socksConnect(proxy: SocksProxy, host: string, port: number, signal?: AbortSignal): Promise<Socket> {
  const name = host.replace(/^\[|\]$/g, '');
  const where = `SOCKS${proxy.version} proxy ${proxy.host}:${proxy.port}`;
  const fail = (why: string): PackwrightError => new PackwrightError('CONNECTION_CLOSED', `unable to reach ${name}:${port} through the ${where}: ${why}`);
  // The address the proxy is given: a name, or what it resolves to here.
  let address = name;
  if (!proxy.remoteNames && net().isIP(name) === 0) {
    try {
      address = (await dns().promises.lookup(name, proxy.version === 4 ? { family: 4 } : {})).address;
    } catch (e) {
      throw fail(`could not resolve ${name}: ${(e as Error).message}`);
    }
  }
  const socket = net().connect({ host: proxy.host.replace(/^\[|\]$/g, ''), port: proxy.port });
  const onAbort = (): void => {
    socket.destroy(new PackwrightError('ABORTED', 'the request was aborted'));
  };
  signal?.addEventListener('abort', onAbort, { once: true });
  const reader = new HandshakeReader(socket);
  try {
    await new Promise<void>((ok, reject) => {
      socket.once('connect', ok);
      socket.once('error', reject);
    });
    if (proxy.version === 5) await socks5(socket, reader, proxy, address, port, fail);
    else await socks4(socket, reader, proxy, address, port, fail);
  } catch (e) {
    socket.destroy();
    if (e instanceof PackwrightError) throw e;
    throw fail((e as Error).message);
  } finally {
    signal?.removeEventListener('abort', onAbort);
    reader.release();
  }
  return socket;
}

async function socks5(socket: Socket, reader: HandshakeReader, proxy: SocksProxy, address: string, port: number, fail: (why: string) => PackwrightError): Promise<void> {
  const withPassword = proxy.username !== undefined && proxy.username !== '';
  socket.write(Buffer.from(withPassword ? [5, 2, 0, 2] : [5, 1, 0]));
  const [version, method] = await reader.read(2);
  if (version !== 5) throw fail(`it does not speak SOCKS5 (it answered version ${version})`);
  if (method === 2 && withPassword) {
    const user = Buffer.from(proxy.username as string);
    const password = Buffer.from(proxy.password ?? '');
    if (user.length > 255 || password.length > 255) throw fail('the user name or password is longer than SOCKS5 allows (255 bytes)');
    socket.write(Buffer.concat([Buffer.from([1, user.length]), user, Buffer.from([password.length]), password]));
    const [, status] = await reader.read(2);
    if (status !== 0) throw fail('it refused the user name and password');
  } else if (method !== 0) {
    throw fail(withPassword ? `it accepts none of the ways to authenticate packwright offers (answer ${method})` : 'it wants a way to authenticate packwright was not given (a user name and password in the proxy URL)');
  }
  const family = net().isIP(address);
  let target: Buffer;
  if (family === 4) target = Buffer.from([1, ...address.split('.').map(Number)]);
  else if (family === 6) target = Buffer.concat([Buffer.from([4]), ipv6Bytes(address)]);
  else {
    const bytes = Buffer.from(address);
    if (bytes.length > 255) throw fail('the host name is longer than SOCKS5 allows');
    target = Buffer.concat([Buffer.from([3, bytes.length]), bytes]);
  }
  const portBytes = Buffer.from([port >> 8, port & 0xff]);
  socket.write(Buffer.concat([Buffer.from([5, 1, 0]), target, portBytes]));
  const [v, reply, , type] = await reader.read(4);
  if (v !== 5) throw fail(`it answered the request with version ${v}`);
  if (reply !== 0) throw fail(SOCKS5_REPLIES[reply as number] ?? `reply ${reply}`);
  // The bound address and port, which a client has no use for.
  const length = type === 1 ? 4 : type === 4 ? 16 : type === 3 ? ((await reader.read(1))[0] as number) : -1;
  if (length < 0) throw fail(`it answered with an unknown address type ${type}`);
  await reader.read(length + 2);
}

async function socks4(socket: Socket, reader: HandshakeReader, proxy: SocksProxy, address: string, port: number, fail: (why: string) => PackwrightError): Promise<void> {
  const family = net().isIP(address);
  if (family === 6) throw fail('SOCKS4 cannot reach an IPv6 address');
  const user = Buffer.from(proxy.username ?? '');
  // SOCKS4a: the address 0.0.0.1 says a name follows the user id.
  const ip = family === 4 ? address.split('.').map(Number) : [0, 0, 0, 1];
  const name = family === 4 ? Buffer.alloc(0) : Buffer.concat([Buffer.from(address), Buffer.from([0])]);
  socket.write(Buffer.concat([Buffer.from([4, 1, port >> 8, port & 0xff, ...ip]), user, Buffer.from([0]), name]));
  const [, status] = await reader.read(8);
  if (status !== 0x5a) throw fail(status === 0x5b ? 'request rejected or failed' : status === 0x5c || status === 0x5d ? 'it could not check the user id' : `status ${status}`);
}

/** The 16 bytes of an IPv6 address in text (a dotted IPv4 tail included). */
function ipv6Bytes(text: string): Buffer {
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted !== null) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? (text.split('::') as [string, string]) : [text, undefined];
  const parts = (s: string | undefined): number[] => (s === undefined || s === '' ? [] : s.split(':').map((h) => parseInt(h, 16)));
  const front = parts(head);
  const back = parts(tail);
  const groups = tail === undefined ? front : [...front, ...new Array<number>(8 - front.length - back.length).fill(0), ...back];
  const out = Buffer.alloc(16);
  groups.forEach((g, i) => out.writeUInt16BE(g, 2 * i));
  return out;
}
