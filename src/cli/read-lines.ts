import { readSync } from 'node:fs';

/**
 * Reads lines from a file descriptor synchronously and calls `onLine` for each (without the line
 * end; a trailing "\r" is dropped; with `nulTerminated`, records end in NUL instead), then `onChunk` after each read's lines: callers flush output
 * there, so a caller that writes one line and waits for the answer (git's --batch protocol) gets
 * it. ~10× faster than async readline over a quarter of a million lines.
 */
export function readLines(fd: number, onLine: (line: string) => void, onChunk: () => void, nulTerminated = false): void {
  const buf = Buffer.allocUnsafe(1 << 16);
  const sleeper = new Int32Array(new SharedArrayBuffer(4));
  let pending = '';
  for (;;) {
    let n: number;
    try {
      n = readSync(fd, buf, 0, buf.length, null);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'EAGAIN') {
        Atomics.wait(sleeper, 0, 0, 1);
        continue;
      }
      if (code === 'EOF') n = 0;
      else throw e;
    }
    if (n === 0) break;
    const text = pending + buf.toString('utf8', 0, n);
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
  if (pending !== '') onLine(!nulTerminated && pending.endsWith('\r') ? pending.slice(0, -1) : pending);
  onChunk();
}
