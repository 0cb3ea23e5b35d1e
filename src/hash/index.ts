export { hashLength, formatForHashLength, formatId } from './object-format.js';
export type { ObjectFormat } from './object-format.js';
export { toHex, fromHex, tryFromHex, isHex } from './hex.js';
export { Sha1dc, sha1dc } from './sha1dc/sha1dc.js';
export { Sha1dcLanes } from './sha1dc/sha1dc-lanes.js';
export { createDigester, type Digester } from './digester.js';
export { hashObject, hashBytes, hashLiterally, objectHeader, writeHeaderBefore, MAX_HEADER_LENGTH } from './hash-object.js';
