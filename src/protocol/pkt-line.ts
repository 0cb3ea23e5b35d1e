// git's pkt-line framing (gitprotocol-common, pkt-line.c): four hex digits of length (the four
// included), then the data; 0000 is a flush, 0001 a delimiter and 0002 a response end (protocol
// v2). Every git conversation, fetch or push, v0 or v2, over any transport, is made of these.
import { Buffer } from 'node:buffer';
import type { Writable } from 'node:stream';
import { PackwrightError } from '../errors/packwright-error.js';

/** The longest packet, length digits included (git's LARGE_PACKET_MAX). */
export const LARGE_PACKET_MAX = 65520;
/** The longest packet data (git's LARGE_PACKET_DATA_MAX). */
export const LARGE_PACKET_DATA_MAX = LARGE_PACKET_MAX - 4;
/** The packet size of the old `side-band` capability (git's DEFAULT_PACKET_MAX). */
export const DEFAULT_PACKET_MAX = 1000;

/** The flush packet, `0000`. */
export const FLUSH_PACKET = Buffer.from('0000');
/** The delimiter packet of protocol v2, `0001`. */
export const DELIM_PACKET = Buffer.from('0001');
/** The response-end packet of protocol v2, `0002`. */
export const RESPONSE_END_PACKET = Buffer.from('0002');

/** One packet read: data (`line` is its text with a final "\n" taken off), a special packet, or the end of input. */
export type Packet = DataPacket | { kind: 'flush' | 'delim' | 'response-end' | 'eof' };

/**
 * A data packet. Its text is decoded only when asked for: a pack arrives as thousands of 64 KiB
 * packets that are never text (decoding them all took 1.3 s of a 4.4 s clone of 75 MB).
 */
export class DataPacket {
  readonly kind = 'data' as const;
  private text: string | undefined;

  constructor(readonly data: Buffer) {}

  get line(): string {
    if (this.text === undefined) {
      const d = this.data;
      this.text = d.toString('utf8', 0, d.length > 0 && d[d.length - 1] === 10 ? d.length - 1 : d.length);
    }
    return this.text;
  }
}

const FLUSH: Packet = { kind: 'flush' };
const DELIM: Packet = { kind: 'delim' };
const RESPONSE_END: Packet = { kind: 'response-end' };
const EOF: Packet = { kind: 'eof' };

/** `data` framed as one packet; more than LARGE_PACKET_DATA_MAX bytes is a bug of the caller. */
export function encodePacket(data: string | Uint8Array): Buffer {
  const body = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
  if (body.length > LARGE_PACKET_DATA_MAX) {
    throw new PackwrightError('INVALID_ARGUMENT', 'packet write failed - data exceeds max packet size');
  }
  const out = Buffer.allocUnsafe(4 + body.length);
  out.write((4 + body.length).toString(16).padStart(4, '0'), 0, 'latin1');
  out.set(body, 4);
  return out;
}

/** The value of four length digits, or -1 when one is not a hex digit (git's packet_length). */
export function packetLength(b: Uint8Array, at: number): number {
  let n = 0;
  for (let i = 0; i < 4; i++) {
    const c = b[at + i] as number;
    const v = c >= 48 && c <= 57 ? c - 48 : c >= 97 && c <= 102 ? c - 87 : c >= 65 && c <= 70 ? c - 55 : -1;
    if (v < 0) return -1;
    n = n * 16 + v;
  }
  return n;
}

/**
 * Reads packets from a byte stream (a socket, a pipe, a request body), asking it for more only
 * when a packet is incomplete, so a conversation can answer each message before the next
 * arrives. Errors are git's words (pkt-line.c): "protocol error: bad line length character: XXXX",
 * "protocol error: bad line length N". The end of the stream reads as `eof`, also inside a packet
 * (`truncated`), as git's reader takes it: a caller that expects more says "the remote end hung up
 * unexpectedly" (CONNECTION_CLOSED), one that takes an end as an answer ends.
 */
