#!/usr/bin/env node
// node bench/store.mjs [REPO]: the dynamic store's own figures, in process (no git counterpart
// runs these): opening a store, cold and warm hits, 100k misses under each refresh policy with
// the directory listings they cost, every id's shortest unique prefix under each policy, random
// reads through a multi-pack-index against the same packs without it, concurrent hits and misses
// from 1, 2 and 4 worker threads, and the event loop's delay while 100k objects are read on
// workers. Prints markdown (bench/run.mjs appends it to its report). REPO defaults to the
// gitoxide corpus repository bench/run.mjs makes.
import { execFileSync } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { monitorEventLoopDelay } from 'node:perf_hooks';

const here = dirname(fileURLToPath(import.meta.url));
const { Store, forEachObject, writeMultiPackIndexFile } = await import(join(here, '..', 'dist', 'odb', 'index.js'));
const work = join(tmpdir(), 'packwright-bench');
const repo = process.argv[2] ?? join(work, 'gitoxide');
if (!existsSync(repo)) {
  process.stderr.write(`store bench: ${repo} is absent (run npm run bench first, or pass a repository)\n`);
  process.exit(0);
}
const rows = [];
const row = (what, value, note = '') => rows.push(`| ${what} | ${value} | ${note} |`);
const ms = (t) => `${t.toFixed(1)} ms`;
const us = (t) => `${(t * 1000).toFixed(2)} µs`;
let seed = 1;
const random = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32);

function allIds(store) {
  const ids = [];
  forEachObject(store.objects, {}, (id) => ids.push(Buffer.from(id)));
  return ids;
}

