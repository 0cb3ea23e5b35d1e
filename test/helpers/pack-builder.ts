import { deflateSync } from 'node:zlib';
import { createHash } from 'node:crypto';
import { encodeEntryHeader, encodeOfsDistance } from '../../src/pack/entry-header.js';
import { sizeVarintLength, writeSizeVarint } from '../../src/encoding/size-varint.js';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { hashObject } from '../../src/hash/hash-object.js';
import { writeIndex } from '../../src/idx/write-index.js';

export type RawEntry =
  | { type: number; data: Buffer; declaredSize?: number }
  | { ofsTo: number; delta: Buffer; rawOffset?: Buffer }
  | { refTo: Buffer; delta: Buffer }
  | { raw: Buffer };

/** Builds a pack from hand-made entries (for malformed-input tests); `ofsTo` is an entry index. */
export function buildPack(entries: RawEntry[], options: { version?: number; count?: number; hash?: 'sha1' | 'sha256' } = {}): { pack: Buffer; offsets: number[] } {
  const parts: Buffer[] = [];
  const head = Buffer.alloc(12);
  head.write('PACK', 0, 'latin1');
  head.writeUInt32BE(options.version ?? 2, 4);
  head.writeUInt32BE(options.count ?? entries.length, 8);
  parts.push(head);
  let offset = 12;
  const offsets: number[] = [];
  for (const e of entries) {
    offsets.push(offset);
    let bytes: Buffer;
    if ('raw' in e) bytes = e.raw;
    else if ('data' in e) bytes = Buffer.concat([encodeEntryHeader(e.type, e.declaredSize ?? e.data.length), deflateSync(e.data)]);
    else if ('ofsTo' in e) {
      const ofs = e.rawOffset ?? encodeOfsDistance(offset - (offsets[e.ofsTo] as number));
      bytes = Buffer.concat([encodeEntryHeader(6, e.delta.length), ofs, deflateSync(e.delta)]);
    } else bytes = Buffer.concat([encodeEntryHeader(7, e.delta.length), e.refTo, deflateSync(e.delta)]);
    parts.push(bytes);
    offset += bytes.length;
  }
  const body = Buffer.concat(parts);
  return { pack: Buffer.concat([body, createHash(options.hash ?? 'sha1').update(body).digest()]), offsets };
}

/** A delta from raw instructions: sizes first, then the given bytes. */
export function makeDelta(baseSize: number, resultSize: number, instructions: number[]): Buffer {
  const head = Buffer.alloc(sizeVarintLength(baseSize) + sizeVarintLength(resultSize));
  writeSizeVarint(head, writeSizeVarint(head, 0, baseSize), resultSize);
  return Buffer.concat([head, Buffer.from(instructions)]);
}

/**
 * Writes whole objects as a pack and its `.idx` into `packDir`, named after the pack's hash as git
 * names packs (`pack-<hash>.pack`), the index last as index-pack does. Returns the base path
 * (without extension) and the ids. Fast enough to make thousands of packs in a test.
 */
export function writeObjectsPack(packDir: string, format: 'sha1' | 'sha256', objects: { type: number; data: Buffer }[]): { base: string; ids: Buffer[] } {
  const { pack, offsets } = buildPack(objects.map((o) => ({ type: o.type, data: o.data })), { hash: format });
  const H = format === 'sha1' ? 20 : 32;
  const ids = objects.map((o) => hashObject(format, o.type, o.data));
  const order = ids.map((_, i) => i).sort((a, b) => Buffer.compare(ids[a] as Buffer, ids[b] as Buffer));
  const sortedIds = Buffer.concat(order.map((i) => ids[i] as Buffer));
  const entries = {
    ids: sortedIds,
    offsets: Float64Array.from(order.map((i) => offsets[i] as number)),
    crc32: Uint32Array.from(order.map((i) => crc32(pack.subarray(offsets[i] as number, i + 1 < offsets.length ? (offsets[i + 1] as number) : pack.length - H)))),
  };
  const packHash = pack.subarray(pack.length - H);
  const base = join(packDir, `pack-${packHash.toString('hex')}`);
  mkdirSync(packDir, { recursive: true });
  writeFileSync(`${base}.pack`, pack);
  writeFileSync(`${base}.idx`, writeIndex(format, entries, packHash));
  return { base, ids };
}
