import type { ObjectTable } from '../create/object-table.js';

/** Entries of the recent-ids cache (a power of two). */
const RECENT = 4096;

/**
 * The links of many objects, as one thread recorded them: `records` holds, per object,
 * `[k, n, target0, type0, … target(n-1), type(n-1)]`, where `k` is the object's index in its
 * source (pack order, or the list of loose objects) and a target is an object number of the
 * shared table, or `-(1 + i)` for the i-th id of `unknown` (an object the store does not list).
 */
export interface LinkRecords {
  records: Int32Array;
  unknown: Uint8Array;
}

/** Records links as objects are parsed (see `LinkRecords`), growing its arrays by doubling. */
export class LinkRecorder {
  private records = new Int32Array(1 << 12);
  private length = 0;
  private unknown = new Uint8Array(0);
  private unknownCount = 0;
  private countAt = -1;
  private readonly H: number;
  /**
   * Ids met lately and their numbers, by the id's first bytes: consecutive versions of a tree
   * name mostly the same objects, and a hit here compares 20 bytes in cache instead of probing a
   * table of every object (~150 ns of cache misses a lookup on gitoxide's 226k objects).
   */
  private readonly recentIds: Uint8Array;
  private readonly recentNumbers = new Int32Array(RECENT).fill(-1);

  constructor(private readonly table: ObjectTable) {
    this.H = table.hashLength;
    this.recentIds = new Uint8Array(RECENT * this.H);
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
    let target = this.recentNumbers[slot] as number;
    if (target >= 0) {
      const ids = this.recentIds;
      const p = slot * H;
      for (let i = 0; i < H; i++) {
        if (ids[p + i] !== data[at + i]) {
          target = -1;
          break;
        }
      }
    }
    if (target < 0) {
      target = this.table.find(data, at);
      if (target >= 0) {
        this.recentNumbers[slot] = target;
        const ids = this.recentIds;
        const p = slot * H;
        for (let i = 0; i < H; i++) ids[p + i] = data[at + i] as number;
      }
    }
    if (target < 0) {
      if ((this.unknownCount + 1) * H > this.unknown.length) {
        const grown = new Uint8Array(Math.max(64 * H, this.unknown.length * 2));
        grown.set(this.unknown);
        this.unknown = grown;
      }
      this.unknown.set(data.subarray(at, at + H), this.unknownCount * H);
      target = -(1 + this.unknownCount++);
    }
    this.records[this.length++] = target;
    this.records[this.length++] = type;
    this.records[this.countAt] = (this.records[this.countAt] as number) + 1;
  };

  end(): void {
    this.countAt = -1;
  }

  finish(): LinkRecords {
    return { records: this.records.slice(0, this.length), unknown: this.unknown.slice(0, this.unknownCount * this.H) };
  }

  private reserve(n: number): void {
    if (this.length + n <= this.records.length) return;
    const grown = new Int32Array(Math.max(this.records.length * 2, this.length + n));
    grown.set(this.records);
    this.records = grown;
  }
}
