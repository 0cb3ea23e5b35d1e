import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BuddyAllocator } from '../src/memory/buddy-allocator.js';
import { BufferPool } from '../src/memory/buffer-pool.js';
import { DeltaBaseCache, type CachedObject } from '../src/pack/delta-base-cache.js';

/** A deterministic generator, so a failure can be replayed. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1103515245 + 12345) >>> 0;
    return s / 2 ** 32;
  };
}

test('BuddyAllocator: blocks never overlap, stay in bounds, and merge back into whole blocks', () => {
  const arena = new BuddyAllocator(3 * 65536 + 1000, 8, 16);
  assert.equal(arena.size, 3 * 65536, 'rounded down to whole largest blocks');
  const rnd = random(1);
  const live: Buffer[] = [];
  for (let step = 0; step < 20000; step++) {
    if (live.length > 0 && rnd() < 0.45) {
      const [b] = live.splice(Math.floor(rnd() * live.length), 1);
      arena.free(b as Buffer);
      continue;
    }
    const size = 1 + Math.floor(rnd() ** 3 * 65536);
    const b = arena.alloc(size);
    if (b === undefined) continue;
    assert.ok(b.length >= size && b.length === arena.blockSize(size));
    assert.ok(arena.owns(b));
    live.push(b);
  }
  // Each live block marked with its own byte: any overlap would overwrite another's mark.
  live.forEach((b, i) => b.fill(i & 0xff));
  live.forEach((b, i) => assert.ok(b.every((x) => x === (i & 0xff)), 'blocks overlap'));
  const spans = live.map((b) => [b.byteOffset, b.byteOffset + b.length] as const).sort((a, b) => a[0] - b[0]);
  for (let i = 1; i < spans.length; i++) assert.ok((spans[i - 1] as readonly number[])[1] as number <= ((spans[i] as readonly number[])[0] as number));
  for (const b of live) arena.free(b);
  const whole = [arena.alloc(65536), arena.alloc(65536), arena.alloc(65536)];
  assert.ok(whole.every((b) => b !== undefined), 'everything merged back');
  assert.equal(arena.alloc(1), undefined, 'and the arena is full');
  assert.equal(arena.alloc(65537), undefined, 'nothing above the largest block');
});

/** Whether every byte of `b` is `v`: its first is, and each equals the one before (one memcmp, where `every` took 2 s of this file). */
function uniform(b: Buffer, v: number): boolean {
  return b.length === 0 || (b[0] === v && b.subarray(1).equals(b.subarray(0, b.length - 1)));
}

test('DeltaBaseCache: keeps object bytes under the limit, least recently used out, and never evicts the base being read', () => {
  const limit = 1 << 20;
  const cache = new DeltaBaseCache(limit);
  const rnd = random(2);
  const put = (key: number, size: number, keep?: CachedObject): CachedObject => {
    const backing = cache.allocate(size + 1, keep);
    backing.fill(key & 0xff, 0, size);
    const obj = { type: 3, data: backing.subarray(0, size), backing };
    cache.set(key, obj);
    return obj;
  };
  let base = put(0, 5000);
  for (let key = 1; key < 5000; key++) {
    const size = 1 + Math.floor(rnd() ** 2 * 200_000);
    // Like PackReader: allocate for the next object while reading `base`, which must survive.
    const next = put(key, size, base);
    assert.ok(uniform(base.data, (key - 1) & 0xff), `base of ${key} was overwritten`);
    assert.ok(cache.size <= limit);
    base = next;
    if (rnd() < 0.3) {
      const probe = cache.get(Math.floor(rnd() * key));
      if (probe !== undefined) assert.ok(probe.data.length === 0 || probe.data[0] === probe.data.at(-1));
    }
  }
  // Entries still cached have their own bytes: no block was handed out twice.
  let cached = 0;
  for (let key = 0; key < 5000; key++) {
    const v = cache.peek(key);
    if (v === undefined) continue;
    cached++;
    assert.ok(uniform(v.data, key & 0xff), `entry ${key} corrupted`);
  }
  assert.ok(cached > 5, `only ${cached} entries cached`);
  assert.ok(cache.hits > 0);
});

