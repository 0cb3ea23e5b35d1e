import { isNotFound } from '../io/read-dir-if-present.js';
import { lstatSync, readdirSync } from 'node:fs';
import { readFileIfPresent } from '../io/read-file-if-present.js';
import { fileStamp, stampAge } from '../io/file-stamp.js';
import { join } from 'node:path';
import { PackwrightError } from '../errors/packwright-error.js';
import { RefTransaction, type RefTransactionOptions } from './ref-transaction.js';

/** A ref as stored: an object id, or (symbolic) the name of another ref. */
export type RefValue = { kind: 'id'; id: Buffer; peeled: Buffer | undefined } | { kind: 'symbolic'; target: string };

/** One ref of a listing: its name, the id it resolves to, what it peels to (annotated tags), its symbolic target. */
export interface RefEntry {
  name: string;
  id: Buffer;
  /** For a tag in packed-refs with a `^` line: the object the tag finally points at. */
  peeled: Buffer | undefined;
  /** For a symbolic ref: the ref it names. */
  symbolicTarget: string | undefined;
}

/** git follows at most this many symbolic refs (refs.c, SYMREF_MAXDEPTH). */
const SYMREF_MAX_DEPTH = 5;

/** Refs that belong to one worktree (gitrepository-layout: they live in the git directory, not the common one). */
function perWorktree(name: string): boolean {
  return !name.startsWith('refs/') || name.startsWith('refs/bisect/') || name.startsWith('refs/worktree/') || name.startsWith('refs/rewritten/');
}

/** A name git would accept as a ref file path: no `..`, no leading `/`, no empty or dot-started component. */
function safeName(name: string): boolean {
  if (name === '' || name.startsWith('/') || name.endsWith('/') || name.includes('\0')) return false;
  return name.split('/').every((part) => part !== '' && !part.startsWith('.') && !part.endsWith('.lock'));
}

/** How old packed-refs must be before its stamp alone says it is unchanged (see stampAge). */
const RACY_MS = 1000;

interface PackedRefs {
  /** The file's stamp (inode, size, times) when last read; undefined: not read since it was forgotten. */
  stamp: string | undefined;
  /** The file's bytes when last read (undefined: no file). */
  bytes: Buffer | undefined;
  /** Every ref in it, parsed on the first listing. */
  refs: Map<string, { id: Buffer; peeled: Buffer | undefined }> | undefined;
}

/**
 * A repository's refs (gitrepository-layout, git-pack-refs): loose files under `refs/` (and HEAD
 * and the like at the top), `packed-refs` with its `^<id>` peeled lines, and symbolic refs
 * (`ref: <name>`). A loose ref hides a packed one of the same name. In a linked worktree, HEAD and
 * `refs/bisect|worktree|rewritten/` are its own and the rest are shared (the common directory).
 * Files are read on every question, so refs that git changes are seen at once (packed-refs is
 * parsed again only when its contents change).
 */
export class RefStore {
  private packed: PackedRefs = { stamp: undefined, bytes: undefined, refs: undefined };

  constructor(
    readonly gitDir: string,
    readonly commonDir: string,
    readonly hashLength: number,
  ) {}

  /** The ref `name` as stored, or undefined. */
  read(name: string): RefValue | undefined {
    if (!safeName(name)) return undefined;
    const loose = this.readFile(join(perWorktree(name) ? this.gitDir : this.commonDir, name));
    if (loose !== undefined) return this.parseLoose(loose);
    const packed = this.findPacked(name);
    return packed === undefined ? undefined : { kind: 'id', id: packed.id, peeled: packed.peeled };
  }

  /** Whether `name` has a loose file that holds no ref (neither an id nor `ref: <name>`): git's REF_ISBROKEN. */
  isBroken(name: string): boolean {
    if (!safeName(name)) return false;
    const loose = this.readFile(this.loosePath(name));
    return loose !== undefined && this.parseLoose(loose) === undefined;
  }

  /** Where the loose file of ref `name` is (or would be): the worktree's git directory for HEAD and its own namespaces, else the common one. */
  loosePath(name: string): string {
    return join(perWorktree(name) ? this.gitDir : this.commonDir, name);
  }

  /** Where the reflog of ref `name` is (or would be). */
  reflogPath(name: string): string {
    return join(perWorktree(name) ? this.gitDir : this.commonDir, 'logs', name);
  }

  /** Whether packed-refs has `name`. */
  isPacked(name: string): boolean {
    return this.findPacked(name) !== undefined;
  }

  /** Drops what was parsed of packed-refs (it was just rewritten). */
  forgetPacked(): void {
    this.packed = { stamp: undefined, bytes: undefined, refs: undefined };
  }