export class PacketReader {
  private buffer: Buffer = Buffer.alloc(0);
  private at = 0;
  private ended = false;
  private peeked: Packet | undefined;
  /** Whether the input ended inside a packet (then `eof` came early: git's "the remote end hung up unexpectedly" unless the caller takes an end as an answer). */
  truncated = false;
  private readonly source: AsyncIterator<Uint8Array>;
  /** Told each packet as it is read (GIT_TRACE_PACKET: packet-trace.ts), with `tracedAs`; not the end of input. */
  onPacket: ((packet: Packet, as: string | undefined) => void) | undefined;
  /** Who reads the packets, for their trace: `sideband` once a side-band demultiplexer does (git's name for it), else the conversation's own name. */
  tracedAs: string | undefined;

  constructor(source: AsyncIterable<Uint8Array>) {
    this.source = source[Symbol.asyncIterator]();
  }

  /** The next packet, left to be read again by `read`. */
  async peek(): Promise<Packet> {
    this.peeked ??= await this.next();
    return this.peeked;
  }

  /** The next packet: data, flush, delim, response-end, or eof at the end of input; PROTOCOL_ERROR for a bad length. */
  async read(): Promise<Packet> {
    const p = this.peeked ?? (await this.next());
    this.peeked = undefined;
    return p;
  }

  /**
   * The bytes after the last packet read, then the rest of the stream: a pack that follows the
   * commands of a push. The reader is not to be used after.
   */
  async *rest(): AsyncGenerator<Buffer> {
    if (this.peeked !== undefined) throw new PackwrightError('INVALID_ARGUMENT', 'PacketReader.rest after a peek');
    if (this.at < this.buffer.length) yield this.buffer.subarray(this.at);
    this.buffer = Buffer.alloc(0);
    this.at = 0;
    if (this.ended) return;
    for (;;) {
      const r = await this.source.next();
      if (r.done === true) return;
      yield Buffer.from(r.value.buffer, r.value.byteOffset, r.value.byteLength);
    }
  }

  /**
   * Waits until `n` bytes are buffered; false if the stream ends first. The chunks that make them
   * up are joined once, when enough have come: joining at each chunk copied a 64 KiB packet
   * arriving in 16 KiB chunks two and a half times (a clone's pack, every byte of it).
   */
  private async fill(n: number): Promise<boolean> {
    let have = this.buffer.length - this.at;
    if (have >= n) return true;
    const parts = have > 0 ? [this.buffer.subarray(this.at)] : [];
    while (have < n && !this.ended) {
      const r = await this.source.next();
      if (r.done === true) {
        this.ended = true;
        break;
      }
      parts.push(Buffer.from(r.value.buffer, r.value.byteOffset, r.value.byteLength));
      have += r.value.byteLength;
    }
    this.buffer = parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts, have);
    this.at = 0;
    return have >= n;
  }

  private async next(): Promise<Packet> {
    const p = await this.nextPacket();
    if (this.onPacket !== undefined && p.kind !== 'eof') this.onPacket(p, this.tracedAs);
    return p;
  }

  private async nextPacket(): Promise<Packet> {
    if (!(await this.fill(4))) {
      this.truncated = this.buffer.length > this.at;
      return EOF;
    }
    const len = packetLength(this.buffer, this.at);
    if (len < 0) {
      const text = this.buffer.toString('latin1', this.at, this.at + 4);
      throw new PackwrightError('PROTOCOL_ERROR', `protocol error: bad line length character: ${text}`);
    }
    if (len === 0 || len === 1 || len === 2) {
      this.at += 4;
      return len === 0 ? FLUSH : len === 1 ? DELIM : RESPONSE_END;
    }
    // git reads into a LARGE_PACKET_MAX buffer and needs room for a NUL after the data.
    if (len < 4 || len - 4 >= LARGE_PACKET_MAX) throw new PackwrightError('PROTOCOL_ERROR', `protocol error: bad line length ${len < 4 ? len : len - 4}`);
    if (!(await this.fill(len))) {
      this.truncated = true;
      return EOF;
    }
    // A view, not a copy: the buffer is never written to after it is filled (fill makes a new one).
    const data = this.buffer.subarray(this.at + 4, this.at + len);
    this.at += len;
    return new DataPacket(data);
  }
}