test('DeltaBaseCache: a block given back after a failed decode is reusable, and oversized objects are not cached', () => {
  const cache = new DeltaBaseCache(8 << 20);
  const blocks: Buffer[] = [];
  // Fill the arena (12 MiB for an 8 MiB limit) with blocks that are never cached...
  for (;;) {
    const b = cache.allocate(1 << 20);
    blocks.push(b);
    if (blocks.length > 64) break;
  }
  // ...then give them back, as PackReader does when an entry is corrupt.
  for (const b of blocks) cache.release(b);
  // A block (rounded up to 8 MiB), not a buffer of its own: the arena got its memory back.
  const again = cache.allocate((8 << 20) - 1000);
  assert.equal(again.length, 8 << 20);
  const big = cache.allocate(9 << 20);
  cache.set(1, { type: 3, data: big.subarray(0, 9 << 20), backing: big });
  assert.equal(cache.peek(1), undefined, 'larger than the limit: not kept');
  assert.equal(cache.size, 0);
  const own = Buffer.alloc(100);
  cache.set(2, { type: 3, data: own, backing: own });
  assert.equal(cache.peek(2), undefined, 'a buffer of its own, outside the arena the plans charge: not kept');
});

test('DeltaBaseCache: when the arena is too scattered for a block, the oldest entries go until one forms, never `keep`', () => {
  // 1 MiB of arena in 1 KiB blocks. The first 20 regions of 16 KiB each hold a block in use that
  // is not cached (a reader's scratch) and the 300 oldest entries; the rest hold newer entries.
  const cache = new DeltaBaseCache(1 << 20);
  const pins: Buffer[] = [];
  const entries: CachedObject[] = [];
  let key = 0;
  for (let region = 0; region < 64; region++) {
    for (let i = 0; i < 16; i++) {
      const backing = cache.allocate(1024);
      if (region < 20 && i === 0) {
        backing.fill(0xee);
        pins.push(backing);
        continue;
      }
      backing.fill(key & 0xff);
      const obj = { type: 3, data: backing.subarray(0, 1000), backing };
      cache.set(key++, obj);
      entries.push(obj);
    }
  }
  const keep = entries[400] as CachedObject;
  // No region around the 16 oldest entries can be freed (each has a pin): the oldest go one by one.
  const big = cache.allocate(16 << 10, keep);
  assert.equal(big.length, 16 << 10);
  assert.equal(big.buffer, (pins[0] as Buffer).buffer, 'a block of the arena, not a buffer of its own');
  assert.ok(!pins.some((p) => p.buffer === big.buffer && p.byteOffset >= big.byteOffset && p.byteOffset < big.byteOffset + big.length), 'no pin inside it');
  assert.ok(pins.every((p) => p.every((x) => x === 0xee)), 'the pins are untouched');
  assert.ok(cache.peek(400) !== undefined && keep.data.every((x) => x === (400 & 0xff)), 'keep survived');
  assert.ok(cache.peek(key - 1) !== undefined, 'the newest entries were not needed');
  assert.equal(cache.peek(0), undefined, 'the oldest went first');
});

test('BufferPool: grows by whole arenas when full and reuses released blocks instead of growing again', () => {
  const pool = new BufferPool(1 << 20);
  const held = Array.from({ length: 6 }, () => pool.acquire(300_000));
  assert.ok(held.every((b) => b.length >= 300_000));
  // 512 KiB blocks, two per 1 MiB arena.
  assert.equal(pool.size, 3 << 20);
  for (const b of held) pool.release(b);
  for (let i = 0; i < 100; i++) pool.release(pool.acquire(1 + ((i * 7919) % 1_000_000)));
  assert.equal(pool.size, 3 << 20, 'released blocks were reused');
  const huge = pool.acquire(2 << 20);
  assert.equal(huge.length, 2 << 20, 'above the largest block: a buffer of its own');
  assert.equal(pool.size, 3 << 20);
});

