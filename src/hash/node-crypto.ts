import { createRequire } from 'node:module';

type Crypto = typeof import('node:crypto');
let loaded: Crypto | undefined;

/**
 * `node:crypto`, loaded on first use. Loading it takes ~6.5 ms, and the CLI is one bundle: a static
 * import would make every command pay it at start, including cat-file, which hashes nothing.
 */
export function nodeCrypto(): Crypto {
  loaded ??= createRequire(import.meta.url)('node:crypto') as Crypto;
  return loaded;
}
