import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Sha1dc, sha1dc } from '../src/hash/sha1dc/sha1dc.js';
import { Sha1dcLanes, STREAMED_BUDGET } from '../src/hash/sha1dc/sha1dc-lanes.js';
import { disturbanceVectors, messageDifference } from '../src/hash/sha1dc/disturbance-vectors.js';
import { deriveConditions } from '../src/hash/sha1dc/derive-conditions.js';
import { conditionTableSource } from '../src/hash/sha1dc/condition-table.js';
import { seededRandom, testSeed } from './helpers/random.js';
import { git, packwright, tempDir } from './helpers/git.js';
import { hashObject } from '../src/hash/hash-object.js';

const root = resolve(fileURLToPath(new URL('.', import.meta.url)), '../..');
const shattered = join(root, '../shared/collision/shattered-1.pdf');

test('sha1dc gives plain SHA-1 digests for any input, in any pieces', () => {
  const seed = testSeed();
  const random = seededRandom(seed);
  for (let n = 0; n < 300; n++) {
    const length = n < 200 ? n : Math.floor(random() * 20000);
    const data = Buffer.alloc(length);
    for (let i = 0; i < length; i++) data[i] = random() * 256;
    const h = new Sha1dc();
    for (let at = 0; at < length;) {
      const take = Math.min(length - at, 1 + Math.floor(random() * 150));
      h.update(data.subarray(at, at + take));
      at += take;
    }
    const expected = createHash('sha1').update(data).digest('hex');
    assert.equal(h.digest().toString('hex'), expected, `length ${length} (seed ${seed})`);
    assert.equal(h.collision, false);
  }
});

test('sha1dc raises no alarm on 16 MiB of random data, which runs about 25,000 recompressions', () => {
  const random = seededRandom(7);
  const data = Buffer.alloc(16 << 20);
  for (let i = 0; i < data.length; i += 4) data.writeUInt32LE((random() * 2 ** 32) >>> 0, i);
  const { digest, collision } = sha1dc(data);
  assert.equal(collision, false);
  assert.equal(digest.toString('hex'), createHash('sha1').update(data).digest('hex'));
});

test('four lanes at once give the digests one at a time gives, for messages of any length, big ones included', () => {
  const seed = testSeed();
  const random = seededRandom(seed);
  const lanes = new Sha1dcLanes();
  const owner = {};
  const messages: Buffer[] = [];
  for (let i = 0; i < 400; i++) {
    // Some longer than a lane (fed a window at a time), one longer than their budget (hashed alone).
    const length = i === 7 ? 3 << 20 : i === 8 ? (1 << 20) + 64 : i === 9 ? STREAMED_BUDGET + 1 : i % 50 === 10 ? Math.floor(random() * (6 << 20)) : Math.floor(random() ** 3 * 100000);
    const m = Buffer.alloc(length);
    for (let k = 0; k < length; k += 4096) m[k] = random() * 256;
    messages.push(m);
  }
  const out = Buffer.alloc(20 * messages.length);
  const flagged: number[] = [];
  messages.forEach((m, i) => lanes.submit(m, out, 20 * i, owner, () => flagged.push(i)));
  // A message dropped before it is done writes nothing.
  const other = {};
  const untouched = Buffer.alloc(20);
  lanes.submit(Buffer.alloc(5000), untouched, 0, other, () => flagged.push(-1));
  lanes.discard(other);
  lanes.flush();
  messages.forEach((m, i) => assert.equal(out.subarray(20 * i, 20 * i + 20).toString('hex'), createHash('sha1').update(m).digest('hex'), `message ${i} (seed ${seed})`));
  assert.deepEqual(flagged, []);
  assert.deepEqual(untouched, Buffer.alloc(20));
});