/** Where a conversation's bytes go; a promise holds the writer back until they are taken (backpressure). */
export type ByteSink = (chunk: Buffer) => void | Promise<void>;

/**
 * A sink writing to a node stream (a socket, an HTTP response): it waits while the stream's buffer
 * is full, and fails with `closedMessage` once the stream is closed, so a peer that went away
 * stops the writer.
 */
export function streamSink(stream: Writable, closedMessage: string): (chunk: Buffer) => Promise<void> {
  return (chunk) => new Promise((resolve, reject) => {
    if (stream.destroyed || stream.writableEnded) {
      reject(new Error(closedMessage));
      return;
    }
    if (stream.write(chunk)) resolve();
    else {
      const drained = (): void => {
        stream.off('close', closed);
        resolve();
      };
      const closed = (): void => {
        stream.off('drain', drained);
        reject(new Error(closedMessage));
      };
      stream.once('drain', drained);
      stream.once('close', closed);
    }
  });
}

/**
 * Like `streamSink`, but each write's promise settles only once the stream has written the chunk
 * (its write callback: for a socket, handed to the system), so the caller may reuse the buffer
 * then. For a stream that writes to the system (a socket, an HTTP response), not one that keeps
 * chunks for a reader (a PassThrough).
 */
export function writtenSink(stream: Writable, closedMessage: string): (chunk: Buffer) => Promise<void> {
  return (chunk) => new Promise((resolve, reject) => {
    if (stream.destroyed || stream.writableEnded) {
      reject(new Error(closedMessage));
      return;
    }
    // A stream closed with the write pending may never call it back (an HTTP response whose client left).
    const closed = (): void => reject(new Error(closedMessage));
    stream.once('close', closed);
    stream.write(chunk, (e) => {
      stream.off('close', closed);
      if (e === undefined || e === null) resolve();
      else reject(new Error(closedMessage, { cause: e }));
    });
  });
}

/**
 * Writes packets: each call frames one, and `send` hands what was framed since to the sink in one
 * piece (a conversation sends before it waits for the peer). With `sideband` (protocol v2's
 * sideband-all), data lines go on band 1 and errors on band 3.
 */
export class PacketWriter {
  private pending: Buffer[] = [];
  sideband = false;

  constructor(private readonly sink: ByteSink) {}

  /** One data packet: text (a line; "\n" is added when missing) or bytes as they are. */
  line(text: string): void {
    const body = text.endsWith('\n') ? text : `${text}\n`;
    this.pending.push(encodePacket(this.sideband ? `\u0001${body}` : body));
  }

  /** Queues one data packet (its length prefixed); more than 65516 bytes is INVALID_ARGUMENT. */
  data(bytes: Uint8Array): void {
    this.pending.push(encodePacket(bytes));
  }

  /** An error for the peer: "ERR <message>", or band 3 with sideband (git's packet_writer_error). */
  error(message: string): void {
    this.pending.push(encodePacket(this.sideband ? `\u0003${message}\n` : `ERR ${message}\n`));
  }

  /** Writes a flush packet (`0000`). */
  flush(): void {
    this.pending.push(FLUSH_PACKET);
  }

  /** Writes a delimiter packet (`0001`, protocol v2). */
  delim(): void {
    this.pending.push(DELIM_PACKET);
  }

  /** Writes a response-end packet (`0002`, protocol v2 over HTTP). */
  responseEnd(): void {
    this.pending.push(RESPONSE_END_PACKET);
  }

  /** Bytes already framed (side-band data), after what is pending. */
  raw(bytes: Buffer): void {
    this.pending.push(bytes);
  }

  /** Hands everything written so far to the sink. */
  async send(): Promise<void> {
    if (this.pending.length === 0) return;
    const out = this.pending.length === 1 ? (this.pending[0] as Buffer) : Buffer.concat(this.pending);
    this.pending = [];
    await this.sink(out);
  }
}
