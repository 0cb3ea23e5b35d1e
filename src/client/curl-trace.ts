// git's GIT_TRACE_CURL (http.c curl_trace, curl_dump_header, curl_dump_data): the headers of each
// request and answer, and the bytes of their bodies, as git writes what curl shows it. A header
// block sent is one `=> Send header, <n> bytes (0x<n>)` line and a line per header; an answer's
// headers come one by one, as curl reads them. Authorization, Proxy-Authorization and the values
// of Cookie are redacted unless GIT_TRACE_REDACT=0. GIT_CURL_VERBOSE sends the same to stderr
// without the bodies, as does GIT_TRACE_CURL_NO_DATA for GIT_TRACE_CURL. curl's own `== Info:`
// lines (connections, TLS) have no counterpart here.
import { closeSync, writeSync } from 'node:fs';
import { tracePrefix, traceTarget } from '../protocol/packet-trace.js';

/** What an HTTP client shows the trace. */
export interface CurlTrace {
  /** The request's header block as sent (request line, headers, the blank line), CRLF-separated. */
  headerOut(block: string): void;
  /** The answer's status line and headers, as Node's `rawHeaders` gives them (name, value, ...). */
  headerIn(statusLine: string, rawHeaders: readonly string[]): void;
  dataOut(bytes: Uint8Array): void;
  dataIn(bytes: Uint8Array): void;
  /** Lets the target go (a file opened for the trace is closed). */
  close(): void;
}

/** The trace `env` asks for (GIT_TRACE_CURL, else GIT_CURL_VERBOSE), or undefined. */
export function curlTrace(env: Readonly<Record<string, string | undefined>>): CurlTrace | undefined {
  const verbose = env['GIT_CURL_VERBOSE'] !== undefined;
  const target = verbose ? { fd: 2, owned: false } : traceTarget(env['GIT_TRACE_CURL']);
  if (target === undefined) return undefined;
  const data = !verbose && env['GIT_TRACE_CURL_NO_DATA'] === undefined;
  const redact = !/^(0|false|no|off)$/i.test(env['GIT_TRACE_REDACT'] ?? '1');
  const bare = /^(1|true|yes|on)$/i.test(env['GIT_TRACE_BARE'] ?? '');
  const write = (where: string, text: string): void => {
    try {
      writeSync(target.fd, `${bare ? '' : tracePrefix(where)}${text}\n`);
    } catch {
      // A trace that cannot be written is not the request's failure.
    }
  };
  /** The line before each dump: `<text>, <n> bytes (0x<n>)`, as git's `%10.10ld` and `%8.8lx`. */
  const size = (where: string, text: string, n: number): void => write(where, `${text}, ${String(n).padStart(10, '0')} bytes (0x${n.toString(16).padStart(8, '0')})`);
  /** curl_dump_header: the count, then each line (split at LF, trailing blanks trimmed). */
  const header = (text: string, block: string, filter: boolean): void => {
    size('http.c:672', text, Buffer.byteLength(block, 'latin1'));
    const lines = block.split(/(?<=\n)/);
    for (const line of lines) write('http.c:684', `${text}: ${filter && redact ? redactHeader(line) : line}`.replace(/\s+$/, ''));
  };
  /** curl_dump_data: the count, then lines of 60 bytes, anything outside printable ASCII as a dot. */
  const dump = (text: string, bytes: Uint8Array): void => {
    if (!data || bytes.length === 0) return;
    size('http.c:698', text, bytes.length);
    for (let i = 0; i < bytes.length; i += 60) {
      let out = '';
      for (let w = 0; w < 60 && i + w < bytes.length; w++) {
        const c = bytes[i + w] as number;
        out += c >= 0x20 && c < 0x80 ? String.fromCharCode(c) : '.';
      }
      write('http.c:713', `${text}: ${out}`);
    }
  };
  return {
    headerOut: (block) => header('=> Send header', block, true),
    headerIn: (statusLine, raw) => {
      // curl shows an answer's headers as it reads them: one at a time, the blank line last.
      header('<= Recv header', `${statusLine}\r\n`, false);
      for (let i = 0; i + 1 < raw.length; i += 2) header('<= Recv header', `${raw[i] as string}: ${raw[i + 1] as string}\r\n`, false);
      header('<= Recv header', '\r\n', false);
    },
    dataOut: (bytes) => dump('=> Send data', bytes),
    dataIn: (bytes) => dump('<= Recv data', bytes),
    close: () => {
      if (target.owned) closeSync(target.fd);
    },
  };
}

/**
 * git's redact_sensitive_header: of Authorization and Proxy-Authorization the scheme is kept and
 * the rest `<redacted>`; of Cookie each value.
 */
export function redactHeader(line: string): string {
  const auth = /^((?:proxy-)?authorization:\s*\S*)/i.exec(line);
  if (auth !== null) return `${auth[1] as string} <redacted>`;
  const cookie = /^(cookie:\s*)/i.exec(line);
  if (cookie === null) return line;
  const values = line.slice((cookie[1] as string).length).replace(/\r?\n$/, '');
  return `${cookie[1] as string}${values.split('; ').map((c) => `${c.slice(0, c.includes('=') ? c.indexOf('=') : c.length)}=<redacted>`).join('; ')}`;
}