test('sha1dc flags shattered-1.pdf, half of the SHAttered collision, and still gives its plain digest', (t) => {
  if (!existsSync(shattered)) {
    t.skip(`${shattered} is not here (it comes with ../shared)`);
    return;
  }
  const data = readFileSync(shattered);
  const { digest, collision } = sha1dc(data);
  assert.equal(collision, true);
  assert.equal(digest.toString('hex'), '38762cf7f55934b34d179ae6a4c80cadccbb7f0a');
  // Any split of the input is flagged the same way: pieces of one to three blocks go through the
  // one-block function, four and more through the four-block one, at every alignment.
  for (const piece of [64, 128, 192, 256, 320, 1000]) {
    const h = new Sha1dc();
    for (let at = 0; at < data.length; at += piece) h.update(data.subarray(at, at + piece));
    assert.equal(h.collision, true, `pieces of ${piece} bytes`);
  }
  // And so do the lanes, whichever lane it is in.
  const lanes = new Sha1dcLanes();
  for (let lane = 0; lane < 5; lane++) {
    const out = Buffer.alloc(20 * 6);
    const flagged: string[] = [];
    for (let i = 0; i < 6; i++) {
      const m = i === lane ? data : Buffer.alloc(1000 * (i + 1), i);
      lanes.submit(m, out, 20 * i, data, (d) => flagged.push(`${i} ${Buffer.from(d).toString('hex')}`));
    }
    lanes.flush();
    assert.deepEqual(flagged, [`${lane} 38762cf7f55934b34d179ae6a4c80cadccbb7f0a`]);
  }
  // A report that throws (as index-pack's does) leaves the other lanes' messages right.
  const others = [Buffer.alloc(300000, 1), Buffer.alloc(2 << 20, 2), Buffer.alloc(500, 3)];
  const got = Buffer.alloc(20 * others.length);
  lanes.submit(data, Buffer.alloc(20), 0, data, () => { throw new Error('attack'); });
  others.forEach((m, i) => lanes.submit(m, got, 20 * i, others, () => assert.fail('no attack here')));
  assert.throws(() => lanes.flush(), /attack/);
  lanes.flush();
  others.forEach((m, i) => assert.equal(got.subarray(20 * i, 20 * i + 20).toString('hex'), createHash('sha1').update(m).digest('hex')));
});

test('the same bytes as a blob are no attack: the header moves the colliding blocks, and git agrees on the id', (t) => {
  if (!existsSync(shattered)) {
    t.skip(`${shattered} is not here (it comes with ../shared)`);
    return;
  }
  using dir = tempDir();
  const data = readFileSync(shattered);
  writeFileSync(join(dir.path, 'f'), data);
  const h = new Sha1dc().update(Buffer.from(`blob ${data.length}\0`)).update(data);
  assert.equal(h.digest().toString('hex'), git(dir.path, ['hash-object', 'f']).toString().trim());
  assert.equal(h.collision, false);
  assert.equal(hashObject('sha1', 3, data, true).toString('hex'), git(dir.path, ['hash-object', 'f']).toString().trim());
});

test('hash-object --collision-detection (-w too) gives git\'s ids', async () => {
  using dir = tempDir();
  git(dir.path, ['init', '-q']);
  const random = seededRandom(3);
  const files: string[] = [];
  for (let i = 0; i < 20; i++) {
    const data = Buffer.alloc(Math.floor(random() * 300000));
    for (let k = 0; k < data.length; k += 97) data[k] = random() * 256;
    files.push(`f${i}`);
    writeFileSync(join(dir.path, `f${i}`), data);
  }
  const theirs = git(dir.path, ['hash-object', ...files]).toString();
  assert.equal((await packwright(dir.path, ['hash-object', '--collision-detection', ...files])).toString(), theirs);
  assert.equal((await packwright(dir.path, ['hash-object', '-w', '--collision-detection', ...files])).toString(), theirs);
  git(dir.path, ['fsck', '--strict']);
});

