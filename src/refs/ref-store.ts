import { readdirSync } from 'node:fs';
import { readFileIfPresent } from '../io/read-file-if-present.js';
import { join } from 'node:path';
import { PackwrightError } from '../errors/packwright-error.js';
import { compareBytes } from '../idx/sorted-ids.js';

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

interface PackedRefs {
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
  private packed: PackedRefs = { bytes: undefined, refs: undefined };

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
    const packed = this.allPacked();
    const loose = new Set<string>();
    this.walk(this.commonDir, 'refs', prefix, loose, false);
    if (this.gitDir !== this.commonDir) this.walk(this.gitDir, 'refs', prefix, loose, true);
    const names = new Set<string>(loose);
    for (const name of packed.keys()) if (name.startsWith(prefix)) names.add(name);
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
    return entries.sort((a, b) => {
      const x = Buffer.from(a.name);
      const y = Buffer.from(b.name);
      return compareBytes(x, 0, y, 0, Math.min(x.length, y.length)) || x.length - y.length;
    });
  }

  private walk(root: string, relative: string, prefix: string, into: Set<string>, worktreeOnly: boolean): void {
    let names: import('node:fs').Dirent[];
    try {
      names = readdirSync(join(root, relative), { withFileTypes: true });
    } catch {
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
   * after a `# pack-refs with: <traits>` header. Read again on every question (refs change under a
   * long-lived process); what was parsed is kept while the bytes stay the same.
   */
  private packedBytes(): Buffer | undefined {
    const bytes = readFileIfPresent(join(this.commonDir, 'packed-refs'), 'packed refs', false);
    const old = this.packed.bytes;
    if (bytes === undefined || old === undefined || !bytes.equals(old)) this.packed = { bytes, refs: undefined };
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
    if (this.packed.refs !== undefined || !isSorted(bytes)) return this.allPacked().get(name);
    const key = Buffer.from(name, 'utf8');
    const width = 2 * this.hashLength;
    // Records are a ref line and its peeled line, if any; bisect over record starts.
    const recordStart = (p: number): number => {
      let start = bytes.lastIndexOf(0x0a, p - 1) + 1;
      while (bytes[start] === 0x5e && start > 0) start = bytes.lastIndexOf(0x0a, start - 2) + 1;
      return start;
    };
    const lineEnd = (p: number): number => {
      const e = bytes.indexOf(0x0a, p);
      return e < 0 ? bytes.length : e;
    };
    let lo = 0;
    while (lo < bytes.length && bytes[lo] === 0x23) lo = lineEnd(lo) + 1;
    let hi = bytes.length;
    while (lo < hi) {
      const mid = Math.max(lo, recordStart(lo + ((hi - lo) >>> 1)));
      const end = lineEnd(mid);
      if (end - mid < width + 2 || bytes[mid + width] !== 0x20) return this.allPacked().get(name);
      const nameStart = mid + width + 1;
      const cmp = Buffer.compare(bytes.subarray(nameStart, end), key);
      if (cmp === 0) {
        const next = end + 1;
        const peeledEnd = next < bytes.length && bytes[next] === 0x5e ? lineEnd(next) : -1;
        const id = this.parseId(bytes, mid, mid + width);
        const peeled = peeledEnd < 0 ? undefined : this.parseId(bytes, next + 1, peeledEnd);
        return { id, peeled };
      }
      if (cmp < 0) {
        const next = end + 1;
        lo = next < bytes.length && bytes[next] === 0x5e ? lineEnd(next) + 1 : next;
      } else {
        hi = mid;
      }
    }
    return undefined;
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

/** Whether git's header line says the file is sorted (`# pack-refs with: … sorted`). */
function isSorted(bytes: Buffer): boolean {
  if (bytes[0] !== 0x23) return false;
  const end = bytes.indexOf(0x0a);
  const header = bytes.toString('latin1', 0, end < 0 ? bytes.length : end);
  return header.startsWith('# pack-refs with:') && header.slice(17).split(' ').includes('sorted');
}
