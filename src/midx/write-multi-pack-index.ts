import { PackwrightError } from '../errors/packwright-error.js';
import type { ObjectFormat } from '../hash/object-format.js';
import { formatId, hashLength } from '../hash/object-format.js';
import { hashBytes } from '../hash/hash-object.js';
import { compareBytes } from '../idx/sorted-ids.js';
import { CHUNK_TABLE_ROW, writeChunkTable } from '../encoding/chunk-table.js';
import {
  CHUNK_LOFF, CHUNK_OIDF, CHUNK_OIDL, CHUNK_OOFF, CHUNK_PNAM, CHUNK_RIDX, MIDX_HEADER_LENGTH, MIDX_LARGE_OFFSET_NEEDED, MIDX_SIGNATURE, type MultiPackIndex,
} from './multi-pack-index.js';

/** What the writer needs of one pack's own index. */
export interface MidxPackIndex {
  readonly count: number;
  /** The id at sorted position `position`. */
  id(position: number): Uint8Array;
  /** The pack offset of the object at sorted position `position`. */
  offset(position: number): number;
}

/** One pack going into the multi-pack-index. */
export interface MidxPack {
  /** The `.idx` file name (`pack-<hash>.idx`), as PNAM stores it. */
  name: string;
  /** The pack's modification time in whole seconds (git's `p->mtime`): newer copies win. */
  mtime: number;
  index: MidxPackIndex;
}

/**
 * What a multi-pack-index is written from: the format, the packs (names and indexes in order), the
 * preferred pack and the optional chunks.
 */
export interface WriteMidxInput {
  format: ObjectFormat;
  /**
   * Packs of an existing multi-pack-index being rewritten, in its PNAM order: their objects are
   * taken from it, as "old" copies (git carries an existing file's choices forward).
   */
  previous?: { midx: MultiPackIndex; packs: readonly MidxPack[] };
  /** Packs not in `previous`, in the order git found them (readdir order: ties are broken by it). */
  packs: readonly MidxPack[];
  /** Index into [...previous packs, ...packs] of the preferred pack, or -1. */
  preferred: number;
  /** `.idx` names to leave out (expire): packs with no objects chosen. */
  drop?: ReadonlySet<string>;
  /**
   * Write the RIDX chunk (the objects in pseudo-pack order: the preferred pack's first, then each
   * other pack's by pack number, each by offset), as git does when it writes a bitmap.
   */
  reverseIndex?: boolean;
}

const CHUNK_ALIGNMENT = 4;

/**
 * Builds a multi-pack-index exactly as git 2.39's `write_midx_internal` (midx.c) does: the same
 * chunks in the same order (RIDX last, when asked for), the same choice among duplicate copies (the
 * preferred pack, then the newer pack mtime, then the earlier pack as found), the same large-
 * offset rule (LOFF only when an offset needs more than 32 bits; then every offset above 2^31-1
 * goes there), and the trailing hash. Identical input gives byte-identical output.
 */
