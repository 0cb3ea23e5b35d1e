import { PackwrightError } from '../errors/packwright-error.js';
import { CHUNK_TABLE_ROW, readChunkTable, type Chunk } from '../encoding/chunk-table.js';
import type { ObjectIndex } from '../idx/object-index.js';
import { compareBytes, findId, findPrefixRange, type IdPosition } from '../idx/sorted-ids.js';
import { readFileIfPresent } from '../io/read-file-if-present.js';

/**
 * The multi-pack-index (gitformat-multi-pack-index, git 2.39's version 1): one sorted id table over
 * several packs, each id with the pack (by its place in PNAM) and offset of the copy git chose.
 *
 * Layout: a 12-byte header (`MIDX`, version 1, hash version, chunk count, 0, pack count), a table
 * of contents of (chunks + 1) rows of id u32 + offset u64 ending with id 0, the chunks, and the
 * file's hash. PNAM (names of the packs' `.idx` files, NUL-terminated, sorted), OIDF (fan-out),
 * OIDL (ids), OOFF (pack u32 + offset u32 per id) are required; LOFF (u64 offsets) exists when an
 * offset needs it; RIDX (positions in pseudo-pack order) when git wrote it for bitmaps.
 *
 * Everything a lookup relies on is checked when the file is opened (sizes, order of names,
 * fan-out), so a lookup cannot read outside the file; a pack id or large-offset index out of range
 * is reported when that entry is read (git: "bad pack-int-id"). The trailing hash is checked by
 * `verify` only, as git checks it only in `git multi-pack-index verify`.
 */

export const MIDX_SIGNATURE = 0x4d494458; // "MIDX"
export const CHUNK_PNAM = 0x504e414d;
export const CHUNK_OIDF = 0x4f494446;
export const CHUNK_OIDL = 0x4f49444c;
export const CHUNK_OOFF = 0x4f4f4646;
export const CHUNK_LOFF = 0x4c4f4646;
export const CHUNK_RIDX = 0x52494458;
/** Bytes of a multi-pack-index's header. */
export const MIDX_HEADER_LENGTH = 12;
/** OOFF offsets with this bit set index LOFF, when there is a LOFF chunk. */
export const MIDX_LARGE_OFFSET_NEEDED = 0x80000000;

export class MultiPackIndex implements ObjectIndex {
  readonly path: string;
  readonly hashLength: number;
  readonly count: number;
  /** The `.idx` names of the packs (PNAM), sorted; a pack's number is its place here. */
  readonly packNames: readonly string[];
  private readonly bytes: Buffer;
  private readonly view: DataView;
  private readonly fanout: number;
  private readonly ids: number;
  private readonly offsets: number;
  private readonly large: Chunk | undefined;
  private readonly revIndex: Chunk | undefined;
  private readonly idAt: IdPosition;

  private constructor(path: string, bytes: Buffer, hashLength: number) {
    this.path = path;
    this.bytes = bytes;
    this.hashLength = hashLength;
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const H = hashLength;
    // git's words first (its tests grep for them), then the file.
    const fail = (what: string, offset?: number): never => {
      throw new PackwrightError('MIDX_CORRUPT', `${what} (${path})`, offset === undefined ? { file: path } : { file: path, offset });
    };
    if (bytes.length < MIDX_HEADER_LENGTH + CHUNK_TABLE_ROW + H) fail(`multi-pack-index file is too small (${bytes.length} bytes)`);
    const signature = this.view.getUint32(0);
    if (signature !== MIDX_SIGNATURE) fail(`multi-pack-index signature 0x${signature.toString(16).padStart(8, '0')} does not match signature 0x${MIDX_SIGNATURE.toString(16)}`, 0);
    if (bytes[4] !== 1) fail(`multi-pack-index version ${bytes[4]} not recognized`, 4);
    const hashVersion = bytes[5] as number;
    const expected = H === 20 ? 1 : 2;
    if (hashVersion !== expected) fail(`multi-pack-index hash version ${hashVersion} does not match version ${expected}`, 5);
    const chunkCount = bytes[6] as number;
    if (bytes[7] !== 0) fail(`multi-pack-index names ${bytes[7]} base multi-pack-indexes (incremental files are not version 1)`, 7);
    const packCount = this.view.getUint32(8);
    const chunks = readChunkTable(bytes, MIDX_HEADER_LENGTH, chunkCount, bytes.length - H, fail);
    const required = (id: number, name: string): Chunk => chunks.get(id) ?? fail(`multi-pack-index missing required ${name} chunk`);
    const pnam = required(CHUNK_PNAM, 'pack-name');
    const oidf = required(CHUNK_OIDF, 'OID fanout');
    const oidl = required(CHUNK_OIDL, 'OID lookup');
    const ooff = required(CHUNK_OOFF, 'object offsets');
    if (oidf.size !== 256 * 4) fail(`multi-pack-index OID fanout is of the wrong size (${oidf.size} bytes)`, oidf.start);
    this.fanout = oidf.start;
    let previous = 0;
    for (let b = 0; b < 256; b++) {
      const v = this.view.getUint32(oidf.start + 4 * b);
      if (v < previous) fail(`oid fanout out of order: fanout[${b - 1}] = ${previous.toString(16)} > ${v.toString(16)} = fanout[${b}]`, oidf.start + 4 * b);
      previous = v;
    }
    this.count = previous;
    if (oidl.size !== this.count * H) fail(`multi-pack-index OID lookup chunk is ${oidl.size} bytes, not ${this.count} ids`, oidl.start);
    if (ooff.size !== this.count * 8) fail(`multi-pack-index object offsets chunk is ${ooff.size} bytes, not ${this.count} entries`, ooff.start);
    this.ids = oidl.start;
    this.offsets = ooff.start;
    for (let i = 1; i < this.count; i++) {
      if (compareBytes(bytes, this.ids + (i - 1) * H, bytes, this.ids + i * H, H) >= 0) {
        const hex = (k: number): string => bytes.toString('hex', this.ids + k * H, this.ids + k * H + H);
        fail(`oid lookup out of order: oid[${i - 1}] = ${hex(i - 1)} >= ${hex(i)} = oid[${i}]`, this.ids + i * H);
      }
    }
    const large = chunks.get(CHUNK_LOFF);
    if (large !== undefined && large.size % 8 !== 0) fail(`multi-pack-index large offsets chunk is ${large.size} bytes, not a multiple of 8`, large.start);
    this.large = large;
    const rev = chunks.get(CHUNK_RIDX);
    if (rev !== undefined && rev.size !== this.count * 4) fail(`multi-pack-index reverse index chunk is ${rev.size} bytes, not ${this.count} entries`, rev.start);
    this.revIndex = rev;
    this.packNames = this.readPackNames(pnam, packCount, fail);
    this.idAt = (position) => this.ids + position * H;
  }

