/**
 * The disturbance vectors that a collision-detecting SHA-1 checks, after Stevens, "Counter-cryptanalysis"
 * (CRYPTO 2013) and Stevens & Shumow, "Speeding up detection of SHA-1 collision attacks using unavoidable
 * attack conditions" (USENIX Security 2017), which git's sha1dc implements.
 *
 * Every known practical attack on SHA-1 (SHAttered, SHA-mbles) uses one of these. A vector names where
 * the local collisions of the attack's differential path start; it fixes the XOR difference between the
 * two colliding message blocks (all 80 expanded words), and a step at which the two computations share
 * their whole state. Given one block, the other block of a would-be pair is the block XOR that difference,
 * and its computation can be rebuilt from the shared state: that is the detection (see sha1dc.ts).
 */

export type DisturbanceVectorType = 1 | 2;

export interface DisturbanceVector {
  /** `I(43,0)` and the like: Manuel's classification (type, K, b), as in the papers. */
  readonly name: string;
  readonly type: DisturbanceVectorType;
  readonly k: number;
  readonly b: number;
  /** The expanded message block XOR difference, 80 words. */
  readonly messageDifference: Int32Array;
  /**
   * The disturbances themselves: bit j of word t set means a local collision starts at step t, bit j.
   * Indexed t + 5 for t in -5..79, since the message difference of steps 0..4 reaches back 5 steps.
   */
  readonly disturbances: Int32Array;
  /** A step before which no local collision is under way: both states are equal there. */
  readonly step: RecompressionStep;
}

/**
 * The steps whose state the compression keeps for the check. Each vector's state-sharing window holds
 * one of them; keeping two (instead of one per vector) is what sha1dc does too.
 */
export const RECOMPRESSION_STEPS = [58, 65] as const;
export type RecompressionStep = (typeof RECOMPRESSION_STEPS)[number];

/** The vectors checked, in the order of their bit in a check mask. */
const VECTORS: ReadonlyArray<readonly [DisturbanceVectorType, number, number]> = [
  ...[43, 44, 45, 46, 47, 48, 49, 50, 51, 52].map((k) => [1, k, 0] as const),
  ...[46, 47, 48, 49, 50, 51].map((k) => [1, k, 2] as const),
  ...[45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56].map((k) => [2, k, 0] as const),
  ...[46, 49, 50, 51].map((k) => [2, k, 2] as const),
];

const rotl = (x: number, n: number): number => (x << n) | (x >>> (32 - n));

/**
 * The 16 words at steps K..K+15 that define a vector of each type (Manuel, "Classification and generation
 * of disturbance vectors for collision attacks against SHA-1", 2011), rotated left by b; the other 64
 * words follow from SHA-1's message expansion, forwards and backwards.
 */
const WINDOWS: Record<DisturbanceVectorType, ReadonlyArray<readonly [number, number]>> = {
  1: [[0, 1 << 4], [1, (1 << 29) | (1 << 31)], [3, 1 << 29], [4, 1 << 29], [15, 1]],
  2: [[0, 1 << 29], [1, 1 << 31], [2, 1 << 4], [4, (1 << 4) | (1 << 29)], [5, (1 << 29) | (1 << 31)], [7, 1 << 29], [8, 1 << 29], [15, 1]],
};

/** The message difference of vector (type, k, b): its window expanded to all 80 steps. */
export function messageDifference(type: DisturbanceVectorType, k: number, b: number): Int32Array {
  const w = new Int32Array(80);
  for (const [at, bits] of WINDOWS[type]) w[k + at] = b === 0 ? bits : rotl(bits, b);
  for (let i = k + 16; i < 80; i++) w[i] = rotl(w[i - 3]! ^ w[i - 8]! ^ w[i - 14]! ^ w[i - 16]!, 1);
  for (let i = k - 1; i >= 0; i--) w[i] = rotl(w[i + 16]!, 31) ^ w[i + 13]! ^ w[i + 8]! ^ w[i + 2]!;
  return w;
}

/**
 * The disturbances behind a message difference. A local collision started at step t, bit j, has message
 * differences at t (j), t+1 (j+5), t+2 (j), t+3, t+4 and t+5 (j+30); so the difference of step i is
 * D[i] ^ rotl(D[i-1], 5) ^ D[i-2] ^ rotl(D[i-3], 30) ^ rotl(D[i-4], 30) ^ rotl(D[i-5], 30). Inverting that
 * needs five known words: the five zero words before a step `quiet` with no local collision under way.
 * Only the right `quiet` gives a sequence that obeys the message expansion, as every disturbance vector does.
 */
function disturbancesFrom(dm: Int32Array, quiet: number): Int32Array {
  const d = new Int32Array(85); // index t + 5
  for (let i = quiet; i < 80; i++) {
    d[i + 5] = dm[i]! ^ rotl(d[i + 4]!, 5) ^ d[i + 3]! ^ rotl(d[i + 2]!, 30) ^ rotl(d[i + 1]!, 30) ^ rotl(d[i]!, 30);
  }
  for (let i = quiet - 1; i >= 0; i--) {
    const x = dm[i]! ^ d[i + 5]! ^ rotl(d[i + 4]!, 5) ^ d[i + 3]! ^ rotl(d[i + 2]!, 30) ^ rotl(d[i + 1]!, 30);
    d[i] = rotl(x, 2); // d[i] holds step i - 5; undo its rotation by 30
  }
  return d;
}

function obeysExpansion(d: Int32Array): boolean {
  for (let t = 11; t < 80; t++) {
    if (d[t + 5] !== rotl(d[t + 2]! ^ d[t - 3]! ^ d[t - 9]! ^ d[t - 11]!, 1)) return false;
  }
  return true;
}

function quietBefore(d: Int32Array, step: number): boolean {
  for (let t = step - 5; t < step; t++) if (d[t + 5] !== 0) return false;
  return true;
}

function makeVector(type: DisturbanceVectorType, k: number, b: number): DisturbanceVector {
  const name = `${type === 1 ? 'I' : 'II'}(${k},${b})`;
  const dm = messageDifference(type, k, b);
  let disturbances: Int32Array | undefined;
  for (let quiet = 20; quiet <= 80 && disturbances === undefined; quiet++) {
    const d = disturbancesFrom(dm, quiet);
    if (obeysExpansion(d)) disturbances = d;
  }
  const step = disturbances && RECOMPRESSION_STEPS.find((s) => quietBefore(disturbances, s));
  if (disturbances === undefined || step === undefined) throw new Error(`disturbance vector ${name} has no quiet recompression step`);
  return { name, type, k, b, messageDifference: dm, disturbances, step };
}

let built: readonly DisturbanceVector[] | undefined;

/**
 * The 32 vectors, built on first use (a few milliseconds): not at load, since everything that
 * hashes imports this module, and most commands never detect collisions.
 */
export function disturbanceVectors(): readonly DisturbanceVector[] {
  return (built ??= VECTORS.map(([type, k, b]) => makeVector(type, k, b)));
}
