import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { sortIds } from '../src/idx/sort-ids.js';
import { compareBytes } from '../src/hash/hex.js';

/** The order by a plain comparator: ids, then entry number. */
function reference(ids: Uint8Array, n: number, H: number): number[] {
  return Array.from({ length: n }, (_, i) => i).sort((a, b) => compareBytes(ids, a * H, ids, b * H, H) || a - b);
}

test('sortIds orders ids as a comparator does, by both of its methods and into a given table, prefixes shared and ids repeated', () => {
  // Ids drawn from a few prefixes, so buckets, shared four- and six-byte runs and duplicates all occur.
  const id = (H: number): fc.Arbitrary<number[]> => fc.tuple(fc.constantFrom(0, 1, 255), fc.constantFrom(0, 7), fc.array(fc.integer({ min: 0, max: 3 }), { minLength: H - 2, maxLength: H - 2 }))
    .map(([a, b, rest]) => [a, b, ...rest]);
  for (const H of [20, 32]) {
    fc.assert(fc.property(fc.array(id(H), { maxLength: 300 }), (list) => {
      const ids = Uint8Array.from(list.flat());
      const want = reference(ids, list.length, H);
      assert.deepEqual(Array.from(sortIds(ids, list.length, H)), want);
      assert.deepEqual(Array.from(sortIds(ids, list.length, H, { bucketedFrom: 0 })), want);
      // Into a caller's table, longer than needed and not zeroed, by both methods.
      for (const bucketedFrom of [0, Infinity]) {
        const into = new Uint32Array(list.length + 3).fill(0xdeadbeef);
        const got = sortIds(ids, list.length, H, { into, bucketedFrom });
        assert.equal(got.buffer, into.buffer);
        assert.deepEqual(Array.from(got), want);
      }
    }), { numRuns: 300 });
  }
});

test('sortIds of 400k random ids (the bucketed method, buckets of ~6) gives the comparator order', () => {
  const n = 400_000;
  const H = 20;
  const ids = new Uint8Array(n * H);
  let seed = 9;
  for (let i = 0; i < ids.length; i += 4) {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    ids[i] = seed >>> 24;
    ids[i + 1] = seed >>> 16;
    ids[i + 2] = seed >>> 8;
    ids[i + 3] = seed;
  }
  const order = sortIds(ids, n, H);
  for (let i = 1; i < n; i++) {
    if ((compareBytes(ids, (order[i - 1] as number) * H, ids, (order[i] as number) * H, H) || (order[i - 1] as number) - (order[i] as number)) >= 0) assert.fail(`out of order at position ${i}`);
  }
  assert.equal(new Set(order).size, n);
});
