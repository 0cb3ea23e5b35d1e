export { hashLength, formatForHashLength, formatId } from './object-format.js';
export type { ObjectFormat } from './object-format.js';
export { toHex, fromHex, isHex, compareBytes } from './hex.js';
export {
  hashObject, hashBytes, objectHeader, writeHeaderBefore, typeName, typeNumber, MAX_HEADER_LENGTH,
  OBJ_COMMIT, OBJ_TREE, OBJ_BLOB, OBJ_TAG, OBJ_OFS_DELTA, OBJ_REF_DELTA,
} from './hash-object.js';
export type { ObjectType } from './hash-object.js';