test('BufferPool: buffers above the largest block are reused when released, within a bound, and foreign ones are ignored', () => {
  const pool = new BufferPool(1 << 20);
  const big = pool.acquire(3 << 20);
  assert.ok(big.length >= 3 << 20 && big.length <= (3 << 20) * 1.125, `rounded up by at most an eighth: ${big.length}`);
  pool.release(big);
  const again = pool.acquire((3 << 20) - 1000);
  assert.equal(again.buffer, big.buffer, 'the released buffer serves the next request that fits');
  assert.notEqual(pool.acquire(3 << 20).buffer, big.buffer, 'a buffer in use is not handed out twice');
  const foreign = Buffer.alloc(4 << 20);
  pool.release(foreign);
  assert.notEqual(pool.acquire(4 << 20).buffer, foreign.buffer, 'a buffer the pool did not make is not taken in');
  // Released beyond the bound (48 MiB), the oldest are let go.
  const many = Array.from({ length: 8 }, () => pool.acquire(10 << 20));
  for (const b of many) pool.release(b);
  const kept = new Set(Array.from({ length: 8 }, () => pool.acquire(10 << 20).buffer));
  assert.equal(many.filter((b) => kept.has(b.buffer)).length, 4, 'four 10 MiB buffers fit the bound');
});

test('DeltaBaseCache: a slot reused by another pack (a new generation) never serves the old pack\'s bases', () => {
  const cache = new DeltaBaseCache(1 << 20);
  const old = { slot: 3, generation: 0 };
  const next = { slot: 3, generation: 1 };
  const other = { slot: 4, generation: 0 };
  // In the cache's own blocks, as PackReader makes them (a buffer of its own is not kept).
  const entry = (text: string): CachedObject => {
    const backing = cache.allocate(text.length + 1);
    backing.write(text, 'latin1');
    return { type: 3, data: backing.subarray(0, text.length), backing };
  };
  cache.set(cache.key(old, 100), entry('old pack'));
  cache.set(cache.key(other, 100), entry('other pack'));
  assert.equal(cache.get(cache.key(old, 100))?.data.toString(), 'old pack');
  assert.equal(cache.get(cache.key(next, 100)), undefined, 'same slot and offset, another pack');
  assert.equal(cache.get(cache.key(other, 100))?.data.toString(), 'other pack', 'other slots keep their entries');
  assert.equal(cache.size, 'other pack'.length, 'the old pack\'s entry is gone, not just hidden');
  assert.throws(() => cache.key({ slot: 2 ** 13, generation: 0 }, 0), RangeError);
});

test('DeltaBaseCache: a closed cache hands the next one of its limit an arena all free, whether it held entries or left a block out', () => {
  const limit = 5 << 20;
  const fill = (cache: DeltaBaseCache, keyBase: number): void => {
    for (let i = 0; i < 40; i++) {
      const size = 1000 + i * 3000;
      const b = cache.allocate(size);
      cache.set(keyBase + i, { type: 3, data: b.subarray(0, size), backing: b });
    }
  };
  for (const leaveOneOut of [false, true]) {
    const first = new DeltaBaseCache(limit);
    fill(first, 0);
    if (leaveOneOut) first.allocate(4096);
    first.close();
    // The next cache of the limit takes the spare arena: every block is free again (a whole
    // arena's worth of the largest block allocates), and none of the old keys is owned.
    const next = new DeltaBaseCache(limit);
    const largest = BuddyAllocator.largestBlockFor(limit * 1.5);
    const whole: Buffer[] = [];
    for (let b = next.allocate(largest); whole.length < 64; b = next.allocate(largest)) {
      if (whole.some((w) => w.buffer !== b.buffer)) break;
      whole.push(b);
    }
    assert.equal(whole.length, Math.floor((limit * 1.5) / largest), `blocks of the largest size (${leaveOneOut ? 'a block left out' : 'entries only'})`);
    for (const b of whole) next.release(b);
    fill(next, 100);
    assert.equal(next.peek(5), undefined);
    assert.ok(next.peek(105) !== undefined);
    next.close();
  }
});
