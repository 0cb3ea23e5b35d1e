import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { git, tempDir } from './helpers/git.js';
import { drainSliced, SliceClock, SLICE_MS, type Steps } from '../src/walk/sliced-steps.js';
import { PackSlots } from '../src/serve/index.js';
import { isPackwrightError } from '../src/errors/index.js';
import { Repository } from '../src/repo/index.js';
import { RevArgs } from '../src/walk/index.js';
import { createPack } from '../src/create/index.js';

/** Counts turns of the event loop (a chain of immediates) until stopped. */
function turnCounter(): { readonly turns: number; stop(): void } {
  let turns = 0;
  let on = true;
  const tick = (): void => {
    if (!on) return;
    turns++;
    setImmediate(tick);
  };
  setImmediate(tick);
  return { get turns() { return turns; }, stop: () => void (on = false) };
}

function busy(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end);
}

test('drainSliced gives the event loop a turn once a run has had its share of SLICE_MS, a smaller share when runs share the loop', async () => {
  const steps = (n: number, ms: number): Steps<number> => (function* () {
    for (let i = 0; i < n; i++) {
      busy(ms);
      yield;
    }
    return n;
  })();
  // One run of 5 ms steps: a turn about every SLICE_MS / 5 steps. The bound is on the time the
  // run took, not the 120 ms its steps are busy: on a loaded machine the turns themselves wait,
  // and a slice is measured on the clock (this failed once, 9 turns, beside a whole suite).
  let counter = turnCounter();
  const started = performance.now();
  assert.equal(await drainSliced(steps(24, 5), undefined, 'the test'), 24);
  const took = performance.now() - started;
  counter.stop();
  assert.ok(counter.turns >= 3 && counter.turns <= Math.max(24 * 5, took) / SLICE_MS + 2, `${counter.turns} turns in ${took.toFixed(0)} ms`);
  // With three other runs under way each gets a quarter of the slice: every 5 ms step ends in a turn.
  const others = [new SliceClock(), new SliceClock(), new SliceClock()];
  counter = turnCounter();
  assert.equal(await drainSliced(steps(8, 5), undefined, 'the test'), 8);
  counter.stop();
  for (const c of others) c.close();
  assert.ok(counter.turns >= 7, `${counter.turns} turns for eight steps among four runs`);
  // An abort is seen at the next turn.
  const controller = new AbortController();
  controller.abort(new Error('stop'));
  await assert.rejects(drainSliced(steps(10, 25), controller.signal, 'the test'), (e) => isPackwrightError(e, 'ABORTED'));
  const clock = new SliceClock();
  clock.close();
  clock.close();
});

test('a pack written to a sink that never waits still gives the event loop turns', async () => {
  // 200 incompressible blobs of 16 KiB: a 3 MiB pack, several of the writer's 1 MiB chunks.
  using dir = tempDir();
  const repo = join(dir.path, 'r');
  mkdirSync(repo);
  git(repo, ['init', '-q']);
  for (let i = 0; i < 200; i++) writeFileSync(join(repo, `f${i}`), randomBytes(16 << 10));
  git(repo, ['add', '.']);
  git(repo, ['commit', '-qm', 'blobs']);
  const r = Repository.open(repo);
  try {
    const tips = new RevArgs(r);
    tips.add('HEAD');
    let counter: ReturnType<typeof turnCounter> | undefined;
    let chunks = 0;
    // A sink that takes each chunk at once, and slowly (a socket to a fast reader, on a busy machine).
    await createPack({
      objects: r.objects, tips: tips.tips, window: 0, threads: 1,
      sink: () => {
        counter ??= turnCounter();
        chunks++;
        busy(SLICE_MS + 5);
      },
    });
    counter?.stop();
    assert.ok(chunks >= 3, `${chunks} chunks`);
    assert.ok((counter?.turns ?? 0) >= 2, `${counter?.turns} turns while writing`);
  } finally {
    r.close();
  }
});

test('PackSlots: at most `limit` at once, the rest in order, an abort while waiting takes no slot', async () => {
  const slots = new PackSlots(2);
  const a = await slots.acquire();
  const b = await slots.acquire();
  const order: string[] = [];
  const c = slots.acquire().then((release) => { order.push('c'); return release; });
  const controller = new AbortController();
  const d = slots.acquire(controller.signal);
  const e = slots.acquire().then((release) => { order.push('e'); return release; });
  assert.deepEqual(slots.counts, { used: 2, waiting: 3 });
  controller.abort();
  await assert.rejects(d, (err) => isPackwrightError(err, 'ABORTED'));
  assert.deepEqual(slots.counts, { used: 2, waiting: 2 });
  a();
  a(); // once only
  const releaseC = await c;
  assert.deepEqual(order, ['c']);
  b();
  const releaseE = await e;
  assert.deepEqual(order, ['c', 'e']);
  releaseC();
  releaseE();
  assert.deepEqual(slots.counts, { used: 0, waiting: 0 });
  assert.throws(() => new PackSlots(0), RangeError);
});