  /** A transaction of ref changes (see RefTransaction): reflog lines carry `ident`. */
  transaction(options: RefTransactionOptions): RefTransaction {
    return new RefTransaction(this, options);
  }

  /**
   * Where `name`'s symbolic refs lead: the first ref on the way that is not symbolic (it may not
   * exist: a branch not born yet); `name` itself when it is not symbolic; undefined for a loop or a
   * chain deeper than git follows.
   */
  symbolicEnd(name: string): string | undefined {
    let current = name;
    for (let depth = 0; depth <= SYMREF_MAX_DEPTH; depth++) {
      const v = this.read(current);
      if (v?.kind !== 'symbolic') return current;
      current = v.target;
    }
    return undefined;
  }

  /** The id `name` resolves to through symbolic refs, or undefined (missing, broken or too deep). */
  resolve(name: string): Buffer | undefined {
    let current = name;
    for (let depth = 0; depth <= SYMREF_MAX_DEPTH; depth++) {
      const v = this.read(current);
      if (v === undefined) return undefined;
      if (v.kind === 'id') return v.id;
      current = v.target;
    }
    return undefined;
  }

  /**
   * Every ref under `prefix` (default `refs/`), sorted by name bytewise as `git for-each-ref` sorts
   * them, with loose refs over packed ones. Broken refs (bad contents, dangling symbolic refs) are
   * left out, as git leaves them out with a warning.
   */
  list(prefix = 'refs/'): RefEntry[] {
    // One reading of packed-refs for the whole listing: thousands of refs must not read the file
    // (and try a loose file) once each.
    const packed = this.packedUnder(prefix);
    const loose = new Set<string>();
    this.walkFrom(this.commonDir, prefix, loose, false);
    if (this.gitDir !== this.commonDir) this.walkFrom(this.gitDir, prefix, loose, true);
    const names = new Set<string>(loose);
    for (const name of packed.keys()) names.add(name);
    const entries: RefEntry[] = [];
    for (const name of names) {
      const p = loose.has(name) ? undefined : packed.get(name);
      const v: RefValue | undefined = p !== undefined ? { kind: 'id', id: p.id, peeled: p.peeled } : this.read(name);
      if (v === undefined) continue;
      if (v.kind === 'id') {
        entries.push({ name, id: v.id, peeled: v.peeled, symbolicTarget: undefined });
      } else {
        const id = this.resolve(v.target);
        if (id !== undefined) entries.push({ name, id, peeled: undefined, symbolicTarget: v.target });
      }
    }
    // Bytewise order of the UTF-8 names; each name encoded once, not once a comparison.
    const keyed = entries.map((entry) => ({ entry, key: Buffer.from(entry.name, 'utf8') }));
    keyed.sort((a, b) => Buffer.compare(a.key, b.key));
    return keyed.map((k) => k.entry);
  }

  /**
   * The loose refs under `root` whose names start with `prefix`. The walk starts in the deepest
   * directory the prefix names whole (`refs/tags/` starts in refs/tags), not in refs/: a listing
   * of one ref's directory (the transaction asks one for each new ref) must not read the
   * thousands of names beside it. The directories on the way are checked as the walk from refs/
   * would take them: each a real directory (no symbolic link followed), with a name git reads.
   */
  private walkFrom(root: string, prefix: string, into: Set<string>, worktreeOnly: boolean): void {
    const parts = prefix.startsWith('refs/') ? prefix.split('/').slice(0, -1) : ['refs'];
    for (let k = 2; k <= parts.length; k++) {
      const dir = parts.slice(0, k).join('/');
      if (!safeName(dir)) return;
      try {
        if (!lstatSync(join(root, dir)).isDirectory()) return;
      } catch (e) {
        if (!isNotFound(e)) throw e;
        return;
      }
    }
    this.walk(root, parts.join('/'), prefix, into, worktreeOnly);
  }

  private walk(root: string, relative: string, prefix: string, into: Set<string>, worktreeOnly: boolean): void {
    let names: import('node:fs').Dirent[];
    try {
      names = readdirSync(join(root, relative), { withFileTypes: true });
    } catch (e) {
      // A refs directory that is not there (or a file where one was: a ref deleted meanwhile) has no refs.
      if (!isNotFound(e)) throw e;
      return;
    }
    for (const d of names) {
      const name = `${relative}/${d.name}`;
      if (!safeName(name)) continue;
      if (d.isDirectory()) {
        if (name.startsWith(prefix) || prefix.startsWith(`${name}/`)) this.walk(root, name, prefix, into, worktreeOnly);
      } else if (name.startsWith(prefix) && (this.gitDir === this.commonDir || perWorktree(name) === worktreeOnly)) {
        into.add(name);
      }
    }
  }

