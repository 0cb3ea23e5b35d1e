import { ObjectTable } from '../walk/object-table.js';
import { isPackwrightError } from '../errors/packwright-error.js';
import { FsckRules } from './fsck-messages.js';
import { TYPE_NAMES, typeNumber } from '../objects/object-type.js';
import type { StoreHandle } from '../odb/store-handle.js';
import { type StorePack } from '../odb/store-pack.js';
import type { Repository } from '../repo/repository.js';
import { fsckRulesFromConfig } from './config-rules.js';
import { FSCK_ERROR_OBJECT, type FsckMessage, type FsckMessageKind, type FsckOptions } from './fsck-options.js';

// Per-object flags (git's builtin/fsck.c has the first four).
export const REACHABLE = 1;
export const HAS_OBJ = 4;
export const USED = 8;
export const PROMISOR = 16;
export const IN_PACK = 32;
export const LISTED = 64;

/**
 * Where one object's recorded links are: a chunk of records (a block of a thread's LinkRecords) and
 * an offset in it. Chunks are numbered in 16 bits: 65535 blocks of 256 KiB hold 2^31 links.
 */
export interface LinkChunk {
  records: Int32Array;
  /** Object number of each `k` in the records (pack index or loose list index -> table number). */
  numberOf: Int32Array | undefined;
  /** Object number of each unknown id. */
  unknown: Int32Array;
}

/**
 * What the stages of one fsck run share: the table of every object with its flags, each object's
 * recorded links, the names objects are reached by, and the report (messages and exit status).
 */
export class FsckState {
  readonly H: number;
  readonly handle: StoreHandle;
  readonly rules: FsckRules;
  table!: ObjectTable;
  flags = new Uint8Array(0);
  status = 0;
  readonly messages: FsckMessage[] = [];
  readonly chunks: LinkChunk[] = [];
  readonly names = new Map<number, string>();
  readonly ms: Record<string, number> = {};
  lap = performance.now();
  checked = 0;
  linkChunk = new Uint16Array(0);
  linkAt = new Int32Array(0);
  readonly gitmodules = new Set<string>();
  readonly gitattributes = new Set<string>();
  defaultRefs = 0;
  showUnreachable: boolean;
  readonly pending: number[] = [];

  constructor(readonly repo: Repository, readonly o: FsckOptions) {
    this.H = repo.store.hashLength;
    this.handle = repo.store.handle();
    this.rules = fsckRulesFromConfig(repo.config, repo.store.hashLength * 2, o.strict === true, repo.env['HOME']);
    this.showUnreachable = o.unreachable === true;
  }

  close(): void {
    this.handle.close();
  }

  time(phase: string): void {
    const now = performance.now();
    this.ms[phase] = now - this.lap;
    this.lap = now;
  }

  say(kind: FsckMessageKind, text: string, extra: Pick<FsckMessage, 'id' | 'msgId'> = {}): void {
    const stream = kind === 'error' || kind === 'warning' || kind === 'notice' ? 'stderr' : 'stdout';
    const m: FsckMessage = { kind, stream, text, ...extra };
    this.messages.push(m);
    this.o.onMessage?.(m);
  }

  error(text: string, bit: number, id?: string): void {
    this.status |= bit;
    this.say('error', `error: ${text}`, id === undefined ? {} : { id });
  }

  cruft: string[] = [];

  /** Table numbers of each pack's objects, by index position (list). */
  readonly packNumbers = new Map<StorePack, Int32Array>();
  looseList: { dir: string; hex: string; path: string; n: number }[] = [];

  /** Special blobs found in a pack after (or in) the one whose tree named them. */
  readonly specialInPack = new Set<string>();
  readonly promisorChunks = new Set<number>();

  growFlags(): void {
    if (this.flags.length >= this.table.count) return;
    const grown = new Uint8Array(Math.max(this.table.count, this.flags.length * 2));
    grown.set(this.flags);
    this.flags = grown;
  }

  target(chunk: LinkChunk, t: number): number {
    return t >= 0 ? t : (chunk.unknown[-t - 1] as number);
  }

  hexOf(n: number): string {
    return Buffer.from(this.table.id(n)).toString('hex');
  }

  /** git's objerror: `error in <type> <id>: <what>`. */
  objectError(type: number, hex: string, what: string): void {
    this.status |= FSCK_ERROR_OBJECT;
    this.say('error', `error in ${TYPE_NAMES[type] || 'unknown'} ${this.describe(hex)}: ${what}`, { id: hex });
  }

  describe(hex: string, n?: number): string {
    if (this.o.nameObjects !== true) return hex;
    const number = n ?? this.table.find(Buffer.from(hex, 'hex'));
    const name = number >= 0 ? this.names.get(number) : undefined;
    return name === undefined ? hex : `${hex} (${name})`;
  }

  putName(n: number, name: string): void {
    if (this.o.nameObjects === true && !this.names.has(n)) this.names.set(n, name);
  }

  /** The object number of `id`, added (with no flags) when the store does not list it. */
  numberOf(id: Uint8Array, at = 0): number {
    const n = this.table.intern(id, at);
    if (this.table.added) this.growFlags();
    return n;
  }

  isPresent(n: number): boolean {
    return ((this.flags[n] as number) & (HAS_OBJ | IN_PACK)) !== 0 || this.handle.has(this.table.id(n));
  }

  typeOf(n: number): number {
    let type = this.table.types[n] as number;
    if (type === 0 || !(((this.flags[n] as number) & HAS_OBJ))) {
      try {
        type = typeNumber(this.handle.header(this.table.id(n)).type);
        this.table.types[n] = type;
      } catch (e) {
        if (!isPackwrightError(e)) throw e;
      }
    }
    return type;
  }

  /**
   * Calls `visit` for each link of object `n`, from its recorded links or, for an object not
   * checked (connectivity only, or names wanted), by reading it. Names the targets as git does.
   */
  /** Commits the repository is shallow at (`$GIT_DIR/shallow`): their parents are not theirs to link, as in git. */
  shallowCommits: Set<number> | undefined;
}
