import { disturbanceVectors, type DisturbanceVector } from './disturbance-vectors.js';

/**
 * Which message bit relations an attack along a disturbance vector cannot avoid: the "unavoidable bit
 * conditions" of Stevens & Shumow (2017). A block that breaks one of a vector's conditions cannot be
 * half of a colliding pair along that vector, so the costly check (a recompression) is skipped for it.
 * A condition set that is too small only costs time; one that is too large would miss an attack, so
 * every condition here is derived, not chosen, and the derivation errs on the side of fewer.
 *
 * The model. Along the vector, the state words A[t] of the two computations differ in exactly the
 * disturbed bits (no carries), each with a sign that is the bit's value in the first message (0 means
 * it goes 0→1). Each step t is one equation modulo 2^32 between the differences of its terms:
 *   dA[t+1] = d rotl(A[t], 5) + d f(B, C, D) + d E + d W[t],
 * where B, C, D, E are A[t-1], rotl(A[t-2], 30), rotl(A[t-3], 30), rotl(A[t-4], 30), and d W[t] has the
 * vector's message difference with signs given by the message bits. The boolean function f is taken
 * exactly (its output difference depends on the values of all three inputs at that bit). The variables
 * are the bit values of the A words and of the message words that these equations touch.
 *
 * For each equation, every pair of its variables whose XOR is the same in all of the equation's
 * solutions is a relation the attack must meet (found by a walk over bit positions that carries the
 * carry). Relations that share variables chain (a union-find with parity), and the chains that join two
 * message bits are the conditions.
 *
 * The steps used: 35 to 64, the steps whose message words git's own conditions read (Stevens & Shumow's
 * ubc_check.c). From 35: published attacks reach no further than step 26 or so with message
 * modification and neutral bits. To 64 for every vector, past the recompression step of those whose
 * step is 58: a block is flagged only when the rebuilt partner's output equals its own, so an attack
 * that the check can catch follows the vector after that step too; only the last steps are the
 * attack's to choose (its end differences may take carries or other signs: on the public attacks,
 * conditions derived to step 79 break 26 times). Stopping at the recompression step, as this did
 * first, cost 0.089 recompressions a random block, against 0.049 at this window and 0.049 for git's.
 *
 * Ours must never be stricter than git's: a block that git's check passes to the recompression for a
 * vector meets every condition derived here for it (test/sha1dc.test.ts, on blocks sampled from git's
 * check by scripts/sample-git-ubc.mjs). One derived relation failed that test: I(52,0)'s at step 35
 * (W35[30] against W36[3]); git's conditions for that vector start at W39, so its window starts a
 * step later here (FIRST_STEP_OF).
 *
 * On the two public attacks (22 blocks: both halves of SHAttered's and of SHA-mbles' pairs, all along
 * II(52,0)) every condition derived this way holds, even with the window stretched from step 20 to
 * step 73 (26 conditions instead of 15).
 */

export interface Condition {
  /** Bit `aBit` of expanded message word `a` … */
  readonly a: number;
  readonly aBit: number;
  /** … equals (or, if `differ`, differs from) bit `bBit` of word `b`. */
  readonly b: number;
  readonly bBit: number;
  readonly differ: boolean;
}

export const FIRST_CONDITION_STEP = 35;
export const LAST_CONDITION_STEP = 64;
/** Vectors whose window starts later than FIRST_CONDITION_STEP (see above). */
const FIRST_STEP_OF: Readonly<Record<string, number>> = { 'I(52,0)': 36 };

type BoolFn = (b: number, c: number, d: number) => number;
const IF: BoolFn = (b, c, d) => (b & c) | ((b ^ 1) & d);
const XOR: BoolFn = (b, c, d) => b ^ c ^ d;
const MAJ: BoolFn = (b, c, d) => (b & c) | (b & d) | (c & d);
const roundFunction = (t: number): BoolFn => (t < 20 ? IF : t < 40 ? XOR : t < 60 ? MAJ : XOR);

