import { ObjectTable } from '../walk/object-table.js';

/** Entries of the recent-ids cache (a power of two). */
const RECENT = 4096;
/** Int32s in a block of records (256 KiB): an object with more links gets a block of its own. */
const BLOCK = 1 << 16;

/**
 * The links of many objects, as one thread recorded them: each block of `records` holds, per
 * object, `[k, n, target0, type0, … target(n-1), type(n-1)]` (an object's links never span two
 * blocks), where `k` is the object's index in its source (pack order, or the list of loose
 * objects) and a target is an object number of the shared table, or `-(1 + i)` for the i-th id
 * of `unknown` (an object the store does not list; each such id is there once a thread).
 */
export interface LinkRecords {
  records: Int32Array[];
  unknown: Uint8Array;
}

/** Calls `each(block, p)` for every object's record, at position `p` of its block. */
export function forEachRecord(links: LinkRecords, each: (block: Int32Array, p: number) => void): void {
  for (const block of links.records) {
    for (let p = 0; p < block.length; p += 2 + 2 * (block[p + 1] as number)) each(block, p);
  }
}

/**
 * Records links as objects are parsed (see `LinkRecords`). Records go into blocks of a fixed
 * size, not one array grown by doubling: fresh memory costs a page fault for every 4 KiB written
 * first (~20 µs here: memory/index.ts), and doubling and a final trimmed copy write three times
 * what is kept (7 MB of links for a 76k-object repository: ~60 ms of faults saved at one thread).
 */
export class LinkRecorder {
  private readonly blocks: Int32Array[] = [];
  private records = new Int32Array(0);
  private length = 0;
  /**
   * The ids the table does not list, each once: a pack being indexed has no table yet, and its
   * trees name the same blobs version after version (git.git: ~50M links, ~300k distinct ids).
   */
  private readonly unknown: ObjectTable;
  private countAt = -1;
  private readonly H: number;
  /**
   * Ids met lately and their numbers, by the id's first bytes: consecutive versions of a tree
   * name mostly the same objects, and a hit here compares 20 bytes in cache instead of probing a
   * table of every object (~150 ns of cache misses a lookup on gitoxide's 226k objects).
   */
  private readonly recentIds: Uint8Array;
  /** The target each recent id was recorded as (a number of the table, or an unknown's), when `recentSet`. */
  private readonly recentTargets = new Int32Array(RECENT);
  private readonly recentSet = new Uint8Array(RECENT);

  /** Bits `1 << type` of the links recorded to each unknown id (with `distinct`). */
  private unknownTypes = new Uint8Array(64);

  /**
   * `distinct`: a link to an unknown id of a type already recorded is left out (index-pack's
   * checks ask only whether each id is there with the type its links say, not who links to it).
   */
  constructor(private readonly table: ObjectTable, private readonly distinct = false) {
    this.H = table.hashLength;
    this.recentIds = new Uint8Array(RECENT * this.H);
    this.unknown = new ObjectTable(this.H, 64);
  }

  /**
   * Starts the links of object `k`, of `size` bytes. Room for all of them is made here, so the
   * sink does not check for it per link: an entry or a header line that names an object takes at
   * least H + 4 bytes (mode, space, one-byte name, NUL and the id; or "tree " and a hex id).
   */
  begin(k: number, size: number): void {
    this.reserve(2 + 2 * (Math.floor(size / (this.H + 4)) + 1));
    this.records[this.length++] = k;
    this.countAt = this.length++;
    this.records[this.countAt] = 0;
  }

  /** Adds a link to the object being recorded: the id at `data[at..]`, of the type the link says. */
  readonly sink = (data: Uint8Array, at: number, type: number): void => {
    const H = this.H;
    const slot = (((data[at] as number) << 4) | ((data[at + 1] as number) >> 4)) & (RECENT - 1);
    let hit = this.recentSet[slot] === 1;
    if (hit) {
      const ids = this.recentIds;
      const p = slot * H;
      for (let i = 0; i < H; i++) {
        if (ids[p + i] !== data[at + i]) {
          hit = false;
          break;
        }
      }
    }
    let target: number;
    if (hit) {
      target = this.recentTargets[slot] as number;
    } else {
      target = this.table.find(data, at);
      if (target < 0) target = -(1 + this.unknown.intern(data, at));
      this.recentTargets[slot] = target;
      this.recentSet[slot] = 1;
      const ids = this.recentIds;
      const p = slot * H;
      for (let i = 0; i < H; i++) ids[p + i] = data[at + i] as number;
    }
    if (this.distinct && target < 0) {
      const u = -1 - target;
      if (u >= this.unknownTypes.length) {
        const grown = new Uint8Array(Math.max(u + 1, this.unknownTypes.length * 2));
        grown.set(this.unknownTypes);
        this.unknownTypes = grown;
      }
      const bit = 1 << type;
      if (((this.unknownTypes[u] as number) & bit) !== 0) return;
      this.unknownTypes[u] = (this.unknownTypes[u] as number) | bit;
    }
    this.records[this.length++] = target;
    this.records[this.length++] = type;
    this.records[this.countAt] = (this.records[this.countAt] as number) + 1;
  };

  end(): void {
    this.countAt = -1;
  }

  finish(): LinkRecords {
    this.close();
    return { records: this.blocks, unknown: this.unknown.ids.slice(0, this.unknown.count * this.H) };
  }

  /** Puts the block being filled, trimmed (a view, not a copy), among the full ones. */
  private close(): void {
    if (this.length > 0) this.blocks.push(this.records.subarray(0, this.length));
    this.records = new Int32Array(0);
    this.length = 0;
  }

  private reserve(n: number): void {
    if (this.length + n <= this.records.length) return;
    this.close();
    this.records = new Int32Array(Math.max(BLOCK, n));
  }
}
