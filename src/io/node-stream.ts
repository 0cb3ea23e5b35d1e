import { createRequire } from 'node:module';

type Stream = typeof import('node:stream');
let loaded: Stream | undefined;

/**
 * `node:stream`, loaded on first use. Its twenty internal modules cost ~3 ms of a one-shot
 * command's start on this project's machines (compiling them touches fresh pages), and the CLI is
 * one bundle: a static import anywhere (the object streams, the commands' stdin) made every
 * command load it, though `cat-file -t` or `rev-parse` never makes a stream.
 */
export function nodeStream(): Stream {
  loaded ??= createRequire(import.meta.url)('node:stream') as Stream;
  return loaded;
}
