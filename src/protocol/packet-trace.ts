// git's GIT_TRACE_PACKET (pkt-line.c packet_trace): each packet a conversation sends or receives,
// one line each, `packet: <identity>> <text>` for sent and `<` for received, after git's trace
// prefix (the time, and `pkt-line.c:<line>` padded to 40 columns; none under GIT_TRACE_BARE).
// Bytes outside printable ASCII are written as octal escapes, newlines dropped; a pack's data is
// shown once as `PACK ...`. The target is read as git reads GIT_TRACE's: `1`, `2` or `true` for
// stderr, a descriptor 3-9, or an absolute path appended to.
import { closeSync, openSync, writeSync } from 'node:fs';
import { packetLength } from './pkt-line.js';

/** What a packet was: its payload, or one of the special packets (written as git writes them: `0000`, `0001`, `0002`). */
export type TracedPacket = Uint8Array | 'flush' | 'delim' | 'response-end';

/** Traces one packet, sent (`>`) or received (`<`), as `identity`'s when given (git's `sideband` for what its demultiplexer reads). */
export interface PacketTrace {
  (packet: TracedPacket, sent: boolean, identity?: string): void;
  /** Names the packets traced from now on as `identity`'s (git's fetch-pack or send-pack over HTTP v0). */
  identify(identity: string): void;
  /** Lets the target go (a file opened for the trace is closed). */
  close(): void;
}

const SPECIAL: Record<Exclude<TracedPacket, Uint8Array>, string> = { flush: '0000', delim: '0001', 'response-end': '0002' };

/**
 * The tracer GIT_TRACE_PACKET in `env` asks for, naming packets as `identity`'s (git's
 * packet_trace_identity: `fetch`, `clone`, `push`, `ls-remote`); undefined when it asks for none.
 */
export function packetTrace(env: Readonly<Record<string, string | undefined>>, identity: string): PacketTrace | undefined {
  const target = traceTarget(env['GIT_TRACE_PACKET']);
  if (target === undefined) return undefined;
  const bare = /^(1|true|yes|on)$/i.test(env['GIT_TRACE_BARE'] ?? '');
  // git's in_pack and sideband (static in packet_trace): once a pack starts, its data is not shown.
  let inPack = false;
  let sideband = false;
  let current = identity;
  const trace = ((packet: TracedPacket, sent: boolean, as = current): void => {
    let text: string;
    if (typeof packet === 'string') text = SPECIAL[packet];
    else {
      if (inPack) {
        // Only band 1 of a side-banded pack is pack data; progress and errors are still shown.
        if (!sideband || packet[0] === 1) return;
      } else if (startsWithPack(packet, 0) || (packet[0] === 1 && startsWithPack(packet, 1))) {
        inPack = true;
        sideband = packet[0] === 1;
        packet = Buffer.from('PACK ...');
      }
      text = escape(packet);
    }
    const line = `${bare ? '' : tracePrefix('pkt-line.c:80')}packet: ${as.padStart(12)}${sent ? '>' : '<'} ${text}\n`;
    try {
      writeSync(target.fd, line);
    } catch {
      // A trace that cannot be written is not the conversation's failure.
    }
  }) as PacketTrace;
  trace.identify = (name: string) => {
    current = name;
  };
  trace.close = () => {
    if (target.owned) closeSync(target.fd);
  };
  return trace;
}

/**
 * Traces the packets of a request's bytes as they are sent: pkt-lines, up to a pack that follows
 * them unframed (a push's, which git's pack-objects writes past the trace). `carry` holds a
 * packet cut between chunks.
 */
export function tracePacketsSent(trace: PacketTrace): (chunk: Uint8Array) => void {
  let carry: Uint8Array = new Uint8Array(0);
  let done = false;
  return (chunk) => {
    if (done) return;
    let bytes = carry.length > 0 ? Buffer.concat([carry, chunk]) : chunk;
    let at = 0;
    while (at + 4 <= bytes.length) {
      if (startsWithPack(bytes, at)) {
        done = true;
        return;
      }
      const len = packetLength(bytes, at);
      if (len < 0) {
        done = true;
        return;
      }
      if (len < 4) {
        trace(len === 0 ? 'flush' : len === 1 ? 'delim' : 'response-end', true);
        at += 4;
        continue;
      }
      if (at + len > bytes.length) break;
      trace(bytes.subarray(at + 4, at + len), true);
      at += len;
    }
    bytes = bytes.subarray(at);
    carry = bytes.length > 0 ? Uint8Array.from(bytes) : new Uint8Array(0);
  };
}

function startsWithPack(b: Uint8Array, at: number): boolean {
  return b[at] === 0x50 && b[at + 1] === 0x41 && b[at + 2] === 0x43 && b[at + 3] === 0x4b;
}

/** git's rendering: printable ASCII as it is, newlines dropped, anything else `\<octal>`. */
function escape(bytes: Uint8Array): string {
  let out = '';
  for (const c of bytes) {
    if (c === 0x0a) continue;
    out += c >= 0x20 && c <= 0x7e ? String.fromCharCode(c) : `\\${c.toString(8)}`;
  }
  return out;
}

/** Where GIT_TRACE-style `value` sends a trace (git's get_trace_fd), or undefined for none. */
/**
 * git's trace prefix (trace.c prepare_trace_line): the local time to the microsecond and the
 * source location, padded to 40 columns.
 */
export function tracePrefix(where: string): string {
  const now = new Date();
  const micros = String(Math.floor((performance.timeOrigin + performance.now()) * 1000) % 1_000_000).padStart(6, '0');
  return `${[now.getHours(), now.getMinutes(), now.getSeconds()].map((n) => String(n).padStart(2, '0')).join(':')}.${micros} ${where}`.padEnd(40);
}

/** Where a GIT_TRACE-style variable sends its lines (see the top of this file); undefined: nowhere. */
export function traceTarget(value: string | undefined): { fd: number; owned: boolean } | undefined {
  if (value === undefined || value === '' || /^(0|false|no|off)$/i.test(value)) return undefined;
  if (/^(1|2|true|yes|on)$/i.test(value)) return { fd: 2, owned: false };
  if (/^[3-9]$/.test(value)) return { fd: Number(value), owned: false };
  if (!value.startsWith('/')) return undefined;
  try {
    return { fd: openSync(value, 'a'), owned: true };
  } catch {
    return undefined;
  }
}
