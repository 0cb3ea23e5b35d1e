#!/usr/bin/env node
// node scripts/sample-git-ubc.mjs GIT-SOURCE-DIR
//
// Writes test/fixtures/sha1dc-git-ubc-blocks.bin: for each disturbance vector, in the order of
// src/hash/sha1dc/disturbance-vectors.ts, BLOCKS random message blocks (16 big-endian words each)
// that git's own unavoidable-condition check (GIT-SOURCE-DIR/sha1dc/ubc_check.c, Stevens & Shumow's)
// lets through to the recompression for that vector. test/sha1dc.test.ts then checks that every
// condition derived for a vector holds on all of its blocks: a condition that git's do not imply
// fails a random such block half of the time, so it would be caught with odds of 1 - 2^-BLOCKS. So
// our check never skips a recompression that git's sha1dc would run. Needs a C compiler (`cc`);
// the fixture is committed, so the tests need neither git's source nor a compiler.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { disturbanceVectors } from '../dist/hash/sha1dc/disturbance-vectors.js';

const BLOCKS = 48;
const gitSource = process.argv[2];
if (gitSource === undefined) {
  console.error('usage: node scripts/sample-git-ubc.mjs GIT-SOURCE-DIR (run after npm run build)');
  process.exit(2);
}
const sha1dc = resolve(gitSource, 'sha1dc');
const out = fileURLToPath(new URL('../test/fixtures/sha1dc-git-ubc-blocks.bin', import.meta.url));

// The vectors as (type, K, b), in our order; the C side finds each in git's table by those.
const wanted = disturbanceVectors().map((v) => `{${v.type}, ${v.k}, ${v.b}}`).join(', ');
const program = `
#include <stdint.h>
#include <stdio.h>
#include "ubc_check.h"
static const int wanted[][3] = { ${wanted} };
static uint64_t s = 0x9e3779b97f4a7c15ull;
static uint32_t next(void) { s ^= s << 13; s ^= s >> 7; s ^= s << 17; return (uint32_t)(s >> 16); }
int main(void) {
  for (unsigned v = 0; v < sizeof wanted / sizeof wanted[0]; v++) {
    int bit = -1;
    for (int i = 0; sha1_dvs[i].dvType != 0; i++)
      if (sha1_dvs[i].dvType == wanted[v][0] && sha1_dvs[i].dvK == wanted[v][1] && sha1_dvs[i].dvB == wanted[v][2]) bit = sha1_dvs[i].maskb;
    if (bit < 0) { fprintf(stderr, "vector %u is not in git's table\\n", v); return 1; }
    for (int found = 0; found < ${BLOCKS};) {
      uint32_t w[80], mask = 0;
      for (int i = 0; i < 16; i++) w[i] = next();
      for (int i = 16; i < 80; i++) { uint32_t x = w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16]; w[i] = (x << 1) | (x >> 31); }
      ubc_check(w, &mask);
      if (!((mask >> bit) & 1)) continue;
      for (int i = 0; i < 16; i++) { unsigned char b[4] = { w[i] >> 24, w[i] >> 16, w[i] >> 8, w[i] }; fwrite(b, 1, 4, stdout); }
      found++;
    }
  }
  return 0;
}
`;
const dir = mkdtempSync(join(tmpdir(), 'packwright-ubc-'));
try {
  writeFileSync(join(dir, 'sample.c'), program);
  execFileSync('cc', ['-O2', '-I', sha1dc, join(dir, 'sample.c'), join(sha1dc, 'ubc_check.c'), '-o', join(dir, 'sample')], { stdio: 'inherit' });
  writeFileSync(out, execFileSync(join(dir, 'sample'), { maxBuffer: 1 << 24 }));
  console.log(`wrote ${out}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
