import { StringDecoder } from 'node:string_decoder';
import type { CommandInput } from './command-io.js';

/**
 * Reads lines from a command's input synchronously and calls `onLine` for each (without the line
 * end; a trailing "\r" is dropped; with `nulTerminated`, records end in NUL instead), then `onChunk` after each read's lines: callers flush output
 * there, so a caller that writes one line and waits for the answer (git's --batch protocol) gets
 * it. ~10× faster than async readline over a quarter of a million lines.
 */
export function readLines(input: CommandInput, onLine: (line: string) => void, onChunk: () => void, nulTerminated = false): void {
  const buf = Buffer.allocUnsafe(1 << 16);
  // A character split between two reads is decoded whole.
  const decoder = new StringDecoder('utf8');
  let pending = '';
  for (;;) {
    const n = input.readSync(buf);
    if (n === 0) break;
    const text = pending + decoder.write(buf.subarray(0, n));
    let start = 0;
    // With -z, records end in NUL and a CR is part of them (git's strbuf_getline_nul).
    const terminator = nulTerminated ? '\0' : '\n';
    for (let nl = text.indexOf(terminator); nl >= 0; nl = text.indexOf(terminator, start)) {
      const end = !nulTerminated && nl > start && text.charCodeAt(nl - 1) === 13 ? nl - 1 : nl;
      onLine(text.slice(start, end));
      start = nl + 1;
    }
    pending = text.slice(start);
    onChunk();
  }
  pending += decoder.end();
  if (pending !== '') onLine(!nulTerminated && pending.endsWith('\r') ? pending.slice(0, -1) : pending);
  onChunk();
}

/** The whole input, read synchronously to its end. */
export function readAll(input: CommandInput): Buffer {
  const chunks: Buffer[] = [];
  for (;;) {
    const buf = Buffer.allocUnsafe(1 << 16);
    const n = input.readSync(buf);
    if (n === 0) return Buffer.concat(chunks);
    chunks.push(buf.subarray(0, n));
  }
}
