/**
 * `spawnSync` for the tests' thousands of git commands, run by a small resident shell instead of
 * by the test process.
 *
 * Why a shell: Node spawns by fork() and then sets up a loop of its own for a synchronous child,
 * and on this project's 2-core VM (a page fault costs ~15 µs) that made `spawnSync('/bin/true')`
 * take 7.5 ms where a shell takes 3.8. A test process of a few hundred MB paid ~20 ms a spawn, and
 * a copy-on-write fault afterwards on every page it wrote again; a resident Node server brought
 * that to ~8.4 ms (git --version: 11.9); `sh` brings it to ~5.4 (git --version: 8.5), over a
 * suite of ~10,000 git commands. Measured with 300 calls each.
 *
 * How: the shell reads a request's name from a FIFO, runs `r.sh` in a subshell with `r.in` piped
 * to its stdin and `r.out`, `r.err` as stdout and stderr (files in a directory of its own under TMPDIR,
 * which npm test puts on tmpfs), and writes the exit status back through a second FIFO. The calls
 * stay synchronous: blocking reads on the FIFO. The script changes directory, sets the environment
 * the request differs from the shell's in, and execs the program.
 *
 * Most requests are git whose environment only adds to the shell's: `r.git` runs those as one
 * simple command in the shell itself, `NAME=value git -C <cwd> <args>`, which forks once and leaves
 * the shell as it was, without the subshell (dash: 3.8 ms a `git --version` against 5.1, 300 calls
 * each; the suite runs ~9,000 such), and with input from `r.in` as a file, without a `cat`.
 *
 * Set PACKWRIGHT_TEST_DIRECT_SPAWN=1 to spawn from the test process (also what happens where
 * mkfifo is missing, or for an environment a shell cannot express).
 *
 * `execFileAsync` does the same for the commands a test awaits while it serves them in-process (a
 * git push to a receive-pack running here): a second shell runs each request in the background
 * and writes `<name> <status>` back, which this process reads from the FIFO as a socket. A fork
 * of the test process costs it 15-20 ms of page-table copying (a few hundred MB mapped); one of
 * the shell, under one.
 */
import { execFileSync, spawn, spawnSync, execFile } from 'node:child_process';
import { constants, mkdtempSync, openSync, readFileSync, readSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

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

interface Channel {
  dir: string;
  requests: number;
  results: number;
  /** The shell's environment, which each request's is set against. */
  env: Record<string, string | undefined>;
}

let channel: Channel | null | undefined;

/**
 * The server: one request at a time, each in a subshell (so its `cd`, variables and `exec` leave
 * the server as it was), its status written back. Status 200 is the script's own: the directory
 * could not be entered.
 */
const SERVER = [
  'exec 3<"$1/requests" 4>"$1/results"',
  'while IFS= read -r r <&3; do',
  // Input through a pipe, as spawnSync gives it: git's index-pack --stdin, for one, treats a file on
  // its stdin otherwise. None is /dev/null, which reads as an empty pipe does.
  '  case $r in',
  '  *.git) . "$1/r.git" </dev/null >"$1/r.out" 2>"$1/r.err" ;;',
  '  *.git-in) . "$1/r.git" <"$1/r.in" >"$1/r.out" 2>"$1/r.err" ;;',
  '  *) if [ -s "$1/$r.in" ]; then cat "$1/$r.in" | ( . "$1/$r.sh" ) >"$1/$r.out" 2>"$1/$r.err"; else ( . "$1/$r.sh" ) </dev/null >"$1/$r.out" 2>"$1/$r.err"; fi ;;',
  '  esac',
  '  echo $? >&4',
  'done',
].join('\n');
/**
 * git commands whose input comes through a pipe, as spawnSync gives it: given a file, git's
 * index-pack --stdin checks that the pack ends where the file does ("pack has junk at the end");
 * unpack-objects, the other reader of packs, is kept on a pipe as git's own callers give it one.
 * The others read a file as they read a pipe.
 */
const PIPED_INPUT = new Set(['index-pack', 'unpack-objects']);
/** The script's status when `cd` fails (spawnSync's ENOENT for a missing cwd). */
const NO_CWD = 200;
/** Exit statuses above 128 that are a signal's: a shell reports a child killed by signal n as 128 + n. */
const SIGNALS: Record<number, NodeJS.Signals> = { 4: 'SIGILL', 6: 'SIGABRT', 7: 'SIGBUS', 8: 'SIGFPE', 9: 'SIGKILL', 11: 'SIGSEGV', 13: 'SIGPIPE', 15: 'SIGTERM' };

/**
 * A directory of its own under TMPDIR holding the FIFOs `requests` and `results`, removed when
 * this process exits; null where spawns are to be direct (PACKWRIGHT_TEST_DIRECT_SPAWN=1, or no mkfifo).
 */
function fifoDir(prefix: string): string | null {
  if (process.env.PACKWRIGHT_TEST_DIRECT_SPAWN === '1') return null;
  const dir = mkdtempSync(join(tmpdir(), prefix));
  try {
    execFileSync('mkfifo', [join(dir, 'requests'), join(dir, 'results')], { stdio: 'ignore' });
  } catch {
    rmSync(dir, { recursive: true, force: true });
    return null;
  }
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function open(): Channel | null {
  const dir = fifoDir('packwright-spawn-');
  if (dir === null) return null;
  const server = spawn('/bin/sh', ['-c', SERVER, 'spawn-server', dir], { stdio: ['ignore', 'ignore', 'inherit'] });
  server.unref();
  // Opening a FIFO waits for its other end; the server opens its ends in the same order. When this
  // process exits, the server reads end of file and exits too.
  const requests = openSync(join(dir, 'requests'), 'w');
  const results = openSync(join(dir, 'results'), 'r');
  return { dir, requests, results, env: { ...process.env } };
}

/** `s` as one word of a shell command. */
function quote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** How `env` differs from the shell's: variables to set (`NAME='value'`) and names to unset. */
interface EnvironmentChange {
  assignments: string[];
  unsets: string[];
}

/** What turns the shell's environment into `env`; undefined if a name cannot be a shell variable. */
function environment(server: Record<string, string | undefined>, env: Record<string, string | undefined>): EnvironmentChange | undefined {
  const change: EnvironmentChange = { assignments: [], unsets: [] };
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined || server[name] === value) continue;
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) return undefined;
    change.assignments.push(`${name}=${quote(value)}`);
  }
  for (const [name, value] of Object.entries(server)) {
    if (value === undefined || env[name] !== undefined) continue;
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) return undefined;
    change.unsets.push(name);
  }
  return change;
}