  private parseLoose(text: string): RefValue | undefined {
    if (text.startsWith('ref:')) {
      const target = text.slice(4).trim();
      return safeName(target) ? { kind: 'symbolic', target } : undefined;
    }
    const hex = text.trimEnd();
    const id = hex.length === 2 * this.hashLength ? Buffer.from(hex, 'hex') : undefined;
    return id !== undefined && id.length === this.hashLength ? { kind: 'id', id, peeled: undefined } : undefined;
  }

  /** A loose ref's text; a directory (refs/heads when asked for "refs/heads") or a missing file is no ref. */
  private readFile(path: string): string | undefined {
    return readFileIfPresent(path, 'ref file')?.toString('utf8');
  }

  /**
   * `packed-refs` (git-pack-refs): `<id> <name>` lines, each optionally followed by `^<peeled id>`,
   * after a `# pack-refs with: <traits>` header. Looked at on every question (refs change under a
   * long-lived process), read again only when its stamp changed, as git's stat_validity_check
   * decides: git rewrites it through a lock file renamed over it, a new inode every time. A
   * one-shot `cat-file` asked twice (refs/replace/, then HEAD's target), and read gitoxide's 492 KB
   * each time. What was parsed is kept while the bytes stay the same.
   */
  private packedBytes(): Buffer | undefined {
    const path = join(this.commonDir, 'packed-refs');
    const stamp = fileStamp(path);
    if (stamp === this.packed.stamp) return this.packed.bytes;
    const bytes = readFileIfPresent(path, 'packed refs', false);
    const old = this.packed.bytes;
    if (bytes === undefined || old === undefined || !bytes.equals(old)) this.packed = { stamp: undefined, bytes, refs: undefined };
    // A file changed within the last second may change again without its stamp changing (see
    // stampAge): it is read again at every question until it is older.
    this.packed.stamp = stampAge(stamp) > RACY_MS ? stamp : undefined;
    return this.packed.bytes;
  }

  /**
   * One packed ref. When git wrote the file `sorted` (it always does), a bisection over its lines
   * finds it without parsing the rest, as git's packed-ref store does: a repository with thousands
   * of tags need not parse them all to resolve HEAD (gitoxide's 5,500 refs: ~5 ms each time).
   */
  private findPacked(name: string): { id: Buffer; peeled: Buffer | undefined } | undefined {
    const bytes = this.packedBytes();
    if (bytes === undefined) return undefined;
    const key = Buffer.from(name, 'utf8');
    const at = this.packed.refs === undefined ? this.seek(bytes, key) : -1;
    if (at < 0) return this.allPacked().get(name);
    const record = this.recordAt(bytes, at);
    if (record === undefined) return at < bytes.length ? this.allPacked().get(name) : undefined;
    return bytes.compare(key, 0, key.length, record.nameStart, record.nameEnd) === 0 ? this.parseRecord(bytes, record) : undefined;
  }

  /**
   * The packed refs whose names start with `prefix`. In a sorted file they are one run of
   * records, found by the same bisection (git iterates a prefix this way too): listing
   * `refs/replace/` for every `cat-file` must not parse thousands of tags (gitoxide: ~30 ms).
   */
  private packedUnder(prefix: string): Map<string, { id: Buffer; peeled: Buffer | undefined }> {
    const bytes = this.packedBytes();
    const under = new Map<string, { id: Buffer; peeled: Buffer | undefined }>();
    if (bytes === undefined) return under;
    const key = Buffer.from(prefix, 'utf8');
    let at = this.packed.refs === undefined ? this.seek(bytes, key) : -1;
    if (at >= 0) {
      for (;;) {
        const record = this.recordAt(bytes, at);
        if (record === undefined) {
          if (at < bytes.length) break; // a line not as git writes it: the full parse says where
          return under;
        }
        if (record.nameEnd - record.nameStart < key.length || bytes.compare(key, 0, key.length, record.nameStart, record.nameStart + key.length) !== 0) return under;
        under.set(bytes.toString('utf8', record.nameStart, record.nameEnd), this.parseRecord(bytes, record));
        at = record.next;
      }
      under.clear();
    }
    for (const [name, value] of this.allPacked()) if (name.startsWith(prefix)) under.set(name, value);
    return under;
  }

