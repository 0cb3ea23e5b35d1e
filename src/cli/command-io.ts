import { readSync, writeSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Readable } from 'node:stream';

/**
 * Where a command reads and writes. Every command takes one and resolves to its exit status; only
 * the bin entry (main.ts) builds one from the process (`fdInput(0)`, `fdOutput(1)`, `process.env`),
 * so the same commands run in-process for tests and for library users (`memoryIO`).
 */
export interface CommandIO {
  readonly stdin: CommandInput;
  readonly stdout: CommandOutput;
  readonly stderr: CommandOutput;
  /** git's environment variables (GIT_DIR, GIT_INDEX_FILE, HOME, ...), read, never written. */
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
  /**
   * Runs work that looks at its signal between slices (index-pack, fsck, ...), so it can be stopped
   * early. The bin aborts it on ^C, SIGTERM and SIGHUP, and when its relaunching parent dies, and
   * only while it runs: elsewhere (a synchronous read of stdin) such a signal still ends the
   * process at once.
   */
  interruptible<T>(work: (signal: AbortSignal) => Promise<T>): Promise<T>;
}

/** Standard input: read synchronously (line protocols such as `cat-file --batch`) or as a stream (a pack). */
export interface CommandInput {
  /** Reads into `buf` what is available, waiting for at least one byte; 0 at the end of input. */
  readSync(buf: Uint8Array): number;
  /** The rest of the input as a stream (index-pack and unpack-objects read a pack this way). */
  stream(): Readable;
}

/** Standard output or error: `write` has written (or copied) the bytes when it returns, so callers may reuse their buffer. */
export interface CommandOutput {
  /** Writes bytes (or text, as UTF-8); they are written or copied when it returns. */
  write(chunk: Uint8Array | string): void;
  /** Whether a person is watching (progress is shown by default only then). */
  readonly isTTY: boolean;
}

/** An output into memory; `bytes()` is everything written so far. */
export interface MemoryOutput extends CommandOutput {
  /** Everything written so far, as bytes. */
  bytes(): Buffer;
  /** Everything written so far, as UTF-8 text. */
  text(): string;
}

/** Sleeps ~1 ms without a busy loop (a non-blocking descriptor said EAGAIN). */
const sleeper = new Int32Array(new SharedArrayBuffer(4));
function pause(): void {
  Atomics.wait(sleeper, 0, 0, 1);
}

/** A file descriptor read with `readSync`; `stream` is the process's own stream for it (given by the bin entry). */
export function fdInput(fd: number, stream: () => Readable): CommandInput {
  return {
    readSync(buf) {
      for (;;) {
        try {
          return readSync(fd, buf, 0, buf.length, null);
        } catch (e) {
          const code = (e as NodeJS.ErrnoException).code;
          // A descriptor a parent left non-blocking: wait for data.
          if (code === 'EAGAIN') pause();
          else if (code === 'EOF') return 0;
          else throw e;
        }
      }
    },
    stream,
  };
}

/**
 * A file descriptor written with `writeSync`: the CLI prints hundreds of thousands of records, and
 * a stream costs a callback and an allocation each. A non-blocking pipe's EAGAIN waits briefly and retries.
 */
export function fdOutput(fd: number, isTTY: boolean | (() => boolean)): CommandOutput {
  let tty = typeof isTTY === 'boolean' ? isTTY : undefined;
  return {
    // Asked only by commands that may show progress: a function is called then, once.
    get isTTY(): boolean {
      tty ??= (isTTY as () => boolean)();
      return tty;
    },
    write(chunk) {
      const b = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
      let done = 0;
      while (done < b.length) {
        try {
          done += writeSync(fd, b, done, b.length - done);
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code !== 'EAGAIN') throw e;
          pause();
        }
      }
    },
  };
}

/** Input given whole: a command reads it as it would read a pipe that then closes. */
export function bufferInput(data: Uint8Array | string = ''): CommandInput {
  let rest = typeof data === 'string' ? Buffer.from(data, 'utf8') : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  return {
    readSync(buf) {
      const n = Math.min(buf.length, rest.length);
      buf.set(rest.subarray(0, n));
      rest = rest.subarray(n);
      return n;
    },
    stream() {
      const all = rest;
      rest = rest.subarray(rest.length);
      // node:stream loaded here, not at start: most commands never ask for their input as a stream
      // (io/node-stream.ts does the same for the library; the CLI reaches only the package's entry points).
      const { Readable: StreamReadable } = createRequire(import.meta.url)('node:stream') as typeof import('node:stream');
      return StreamReadable.from(all.length > 0 ? [all] : []);
    },
  };
}

/** An in-memory CommandOutput, for running commands as functions and reading what they wrote. */
export function memoryOutput(isTTY = false): MemoryOutput {
  const chunks: Buffer[] = [];
  return {
    isTTY,
    write(chunk) {
      chunks.push(typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : Buffer.from(chunk));
    },
    bytes: () => Buffer.concat(chunks),
    text: () => Buffer.concat(chunks).toString('utf8'),
  };
}

export interface MemoryIO extends CommandIO {
  readonly stdout: MemoryOutput;
  readonly stderr: MemoryOutput;
}

/** An io for running a command in-process: input from bytes, output kept in memory. */
export function memoryIO(options: { cwd: string; env: Readonly<Record<string, string | undefined>>; stdin?: Uint8Array | string | undefined; signal?: AbortSignal | undefined }): MemoryIO {
  const signal = options.signal ?? new AbortController().signal;
  return {
    stdin: bufferInput(options.stdin), stdout: memoryOutput(), stderr: memoryOutput(), env: options.env, cwd: options.cwd,
    interruptible: (work) => work(signal),
  };
}

/** The same io with another environment or directory (`-C`, `--work-tree`, `--no-replace-objects` change them for what follows). */
export function withIO(io: CommandIO, change: { env?: Readonly<Record<string, string | undefined>>; cwd?: string }): CommandIO {
  return { stdin: io.stdin, stdout: io.stdout, stderr: io.stderr, env: change.env ?? io.env, cwd: change.cwd ?? io.cwd, interruptible: (work) => io.interruptible(work) };
}
