import { PackwrightError } from '../errors/packwright-error.js';
import { OBJ_BLOB, OBJ_COMMIT, OBJ_TREE } from './object-type.js';

/** File-type bits of a tree entry's mode (git's S_IFMT), and each type. */
export const S_IFMT = 0o170000;
/** Tree entry mode bits of a directory (a tree). */
export const S_IFDIR = 0o040000;
/** Tree entry mode bits of a regular file (a blob; 0o100644 or 0o100755 with the permission bits). */
export const S_IFREG = 0o100000;
/** Tree entry mode bits of a symbolic link (a blob holding the target). */
export const S_IFLNK = 0o120000;
/** A submodule: the entry names a commit of another repository (gitlink). */
export const S_IFGITLINK = 0o160000;

/**
 * Walks a tree object's entries (`<octal mode> <name>\0<raw id>`, repeated; gitformat: tree)
 * without making an object per entry: after `next()` returns true, `mode`, and the name and id as
 * positions in `data`, describe the current entry. Counting objects for a pack walks tens of
 * millions of entries, so the cursor is reused and its fields are numbers.
 */
export class TreeCursor {
  /** The entry's mode, parsed from octal (0o100644, 0o040000, …), as stored (see `canonicalMode`). */
  mode = 0;
  /** Where the entry starts in `data` (its mode's first digit). */
  entryStart = 0;
  /** The name is `data[nameStart..nameEnd)`; the id `data[idStart..idStart+hashLength)`. */
  nameStart = 0;
  nameEnd = 0;
  idStart = 0;
  /** git's words for the malformed entry `tryNext` stopped at; undefined while the tree is sound. */
  error: string | undefined;
  private pos = 0;
  private data: Uint8Array = new Uint8Array(0);
  private what: string | (() => string) = '<tree>';

  constructor(readonly hashLength: number) {}

  /**
   * Starts over on another tree; `what` names it in errors (its id, usually; a function is called
   * only if there is an error, so a walk of a million trees makes no hex strings).
   */
  reset(data: Uint8Array, what: string | (() => string) = '<tree>'): this {
    this.data = data;
    this.pos = 0;
    this.error = undefined;
    this.what = what;
    return this;
  }

  /**
   * Moves to the next entry, with git's checks (tree-walk.c's decode_tree_entry): false at the
   * end, or at a malformed entry with `error` set to git's words for it (fsck reports those as
   * findings and keeps the links before it).
   */
  tryNext(): boolean {
    const d = this.data;
    const H = this.hashLength;
    const start = this.pos;
    if (start >= d.length) return false;
    this.entryStart = start;
    // git checks the whole rest of the buffer first: room for one entry, and the NUL before the last id.
    if (d.length - start < H + 3 || d[d.length - (H + 1)] !== 0) return this.stop('too-short tree object');
    let p = start;
    let c = d[p] as number;
    if (c === 0x20) return this.stop('malformed mode in tree entry');
    let mode = 0;
    // Octal digits up to a space (git's get_mode).
    while (c !== 0x20) {
      if (c < 0x30 || c > 0x37) return this.stop('malformed mode in tree entry');
      mode = mode * 8 + (c - 0x30);
      c = d[++p] as number;
    }
    const nameStart = ++p;
    if (d[p] === 0) return this.stop('empty filename in tree entry');
    while (p < d.length && d[p] !== 0) p++;
    const idStart = p + 1;
    if (p >= d.length || idStart + H > d.length) return this.stop('too-short tree file');
    this.mode = mode;
    this.nameStart = nameStart;
    this.nameEnd = p;
    this.idStart = idStart;
    this.pos = idStart + H;
    return true;
  }

  /** Moves to the next entry; false at the end. Throws OBJECT_CORRUPT for a malformed entry (see `tryNext`). */
  next(): boolean {
    if (this.tryNext()) return true;
    if (this.error !== undefined) this.fail(this.entryStart, this.error);
    return false;
  }

  /** Where the next entry starts (the end of the current one). */
  get position(): number {
    return this.pos;
  }