/** One bit position of one step's equation: its variables and the signed sum they contribute. */
interface Position {
  vars: string[];
  /** Contribution at this position for the variables' values (in `vars` order); NaN if inconsistent. */
  sum: (values: readonly number[]) => number;
}

const bitsOf = (x: number): number[] => {
  const out: number[] = [];
  for (let j = 0; j < 32; j++) if ((x >>> j) & 1) out.push(j);
  return out;
};

/** The value of A[t] bit k in the first message is variable `A<t>.<k>`; message bits are `W<t>.<j>`. */
const aVar = (t: number, k: number): string => `A${t}.${k}`;
const wVar = (t: number, j: number): string => `W${t}.${j}`;
/** A difference whose variable is 0 goes 0→1 (+1), 1 goes 1→0 (-1). */
const sign = (value: number): number => (value ? -1 : 1);

function stepEquation(v: DisturbanceVector, t: number): Position[] {
  const D = (s: number): number => v.disturbances[s + 5]!;
  const positions: Array<{ vars: string[]; parts: Array<(vals: readonly number[]) => number> }> = [];
  for (let j = 0; j < 32; j++) positions.push({ vars: [], parts: [] });
  const signed = (j: number, name: string, coefficient: number): void => {
    const p = positions[j]!;
    const at = p.vars.length;
    p.vars.push(name);
    p.parts.push((vals) => coefficient * sign(vals[at]!));
  };
  for (const j of bitsOf(D(t))) signed(j, aVar(t + 1, j), -1); // dA[t+1], moved to the right side
  for (const j of bitsOf(D(t - 1))) signed((j + 5) % 32, aVar(t, j), 1); // rotl(A[t], 5)
  for (const j of bitsOf(D(t - 5))) signed((j + 30) % 32, aVar(t - 4, j), 1); // E = rotl(A[t-4], 30)
  for (const j of bitsOf(v.messageDifference[t]!)) signed(j, wVar(t, j), 1);
  const f = roundFunction(t);
  for (let j = 0; j < 32; j++) {
    const k = (j + 2) % 32; // C and D are rotated by 30: their bit j is bit j+2 of A
    const dB = (D(t - 2) >>> j) & 1, dC = (D(t - 3) >>> k) & 1, dD = (D(t - 4) >>> k) & 1;
    if ((dB | dC | dD) === 0) continue;
    const p = positions[j]!;
    const at = p.vars.length;
    p.vars.push(aVar(t - 1, j), aVar(t - 2, k), aVar(t - 3, k));
    p.parts.push((vals) => {
      const b = vals[at]!, c = vals[at + 1]!, d = vals[at + 2]!;
      return f(b ^ dB, c ^ dC, d ^ dD) - f(b, c, d);
    });
  }
  return positions.map(({ vars, parts }) => ({ vars, sum: (vals) => parts.reduce((s, part) => s + part(vals), 0) }));
}

/**
 * Which parities of the XOR of the `probe` variables the equation's solutions take: bit 0 set if an
 * even parity occurs, bit 1 if odd (0: no solution). A walk from bit 0 to bit 31 whose state is the
 * carry and the parity so far; at bit 31 only evenness counts, the carry out being lost modulo 2^32.
 */
function parities(positions: readonly Position[], probe: readonly string[]): number {
  let states = new Set<number>([0]); // carry * 2 + parity
  for (let j = 0; j < 32; j++) {
    const { vars, sum } = positions[j]!;
    const outcomes: Array<[number, number]> = [];
    const vals = new Array<number>(vars.length).fill(0);
    for (let m = 0; m < 1 << vars.length; m++) {
      let parity = 0;
      for (let i = 0; i < vars.length; i++) {
        vals[i] = (m >> i) & 1;
        if (vals[i] && probe.includes(vars[i]!)) parity ^= 1;
      }
      outcomes.push([sum(vals), parity]);
    }
    const next = new Set<number>();
    for (const s of states) {
      const carry = s >> 1;
      for (const [value, parity] of outcomes) {
        const total = value + carry;
        if (total & 1) continue;
        next.add((j === 31 ? 0 : total / 2) * 2 + ((s & 1) ^ parity));
      }
    }
    states = next;
    if (states.size === 0) return 0;
  }
  let result = 0;
  for (const s of states) result |= s & 1 ? 2 : 1;
  return result;
}