  /** Reads `objects/pack/multi-pack-index`; undefined when there is none. */
  static openIfPresent(path: string, hashLength: number): MultiPackIndex | undefined {
    const bytes = readFileIfPresent(path, 'multi-pack-index');
    return bytes === undefined ? undefined : new MultiPackIndex(path, bytes, hashLength);
  }

  /** A multi-pack-index from bytes already read (tests, the fuzzer, `verify`). */
  static fromBytes(path: string, bytes: Buffer, hashLength: number): MultiPackIndex {
    return new MultiPackIndex(path, bytes, hashLength);
  }

  private readPackNames(pnam: Chunk, packCount: number, fail: (what: string, offset?: number) => never): string[] {
    const names: string[] = [];
    let p = pnam.start;
    const end = pnam.start + pnam.size;
    for (let i = 0; i < packCount; i++) {
      const nul = this.bytes.indexOf(0, p);
      if (nul < 0 || nul >= end) fail(`multi-pack-index pack-name chunk holds ${i} names, the header says ${packCount}`, pnam.start);
      const name = this.bytes.toString('utf8', p, nul);
      if (i > 0 && name <= (names[i - 1] as string)) fail(`multi-pack-index pack names out of order: '${names[i - 1]}' before '${name}'`, p);
      if (!name.endsWith('.idx') || name.includes('/')) fail(`multi-pack-index pack name '${name}' is not the name of an .idx file`, p);
      names.push(name);
      p = nul + 1;
    }
    return names;
  }

  find(id: Uint8Array, idOffset = 0): number {
    return findId(this.bytes, this.idAt, this.view, this.fanout, id, idOffset, this.hashLength);
  }

  findPrefix(prefix: string, limit = 2): { first: number; count: number } {
    return findPrefixRange(this.bytes, this.idAt, this.view, this.fanout, this.count, prefix, limit);
  }

  id(position: number): Buffer {
    const p = this.idAt(position);
    return this.bytes.subarray(p, p + this.hashLength);
  }

  /** Where the id at `position` starts in `data` (walking every id without a view per id). */
  idPosition(position: number): number {
    return this.idAt(position);
  }

  get data(): Buffer {
    return this.bytes;
  }

  packOf(position: number): number {
    const pack = this.view.getUint32(this.offsets + position * 8);
    if (pack >= this.packNames.length) {
      throw new PackwrightError('MIDX_CORRUPT', `bad pack-int-id: ${pack} (${this.packNames.length} total packs) at position ${position} (${this.path})`, {
        file: this.path, offset: this.offsets + position * 8,
      });
    }
    return pack;
  }

  offset(position: number): number {
    const at = this.offsets + position * 8 + 4;
    const raw = this.view.getUint32(at);
    // Without LOFF the top bit is part of the offset (2^31 ..< 2^32 stored raw).
    if (this.large === undefined || (raw & MIDX_LARGE_OFFSET_NEEDED) === 0) return raw;
    const k = raw & 0x7fffffff;
    if (k * 8 + 8 > this.large.size) {
      throw new PackwrightError('MIDX_CORRUPT', `multi-pack-index large offset index ${k} is past the ${this.large.size / 8} large offsets (${this.path})`, { file: this.path, offset: at });
    }
    const l = this.large.start + k * 8;
    return this.view.getUint32(l) * 2 ** 32 + this.view.getUint32(l + 4);
  }

  /** Whether the file has a RIDX chunk (git writes one with a bitmap). */
  get hasReverseIndex(): boolean {
    return this.revIndex !== undefined;
  }

  /** The RIDX chunk's positions (pseudo-pack order), when git wrote one. */
  reverseIndex(): Uint32Array | undefined {
    const rev = this.revIndex;
    if (rev === undefined) return undefined;
    const out = new Uint32Array(this.count);
    for (let k = 0; k < this.count; k++) out[k] = this.view.getUint32(rev.start + 4 * k);
    return out;
  }

  /** The file's trailing hash. */
  checksum(): Buffer {
    return this.bytes.subarray(this.bytes.length - this.hashLength);
  }

  /** The bytes the trailing hash covers. */
  checksummed(): Buffer {
    return this.bytes.subarray(0, this.bytes.length - this.hashLength);
  }

  close(): void {
    // Read whole at open: no file to let go of.
  }
}
