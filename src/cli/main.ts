// The commands' side of the `packwright` executable, bundled as dist/bin/commands.cjs and started
// by the loader (bin.ts); the only place the commands meet the process: its arguments, file
// descriptors, environment, signals and exit status become a CommandIO (command-io.ts).
// The decision to relaunch with huge pages (huge-pages.ts) is made before the commands are
// loaded, so a relaunching parent stays cheap.
import { createRequire } from 'node:module';
import type { Readable } from 'node:stream';
import { fdInput, fdOutput, type CommandIO } from './command-io.js';
import { parseGlobalOptions } from './global-options.js';
import { relaunchWithHugePages } from './huge-pages.js';
import { processInterruptible } from './interruptible.js';
import { keepYoungGenerationSmall } from './young-generation.js';

function isatty(fd: number): boolean {
  return (createRequire(import.meta.url)('node:tty') as typeof import('node:tty')).isatty(fd);
}

/**
 * The process's stdin as a stream. A regular file (`index-pack --stdin <pack`) is read a MiB at a
 * time from where its offset stands: Node's process.stdin reads one 64 KiB chunk a turn of the
 * event loop through the thread pool, so a received pack's pass 1 drained each chunk as it came
 * and its helper threads never had a region to scan ahead (isomorphic-git's 23 MB pack: 1.06 s
 * against 0.78 s). A pipe, socket or terminal is Node's own stream, which reads what is there.
 */
function stdinStream(): Readable {
  const fs = createRequire(import.meta.url)('node:fs') as typeof import('node:fs');
  let file = false;
  try {
    file = fs.fstatSync(0).isFile();
  } catch {
    // A closed descriptor: process.stdin says so in its own way.
  }
  // The path names the input in errors only: with `fd`, a ReadStream opens nothing.
  return file ? fs.createReadStream('/dev/stdin', { fd: 0, autoClose: false, highWaterMark: 1 << 20 }) : process.stdin;
}

/** Runs the command the process's arguments name; its status becomes the process's exit code. */
export async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const parent = Number(process.env['PACKWRIGHT_PARENT_PID'] ?? NaN);
  const io: CommandIO = {
    stdin: fdInput(0, stdinStream),
    // isatty, not process.stdout.isTTY: that makes the stream, and for a pipe loads node:net and
    // its streams at every start, though commands write to the descriptor directly. node:tty
    // loads node:net too (~2 ms), so it is loaded only when a command asks (progress).
    stdout: fdOutput(1, () => isatty(1)),
    stderr: fdOutput(2, () => isatty(2)),
    env: process.env,
    cwd: process.cwd(),
    interruptible: processInterruptible(Number.isInteger(parent) ? parent : undefined),
  };
  try {
    const { global, rest } = parseGlobalOptions(argv, io);
    keepYoungGenerationSmall(rest[0], rest.slice(1));
    let code = await relaunchWithHugePages(global, rest, process.env);
    if (code === undefined) {
      const { run } = await import('./run.js');
      code = await run(argv, io);
    }
    process.exitCode = code;
  } catch (e) {
    // A bug (run() answers every error a user can cause): git's BUG() also exits 134; the stack is what a report needs.
    io.stderr.write(`fatal: internal error: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exitCode = 134;
  }
}