export function writeMultiPackIndex(input: WriteMidxInput): Buffer {
  const H = hashLength(input.format);
  const previous = input.previous;
  const prevCount = previous?.packs.length ?? 0;
  const all = [...(previous?.packs ?? []), ...input.packs];
  const names = all.map((p) => p.name);
  const preferred = input.preferred;

  // Every candidate entry: (id, pack as found, mtime, offset, preferred).
  const ids: Uint8Array[] = [];
  const packIds: number[] = [];
  const mtimes: number[] = [];
  const offsets: number[] = [];
  const preferredFlags: number[] = [];
  const add = (id: Uint8Array, pack: number, mtime: number, offset: number, isPreferred: boolean): void => {
    ids.push(id);
    packIds.push(pack);
    mtimes.push(mtime);
    offsets.push(offset);
    preferredFlags.push(isPreferred ? 1 : 0);
  };
  if (previous !== undefined) {
    const m = previous.midx;
    for (let i = 0; i < m.count; i++) {
      const pack = m.packOf(i);
      // The preferred pack's objects are added from the pack itself, below.
      if (preferred > -1 && pack === preferred) continue;
      add(m.id(i), pack, 0, m.offset(i), false);
    }
  }
  input.packs.forEach((p, k) => {
    const pack = prevCount + k;
    for (let i = 0; i < p.index.count; i++) add(p.index.id(i), pack, p.mtime, p.index.offset(i), pack === preferred);
  });
  if (preferred > -1 && preferred < prevCount) {
    // A preferred pack the existing file already names: its objects come from its own index.
    const p = all[preferred] as MidxPack;
    for (let i = 0; i < p.index.count; i++) add(p.index.id(i), preferred, p.mtime, p.index.offset(i), true);
  }
  const order = ids.map((_, i) => i);
  order.sort((a, b) =>
    compareBytes(ids[a] as Uint8Array, 0, ids[b] as Uint8Array, 0, H) ||
    (preferredFlags[b] as number) - (preferredFlags[a] as number) ||
    (mtimes[b] as number) - (mtimes[a] as number) ||
    (packIds[a] as number) - (packIds[b] as number));
  const chosen: number[] = [];
  for (let k = 0; k < order.length; k++) {
    const i = order[k] as number;
    if (chosen.length > 0 && compareBytes(ids[chosen[chosen.length - 1] as number] as Uint8Array, 0, ids[i] as Uint8Array, 0, H) === 0) continue;
    chosen.push(i);
  }
  const n = chosen.length;

  // Packs sorted by name; the new number of each pack as found (dropped ones have none).
  const sortedPacks = names.map((name, i) => ({ name, i })).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const perm = new Array<number>(names.length).fill(-1);
  const kept: string[] = [];
  for (const p of sortedPacks) {
    if (input.drop?.has(p.name)) continue;
    perm[p.i] = kept.length;
    kept.push(p.name);
  }
  if (kept.length === 0) throw new PackwrightError('INVALID_ARGUMENT', 'no pack files to index.');

  let largeCount = 0;
  let largeNeeded = false;
  for (const i of chosen) {
    const o = offsets[i] as number;
    if (o > 0x7fffffff) largeCount++;
    if (o > 0xffffffff) largeNeeded = true;
  }

  let pnamLength = kept.reduce((s, name) => s + Buffer.byteLength(name) + 1, 0);
  if (pnamLength % CHUNK_ALIGNMENT) pnamLength += CHUNK_ALIGNMENT - (pnamLength % CHUNK_ALIGNMENT);
  const chunks: { id: number; size: number }[] = [
    { id: CHUNK_PNAM, size: pnamLength },
    { id: CHUNK_OIDF, size: 256 * 4 },
    { id: CHUNK_OIDL, size: n * H },
    { id: CHUNK_OOFF, size: n * 8 },
  ];
  if (largeNeeded) chunks.push({ id: CHUNK_LOFF, size: largeCount * 8 });
  if (input.reverseIndex === true) chunks.push({ id: CHUNK_RIDX, size: n * 4 });
  const tocLength = (chunks.length + 1) * CHUNK_TABLE_ROW;
  const bodyLength = MIDX_HEADER_LENGTH + tocLength + chunks.reduce((s, c) => s + c.size, 0);
  const out = Buffer.alloc(bodyLength + H);
  out.writeUInt32BE(MIDX_SIGNATURE, 0);
  out[4] = 1;
  out[5] = formatId(input.format);
  out[6] = chunks.length;
  out[7] = 0;
  out.writeUInt32BE(kept.length, 8);
  const starts = writeChunkTable(out, MIDX_HEADER_LENGTH, chunks);

  let p = starts[0] as number;
  for (const name of kept) {
    p += out.write(name, p, 'utf8');
    out[p++] = 0;
  }
  const fanout = starts[1] as number;
  const lookup = starts[2] as number;
  const objectOffsets = starts[3] as number;
  const counts = new Uint32Array(256);
  chosen.forEach((i, k) => {
    const id = ids[i] as Uint8Array;
    counts[id[0] as number]!++;
    out.set(id.subarray(0, H), lookup + k * H);
  });
  let total = 0;
  for (let b = 0; b < 256; b++) {
    total += counts[b] as number;
    out.writeUInt32BE(total, fanout + 4 * b);
  }
  let large = 0;
  const largeAt = largeNeeded ? (starts[4] as number) : 0;
  chosen.forEach((i, k) => {
    const newPack = perm[packIds[i] as number] as number;
    if (newPack < 0) throw new PackwrightError('INVALID_ARGUMENT', `an object chosen from ${names[packIds[i] as number]} keeps that pack from being dropped`);
    const o = offsets[i] as number;
    out.writeUInt32BE(newPack, objectOffsets + k * 8);
    if (largeNeeded && o > 0x7fffffff) {
      out.writeUInt32BE((MIDX_LARGE_OFFSET_NEEDED | large) >>> 0, objectOffsets + k * 8 + 4);
      writeU64(out, largeAt + large * 8, o);
      large++;
    } else {
      out.writeUInt32BE(o, objectOffsets + k * 8 + 4);
    }
  });
  if (input.reverseIndex === true) {
    // git's midx_pack_order: entries of the preferred pack first, then by pack number and offset.
    const key = (k: number): number => {
      const i = chosen[k] as number;
      return (preferredFlags[i] === 1 ? 0 : 2 ** 32) + (perm[packIds[i] as number] as number);
    };
    const pseudo = Array.from({ length: n }, (_, k) => k);
    pseudo.sort((a, b) => key(a) - key(b) || (offsets[chosen[a] as number] as number) - (offsets[chosen[b] as number] as number));
    const ridx = starts[chunks.length - 1] as number;
    pseudo.forEach((k, at) => out.writeUInt32BE(k, ridx + 4 * at));
  }
  hashBytes(input.format, out.subarray(0, bodyLength)).copy(out, bodyLength);
  return out;
}

function writeU64(out: Buffer, at: number, v: number): void {
  out.writeUInt32BE(Math.floor(v / 2 ** 32), at);
  out.writeUInt32BE(v >>> 0, at + 4);
}
