/**
 * The other end of `spawn-client.ts`: a small process that runs the commands a test process asks
 * for, one at a time, over two FIFOs (requests in, results out), and exits when the test process
 * closes its end. Run as `node spawn-server.js <requests> <results>`.
 *
 * It exists because fork() costs in proportion to the forking process: Node spawns by fork and
 * exec, and a test process that holds a few hundred MB paid ~20 ms a spawn against ~8 ms from
 * here, plus a copy-on-write fault afterwards on every page it wrote again.
 */
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { closeSync, openSync, readSync, writeSync } from 'node:fs';

/** What the test process asks: the argument vector, where and with what. */
export interface SpawnRequest {
  file: string;
  args: string[];
  cwd?: string | undefined;
  env?: Record<string, string | undefined> | undefined;
}

/** How a command ended; the output travels beside it. */
export interface SpawnResult {
  status: number | null;
  signal: string | null;
  /** The spawn's own failure (ENOENT of the program or of cwd), as `code: message`. */
  error?: { code: string; message: string };
}

/** Reads exactly `n` bytes; undefined at end of file before the first byte. */
export function readExactly(fd: number, n: number): Buffer | undefined {
  const out = Buffer.allocUnsafe(n);
  let at = 0;
  while (at < n) {
    const got = readSync(fd, out, at, n - at, null);
    if (got === 0) {
      if (at === 0) return undefined;
      throw new Error(`spawn channel: end of file after ${at} of ${n} bytes`);
    }
    at += got;
  }
  return out;
}

export function writeAll(fd: number, data: Uint8Array): void {
  for (let at = 0; at < data.length;) at += writeSync(fd, data, at, data.length - at);
}

/** A length-prefixed frame. */
export function frame(data: Uint8Array): Buffer {
  const head = Buffer.allocUnsafe(4);
  head.writeUInt32LE(data.length);
  return Buffer.concat([head, data]);
}

export function readFrame(fd: number): Buffer | undefined {
  const head = readExactly(fd, 4);
  if (head === undefined) return undefined;
  return readExactly(fd, head.readUInt32LE()) ?? Buffer.alloc(0);
}

/** Runs a request here, to completion, with piped stdio (the server's work, and the client's when it spawns directly). */
export function runRequest(req: SpawnRequest, input: Buffer): SpawnSyncReturns<Buffer> {
  return spawnSync(req.file, req.args, { cwd: req.cwd, env: req.env, input, maxBuffer: 2 ** 31, stdio: ['pipe', 'pipe', 'pipe'] });
}

function serve(requestPath: string, resultPath: string): void {
  // The same order as the client's: requests first, so neither waits on the other.
  const requests = openSync(requestPath, 'r');
  const results = openSync(resultPath, 'w');
  for (;;) {
    const head = readFrame(requests);
    if (head === undefined) break;
    const input = readFrame(requests) ?? Buffer.alloc(0);
    const r = runRequest(JSON.parse(head.toString()) as SpawnRequest, input);
    const error = r.error as NodeJS.ErrnoException | undefined;
    const result: SpawnResult = { status: r.status, signal: r.signal, ...(error !== undefined ? { error: { code: error.code ?? 'ERROR', message: error.message } } : {}) };
    writeAll(results, Buffer.concat([frame(Buffer.from(JSON.stringify(result))), frame(r.stdout ?? Buffer.alloc(0)), frame(r.stderr ?? Buffer.alloc(0))]));
  }
  closeSync(results);
  closeSync(requests);
}

if (process.argv[1] !== undefined && process.argv[1].endsWith('spawn-server.js')) serve(process.argv[2] as string, process.argv[3] as string);
