import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readSizeVarint, sizeVarintEnd, sizeVarintLength, writeSizeVarint, VARINT_CUT, VARINT_TOO_LONG } from '../src/encoding/size-varint.js';
import { EntryHeader, encodeEntryHeader, encodeOfsDistance, parseEntryHeader } from '../src/pack/entry-header.js';
import { deltaBaseSize, deltaResultSize, readDeltaHeader } from '../src/delta/apply-delta.js';
import { seededRandom } from './helpers/random.js';

/** Sizes at every length of varint, the edges of each, and random ones below 2^53. */
function sampleSizes(random: () => number): number[] {
  const sizes = [0, 1, 15, 16, 127, 128, 0x3fff, 0x4000, 2 ** 32 - 1, 2 ** 32, 2 ** 49 - 1, Number.MAX_SAFE_INTEGER];
  for (let i = 0; i < 500; i++) sizes.push(Math.floor(random() * 2 ** Math.floor(random() * 53)));
  return sizes;
}

test('size varints read back what was written, and say where they end', () => {
  const random = seededRandom(1);
  const buf = new Uint8Array(16);
  for (const size of sampleSizes(random)) {
    if (size >= 2 ** 49) continue;
    const end = writeSizeVarint(buf, 3, size);
    assert.equal(end - 3, sizeVarintLength(size), `length of ${size}`);
    assert.equal(readSizeVarint(buf, 3, end), size);
    assert.equal(sizeVarintEnd, end);
    if (end - 3 > 1) assert.equal(readSizeVarint(buf, 3, end - 1), VARINT_CUT, `a cut varint of ${size}`);
  }
});

test('a size varint past 49 bits (53 with an entry header\'s first four) is too long, not a wrong number', () => {
  const eight = Uint8Array.from([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]);
  assert.equal(readSizeVarint(eight, 0, eight.length), VARINT_TOO_LONG);
  assert.throws(() => readDeltaHeader(eight), /too long/);
  const h = new EntryHeader();
  // 4 bits + 7 continuation bytes = 53 bits: the largest entry size that is read exactly.
  const largest = encodeEntryHeader(3, Number.MAX_SAFE_INTEGER);
  assert.equal(parseEntryHeader(largest, 0, largest.length, 12, 20, h), largest.length);
  assert.equal(h.size, Number.MAX_SAFE_INTEGER);
  const tooLong = Buffer.from([0xbf, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]);
  assert.throws(() => parseEntryHeader(tooLong, 0, tooLong.length, 12, 20, h), /does not fit in 53 bits/);
});

test('entry headers and OFS distances encode what parseEntryHeader decodes, for every type and random sizes', () => {
  const random = seededRandom(2);
  const h = new EntryHeader();
  for (const size of sampleSizes(random)) {
    for (const type of [1, 2, 3, 4]) {
      const bytes = encodeEntryHeader(type, size);
      assert.equal(parseEntryHeader(bytes, 0, bytes.length, 12, 20, h), bytes.length);
      assert.deepEqual([h.type, h.size], [type, size]);
      assert.equal(parseEntryHeader(bytes, 0, bytes.length - 1, 12, 20, h), -1, 'a cut header is incomplete');
    }
    const distance = Math.max(1, size % 2 ** 44);
    const entry = Buffer.concat([encodeEntryHeader(6, 100), encodeOfsDistance(distance)]);
    const at = distance + 12;
    assert.equal(parseEntryHeader(entry, 0, entry.length, at, 20, h), entry.length);
    assert.equal(h.baseOffset, at - distance, `distance ${distance}`);
  }
});

test('the delta size readers agree with readDeltaHeader', () => {
  const random = seededRandom(3);
  const buf = new Uint8Array(20);
  for (const size of sampleSizes(random)) {
    if (size >= 2 ** 49) continue;
    const base = Math.floor(size / 3);
    const end = writeSizeVarint(buf, writeSizeVarint(buf, 0, base), size);
    assert.deepEqual(readDeltaHeader(buf, 0, end), { baseSize: base, resultSize: size, dataStart: end });
    assert.equal(deltaResultSize(buf, 0, end), size);
    assert.equal(deltaBaseSize(buf, 0, end), base);
    assert.equal(deltaResultSize(buf, 0, end - 1), -1);
  }
});