  /**
   * Goes on from `position`, which must be where an entry starts (a walk that knows a stretch of
   * entries to be the same as another tree's passes over them).
   */
  seek(position: number): void {
    this.pos = position;
  }

  /** The object type the current entry's mode implies: tree, commit (a submodule) or blob. */
  get objectType(): number {
    return modeObjectType(this.mode);
  }

  private stop(message: string): boolean {
    this.error = message;
    this.pos = this.data.length;
    return false;
  }

  private fail(at: number, what: string): never {
    const name = typeof this.what === 'string' ? this.what : this.what();
    throw new PackwrightError('OBJECT_CORRUPT', `tree ${name} is malformed at byte ${at}: ${what}`, { offset: at });
  }
}

/** The entry of a tree named `name` (its bytes), with its mode as stored and a copy of its id; undefined when there is none. */
export function findTreeEntry(data: Uint8Array, hashLength: number, name: Uint8Array): { mode: number; id: Buffer } | undefined {
  const cursor = new TreeCursor(hashLength).reset(data);
  while (cursor.next()) {
    if (cursor.nameEnd - cursor.nameStart !== name.length) continue;
    let same = true;
    for (let i = 0; i < name.length; i++) if (data[cursor.nameStart + i] !== name[i]) { same = false; break; }
    if (same) return { mode: cursor.mode, id: Buffer.from(data.subarray(cursor.idStart, cursor.idStart + hashLength)) };
  }
  return undefined;
}

/**
 * git's base_name_compare, the order of a tree's entries: the names `a[aStart..aEnd)` and
 * `b[bStart..bEnd)` byte by byte, a tree's as if it ended in '/', anything else's in NUL.
 * Negative, zero or positive.
 */
export function baseNameCompare(a: Uint8Array, aStart: number, aEnd: number, aTree: boolean, b: Uint8Array, bStart: number, bEnd: number, bTree: boolean): number {
  const aLength = aEnd - aStart;
  const bLength = bEnd - bStart;
  const common = aLength < bLength ? aLength : bLength;
  for (let i = 0; i < common; i++) {
    const d = (a[aStart + i] as number) - (b[bStart + i] as number);
    if (d !== 0) return d;
  }
  const x = aLength > common ? (a[aStart + common] as number) : aTree ? 0x2f : 0;
  const y = bLength > common ? (b[bStart + common] as number) : bTree ? 0x2f : 0;
  return x - y;
}

/** The object type a tree entry's mode implies. */
export function modeObjectType(mode: number): number {
  const kind = mode & S_IFMT;
  if (kind === S_IFDIR) return OBJ_TREE;
  if (kind === S_IFGITLINK) return OBJ_COMMIT;
  return OBJ_BLOB;
}

/** One tree entry as objects (for callers that keep a few; walks use `TreeCursor`). */
export interface TreeEntry {
  /** The mode as the tree stores it (0o40000, 0o100644, 0o100755, 0o120000, 0o160000; old trees hold others). */
  mode: number;
  /** What the mode makes the entry: 'tree' (a directory), 'commit' (a submodule) or 'blob'. */
  type: 'tree' | 'commit' | 'blob';
  /** The name decoded as UTF-8. */
  name: string;
  /** The name's bytes (a view of the tree's data): names are bytes in git, in any encoding. */
  nameBytes: Buffer;
  /** The id's bytes (a view of the tree's data). */
  id: Buffer;
}

/**
 * Parses a whole tree into entries, in the tree's order. `hashLength` is 20 for SHA-1 (the default)
 * and 32 for SHA-256: a tree's bytes do not say which. A malformed tree is OBJECT_CORRUPT.
 *
 * @example for (const e of parseTree(data)) console.log(e.mode.toString(8), e.type, e.name);
 */
