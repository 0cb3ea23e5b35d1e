import { createRequire } from 'node:module';

type Zlib = typeof import('node:zlib');
let loaded: Zlib | undefined;

/**
 * `node:zlib`, loaded on first use. Loading it compiles Node's stream modules with it, 4-5 ms of a
 * one-shot command's start on this project's machines (most of it first-touch page faults), and the
 * CLI is one bundle: a static import made `cat-file -t HEAD`, `rev-parse` and `show-ref` pay it
 * though they inflate nothing.
 */
export function nodeZlib(): Zlib {
  loaded ??= createRequire(import.meta.url)('node:zlib') as Zlib;
  return loaded;
}

// zlib.h's values, the same in every zlib (Node's `zlib.constants` has them too; a test checks),
// for modules that name them without loading zlib.
/** Flush mode: finish the stream. */
export const Z_FINISH = 4;
/** Flush mode: flush to a byte boundary without ending the stream. */
export const Z_SYNC_FLUSH = 2;
/** Return code: no progress possible (input ended, or no room for output). */
export const Z_BUF_ERROR = -5;
/** Level 1, git's default for loose objects (core.looseCompression). */
export const Z_BEST_SPEED = 1;
/** Level -1, zlib's default (6), git's for packs (pack.compression). */
export const Z_DEFAULT_COMPRESSION = -1;
