/**
 * `spawnSync` for the tests' thousands of git commands, run by a small resident process
 * (`spawn-server.ts`) instead of by forking the test process: on a 2-core VM, forking a test
 * process of a few hundred MB cost ~20 ms per command and a copy-on-write fault afterwards on
 * each page it wrote again, a third of the suite's time. The calls stay synchronous: the request
 * and the result go through two FIFOs with blocking reads.
 *
 * Set PACKWRIGHT_TEST_DIRECT_SPAWN=1 to spawn from the test process as before (or where mkfifo
 * is missing, which is what happens then too).
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, openSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { frame, readFrame, runRequest, writeAll, type SpawnRequest, type SpawnResult } from './spawn-server.js';

export interface SyncOutcome {
  status: number | null;
  signal: NodeJS.Signals | null;
  stdout: Buffer;
  stderr: Buffer;
  error?: Error | undefined;
}

export interface SyncOptions {
  cwd?: string | undefined;
  env?: Record<string, string | undefined> | undefined;
  input?: Buffer | string | undefined;
}

let channel: { requests: number; results: number } | null | undefined;

function open(): { requests: number; results: number } | null {
  if (process.env.PACKWRIGHT_TEST_DIRECT_SPAWN === '1') return null;
  const dir = mkdtempSync(join(tmpdir(), 'packwright-spawn-'));
  const requestPath = join(dir, 'requests');
  const resultPath = join(dir, 'results');
  try {
    execFileSync('mkfifo', [requestPath, resultPath], { stdio: 'ignore' });
  } catch {
    rmSync(dir, { recursive: true, force: true });
    return null;
  }
  const server = spawn(process.execPath, [new URL('./spawn-server.js', import.meta.url).pathname, requestPath, resultPath], { stdio: ['ignore', 'ignore', 'inherit'] });
  server.unref();
  // Opening a FIFO waits for its other end; the server opens its ends in the same order. When this
  // process exits, the server reads end of file and exits too.
  const requests = openSync(requestPath, 'w');
  const results = openSync(resultPath, 'r');
  rmSync(dir, { recursive: true, force: true });
  return { requests, results };
}

/** Runs `file` with `args` to completion, as `spawnSync` with piped stdio would. */
export function runSync(file: string, args: string[], options: SyncOptions = {}): SyncOutcome {
  if (channel === undefined) channel = open();
  const input = options.input === undefined ? Buffer.alloc(0) : Buffer.from(options.input);
  if (channel === null) {
    const r = runRequest({ file, args, cwd: options.cwd, env: options.env }, input);
    return { status: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr, error: r.error };
  }
  const request: SpawnRequest = { file, args, cwd: options.cwd, env: options.env ?? process.env };
  writeAll(channel.requests, Buffer.concat([frame(Buffer.from(JSON.stringify(request))), frame(input)]));
  const head = readFrame(channel.results);
  const stdout = readFrame(channel.results);
  const stderr = readFrame(channel.results);
  if (head === undefined || stdout === undefined || stderr === undefined) throw new Error(`spawn server: no answer for ${file} ${args.join(' ')} (it exited)`);
  const result = JSON.parse(head.toString()) as SpawnResult;
  let error: Error | undefined;
  if (result.error !== undefined) error = Object.assign(new Error(result.error.message), { code: result.error.code });
  return { status: result.status, signal: result.signal as NodeJS.Signals | null, stdout, stderr, error };
}

/**
 * `execFileSync` with piped stdio: the output, or a throw carrying `status`, `signal`, `stdout`
 * and `stderr` as execFileSync's error does.
 */
export function execSync(file: string, args: string[], options: SyncOptions = {}): Buffer {
  const r = runSync(file, args, options);
  if (r.error !== undefined) throw r.error;
  if (r.status !== 0) {
    const text = r.stderr.toString();
    throw Object.assign(new Error(`Command failed: ${file} ${args.join(' ')}\n${text}`), { status: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr });
  }
  return r.stdout;
}

/** What `spawnGit` and `execGit` take: `runSync`'s options, and those of spawnSync's that mean the same here. */
export interface GitOptions extends SyncOptions {
  encoding?: 'utf8';
  /** Piped is all there is; accepted so calls read as spawnSync's do. */
  stdio?: 'pipe' | ['pipe', 'pipe', 'pipe'];
  /** Output is not limited here. */
  maxBuffer?: number;
}

/** `spawnSync('git', args, options)`, run by the spawn server. */
export function spawnGit(args: string[], options: GitOptions & { encoding: 'utf8' }): { status: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string; error?: Error | undefined };
export function spawnGit(args: string[], options?: GitOptions): SyncOutcome;
export function spawnGit(args: string[], options: GitOptions = {}): SyncOutcome | { status: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string; error?: Error | undefined } {
  const r = runSync('git', args, options);
  return options.encoding === 'utf8' ? { ...r, stdout: r.stdout.toString(), stderr: r.stderr.toString() } : r;
}

/** `execFileSync('git', args, options)`, run by the spawn server. */
export function execGit(args: string[], options: GitOptions & { encoding: 'utf8' }): string;
export function execGit(args: string[], options?: GitOptions): Buffer;
export function execGit(args: string[], options: GitOptions = {}): Buffer | string {
  const out = execSync('git', args, options);
  return options.encoding === 'utf8' ? out.toString() : out;
}
