import { PackwrightError } from '../errors/packwright-error.js';
import { toHex } from '../hash/hex.js';
import { parseCommit, parseTag } from '../objects/commit.js';
import { OBJ_COMMIT, OBJ_TAG, typeNumber } from '../objects/object-type.js';
import type { StoreHandle } from '../odb/store-handle.js';
import type { CommitGraphChain } from '../commit-graph/commit-graph-chain.js';
import { ObjectTable } from './object-table.js';

/**
 * Commits and their parents, one at a time, for the small walks of a conversation (upload-pack's
 * negotiation, its shallow boundaries, reachability checks of wanted ids): objects numbered in an
 * ObjectTable, 32 flag bits each for the caller, parents and dates read once, from the store's
 * commit-graph where it has them. Commits named in `grafts` (a shallow repository's boundary, or
 * one a client declared) have no parents, as git's registered shallow grafts make them.
 */
export class CommitDag {
  readonly table: ObjectTable;
  /** The caller's marks (git's object flags in upload-pack.c), 32 bits an object. */
  flags = new Uint32Array(1024);
  private parentLists: (number[] | undefined)[] = [];
  private dates: number[] = [];
  private readonly graph: CommitGraphChain | undefined;
  private readonly grafts: ObjectTable;

  constructor(
    readonly objects: StoreHandle,
    options: { grafts?: readonly Uint8Array[] } = {},
  ) {
    this.table = new ObjectTable(objects.hashLength);
    this.graph = objects.store.commitGraph();
    this.grafts = new ObjectTable(objects.hashLength, 16);
    for (const id of options.grafts ?? []) this.grafts.intern(id);
  }

  intern(id: Uint8Array): number {
    const n = this.table.intern(id);
    if (n >= this.flags.length) {
      const grown = new Uint32Array(Math.max(this.flags.length * 2, n + 1));
      grown.set(this.flags);
      this.flags = grown;
    }
    return n;
  }

  id(n: number): Buffer {
    return Buffer.from(this.table.id(n));
  }

  hex(n: number): string {
    return toHex(this.table.id(n));
  }

  is(n: number, flag: number): boolean {
    return ((this.flags[n] as number) & flag) !== 0;
  }

  mark(n: number, flag: number): void {
    this.flags[n] = (this.flags[n] as number) | flag;
  }

  unmark(n: number, flag: number): void {
    this.flags[n] = (this.flags[n] as number) & ~flag;
  }

  /** Clears `flag` on every object numbered so far. */
  clear(flag: number): void {
    const f = this.flags;
    for (let n = 0; n < this.table.count; n++) f[n] = (f[n] as number) & ~flag;
  }

  /** Whether the store has object `n`. */
  has(n: number): boolean {
    const id = this.table.id(n);
    return (this.graph !== undefined && this.graph.find(id) >= 0) || this.objects.has(id);
  }

  /** The type of object `n` (1-4), or 0 when the store lacks it. */
  type(n: number): number {
    const t = this.table.types[n] as number;
    if (t !== 0) return t;
    if (this.graph !== undefined && this.graph.find(this.table.id(n)) >= 0) {
      this.table.types[n] = OBJ_COMMIT;
      return OBJ_COMMIT;
    }
    const location = this.objects.locate(this.table.id(n));
    if (location === undefined) return 0;
    const type = typeNumber(this.objects.typeAt(location));
    this.table.types[n] = type;
    return type;
  }

  /** What tag `n` finally points at (n itself for anything else), or -1 when an object on the way is missing (git's deref_tag). */
  peel(n: number): number {
    for (let depth = 0; depth < 64; depth++) {
      const type = this.type(n);
      if (type === 0) return -1;
      if (type !== OBJ_TAG) return n;
      const tag = parseTag(this.objects.read(this.table.id(n)).data, this.table.hashLength, this.hex(n));
      n = this.intern(tag.object);
    }
    return -1;
  }

  /** Commit `n`'s parents (none for a graft); OBJECT_NOT_FOUND when the store lacks it. */
  parents(n: number): readonly number[] {
    const known = this.parentLists[n];
    if (known !== undefined) return known;
    this.parse(n);
    return this.parentLists[n] as number[];
  }

  /** Commit `n`'s committer date, in seconds. */
  date(n: number): number {
    if (this.parentLists[n] === undefined) this.parse(n);
    return this.dates[n] as number;
  }

  /** Reads commit `n` once: from the commit-graph, or the object. */
  private parse(n: number): void {
    const id = this.table.id(n);
    const graft = this.grafts.find(id) >= 0;
    const pos = this.graph === undefined ? -1 : this.graph.find(id);
    if (pos >= 0 && this.graph !== undefined) {
      const graph = this.graph;
      this.table.types[n] = OBJ_COMMIT;
      this.dates[n] = graph.date(pos);
      this.parentLists[n] = graft ? [] : graph.parents(pos).map((p) => this.intern(graph.id(p)));
      return;
    }
    const location = this.objects.locate(id);
    if (location === undefined) throw new PackwrightError('OBJECT_NOT_FOUND', `object ${this.hex(n)} not found`);
    const obj = this.objects.readAt(location);
    if (obj.type !== 'commit') throw new PackwrightError('OBJECT_CORRUPT', `object ${this.hex(n)} is not a commit`);
    this.table.types[n] = OBJ_COMMIT;
    const commit = parseCommit(obj.data, this.table.hashLength, this.hex(n));
    this.dates[n] = commit.time;
    this.parentLists[n] = graft ? [] : commit.parents.map((p) => this.intern(p));
  }
}