export function parseTree(data: Buffer, hashLength = 20, idForErrors = '<tree>'): TreeEntry[] {
  const entries: TreeEntry[] = [];
  const cursor = new TreeCursor(hashLength).reset(data, idForErrors);
  while (cursor.next()) {
    const nameBytes = data.subarray(cursor.nameStart, cursor.nameEnd);
    const type = modeObjectType(cursor.mode);
    entries.push({
      mode: cursor.mode,
      type: type === OBJ_TREE ? 'tree' : type === OBJ_COMMIT ? 'commit' : 'blob',
      name: nameBytes.toString('utf8'),
      nameBytes,
      id: data.subarray(cursor.idStart, cursor.idStart + hashLength),
    });
  }
  return entries;
}

/**
 * The mode git reports for a stored one (tree-walk.c, canon_mode): regular files become 100644 or
 * 100755 by their owner-execute bit, symlinks 120000, trees 040000, anything else a gitlink 160000.
 */
export function canonicalMode(mode: number): number {
  const kind = mode & S_IFMT;
  if (kind === S_IFREG) return S_IFREG | (mode & 0o100 ? 0o755 : 0o644);
  if (kind === S_IFLNK || kind === S_IFDIR) return kind;
  return S_IFGITLINK;
}

/** The object type a tree entry's mode implies, by name. */
export function modeType(mode: string): 'tree' | 'commit' | 'blob' {
  const type = modeObjectType(parseInt(mode, 8));
  return type === OBJ_TREE ? 'tree' : type === OBJ_COMMIT ? 'commit' : 'blob';
}

/** `git cat-file -p` / `ls-tree` form: `<6-digit mode> <type> <hex id>\t<name>`. */
export function formatTree(data: Buffer, hashLength: number): Buffer {
  const parts: Buffer[] = [];
  const cursor = new TreeCursor(hashLength).reset(data);
  while (cursor.next()) {
    const mode = canonicalMode(cursor.mode).toString(8).padStart(6, '0');
    const id = Buffer.from(data.buffer, data.byteOffset + cursor.idStart, hashLength).toString('hex');
    parts.push(Buffer.from(`${mode} ${modeType(cursor.mode.toString(8))} ${id}\t`, 'latin1'), data.subarray(cursor.nameStart, cursor.nameEnd), Buffer.from('\n'));
  }
  return Buffer.concat(parts);
}

/** An entry of a tree to write (`writeTree`): the name as text (UTF-8) or bytes, the id in hex. */
export interface NewTreeEntry {
  mode: number;
  path: string | Uint8Array;
  id: string;
}

/**
 * The bytes of a tree with `entries`, in git's order (names compared as bytes, a tree's as if it
 * ended in '/'); INVALID_ARGUMENT for an empty name, one with '/' or a NUL, or the same name twice.
 */
export function serializeTree(entries: readonly NewTreeEntry[], hashLength: number): Buffer {
  const items = entries.map((e) => {
    const name = typeof e.path === 'string' ? Buffer.from(e.path, 'utf8') : Buffer.from(e.path);
    if (name.length === 0 || name.includes(0x2f) || name.includes(0)) throw new PackwrightError('INVALID_ARGUMENT', `invalid tree entry name '${name.toString('utf8')}'`);
    if (!/^[0-9a-f]+$/.test(e.id) || e.id.length !== 2 * hashLength) throw new PackwrightError('INVALID_ARGUMENT', `invalid object id '${e.id}' for tree entry '${name.toString('utf8')}'`);
    const isTree = (e.mode & S_IFMT) === S_IFDIR;
    return { name, key: isTree ? Buffer.concat([name, Buffer.from('/')]) : name, mode: e.mode, id: Buffer.from(e.id, 'hex') };
  });
  items.sort((a, b) => Buffer.compare(a.key, b.key));
  for (let i = 1; i < items.length; i++) {
    if ((items[i] as { name: Buffer }).name.equals((items[i - 1] as { name: Buffer }).name)) throw new PackwrightError('INVALID_ARGUMENT', `duplicate tree entry '${(items[i] as { name: Buffer }).name.toString('utf8')}'`);
  }
  return Buffer.concat(items.flatMap((it) => [Buffer.from(`${it.mode.toString(8)} `), it.name, Buffer.from([0]), it.id]));
}
