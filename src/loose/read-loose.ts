import { closeSync, fstatSync, readFileSync, readSync } from 'node:fs';
import { openForReading } from '../io/open-for-reading.js';

/** Compressed bytes read for a loose object's header (see readLooseHeader). */
const HEADER_INPUT = 4096;
import { PackwrightError } from '../errors/packwright-error.js';
import { typeNumber } from '../objects/object-type.js';
import { MAX_HEADER_LENGTH } from '../hash/hash-object.js';
import { Inflater, inflateCodeName } from '../zlib/inflater.js';

/** A loose object: its type number (1-4) and its bytes. */
export interface LooseObject {
  type: number;
  data: Buffer;
}

/** A loose object's header: type number, size, and where the data starts in the inflated stream. */
export interface LooseHeader {
  type: number;
  size: number;
  /** Bytes of `"<type> <size>\0"`. */
  headerLength: number;
}

/**
 * Parses `"<type> <size>\0"` with git's rules: a known type, a canonical decimal size (no leading
 * zeros, "blob 03" is rejected), within 32 bytes.
 */
export function parseLooseHeader(buf: Uint8Array, length: number, path: string): LooseHeader {
  const fail = (what: string): never => {
    throw new PackwrightError('LOOSE_CORRUPT', `${path}: unable to parse loose object header: ${what}`, { file: path, offset: 0 });
  };
  const limit = Math.min(length, MAX_HEADER_LENGTH);
  let space = -1;
  for (let i = 0; i < limit; i++) if (buf[i] === 0x20) { space = i; break; }
  // A type name so long that 32 bytes hold neither its end nor the NUL: git's "header too long".
  if (space < 0 && limit === MAX_HEADER_LENGTH && !buf.subarray(0, limit).includes(0)) fail('header is not terminated within 32 bytes');
  if (space <= 0) fail('no type');
  const type = typeNumber(Buffer.from(buf.subarray(0, space)).toString('latin1'));
  if (type < 0) fail(`unknown type "${Buffer.from(buf.subarray(0, space)).toString('latin1')}"`);
  let size = 0;
  let i = space + 1;
  const digitsStart = i;
  for (; i < limit; i++) {
    const c = buf[i] as number;
    if (c === 0) break;
    if (c < 0x30 || c > 0x39) fail('size is not a decimal number');
    if (i > digitsStart && size === 0) fail('size has a leading zero');
    size = size * 10 + (c - 0x30);
    if (size > Number.MAX_SAFE_INTEGER / 10) fail('size is too large');
  }
  if (i === digitsStart) fail('missing size');
  if (i >= limit) fail('header is not terminated within 32 bytes');
  return { type, size, headerLength: i + 1 };
}

/**
 * Reads a loose object file. Like git's ordinary reads it does not verify the hash (fsck does),
 * but it checks the header, the exact size and that nothing follows the zlib stream.
 */
export function readLoose(path: string, inflater: Inflater, fileData?: Buffer): LooseObject {
  const file = fileData ?? readWhole(path);
  const head = Buffer.allocUnsafe(MAX_HEADER_LENGTH);
  const got = inflater.inflatePrefix(file, 0, file.length, head, 0, MAX_HEADER_LENGTH);
  if (got < 0) throw new PackwrightError('LOOSE_CORRUPT', `${path}: corrupt loose object: ${inflater.lastError}`, { file: path, offset: 0 });
  const h = parseLooseHeader(head, got, path);
  const total = h.headerLength + h.size;
  const out = Buffer.allocUnsafeSlow(total + 1);
  const consumed = inflater.inflateExact(file, 0, file.length, out, 0, total);
  if (consumed < 0) {
    throw new PackwrightError('LOOSE_CORRUPT', `${path}: corrupt loose object: ${inflateCodeName(consumed)} (${inflater.lastError})`, { file: path, offset: 0 });
  }
  if (consumed !== file.length) {
    throw new PackwrightError('LOOSE_CORRUPT', `${path}: garbage at end of loose object (${file.length - consumed} bytes after the zlib stream)`, {
      file: path, offset: consumed,
    });
  }
  return { type: h.type, data: out.subarray(h.headerLength, total) };
}

/** Reads only the header (type and size) of a loose object file. */
/** The file's bytes; one pruned since it was found (git prune, gc) is OBJECT_NOT_FOUND. */
function readWhole(path: string): Buffer {
  const fd = openForReading(path, 'OBJECT_NOT_FOUND');
  try {
    return readFileSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** The type and size of a loose object, inflating only its first bytes. */
export function readLooseHeader(path: string, inflater: Inflater): LooseHeader {
  // The header is in the first bytes out; a few KiB of input always hold them (a zlib header and
  // at most one dynamic block header before the first symbols), so a large file is not read whole.
  // Pruned since it was found (git prune, gc): the object is not there.
  const fd = openForReading(path, 'OBJECT_NOT_FOUND');
  let file: Buffer;
  try {
    const size = fstatSync(fd).size;
    file = Buffer.allocUnsafe(Math.min(size, HEADER_INPUT));
    const n = readSync(fd, file, 0, file.length, 0);
    file = file.subarray(0, n);
    const head = Buffer.allocUnsafe(MAX_HEADER_LENGTH);
    let got = inflater.inflatePrefix(file, 0, file.length, head, 0, MAX_HEADER_LENGTH);
    if (got < 0 && n < size) {
      file = readFileSync(path);
      got = inflater.inflatePrefix(file, 0, file.length, head, 0, MAX_HEADER_LENGTH);
    }
    if (got < 0) throw new PackwrightError('LOOSE_CORRUPT', `${path}: corrupt loose object: ${inflater.lastError}`, { file: path, offset: 0 });
    return parseLooseHeader(head, got, path);
  } finally {
    closeSync(fd);
  }
}

/**
 * The header of a loose object whatever its type name and length (git's cat-file
 * --allow-unknown-type): the type as written and the size. Throws LOOSE_CORRUPT when the file does
 * not inflate to `<name> <decimal size>\0`.
 */
export function readLooseHeaderLiterally(path: string, inflater: Inflater): { typeName: string; size: number } {
  const file = readWhole(path);
  for (let room = 256; ; room *= 4) {
    const head = Buffer.allocUnsafe(room);
    const got = inflater.inflatePrefix(file, 0, file.length, head, 0, room);
    if (got < 0) throw new PackwrightError('LOOSE_CORRUPT', `${path}: corrupt loose object: ${inflater.lastError}`, { file: path, offset: 0 });
    const nul = head.subarray(0, got).indexOf(0);
    if (nul < 0) {
      if (got < room || room >= 1 << 20) throw new PackwrightError('LOOSE_CORRUPT', `${path}: unable to parse loose object header: not terminated`, { file: path, offset: 0 });
      continue;
    }
    const m = /^([^ ]+) (0|[1-9][0-9]*)$/.exec(head.toString('latin1', 0, nul));
    if (m === null) throw new PackwrightError('LOOSE_CORRUPT', `${path}: unable to parse loose object header`, { file: path, offset: 0 });
    return { typeName: m[1] as string, size: Number(m[2]) };
  }
}