  /**
   * Where the first record whose name is not below `key` starts (the file's length if none), by
   * bisection over a file git wrote sorted; -1 when it is not marked sorted or a line met on the way
   * is not as git writes it (the caller then parses the whole file, which reports the bad line).
   */
  private seek(bytes: Buffer, key: Buffer): number {
    if (!isSorted(bytes)) return -1;
    // Records are a ref line and its peeled line, if any; bisect over record starts.
    const recordStart = (p: number): number => {
      let start = bytes.lastIndexOf(0x0a, p - 1) + 1;
      while (bytes[start] === 0x5e && start > 0) start = bytes.lastIndexOf(0x0a, start - 2) + 1;
      return start;
    };
    let lo = 0;
    while (lo < bytes.length && bytes[lo] === 0x23) lo = lineEnd(bytes, lo) + 1;
    let hi = bytes.length;
    while (lo < hi) {
      const mid = Math.max(lo, recordStart(lo + ((hi - lo) >>> 1)));
      const record = this.recordAt(bytes, mid);
      if (record === undefined) return -1;
      // (bytes.compare sets the name against the key: below zero, the name sorts first.)
      if (bytes.compare(key, 0, key.length, record.nameStart, record.nameEnd) < 0) lo = record.next;
      else hi = mid;
    }
    return lo;
  }

  /** The record (`<id> <name>` line, then an optional `^<peeled>` line) starting at `at`; undefined at the end or when the line is not a ref line. */
  private recordAt(bytes: Buffer, at: number): PackedRecord | undefined {
    if (at >= bytes.length) return undefined;
    const width = 2 * this.hashLength;
    const end = lineEnd(bytes, at);
    if (end - at < width + 2 || bytes[at + width] !== 0x20) return undefined;
    const after = end + 1;
    const peeledEnd = after < bytes.length && bytes[after] === 0x5e ? lineEnd(bytes, after) : -1;
    return { start: at, nameStart: at + width + 1, nameEnd: end, peeledStart: peeledEnd < 0 ? -1 : after + 1, next: peeledEnd < 0 ? after : peeledEnd + 1 };
  }

  private parseRecord(bytes: Buffer, record: PackedRecord): { id: Buffer; peeled: Buffer | undefined } {
    const id = this.parseId(bytes, record.start, record.start + 2 * this.hashLength);
    const peeled = record.peeledStart < 0 ? undefined : this.parseId(bytes, record.peeledStart, record.next - 1);
    return { id, peeled };
  }

  private parseId(bytes: Buffer, start: number, end: number): Buffer {
    const id = end - start === 2 * this.hashLength ? Buffer.from(bytes.toString('latin1', start, end), 'hex') : undefined;
    if (id === undefined || id.length !== this.hashLength) {
      const file = join(this.commonDir, 'packed-refs');
      throw new PackwrightError('REF_CORRUPT', `${file}: bad object id at byte ${start}`, { file, offset: start });
    }
    return id;
  }

  /** Every packed ref, parsed once per version of the file. */
  private allPacked(): Map<string, { id: Buffer; peeled: Buffer | undefined }> {
    const bytes = this.packedBytes();
    if (this.packed.refs !== undefined) return this.packed.refs;
    const file = join(this.commonDir, 'packed-refs');
    const refs = new Map<string, { id: Buffer; peeled: Buffer | undefined }>();
    const width = 2 * this.hashLength;
    let last: { id: Buffer; peeled: Buffer | undefined } | undefined;
    for (const [i, line] of (bytes?.toString('utf8') ?? '').split('\n').entries()) {
      if (line === '' || line.startsWith('#')) continue;
      const bad = (): never => {
        throw new PackwrightError('REF_CORRUPT', `${file}: unexpected line ${i + 1}: ${line}`, { file });
      };
      if (line.startsWith('^')) {
        if (last === undefined || line.length !== 1 + width) bad();
        (last as { peeled: Buffer | undefined }).peeled = Buffer.from(line.slice(1), 'hex');
        continue;
      }
      if (line.length < width + 2 || line[width] !== ' ') bad();
      const id = Buffer.from(line.slice(0, width), 'hex');
      if (id.length !== this.hashLength) bad();
      last = { id, peeled: undefined };
      refs.set(line.slice(width + 1), last);
    }
    this.packed.refs = refs;
    return refs;
  }
}

/** Where a packed-refs record lies in the file: its line, its name, its peeled id (-1: none), the next record. */
interface PackedRecord {
  start: number;
  nameStart: number;
  nameEnd: number;
  peeledStart: number;
  next: number;
}

/** The end of the line starting at `at` (its newline, or the end of the file). */
function lineEnd(bytes: Buffer, at: number): number {
  const e = bytes.indexOf(0x0a, at);
  return e < 0 ? bytes.length : e;
}

/** Whether git's header line says the file is sorted (`# pack-refs with: … sorted`). */
function isSorted(bytes: Buffer): boolean {
  if (bytes[0] !== 0x23) return false;
  const end = bytes.indexOf(0x0a);
  const header = bytes.toString('latin1', 0, end < 0 ? bytes.length : end);
  return header.startsWith('# pack-refs with:') && header.slice(17).split(' ').includes('sorted');
}