/** A request run in a subshell: into `cwd` (status NO_CWD if it cannot), the environment changed, then `file` exec'd. */
function subshellScript(cwd: string, env: EnvironmentChange, file: string, args: string[]): string {
  return [`cd ${quote(cwd)} || exit ${NO_CWD}`, ...env.assignments.map((a) => `export ${a}`), ...env.unsets.map((n) => `unset ${n}`), `exec ${[file, ...args].map(quote).join(' ')}`, ''].join('\n');
}

/** spawnSync with piped stdio, from this process. */
function direct(file: string, args: string[], options: SyncOptions, input: Buffer): SyncOutcome {
  const r = spawnSync(file, args, { cwd: options.cwd, env: options.env, input, maxBuffer: 2 ** 31, stdio: ['pipe', 'pipe', 'pipe'] });
  return { status: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr, error: r.error };
}

/** The status line the server writes after a request. */
function readStatus(fd: number): number {
  const byte = Buffer.alloc(1);
  let text = '';
  for (;;) {
    if (readSync(fd, byte, 0, 1, null) === 0) throw new Error('spawn server: it exited before answering');
    if (byte[0] === 0x0a) return Number(text);
    text += String.fromCharCode(byte[0] as number);
  }
}

/** Runs `file` with `args` to completion, as `spawnSync` with piped stdio would. */
export function runSync(file: string, args: string[], options: SyncOptions = {}): SyncOutcome {
  if (channel === undefined) channel = open();
  const input = options.input === undefined ? Buffer.alloc(0) : Buffer.from(options.input);
  const env = channel === null ? undefined : environment(channel.env, options.env ?? process.env);
  if (channel === null || env === undefined) return direct(file, args, options, input);
  const { dir } = channel;
  const cwd = options.cwd ?? process.cwd();
  // Assignments before a simple command set variables for it alone; unsetting one takes a subshell.
  if (file === 'git' && env.unsets.length === 0 && (input.length === 0 || !args.some((a) => PIPED_INPUT.has(a)))) {
    // Run by the shell itself (see above): `return` leaves the sourced script with the status.
    writeFileSync(join(dir, 'r.git'), `if [ -d ${quote(cwd)} ]; then ${[...env.assignments, 'git', '-C', quote(cwd), ...args.map(quote)].join(' ')}; else return ${NO_CWD}; fi\n`);
    if (input.length > 0) writeFileSync(join(dir, 'r.in'), input);
    writeSync(channel.requests, input.length > 0 ? 'r.git-in\n' : 'r.git\n');
  } else {
    writeFileSync(join(dir, 'r.sh'), subshellScript(cwd, env, file, args));
    writeFileSync(join(dir, 'r.in'), input);
    writeSync(channel.requests, 'r\n');
  }
  const status = readStatus(channel.results);
  const stdout = readFileSync(join(dir, 'r.out'));
  const stderr = readFileSync(join(dir, 'r.err'));
  if (status === NO_CWD) return { status: null, signal: null, stdout, stderr, error: Object.assign(new Error(`spawnSync ${file} ENOENT`), { code: 'ENOENT' }) };
  // The shell's "exec: <file>: not found" (127): spawnSync's ENOENT for a missing program.
  if (status === 127 && stdout.length === 0 && /not found/.test(stderr.toString())) return { status: null, signal: null, stdout, stderr: Buffer.alloc(0), error: Object.assign(new Error(`spawnSync ${file} ENOENT`), { code: 'ENOENT' }) };
  const signal = status > 128 ? SIGNALS[status - 128] : undefined;
  return signal !== undefined ? { status: null, signal, stdout, stderr } : { status, signal: null, stdout, stderr };
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

interface AsyncChannel {
  dir: string;
  requests: number;
  env: Record<string, string | undefined>;
  next: number;
  waiting: Map<string, (status: number) => void>;
  results: Socket;
}

let asyncChannel: AsyncChannel | null | undefined;

/** The background server: each request in a subshell of its own, its status written back by name. */
const ASYNC_SERVER = [
  'exec 3<"$1/requests" 4>"$1/results"',
  'while IFS= read -r r <&3; do',
  '  { ( . "$1/$r.sh" ) </dev/null >"$1/$r.out" 2>"$1/$r.err"; echo "$r $?" >&4; } &',
  'done',
].join('\n');

function openAsync(): AsyncChannel | null {
  const dir = fifoDir('packwright-spawn-async-');
  if (dir === null) return null;
  // Read and write, so the FIFO neither blocks this open nor reads end of file before the server
  // opens its end; non-blocking, so the event loop polls it as a pipe.
  const resultsFd = openSync(join(dir, 'results'), constants.O_RDWR | constants.O_NONBLOCK);
  const server = spawn('/bin/sh', ['-c', ASYNC_SERVER, 'spawn-async-server', dir], { stdio: ['ignore', 'ignore', 'inherit'] });
  server.unref();
  const requests = openSync(join(dir, 'requests'), 'w');
  const results = new Socket({ fd: resultsFd, readable: true, writable: false });
  const channel: AsyncChannel = { dir, requests, env: { ...process.env }, next: 0, waiting: new Map(), results };
  let pending = '';
  results.setEncoding('utf8');
  results.on('data', (text: string) => {
    pending += text;
    for (let eol = pending.indexOf('\n'); eol >= 0; eol = pending.indexOf('\n')) {
      const [name, status] = pending.slice(0, eol).split(' ') as [string, string];
      pending = pending.slice(eol + 1);
      const done = channel.waiting.get(name);
      channel.waiting.delete(name);
      if (channel.waiting.size === 0) results.unref();
      done?.(Number(status));
    }
  });
  results.unref();
  return channel;
}

/** What `execFileAsync` resolves to, or carries in its error (with `code`, the exit status). */
export interface AsyncOutcome {
  stdout: string;
  stderr: string;
}

/**
 * `promisify(execFile)(file, args, options)` with utf8 output, run by the background spawn server:
 * resolves to the output, or rejects with an Error carrying `code` (the exit status), `signal`,
 * `stdout` and `stderr`, as execFile's does.
 */
export async function execFileAsync(file: string, args: string[], options: { cwd?: string | undefined; env?: Record<string, string | undefined> | undefined; maxBuffer?: number } = {}): Promise<AsyncOutcome> {
  if (asyncChannel === undefined) asyncChannel = openAsync();
  const channel = asyncChannel;
  const env = channel === null ? undefined : environment(channel.env, options.env ?? process.env);
  if (channel === null || env === undefined) {
    return await new Promise((resolve, reject) => {
      execFile(file, args, { cwd: options.cwd, env: options.env, maxBuffer: options.maxBuffer ?? 2 ** 31, encoding: 'utf8' }, (error, stdout, stderr) => {
        if (error !== null) reject(Object.assign(error, { stdout, stderr }));
        else resolve({ stdout, stderr });
      });
    });
  }
  const name = `a${channel.next++}`;
  const cwd = options.cwd ?? process.cwd();
  writeFileSync(join(channel.dir, `${name}.sh`), subshellScript(cwd, env, file, args));
  const status = await new Promise<number>((resolve) => {
    channel.waiting.set(name, resolve);
    channel.results.ref();
    writeSync(channel.requests, `${name}\n`);
  });
  const read = (ext: string): string => readFileSync(join(channel.dir, `${name}.${ext}`), 'utf8');
  const stdout = read('out');
  const stderr = read('err');
  for (const ext of ['sh', 'out', 'err']) rmSync(join(channel.dir, `${name}.${ext}`), { force: true });
  if (status === 0) return { stdout, stderr };
  const signal = status > 128 ? SIGNALS[status - 128] ?? null : null;
  const what = status === NO_CWD ? 'ENOENT (no such directory)' : signal ?? status;
  throw Object.assign(new Error(`Command failed: ${file} ${args.join(' ')} (${what})\n${stderr}`), { code: signal !== null || status === NO_CWD ? null : status, signal, stdout, stderr });
}
