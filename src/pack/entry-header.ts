import { PackwrightError } from '../errors/packwright-error.js';
import { readSizeVarint, sizeVarintEnd, sizeVarintLength, VARINT_CUT, VARINT_TOO_LONG, writeSizeVarint } from '../encoding/size-varint.js';

/** Entry types of deltas (gitformat-pack); 1-4 are object types (objects/object-type.ts), 5 is reserved. */
export const OBJ_OFS_DELTA = 6;
/** Entry type of a delta whose base is named by its id. */
export const OBJ_REF_DELTA = 7;

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
  const c0 = buf[pos++] as number;
  const type = (c0 >> 4) & 7;
  let size = c0 & 15;
  if (c0 & 0x80) {
    // The rest of the size is a size varint starting at bit 4. Its commonest form, one more byte
    // (sizes below 2 KiB), is read here: a call per entry cost ~10 ms of the ~100 ms info table
    // build on gitoxide.pack (226k entries), because that loop runs unoptimized for a good part.
    const c1 = pos < end ? (buf[pos] as number) : 0x80;
    if (!(c1 & 0x80)) {
      size += c1 * 16;
      pos++;
    } else {
      size = readSizeVarint(buf, pos, end, size, 16);
      if (size === VARINT_CUT) return HEADER_INCOMPLETE;
      if (size === VARINT_TOO_LONG) throw corrupt(`entry size at offset ${entryOffset} does not fit in 53 bits`, entryOffset, file);
      pos = sizeVarintEnd;
    }
  }
  if (type === 0 || type === 5) throw corrupt(`unknown object type ${type} at offset ${entryOffset}`, entryOffset, file);
  out.type = type;
  out.size = size;
  out.baseOffset = -1;
  out.baseIdPosition = -1;
  if (type === OBJ_OFS_DELTA) {
    if (pos >= end) return HEADER_INCOMPLETE;
    let c = buf[pos++] as number;
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

/** Encodes an entry header's type and size (no base reference), for pack writing. */
export function encodeEntryHeader(type: number, size: number): Buffer {
  const out = Buffer.allocUnsafe(1 + sizeVarintLength(size));
  const rest = Math.floor(size / 16);
  out[0] = (type << 4) | (size & 15) | (rest > 0 ? 0x80 : 0);
  const end = rest > 0 ? writeSizeVarint(out, 1, rest) : 1;
  return out.subarray(0, end);
}

/**
 * Encodes the distance from an OFS_DELTA entry back to its base (gitformat-pack, "offset
 * encoding"): big-endian base 128, and each continuation adds one, so every distance has exactly
 * one spelling (the inverse of the decoding in `parseEntryHeader`). At most 10 bytes.
 */
export function encodeOfsDistance(distance: number): Buffer {
  const bytes = Buffer.allocUnsafe(10);
  let p = bytes.length - 1;
  bytes[p] = distance % 128;
  for (let d = Math.floor(distance / 128); d > 0; d = Math.floor(d / 128)) {
    d -= 1;
    bytes[--p] = 0x80 | (d % 128);
  }
  return bytes.subarray(p);
}
