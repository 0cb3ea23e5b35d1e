import { disturbanceVectors } from './disturbance-vectors.js';
import { SHA1DC_WASM } from './sha1dc-wasm.js';

/**
 * The WebAssembly instance behind Sha1dc and Sha1dcLanes: one a thread, made on first use (the
 * module compiles in about a millisecond), its memory holding the vectors' message differences, the
 * state of the message in work, an input chunk and the four lanes' messages.
 */

/** Where the WebAssembly side keeps things (assembly/sha1dc.ts has the same map). */
export const IHV = 0, FOUND = 20, STEPS = 1024, DM = 1152;
/** The four-lane function's chaining values (5 × 4 words, word-major) and flags (4 words). */
export const IHV4 = 11392, FOUND4 = 11472;
/** Where input goes (the module's INPUT), in chunks of CHUNK bytes; the four lanes follow. */
const INPUT = 16 << 10;
export const CHUNK = 1 << 20;
/** Each of the four lanes holds one whole message (padding included) of up to this many bytes, after INPUT's chunk. */
export const LANE_BYTES = (1 << 20) + 128;
/** The instance's memory: ~5 MiB (index-pack's memory plan charges it to each thread that hashes with it). */
export const ENGINE_BYTES = INPUT + CHUNK + 4 * LANE_BYTES;

/**
 * The part of WebAssembly's JavaScript interface used here. Node has all of it at run time, but
 * @types/node 20 declares none of it, and lib "dom" would declare a browser.
 */
interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { exports: unknown };
}
const wasm = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;

export interface Exports {
  memory: { buffer: ArrayBuffer; grow(pages: number): number };
  INPUT: { value: number };
  setup(vectors: number): void;
  blocks(at: number, count: number): void;
  blocks4(p0: number, p1: number, p2: number, p3: number, count: number): void;
}

export interface Engine {
  x: Exports;
  input: number;
  /** Where lane i's message starts: lanes + i * LANE_BYTES. */
  lanes: number;
  bytes: Uint8Array;
  words: Int32Array;
}

let engine: Engine | undefined;

/** This thread's instance, made on first use. */
export function threadEngine(): Engine {
  return (engine ??= load());
}

function load(): Engine {
  const module = new wasm.Module(Buffer.from(SHA1DC_WASM, 'base64'));
  const x = new wasm.Instance(module, {
    env: { abort: () => { throw new Error('sha1dc: WebAssembly abort'); } },
  }).exports as unknown as Exports;
  if (x.INPUT.value !== INPUT) throw new Error(`sha1dc: the module's input is at ${x.INPUT.value}, not ${INPUT}`);
  if (x.memory.buffer.byteLength < ENGINE_BYTES) x.memory.grow(Math.ceil((ENGINE_BYTES - x.memory.buffer.byteLength) / 65536));
  const words = new Int32Array(x.memory.buffer);
  disturbanceVectors().forEach((v, i) => {
    words[STEPS / 4 + i] = v.step;
    words.set(v.messageDifference, (DM + 320 * i) / 4);
  });
  x.setup(disturbanceVectors().length);
  return { x, input: INPUT, lanes: INPUT + CHUNK, bytes: new Uint8Array(x.memory.buffer), words };
}

/**
 * SHA-1's padding after a message's last `n` bytes, which are at `at`: 0x80, zeros, and the length
 * of the whole message (`length` bytes) in bits, big-endian, ending at `end`.
 */
export function pad(bytes: Uint8Array, at: number, n: number, end: number, length: number): void {
  bytes[at + n] = 0x80;
  bytes.fill(0, at + n + 1, end - 8);
  const bits = length * 8;
  const high = Math.floor(bits / 0x100000000), low = bits >>> 0;
  bytes[end - 8] = high >>> 24; bytes[end - 7] = high >>> 16; bytes[end - 6] = high >>> 8; bytes[end - 5] = high;
  bytes[end - 4] = low >>> 24; bytes[end - 3] = low >>> 16; bytes[end - 2] = low >>> 8; bytes[end - 1] = low;
}

/** The digest: the five words of a chaining value at `words[from]`, big-endian, into `out` at `at`. */
export function writeDigest(words: Int32Array, from: number, out: Uint8Array, at: number): void {
  for (let k = 0; k < 5; k++) {
    const v = words[from + k]!;
    out[at + 4 * k] = v >>> 24; out[at + 4 * k + 1] = v >>> 16; out[at + 4 * k + 2] = v >>> 8; out[at + 4 * k + 3] = v;
  }
}

export const INITIAL_IHV = [0x67452301, 0xefcdab89 | 0, 0x98badcfe | 0, 0x10325476, 0xc3d2e1f0 | 0];
