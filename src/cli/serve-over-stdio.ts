import { requestedProtocolVersion } from '../protocol/index.js';
import type { CommandIO } from './command-io.js';

/** What a git service's conversation over stdio is given (see serveOverStdio). */
export interface StdioConversation {
  input: NodeJS.ReadableStream & AsyncIterable<Uint8Array>;
  output: (chunk: Buffer) => void;
  /** The output has written the bytes when it returns (see UploadSessionOptions.reusableOutput). */
  reusableOutput: true;
  stderr: (text: string) => void;
  protocol: 0 | 1 | 2;
  signal: AbortSignal;
}

/**
 * Runs a git service (upload-pack, receive-pack) over the command's stdio: requests from stdin,
 * answers on stdout, its stderr on stderr, the protocol GIT_PROTOCOL asks for, stopped on ^C.
 * stdin is let go of when the conversation is over: the peer may keep its end open (a pusher
 * waiting for its report, a fetcher done), and git's services do not wait for it either.
 */
export async function serveOverStdio(io: CommandIO, run: (conversation: StdioConversation) => Promise<unknown>): Promise<void> {
  const input = io.stdin.stream();
  await io.interruptible((signal) => run({
    input,
    output: (chunk) => io.stdout.write(chunk),
    // A CommandOutput has written or copied the bytes when it returns.
    reusableOutput: true,
    stderr: (text) => io.stderr.write(text),
    protocol: requestedProtocolVersion(io.env['GIT_PROTOCOL']),
    signal,
  })).finally(() => input.destroy());
}
