import { applyDelta, DeltaFormatError, readDeltaHeader } from '../delta/apply-delta.js';
import { isPackwrightError } from '../errors/packwright-error.js';
import { hashObject } from '../hash/hash-object.js';
import { toHex } from '../hash/hex.js';
import { writeLoose } from '../loose/write-loose.js';
import { EntryHeader, OBJ_OFS_DELTA, OBJ_REF_DELTA, parseEntryHeader } from '../pack/entry-header.js';
import type { Store } from '../odb/store.js';
import { typeNumber } from '../objects/object-type.js';

/**
 * `unpack-objects -r` after the pack failed to index: git's recovering unpack, front to back,
 * writing every object that can be read (a delta once its base is known: earlier in the pack, in
 * the store, or later in the pack for a REF delta) and reporting the others. An entry whose zlib
 * stream is damaged ends the walk (where the next entry starts is then unknown).
 */
export function salvagePack(store: Store, pack: Uint8Array, options: { dryRun: boolean; onError?: (message: string) => void; detectCollisions?: boolean }): { objects: number; written: number; trailing: Buffer } {
  const H = store.hashLength;
  const say = options.onError ?? (() => {});
  const inflater = store.inflater;
  const header = new EntryHeader();
  // Objects got so far, by offset: their id (contents are read back from the store, or kept
  // while dry-running).
  const byOffset = new Map<number, { id: Buffer; type: number; data: Buffer | undefined }>();
  const pendingRef = new Map<string, { type: number; delta: Buffer }[]>();
  let written = 0;
  let objects = 0;
  const contentOf = (o: { id: Buffer; type: number; data: Buffer | undefined }): Buffer | undefined => {
    if (o.data !== undefined) return o.data;
    try {
      return store.objects.read(o.id).data;
    } catch (e) {
      if (isPackwrightError(e)) return undefined;
      throw e;
    }
  };
  const got = (offset: number, type: number, data: Buffer): void => {
    // With detection, half of a collision attack fails the salvage too (COLLISION_ATTACK), as git dies.
    const id = hashObject(store.format, type, data, options.detectCollisions === true);
    objects++;
    if (!options.dryRun && !store.objects.has(id, { refresh: false }) && writeLoose(store.objectsDir, toHex(id), type, data, store.looseOptions)) written++;
    byOffset.set(offset, { id, type, data: options.dryRun ? data : undefined });
    // REF deltas that waited for this object.
    const waiting = pendingRef.get(toHex(id));
    if (waiting !== undefined) {
      pendingRef.delete(toHex(id));
      for (const w of waiting) apply(-1, type, data, w.delta);
    }
  };
  const apply = (offset: number, type: number, base: Buffer, delta: Buffer): void => {
    try {
      const { resultSize } = readDeltaHeader(delta, 0, delta.length, base.length);
      const out = Buffer.allocUnsafe(resultSize);
      applyDelta(base, 0, base.length, delta, 0, delta.length, out, 0);
      got(offset, type, out);
    } catch (e) {
      if (!(e instanceof DeltaFormatError)) throw e;
      say(`error: failed to apply delta at offset ${offset}: ${e.message}`);
    }
  };
  let pos = 12;
  if (pack.length < 12 || Buffer.from(pack.subarray(0, 4)).toString('latin1') !== 'PACK') {
    say('error: bad pack file');
    return { objects: 0, written: 0, trailing: Buffer.alloc(0) };
  }
  const count = Buffer.from(pack.buffer, pack.byteOffset, pack.byteLength).readUInt32BE(8);
  for (let i = 0; i < count; i++) {
    const offset = pos;
    let n: number;
    try {
      n = parseEntryHeader(pack, pos, pack.length, offset, H, header);
    } catch (e) {
      if (!isPackwrightError(e)) throw e;
      say(`error: ${e.message}`);
      break;
    }
    if (n < 0) {
      say(`error: pack is truncated at offset ${offset}`);
      break;
    }
    const out = Buffer.allocUnsafe(header.size + 1);
    const consumed = inflater.inflateExact(pack, pos + n, pack.length, out, 0, header.size);
    if (consumed < 0) {
      say(`error: inflate returned ${consumed} for the entry at offset ${offset}`);
      break;
    }
    pos += n + consumed;
    const data = out.subarray(0, header.size);
    if (header.type === OBJ_OFS_DELTA) {
      const base = byOffset.get(header.baseOffset);
      const content = base === undefined ? undefined : contentOf(base);
      if (base === undefined || content === undefined) say(`error: failed to read delta-pack base object at offset ${header.baseOffset}`);
      else apply(offset, base.type, content, Buffer.from(data));
    } else if (header.type === OBJ_REF_DELTA) {
      const baseId = Buffer.from(pack.subarray(header.baseIdPosition, header.baseIdPosition + H));
      let base: { type: number; data: Buffer } | undefined;
      try {
        const found = store.objects.read(baseId);
        base = { type: typeNumber(found.type), data: found.data };
      } catch (e) {
        if (!isPackwrightError(e)) throw e;
      }
      if (base !== undefined) apply(offset, base.type, base.data, Buffer.from(data));
      else {
        const list = pendingRef.get(toHex(baseId)) ?? [];
        list.push({ type: 0, delta: Buffer.from(data) });
        pendingRef.set(toHex(baseId), list);
      }
    } else {
      got(offset, header.type, Buffer.from(data));
    }
  }
  if (pendingRef.size > 0) say('error: unresolved deltas left after unpacking');
  return { objects, written, trailing: Buffer.alloc(0) };
}
