import { PackwrightError } from '../errors/packwright-error.js';
import { nodeCrypto } from '../hash/node-crypto.js';
import { hashLength, type ObjectFormat } from '../hash/object-format.js';
import type { PackIndex } from '../idx/pack-index.js';
import { EntryHeader, HEADER_INCOMPLETE, OBJ_OFS_DELTA, OBJ_REF_DELTA, parseEntryHeader } from '../pack/entry-header.js';
import { PACK_HEADER_LENGTH, parsePackHeader } from '../pack/pack-header.js';
import { MAX_INFLATE_RATIO } from './entry-scanner.js';
import { compareBytes } from '../idx/sorted-ids.js';
import { addRefDelta, allocArray, allocScan, findOffset, needsWideOffsets, type PackScan } from './pack-scan.js';

/**
 * Pass 1 for a pack whose index is at hand, as git's fsck verifies packs (verify_packfile): the
 * index gives every entry's extent, so nothing is inflated here. Each entry's header is parsed,
 * and the trailer is checked against the pack and the index. The objects are left unhashed
 * (`PackScan.unhashed`): pass 2, on every thread, inflates and hashes the non-deltas too, checks
 * that each zlib stream ends exactly where the next entry starts, and checks each entry's raw
 * bytes against the CRC32 a v2 index gives (`PackScan.expectedCrc32`). So every byte is still accounted for, and the index rebuilt from
 * the result must equal the one on disk, as with a full pass 1.
 *
 * This saves inflating every delta twice (once here to find where it ends, once to apply it), and
 * the serial part of the work shrinks to header parsing: on a pack of small objects, most of it.
 */
export function scanPackWithIndex(pack: Uint8Array, index: PackIndex, format: ObjectFormat, name: string, shared: boolean): PackScan {
  const H = hashLength(format);
  const end = pack.length;
  if (end < PACK_HEADER_LENGTH + H) {
    throw new PackwrightError('PACK_TRUNCATED', `${name}: early EOF: ${end} bytes cannot hold a pack header and trailer`, { file: name, offset: 0 });
  }
  const { objectCount } = parsePackHeader(pack.subarray(0, PACK_HEADER_LENGTH), name);
  const n = index.count;
  if (objectCount !== n) {
    throw new PackwrightError('PACK_CORRUPT', `packfile ${name} claims to have ${objectCount} objects while index indicates ${n} objects`, { file: name, offset: 8 });
  }
  const dataEnd = end - H;
  const trailer = Buffer.from(pack.buffer, pack.byteOffset + dataEnd, H);
  if (!nodeCrypto().createHash(format).update(pack.subarray(0, dataEnd)).digest().equals(trailer)) {
    throw new PackwrightError('PACK_CHECKSUM', `${name}: pack is corrupted (${format === 'sha1' ? 'SHA1' : 'SHA256'} mismatch) at offset ${dataEnd}`, { file: name, offset: dataEnd });
  }
  if (!index.packHash.equals(trailer)) {
    throw new PackwrightError('IDX_MISMATCH', `packfile ${name} does not match index`, { file: index.path });
  }

  const { offsets: idxOffsets, positions } = index.packOrder();
  const scan = allocScan(format, n, shared, needsWideOffsets(pack.length), true);
  scan.count = n;
  const h = new EntryHeader();
  // A v2 index's CRCs, in pack order: pass 2 checks each entry's raw bytes against them as it
  // inflates the entry (on every thread). A v1 index has none, and a rebuilt one needs none.
  const crcs = index.version === 2 ? allocArray(Uint32Array, n, shared) : undefined;
  for (let k = 0; k < n; k++) {
    const at = idxOffsets[k] as number;
    const next = k + 1 < n ? (idxOffsets[k + 1] as number) : dataEnd;
    // The first entry follows the header and none may overlap the next or the trailer: an index
    // that says otherwise does not describe this pack.
    if ((k === 0 && at !== PACK_HEADER_LENGTH) || next <= at || next > dataEnd) {
      throw new PackwrightError('IDX_MISMATCH', `${index.path}: entry ${k} in pack order is at offset ${at}, which does not fit ${name} (next at ${next}, data ends at ${dataEnd})`, { file: index.path, offset: at });
    }
    const headerLength = parseEntryHeader(pack, at, next, at, H, h, name);
    if (headerLength === HEADER_INCOMPLETE) {
      throw new PackwrightError('PACK_CORRUPT', `${name}: the entry header at offset ${at} runs into the next entry (at ${next})`, { file: name, offset: at });
    }
    // deflate cannot beat ~1032:1: a declared size beyond what the stream could inflate to is
    // corrupt, and must not size pass 2's buffers.
    const compressed = next - at - headerLength;
    if (h.size > MAX_INFLATE_RATIO * compressed + 64) {
      throw new PackwrightError('PACK_CORRUPT', `${name}: object at offset ${at} declares ${h.size} bytes, more than its ${compressed} compressed bytes can inflate to`, { file: name, offset: at });
    }
    if (h.size > 0xffffffff) throw new PackwrightError('PACK_TOO_LARGE', `${name}: object at offset ${at} declares ${h.size} bytes`, { file: name, offset: at });
    scan.offsets[k] = at;
    scan.types[k] = h.type;
    scan.sizes[k] = h.size;
    scan.headerLengths[k] = headerLength;
    if (crcs !== undefined) crcs[k] = index.crc32(positions[k] as number);
    scan.ofsBase[k] = h.type === OBJ_OFS_DELTA ? findOffset(scan.offsets, k, h.baseOffset) : -1;
    if (h.type === OBJ_REF_DELTA) addRefDelta(scan.refs, k, pack, h.baseIdPosition, H);
    else if (h.type !== OBJ_OFS_DELTA) scan.resolvedTypes[k] = h.type;
    scan.inflatedBytes += h.size;
  }
  scan.offsets[n] = dataEnd;
  if (crcs !== undefined) scan.crc32 = scan.expectedCrc32 = crcs;
  scan.packHash = Buffer.from(trailer);
  scan.end = end;
  scan.data = pack;
  scan.unhashed = true;
  return scan;
}

/**
 * After pass 2 of a scan from the index: each object must hash to the id the index gives it
 * (git's "packed <id> from <pack> is corrupt" otherwise), and the index's ids must be in order.
 * Returns the sorted order of the entries (`order[i]` = the entry with the i-th id), which the
 * index then need not be sorted again to be rebuilt and compared byte for byte.
 */
export function orderFromIndex(scan: PackScan, index: PackIndex, name: string): Uint32Array {
  const H = hashLength(scan.format);
  const n = scan.count;
  const { positions } = index.packOrder();
  const data = index.data;
  const ids = scan.ids;
  for (let k = 0; k < n; k++) {
    const at = index.idPosition(positions[k] as number);
    if (compareBytes(ids, k * H, data, at, H) !== 0) {
      const listed = data.toString('hex', at, at + H);
      throw new PackwrightError('OBJECT_CORRUPT', `packed ${listed} from ${name} is corrupt (its data hashes to ${Buffer.from(ids.buffer, ids.byteOffset + k * H, H).toString('hex')})`, { file: name, offset: scan.offsets[k] as number });
    }
  }
  for (let i = 1; i < n; i++) {
    if (compareBytes(data, index.idPosition(i - 1), data, index.idPosition(i), H) > 0) {
      throw new PackwrightError('IDX_CORRUPT', `${index.path}: the ids are out of order at position ${i}`, { file: index.path, offset: index.idPosition(i) });
    }
  }
  const order = new Uint32Array(n);
  for (let k = 0; k < n; k++) order[positions[k] as number] = k;
  return order;
}
