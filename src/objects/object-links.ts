import { OBJ_BLOB, OBJ_COMMIT, OBJ_TAG, OBJ_TREE, typeNumber } from './object-type.js';
import { S_IFDIR, S_IFLNK, S_IFMT, S_IFREG, TreeCursor } from './tree.js';

/** A link from a commit, tree or tag to another object, with the type the link says it has. */
export type LinkSink = (data: Uint8Array, idAt: number, type: number) => void;

/**
 * The objects a commit, tree or tag links to, with the type each link says (git's fsck_walk): a
 * commit's tree and parents, a tree's subtrees and blobs (not its submodules), a tag's object
 * (with its `type` line's type, 0 if it names none). Returns a tree's decoding error, if any: the
 * links before it are still given, as git's walk gives them. `cursor`: one to reuse over many trees.
 * The one link extractor: fsck's connectivity, unpack's and index-pack's --strict, and the walks
 * over unreachable and promisor objects (walk/unreachable-objects.ts) all read links here.
 */
export function objectLinks(type: number, data: Uint8Array, hashLength: number, sink: LinkSink, cursor = new TreeCursor(hashLength)): string | undefined {
  if (type === OBJ_TREE) {
    const e = cursor.reset(data);
    while (e.tryNext()) {
      // Modes as git canonicalises them for the walk: anything not a file, link or directory is a gitlink.
      const kind = e.mode & S_IFMT;
      if (kind === S_IFDIR) sink(data, e.idStart, OBJ_TREE);
      else if (kind === S_IFREG || kind === S_IFLNK) sink(data, e.idStart, OBJ_BLOB);
    }
    return e.error;
  }
  if (type === OBJ_COMMIT) {
    // parse_commit_buffer: `tree <hex>\n`, then `parent <hex>\n` lines.
    const hex = hashLength * 2;
    let p = 0;
    // Capital hex digits too, as get_oid_hex reads them.
    if (!bytesStartWith(data, p, 'tree ') || !hexLineAt(data, p + 5, hex, true)) return 'bad tree pointer';
    sink(hexBytes(data, p + 5, hex), 0, OBJ_TREE);
    p += 5 + hex + 1;
    while (bytesStartWith(data, p, 'parent ') && hexLineAt(data, p + 7, hex, true)) {
      sink(hexBytes(data, p + 7, hex), 0, OBJ_COMMIT);
      p += 7 + hex + 1;
    }
    return undefined;
  }
  if (type === OBJ_TAG) {
    const hex = hashLength * 2;
    if (!bytesStartWith(data, 0, 'object ') || !hexLineAt(data, 7, hex, true)) return 'bad tag pointer';
    const p = 7 + hex + 1;
    let tagged = 0;
    if (bytesStartWith(data, p, 'type ')) {
      const nl = data.indexOf(0x0a, p);
      if (nl > 0) tagged = Math.max(0, typeNumber(Buffer.from(data.buffer, data.byteOffset + p + 5, nl - p - 5).toString('latin1')));
    }
    sink(hexBytes(data, 7, hex), 0, tagged);
  }
  return undefined;
}

/** Whether `d` holds the ASCII string `s` at `at`. */
export function bytesStartWith(d: Uint8Array, at: number, s: string): boolean {
  if (at + s.length > d.length) return false;
  for (let i = 0; i < s.length; i++) if (d[at + i] !== s.charCodeAt(i)) return false;
  return true;
}

/** `n` hex digits at `at` then a newline (`upper`: capital digits too, as get_oid_hex takes them). */
export function hexLineAt(d: Uint8Array, at: number, n: number, upper = false): boolean {
  if (at + n >= d.length || d[at + n] !== 0x0a) return false;
  for (let i = at; i < at + n; i++) {
    const c = d[i] as number;
    if (!((c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66) || (upper && c >= 0x41 && c <= 0x46))) return false;
  }
  return true;
}

function hexBytes(d: Uint8Array, at: number, n: number): Uint8Array {
  return Buffer.from(Buffer.from(d.buffer, d.byteOffset + at, n).toString('latin1'), 'hex');
}
