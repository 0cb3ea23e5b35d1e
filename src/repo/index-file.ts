import { PackwrightError } from '../errors/packwright-error.js';
import { hashBytes } from '../hash/hash-object.js';
import type { ObjectFormat } from '../hash/object-format.js';
import { hashLength } from '../hash/object-format.js';

/** One entry of the index (gitformat-index): its path, mode and object id. */
export interface IndexEntry {
  path: string;
  mode: number;
  id: Buffer;
  /** Merge stage (0 for a normal entry). */
  stage: number;
}

/** One node of the cache tree (`TREE` extension): the tree an index directory would write, when still valid. */
export interface CacheTreeNode {
  /** The directory's path from the top ('' for the root), as git's add_cache_tree builds it. */
  path: string;
  /** Entries it covers; -1 when invalidated (then it has no id). */
  entryCount: number;
  id: Buffer | undefined;
}

/** A path's stages before a conflict was resolved (`REUC`): up to three modes and ids. */
export interface ResolveUndo {
  path: string;
  modes: number[];
  ids: (Buffer | undefined)[];
}

/** git's index file (`.git/index`) as read: version, entries, the cache tree and resolve-undo extensions. */
export interface IndexFile {
  version: number;
  entries: IndexEntry[];
  cacheTree: CacheTreeNode[];
  resolveUndo: ResolveUndo[];
}

/**
 * Reads an index file (`.git/index`, versions 2-4) for what object-database tools need: each
 * entry's path, mode and id, the cache tree's ids and the resolve-undo ids. The trailing checksum
 * is verified first (INDEX_CORRUPT, with git's words); the worktree's stat data is skipped.
 */
export function parseIndexFile(data: Buffer, format: ObjectFormat, file = 'index'): IndexFile {
  const H = hashLength(format);
  const fail = (what: string, offset?: number): never => {
    throw new PackwrightError('INDEX_CORRUPT', `${file}: ${what}`, offset === undefined ? { file } : { file, offset });
  };
  if (data.length < 12 + H) fail('index file smaller than expected');
  if (data.toString('latin1', 0, 4) !== 'DIRC') fail('bad signature');
  const version = data.readUInt32BE(4);
  if (version < 2 || version > 4) fail(`bad index version ${version}`);
  const body = data.subarray(0, data.length - H);
  const trailer = data.subarray(data.length - H);
  // An all-zero trailer means index.skipHash: git does not check it then.
  if (!trailer.equals(Buffer.alloc(H)) && !hashBytes(format, body).equals(trailer)) fail('bad index file sha1 signature');
  const count = data.readUInt32BE(8);
  const entries: IndexEntry[] = [];
  let p = 12;
  let previous = '';
  for (let i = 0; i < count; i++) {
    const start = p;
    if (p + 40 + H + 2 > body.length) fail('index entry is cut', start);
    const mode = body.readUInt32BE(p + 24);
    const id = Buffer.from(body.subarray(p + 40, p + 40 + H));
    const flags = body.readUInt16BE(p + 40 + H);
    p += 40 + H + 2;
    if (flags & 0x4000) {
      if (version < 3) fail('extended flags in a version 2 index', start);
      p += 2;
    }
    let name: string;
    if (version === 4) {
      // The name is the previous one less a varint's count of bytes, then a NUL-terminated suffix.
      let c = body[p++] as number;
      let strip = c & 127;
      while (c & 128) {
        c = body[p++] as number;
        strip = ((strip + 1) * 128) + (c & 127);
      }
      const nul = body.indexOf(0, p);
      if (nul < 0 || strip > previous.length) fail('malformed name field in the index', start);
      name = previous.slice(0, previous.length - strip) + body.toString('latin1', p, nul);
      p = nul + 1;
    } else {
      const nul = body.indexOf(0, p);
      if (nul < 0) fail('malformed name field in the index', start);
      name = body.toString('latin1', p, nul);
      // Entries are padded with NULs to a multiple of eight bytes.
      p = start + ((nul - start + 8) & ~7);
    }
    previous = name;
    entries.push({ path: Buffer.from(name, 'latin1').toString('utf8'), mode, id, stage: (flags >> 12) & 3 });
  }
  const cacheTree: CacheTreeNode[] = [];
  const resolveUndo: ResolveUndo[] = [];
  while (p + 8 <= body.length) {
    const sig = body.toString('latin1', p, p + 4);
    const size = body.readUInt32BE(p + 4);
    const ext = body.subarray(p + 8, p + 8 + size);
    if (ext.length < size) fail(`index extension ${sig} is cut`, p);
    if (sig === 'TREE') readCacheTree(ext, H, cacheTree, fail);
    else if (sig === 'REUC') readResolveUndo(ext, H, resolveUndo, fail);
    p += 8 + size;
  }
  return { version, entries, cacheTree, resolveUndo };
}

function readCacheTree(ext: Buffer, H: number, out: CacheTreeNode[], fail: (what: string) => never): void {
  let p = 0;
  // Nodes come depth first, each naming its own directory and how many subtrees follow it: the
  // directories still waiting for subtrees give a node's full path.
  const open: { path: string; left: number }[] = [];
  while (p < ext.length) {
    const nul = ext.indexOf(0, p);
    const nl = ext.indexOf(0x0a, nul);
    if (nul < 0 || nl < 0) fail('bad cache tree');
    const name = ext.toString('utf8', p, nul);
    const [entries, subtrees] = ext.toString('latin1', nul + 1, nl).split(' ');
    const entryCount = Number(entries);
    while (open.length > 0 && (open[open.length - 1] as { left: number }).left === 0) open.pop();
    const parent = open[open.length - 1];
    let path = name;
    if (parent !== undefined) {
      parent.left--;
      if (parent.path !== '') path = `${parent.path}/${name}`;
    }
    open.push({ path, left: Math.max(0, Number(subtrees) || 0) });
    p = nl + 1;
    let id: Buffer | undefined;
    if (entryCount >= 0) {
      if (p + H > ext.length) fail('bad cache tree');
      id = Buffer.from(ext.subarray(p, p + H));
      p += H;
    }
    out.push({ path, entryCount, id });
  }
}

function readResolveUndo(ext: Buffer, H: number, out: ResolveUndo[], fail: (what: string) => never): void {
  let p = 0;
  while (p < ext.length) {
    const nul = ext.indexOf(0, p);
    if (nul < 0) fail('bad resolve-undo');
    const path = ext.toString('utf8', p, nul);
    p = nul + 1;
    const modes: number[] = [];
    for (let i = 0; i < 3; i++) {
      const end = ext.indexOf(0, p);
      if (end < 0) fail('bad resolve-undo');
      modes.push(parseInt(ext.toString('latin1', p, end) || '0', 8));
      p = end + 1;
    }
    const ids = modes.map((m) => {
      if (m === 0) return undefined;
      const id = Buffer.from(ext.subarray(p, p + H));
      p += H;
      return id;
    });
    out.push({ path, modes, ids });
  }
}