test('the attack blocks of shattered-1.pdf meet every condition derived for their vector, II(52,0), from step 20 to 73', (t) => {
  if (!existsSync(shattered)) {
    t.skip(`${shattered} is not here (it comes with ../shared)`);
    return;
  }
  const data = readFileSync(shattered);
  const v = disturbanceVectors().find((d) => d.name === 'II(52,0)')!;
  const conditions = deriveConditions(v, 20, 73);
  assert.ok(conditions.length > deriveConditions(v).length);
  for (const block of [3, 4]) {
    const w = new Int32Array(80);
    for (let i = 0; i < 16; i++) w[i] = data.readInt32BE(64 * block + 4 * i);
    for (let i = 16; i < 80; i++) {
      const x = w[i - 3]! ^ w[i - 8]! ^ w[i - 14]! ^ w[i - 16]!;
      w[i] = (x << 1) | (x >>> 31);
    }
    for (const c of conditions) {
      assert.equal(((w[c.a]! >>> c.aBit) ^ (w[c.b]! >>> c.bBit)) & 1, c.differ ? 1 : 0, `block ${block}: W${c.a}[${c.aBit}] against W${c.b}[${c.bBit}]`);
    }
  }
});

test('every condition derived for a vector holds on blocks that git\'s own check passes for it, so no recompression git runs is skipped', () => {
  // 48 blocks a vector, sampled from git's ubc_check.c by scripts/sample-git-ubc.mjs: a condition
  // that git's do not imply fails a random one of them half of the time.
  const blocks = readFileSync(join(root, 'test/fixtures/sha1dc-git-ubc-blocks.bin'));
  const vectors = disturbanceVectors();
  const perVector = blocks.length / 64 / vectors.length;
  assert.equal(perVector, 48);
  vectors.forEach((v, i) => {
    const conditions = deriveConditions(v);
    for (let n = 0; n < perVector; n++) {
      const at = 64 * (i * perVector + n);
      const w = new Int32Array(80);
      for (let j = 0; j < 16; j++) w[j] = blocks.readInt32BE(at + 4 * j);
      for (let j = 16; j < 80; j++) {
        const x = w[j - 3]! ^ w[j - 8]! ^ w[j - 14]! ^ w[j - 16]!;
        w[j] = (x << 1) | (x >>> 31);
      }
      for (const c of conditions) {
        assert.equal(((w[c.a]! >>> c.aBit) ^ (w[c.b]! >>> c.bBit)) & 1, c.differ ? 1 : 0, `${v.name}, git's block ${n}: W${c.a}[${c.aBit}] against W${c.b}[${c.bBit}]`);
      }
    }
  });
});

test('each disturbance vector obeys the message expansion and has a quiet recompression step', () => {
  assert.equal(disturbanceVectors().length, 32);
  for (const v of disturbanceVectors()) {
    const dm = messageDifference(v.type, v.k, v.b);
    for (let i = 16; i < 80; i++) {
      const x = dm[i - 3]! ^ dm[i - 8]! ^ dm[i - 14]! ^ dm[i - 16]!;
      assert.equal(dm[i], (x << 1) | (x >>> 31), `${v.name} word ${i}`);
    }
    for (let t = v.step - 5; t < v.step; t++) assert.equal(v.disturbances[t + 5], 0, `${v.name} is quiet before step ${v.step}`);
  }
});

test('the committed condition table is what the derivation gives', () => {
  const committed = readFileSync(join(root, 'src/hash/sha1dc/unavoidable-conditions.ts'), 'utf8');
  assert.equal(committed, conditionTableSource(), 'run `npm run build && node scripts/derive-sha1dc.mjs`');
});

test('the committed condition check and WebAssembly module are what their sources build to', async () => {
  const build = (await import(join(root, 'scripts/sha1dc-wasm-build.mjs'))) as {
    conditionsSource(): Promise<string>;
    buildSha1dcWasm(conditions: string): Promise<Buffer>;
    wasmModuleSource(bytes: Buffer): string;
  };
  const conditions = await build.conditionsSource();
  const hint = 'run `npm run build && node scripts/build-sha1dc-wasm.mjs`';
  assert.equal(readFileSync(join(root, 'src/hash/sha1dc/assembly/conditions.ts'), 'utf8'), conditions, hint);
  const committed = readFileSync(join(root, 'src/hash/sha1dc/sha1dc-wasm.ts'), 'utf8');
  assert.equal(committed, build.wasmModuleSource(await build.buildSha1dcWasm(conditions)), hint);
});
