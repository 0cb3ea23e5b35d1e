import { PackwrightError } from '../errors/packwright-error.js';
/**
 * git's four object types, by name and by number. The numbers are the ones pack entry headers use
 * (gitformat-pack: 1 commit, 2 tree, 3 blob, 4 tag); entry headers add 6 and 7 for deltas
 * (`OBJ_OFS_DELTA`, `OBJ_REF_DELTA` in pack/entry-header.ts), which are not object types.
 */
export type ObjectType = 'commit' | 'tree' | 'blob' | 'tag';

/** Pack type number of a commit. */
export const OBJ_COMMIT = 1;
/** Pack type number of a tree. */
export const OBJ_TREE = 2;
/** Pack type number of a blob. */
export const OBJ_BLOB = 3;
/** Pack type number of an annotated tag. */
export const OBJ_TAG = 4;

/** Names by type number; index 0 is no type. */
export const TYPE_NAMES: readonly ['', 'commit', 'tree', 'blob', 'tag'] = ['', 'commit', 'tree', 'blob', 'tag'];

/** The names as latin1 bytes, for output written byte by byte. */
export const TYPE_NAME_BYTES: readonly Buffer[] = TYPE_NAMES.map((name) => Buffer.from(name, 'latin1'));

/**
 * The name of a type number (1 commit, 2 tree, 3 blob, 4 tag), as pack entries number them; anything else
 * is INVALID_ARGUMENT.
 */
export function typeName(type: number): ObjectType {
  const name = TYPE_NAMES[type];
  // A public call with a number from a user's data: a typed error, not a bug report.
  if (name === undefined || name === '') throw new PackwrightError('INVALID_ARGUMENT', `${type} is not an object type (1 commit, 2 tree, 3 blob, 4 tag; 6 and 7 are pack delta entries)`);
  return name;
}

/** The number of a type name, or -1 for anything else. */
export function typeNumber(name: string): number {
  switch (name) {
    case 'commit': return OBJ_COMMIT;
    case 'tree': return OBJ_TREE;
    case 'blob': return OBJ_BLOB;
    case 'tag': return OBJ_TAG;
    default: return -1;
  }
}

