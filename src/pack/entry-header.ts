import { PackwrightError } from '../errors/packwright-error.js';
import { OBJ_OFS_DELTA, OBJ_REF_DELTA } from '../hash/hash-object.js';

/**
 * One entry header, decoded into a reused object so hot loops allocate nothing.
 * For deltas `size` is the size of the delta data, not of the result (gitformat-pack).
 */
export class EntryHeader {
  type = 0;
  size = 0;
  /** Bytes from the entry's start to its zlib stream: type/size varint plus base reference. */
  headerLength = 0;
  /** OFS_DELTA: absolute offset of the base entry. */
  baseOffset = -1;
  /** REF_DELTA: position of the base id in the buffer that was parsed. */
  baseIdPosition = -1;
  /** REF_DELTA base id, copied out of its window by `PackFile.readEntryHeader`. */
  baseId: Buffer | undefined = undefined;
}

/** Largest entry header: 10 size bytes, then either 10 offset bytes or a 32-byte id. */
export const MAX_ENTRY_HEADER = 10 + 32;

/** Returned instead of throwing when the header runs past `end` and more input may still come. */
export const HEADER_INCOMPLETE = -1;

/**
 * Parses the entry header at `buf[pos]`, which is at `entryOffset` in the pack. Returns the header
 * length, or HEADER_INCOMPLETE when `end` cuts it. Throws PACK_CORRUPT for an invalid type, an
 * oversized varint or an OFS base outside `0 < base < entryOffset`.
 */
export function parseEntryHeader(
  buf: Uint8Array, pos: number, end: number, entryOffset: number, hashLength: number, out: EntryHeader, file?: string,
): number {
  const start = pos;
  if (pos >= end) return HEADER_INCOMPLETE;
  let c = buf[pos++] as number;
  const type = (c >> 4) & 7;
  let size = c & 15;
  let shift = 4;
  // A running power of two: `2 ** shift` is a call to Math.pow, ~30× slower (measured).
  let scale = 16;
  while (c & 0x80) {
    if (pos >= end) return HEADER_INCOMPLETE;
    c = buf[pos++] as number;
    if (shift > 46) throw corrupt(`entry size at offset ${entryOffset} does not fit in 53 bits`, entryOffset, file);
    size += (c & 0x7f) * scale;
    scale *= 128;
    shift += 7;
  }
  if (type === 0 || type === 5) throw corrupt(`unknown object type ${type} at offset ${entryOffset}`, entryOffset, file);
  out.type = type;
  out.size = size;
  out.baseOffset = -1;
  out.baseIdPosition = -1;
  if (type === OBJ_OFS_DELTA) {
    if (pos >= end) return HEADER_INCOMPLETE;
    c = buf[pos++] as number;
    let ofs = c & 0x7f;
    while (c & 0x80) {
      if (pos >= end) return HEADER_INCOMPLETE;
      // The encoding adds one per continuation byte so every offset has one spelling.
      ofs += 1;
      if (ofs >= 2 ** 45) throw corrupt(`offset value overflow for delta base object at offset ${entryOffset}`, entryOffset, file);
      c = buf[pos++] as number;
      ofs = ofs * 128 + (c & 0x7f);
    }
    if (ofs <= 0 || ofs > entryOffset) {
      throw corrupt(`delta base offset is out of bound for the entry at offset ${entryOffset} (distance ${ofs})`, entryOffset, file);
    }
    out.baseOffset = entryOffset - ofs;
  } else if (type === OBJ_REF_DELTA) {
    if (pos + hashLength > end) return HEADER_INCOMPLETE;
    out.baseIdPosition = pos;
    pos += hashLength;
  }
  out.headerLength = pos - start;
  return out.headerLength;
}

function corrupt(message: string, offset: number, file: string | undefined): PackwrightError {
  const opts: { offset: number; file?: string } = { offset };
  if (file !== undefined) opts.file = file;
  return new PackwrightError('PACK_CORRUPT', file ? `${file}: ${message}` : message, opts);
}

/** Encodes an entry header (type + size varint), for pack writing. */
export function encodeEntryHeader(type: number, size: number): Buffer {
  const bytes: number[] = [];
  let c = (type << 4) | (size & 15);
  let rest = Math.floor(size / 16);
  while (rest > 0) {
    bytes.push(c | 0x80);
    c = rest & 0x7f;
    rest = Math.floor(rest / 128);
  }
  bytes.push(c);
  return Buffer.from(bytes);
}
