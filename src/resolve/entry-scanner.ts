import { PackwrightError } from '../errors/packwright-error.js';
import { collisionAttack } from '../hash/collision-attack.js';
import { threadLanes, type Sha1dcLanes } from '../hash/sha1dc/sha1dc-lanes.js';
import { hashInto, MAX_HEADER_LENGTH, writeHeaderBefore } from '../hash/hash-object.js';
import { OBJ_OFS_DELTA } from '../pack/entry-header.js';
import { detectsCollisions, hashLength, type ObjectFormat } from '../hash/object-format.js';
import { EntryHeader, HEADER_INCOMPLETE, parseEntryHeader } from '../pack/entry-header.js';
import { crc32 } from '../zlib/crc32.js';
import { Inflater, INFLATE_INPUT_ENDED, inflateCodeName } from '../zlib/inflater.js';
import { reserveKept, type KeptData } from './kept-deltas.js';

/** deflate's best ratio, rounded up (zlib's technical notes: 1032:1). */
export const MAX_INFLATE_RATIO = 1033;

/** Returned by `EntryScanner.scan` when the entry runs past the bytes given. */
export const NEED_MORE = -1;

/**
 * Pass 1's work on one entry, wherever its bytes are: parse the header, inflate the data to learn
 * the exact compressed length, CRC32 the raw entry and hash a non-delta object. Reuses one
 * inflater and one scratch buffer across entries.
 */
export class EntryScanner {
  readonly header = new EntryHeader();
  private readonly inflater = new Inflater();
  private scratch = Buffer.allocUnsafeSlow(1 << 16);
  private readonly H: number;
  crc = 0;

  /**
   * `inputSize`: where the input ends, when known (a file's size, or --max-input-size). A declared
   * size is then checked against what the bytes left could inflate to before room is made for it.
   * `detectCollisions`: ids are SHA-1 with collision detection (sha1dc), and a flagged object fails.
   * They are then hashed four at a time (Sha1dcLanes): an id is in `ids` after `flush`, which the
   * caller runs before it reads ids or moves the table.
   */
  constructor(private readonly format: ObjectFormat, private readonly name: string, private readonly inputSize = Infinity, detectCollisions = false) {
    this.H = hashLength(format);
    this.lanes = detectsCollisions(format, detectCollisions) ? threadLanes() : undefined;
  }

  private readonly lanes: Sha1dcLanes | undefined;
  /** Where deltas are kept for pass 2 (kept-deltas.ts), while they fit. */
  kept: KeptData | undefined;
  /** Where the last entry's data went in `kept.data`, plus one (0: not kept): the caller commits it. */
  keptAt = 0;
  /**
   * The entry at `pos` ran past the bytes given (NEED_MORE) and is tried again as more arrives:
   * into the same room of the kept store (`keptAt`), and in pieces (Inflater.inflateStreaming,
   * `streaming` once a try has started the stream), where its first try inflated it whole, as
   * most entries are, with the cheaper Z_FINISH.
   */
  private retry: { pos: number; keptAt: number; streaming: boolean } | undefined;

  /**
   * Scans the entry at pack offset `pos`, found at `buf[at]`, with valid bytes up to `buf[end]`.
   * Returns its total length, or NEED_MORE. For a non-delta, writes its id to `ids` at `idAt`.
   * Throws PACK_CORRUPT (with the offset) for a bad header or stream.
   */
  scan(buf: Uint8Array, at: number, end: number, pos: number, ids: Uint8Array, idAt: number): number {
    const h = this.header;
    const n = parseEntryHeader(buf, at, end, pos, this.H, h, this.name);
    if (n === HEADER_INCOMPLETE) return NEED_MORE;
    const size = h.size;
    // A delta that the kept store has room for is inflated straight into it (committed by the
    // caller with `keptAt`); anything else into the scratch buffer.
    const kept = this.kept;
    const again = this.retry?.pos === pos ? this.retry : undefined;
    const keptAt = kept === undefined || h.type < OBJ_OFS_DELTA ? 0 : again !== undefined ? again.keptAt : reserveKept(kept, size);
    const keep = keptAt !== 0;
    // Room for the header, the data and the one spare byte inflateExact needs to see the end.
    const need = MAX_HEADER_LENGTH + size + 1;
    if (need > this.scratch.length) {
      // deflate cannot do better than ~1032:1 (a stored length code per 258 bytes), so a header
      // that declares more than the rest of the input could hold is corrupt: refuse it before
      // allocating for it.
      if (size > MAX_INFLATE_RATIO * (this.inputSize - pos) + 64) {
        throw new PackwrightError('PACK_CORRUPT', `${this.name}: object at offset ${pos} declares ${size} bytes, more than the ${this.inputSize - pos} bytes left can inflate to`, { file: this.name, offset: pos });
      }
      if (size > 0xffffffff) throw new PackwrightError('PACK_TOO_LARGE', `${this.name}: object at offset ${pos} declares ${size} bytes`, { file: this.name, offset: pos });
      if (!keep) this.scratch = Buffer.allocUnsafeSlow(Math.max(need, this.scratch.length * 2));
    }
    this.keptAt = keptAt;
    // In the scratch buffer, room before the data for "<type> <size>\0" makes the object hash as one range.
    const out = keep ? (kept as KeptData).data : this.scratch;
    const outOffset = keep ? keptAt - 1 : MAX_HEADER_LENGTH;
    const used = again === undefined
      ? this.inflater.inflateExact(buf, at + n, end, out, outOffset, size)
      : this.inflater.inflateStreaming(buf, at + n, end, out, outOffset, size, again.streaming);
    if (used === INFLATE_INPUT_ENDED) {
      this.retry = { pos, keptAt, streaming: again !== undefined };
      return NEED_MORE;
    }
    this.retry = undefined;
    if (used < 0) {
      throw new PackwrightError('PACK_CORRUPT', `${this.name}: inflate failed for the object at offset ${pos}: ${inflateCodeName(used)} (${this.inflater.lastError})`, { file: this.name, offset: pos });
    }
    const total = n + used;
    this.crc = crc32(buf, at, at + total);
    if (h.type < OBJ_OFS_DELTA) {
      const start = writeHeaderBefore(this.scratch, MAX_HEADER_LENGTH, h.type, size);
      const object = this.scratch.subarray(start, MAX_HEADER_LENGTH + size);
      if (this.lanes === undefined) hashInto(this.format, object, ids, idAt);
      else {
        const file = this.name;
        this.lanes.submit(object, ids, idAt, this, (digest) => { throw collisionAttack(digest, { file, offset: pos }); });
      }
    }
    return total;
  }

  /** Writes every id still being hashed (and fails if one is half of a collision attack). */
  flush(): void {
    this.lanes?.flush();
  }

  close(): void {
    this.lanes?.discard(this);
    this.inflater.close();
  }
}