// Opening, and the first lookup (which lists the pack directory and loads one index).
{
  const t0 = performance.now();
  const store = Store.open(repo);
  const t1 = performance.now();
  const ids = allIds(Store.open(repo));
  const t2 = performance.now();
  store.objects.has(ids[0]);
  const t3 = performance.now();
  row('open a store', ms(t1 - t0), 'nothing listed or loaded');
  row('first lookup (lists, loads the index)', ms(t3 - t2));
  // Cold hits: a new store each time; warm: the same store, random ids.
  let t = performance.now();
  const N = 20;
  for (let i = 0; i < N; i++) {
    const s = Store.open(repo);
    s.objects.read(ids[Math.floor(random() * ids.length)]);
    s.close();
  }
  row('cold read (new store, one random object)', ms((performance.now() - t) / N));
  const warm = Store.open(repo);
  const sample = Array.from({ length: 100_000 }, () => ids[Math.floor(random() * ids.length)]);
  for (const id of sample.slice(0, 1000)) warm.objects.has(id);
  t = performance.now();
  for (const id of sample) warm.objects.has(id);
  row('warm hit (has, random id)', us((performance.now() - t) / sample.length));
  t = performance.now();
  for (const id of sample.slice(0, 20_000)) warm.objects.read(id);
  row('warm read (random id, sync, one thread)', us((performance.now() - t) / 20_000));
  warm.close();
  store.close();

  // Misses under each policy.
  for (const policy of ['on-miss', { afterMs: 1000 }, 'never']) {
    const s = Store.open(repo, { refresh: policy });
    s.objects.has(ids[0]);
    const before = s.counters.scans;
    const missing = Buffer.alloc(ids[0].length);
    t = performance.now();
    const M = 100_000;
    for (let i = 0; i < M; i++) {
      missing.writeUInt32BE(i, 0);
      s.objects.has(missing);
    }
    const took = performance.now() - t;
    row(`100k misses, refresh ${JSON.stringify(policy)}`, `${us(took / M)} a miss`, `${s.counters.scans - before} directory listings`);
    // Every id's shortest unique prefix (what `git log --abbrev` asks for each commit).
    t = performance.now();
    const P = 20_000;
    for (let i = 0; i < P; i++) {
      const hex = ids[Math.floor(random() * ids.length)].toString('hex');
      for (let len = 4; len <= hex.length; len++) if (s.objects.resolvePrefix(hex.slice(0, len), 2).kind === 'unique') break;
    }
    row(`shortest unique prefix, refresh ${JSON.stringify(policy)}`, `${us((performance.now() - t) / P)} an id`);
    s.close();
  }

  // Through a multi-pack-index against the packs it covers: a copy split into several packs.
  const split = join(work, 'store-bench-split.git');
  if (!existsSync(join(split, 'objects', 'pack', 'multi-pack-index'))) {
    rmSync(split, { recursive: true, force: true });
    execFileSync('git', ['init', '-q', '--bare', split]);
    // Contiguous ranges of pack order, so most deltas keep their bases and are reused as stored.
    const inPackOrder = [];
    const s = Store.open(repo);
    forEachObject(s.objects, { unordered: true }, (id) => inPackOrder.push(id.toString('hex')));
    s.close();
    const parts = 4;
    const per = Math.ceil(inPackOrder.length / parts);
    for (let p = 0; p < parts; p++) {
      const chunk = inPackOrder.slice(p * per, (p + 1) * per).join('\n') + '\n';
      execFileSync('git', ['--git-dir', repo, '-c', 'pack.threads=2', 'pack-objects', '-q', join(split, 'objects', 'pack', 'pack')], { input: chunk, stdio: ['pipe', 'ignore', 'ignore'], maxBuffer: 1 << 30 });
    }
    const writer = Store.open(split);
    writeMultiPackIndexFile(writer);
    writer.close();
  }
  const reads = Array.from({ length: 20_000 }, () => ids[Math.floor(random() * ids.length)]);
  // Lookups alone, then reads, each the best of 3 alternating rounds (a read's time is mostly
  // inflate and delta work, and varies between rounds by more than the lookup costs).
  const best = { locate: {}, read: {} };
  for (let round = 0; round < 3; round++) {
    for (const midx of [false, true]) {
      const s = Store.open(split, { multiPackIndex: midx });
      for (const id of reads.slice(0, 500)) s.objects.read(id);
      t = performance.now();
      for (const id of reads) s.objects.locate(id);
      best.locate[midx] = Math.min(best.locate[midx] ?? Infinity, (performance.now() - t) / reads.length);
      t = performance.now();
      for (const id of reads) s.objects.read(id);
      best.read[midx] = Math.min(best.read[midx] ?? Infinity, (performance.now() - t) / reads.length);
      s.close();
    }
  }
  row('random lookups, 4 packs through their own indexes', us(best.locate[false]));
  row('random lookups, the same 4 packs through the multi-pack-index', us(best.locate[true]), `${(best.locate[true] / best.locate[false]).toFixed(2)} of the packs' own indexes`);
  row('random reads, 4 packs through their own indexes', us(best.read[false]));
  row('random reads, the same 4 packs through the multi-pack-index', us(best.read[true]), `${(best.read[true] / best.read[false]).toFixed(2)} of the packs' own indexes`);

  // Concurrent hits and misses from worker threads (headerMany: each thread its own store).
  const mixed = Array.from({ length: 100_000 }, (_, i) => (i % 10 === 0 ? Buffer.alloc(ids[0].length, i % 251) : ids[Math.floor(random() * ids.length)]));
  for (const threads of [1, 2, 4]) {
    const s = Store.open(repo, { threads, refresh: 'never' });
    await s.headerMany(mixed.slice(0, 2000));
    t = performance.now();
    const r = await s.headerMany(mixed);
    const found = r.types.reduce((a, x) => a + (x > 0 ? 1 : 0), 0);
    row(`100k header lookups (10% misses) on ${threads} worker thread${threads > 1 ? 's' : ''}`, ms(performance.now() - t), `${found} found`);
    s.close();
  }

  // The event loop while 100k objects are read on workers.
  for (const threads of [1, 2]) {
    const s = Store.open(repo, { threads });
    const pick = Array.from({ length: 100_000 }, () => ids[Math.floor(random() * ids.length)]);
    const h = monitorEventLoopDelay({ resolution: 1 });
    h.enable();
    t = performance.now();
    let bytes = 0;
    for await (const r of s.readMany(pick)) if (r.found) bytes += r.data.length;
    h.disable();
    row(`readMany of 100k random objects, ${threads} worker thread${threads > 1 ? 's' : ''}`, ms(performance.now() - t),
      `event loop delay p50 ${(h.percentile(50) / 1e6).toFixed(1)} ms, p99 ${(h.percentile(99) / 1e6).toFixed(1)} ms, max ${(h.max / 1e6).toFixed(1)} ms; ${(bytes / 1e6).toFixed(0)} MB`);
    s.close();
  }
}

process.stdout.write(`\n## Store (in process, ${repo.split('/').at(-1)})\n\n| what | time | note |\n|---|---|---|\n${rows.join('\n')}\n`);