/** Union-find with parity: `find` gives a root and the variable's XOR with it. */
class ParityUnion {
  private readonly parent = new Map<string, string>();
  private readonly parity = new Map<string, number>();
  add(x: string): void {
    if (!this.parent.has(x)) {
      this.parent.set(x, x);
      this.parity.set(x, 0);
    }
  }
  find(x: string): [string, number] {
    let p = 0;
    for (;;) {
      const up = this.parent.get(x);
      if (up === undefined || up === x) return [x, p];
      p ^= this.parity.get(x)!;
      x = up;
    }
  }
  join(a: string, b: string, xor: number): void {
    const [ra, pa] = this.find(a), [rb, pb] = this.find(b);
    if (ra === rb) {
      if ((pa ^ pb) !== xor) throw new Error(`contradictory relation between ${a} and ${b}`);
      return;
    }
    this.parent.set(ra, rb);
    this.parity.set(ra, pa ^ pb ^ xor);
  }
  members(): string[] {
    return [...this.parent.keys()];
  }
}

/** The conditions of one vector, each chain written as relations between consecutive message bits. */
export function deriveConditions(v: DisturbanceVector, first = FIRST_STEP_OF[v.name] ?? FIRST_CONDITION_STEP, last = LAST_CONDITION_STEP): Condition[] {
  const union = new ParityUnion();
  for (let t = first; t <= last; t++) {
    const positions = stepEquation(v, t);
    const vars = [...new Set(positions.flatMap((p) => p.vars))];
    if (vars.length === 0) continue;
    if (parities(positions, []) === 0) throw new Error(`${v.name}: step ${t} has no solution`);
    for (const name of vars) union.add(name);
    for (let i = 0; i < vars.length; i++) {
      for (let k = i + 1; k < vars.length; k++) {
        const seen = parities(positions, [vars[i]!, vars[k]!]);
        if (seen === 1 || seen === 2) union.join(vars[i]!, vars[k]!, seen === 1 ? 0 : 1);
      }
    }
  }
  const chains = new Map<string, Array<[number, number, number]>>();
  for (const name of union.members()) {
    if (name[0] !== 'W') continue;
    const [root, parity] = union.find(name);
    const [word, bit] = name.slice(1).split('.').map(Number) as [number, number];
    let chain = chains.get(root);
    if (chain === undefined) chains.set(root, (chain = []));
    chain.push([word, bit, parity]);
  }
  const conditions: Condition[] = [];
  for (const chain of chains.values()) {
    chain.sort((x, y) => x[0] - y[0] || x[1] - y[1]);
    for (let i = 1; i < chain.length; i++) {
      const [a, aBit, pa] = chain[i - 1]!, [b, bBit, pb] = chain[i]!;
      conditions.push({ a, aBit, b, bBit, differ: pa !== pb });
    }
  }
  return conditions.sort((x, y) => x.a - y.a || x.aBit - y.aBit || x.b - y.b || x.bBit - y.bBit);
}

/** Every vector's conditions, merged: each distinct condition with the mask of the vectors it applies to. */
export function deriveAllConditions(): Array<Condition & { vectors: number }> {
  const merged = new Map<string, Condition & { vectors: number }>();
  disturbanceVectors().forEach((v, i) => {
    for (const c of deriveConditions(v)) {
      const key = `${c.a}.${c.aBit}.${c.b}.${c.bBit}.${c.differ}`;
      const seen = merged.get(key);
      if (seen) seen.vectors |= 1 << i;
      else merged.set(key, { ...c, vectors: 1 << i });
    }
  });
  return [...merged.values()];
}
