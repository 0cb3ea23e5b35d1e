import { deflateSync } from 'node:zlib';
import { createHash } from 'node:crypto';
import { encodeEntryHeader, encodeOfsDistance } from '../../src/pack/entry-header.js';
import { sizeVarintLength, writeSizeVarint } from '../../src/encoding/size-varint.js';

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
