/**
 * A seeded generator (mulberry32), so a failing randomized test fails the same way again.
 */
export function seededRandom(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * The seed of a randomized test: PACKWRIGHT_SEED when set (to replay a failure), else a new one
 * each run. Tests name it in their failure messages.
 */
export function testSeed(): number {
  const env = process.env['PACKWRIGHT_SEED'];
  return env !== undefined && env !== '' ? Number(env) >>> 0 : (Math.random() * 2 ** 32) >>> 0;
}
