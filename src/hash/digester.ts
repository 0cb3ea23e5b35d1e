import { detectsCollisions, type ObjectFormat } from './object-format.js';
import { nodeCrypto } from './node-crypto.js';
import { Sha1dc } from './sha1dc/sha1dc.js';

/** What a streaming hash needs to offer here: Node's `Hash` and `Sha1dc` both do. */
export interface Digester {
  /** Adds bytes to the digest. */
  update(data: Uint8Array): unknown;
  /** The digest of everything added. */
  digest(): Buffer;
  /** Set by a collision-detecting SHA-1 once it has seen half of a collision attack. */
  readonly collision?: boolean;
}

/** A streaming hash of `format`; with `detectCollisions`, SHA-1 is sha1dc. */
export function createDigester(format: ObjectFormat, detectCollisions = false): Digester {
  return detectsCollisions(format, detectCollisions) ? new Sha1dc() : nodeCrypto().createHash(format);
}
