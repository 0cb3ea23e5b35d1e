import { typeNumber } from '../objects/object-type.js';
import { fsyncSync, ftruncateSync } from 'node:fs';
import { hashFileRange } from '../hash/hash-file.js';
import { writeFully } from '../io/write-fully.js';
import { nodeZlib } from '../zlib/node-zlib.js';
import { Deflater } from '../zlib/deflater.js';
import { PackwrightError } from '../errors/packwright-error.js';
import { hashBytes, objectHeader } from '../hash/hash-object.js';
import { toHex } from '../hash/hex.js';
import { hashLength, type ObjectFormat } from '../hash/object-format.js';
import { encodeEntryHeader } from '../pack/entry-header.js';
import { loadReferenceDeflate } from '../zlib/reference-deflate.js';
import { growScanTo, type PackScan } from './pack-scan.js';
import type { ExternalBaseLookup } from './resolve-deltas.js';

/**
 * `--fix-thin`: appends each external base as a whole object after the last entry (over the old
 * trailer) of the pack file open as `fd`, rewrites the object count, re-hashes the file and writes
 * the new trailer, as git's `fix_unresolved_deltas` + `fixup_pack_header_footer` do; the scan
 * grows to cover the new entries. `ids` come in git's order (resolve-deltas.ts), and each base is
 * deflated at `level` (git's core.loosecompression, else core.compression, else 1) as reference
 * zlib does, so the completed pack, and with it the index, are the bytes git writes (or, without
 * `gitBytes`, by Node's zlib: faster, other bytes).
 */
export async function completeThinPack(fd: number, path: string, scan: PackScan, ids: Buffer[], lookup: ExternalBaseLookup, format: ObjectFormat, level: number, gitBytes = true): Promise<PackScan> {
  // Node's zlib through one reused handle: deflateSync made and freed a zlib stream (~300 KB of
  // state) for each base, 30 ms of a fetch of 10 commits for 241 bases of 680 KB.
  const deflater = gitBytes ? undefined : new Deflater(level);
  const deflate = deflater !== undefined ? (data: Uint8Array): Buffer => deflater.deflate(data) : await loadReferenceDeflate();
  const H = hashLength(format);
  const first = scan.count;
  const n = first + ids.length;
  const grown = growScanTo(scan, n);
  let offset = scan.offsets[first] as number;
  try {
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i] as Buffer;
      const found = lookup(id);
      if (found === undefined) throw new PackwrightError('OBJECT_NOT_FOUND', `base ${toHex(id)} vanished while completing the thin pack`);
      const obj = { type: typeNumber(found.type), data: found.data };
      const entry = Buffer.concat([encodeEntryHeader(obj.type, obj.data.length), deflate(obj.data, level)]);
      const k = first + i;
      grown.offsets[k] = offset;
      grown.types[k] = obj.type;
      grown.resolvedTypes[k] = obj.type;
      grown.ofsBase[k] = -1;
      grown.sizes[k] = obj.data.length;
      grown.crc32[k] = nodeZlib().crc32(entry);
      grown.ids.set(hashBytes(format, Buffer.concat([objectHeader(obj.type, obj.data.length), obj.data])), k * H);
      writeFully(fd, entry, path, offset);
      offset += entry.length;
    }
  } finally {
    deflater?.close();
  }
  grown.offsets[n] = offset;
  grown.count = n;
  ftruncateSync(fd, offset);
  const count = Buffer.alloc(4);
  count.writeUInt32BE(n);
  writeFully(fd, count, path, 8);
  // Re-hash the whole file: the trailer covers every byte before it.
  grown.packHash = hashFileRange(fd, offset, format, path);
  writeFully(fd, grown.packHash, path, offset);
  fsyncSync(fd);
  grown.end = offset + H;
  return grown;
}
