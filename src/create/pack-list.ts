import { basename } from 'node:path';
import { PackwrightError } from '../errors/packwright-error.js';
import type { StoreHandle } from '../odb/store-handle.js';
import { ObjectTable } from '../walk/object-table.js';

/** Which objects the pack list takes: with `unpacked`, only loose ones (`--unpacked`). */
export interface PackListOptions {
  /** Also every loose object of the store (git's --stdin-packs --unpacked). */
  unpacked?: boolean | undefined;
}

/**
 * The objects of `git pack-objects --stdin-packs`: every object in the packs named in `included`
 * (by file name, `pack-<hash>.pack`) that none of the `excluded` packs holds, in pack order, and
 * with `unpacked` the loose objects too. A name no pack of the store has is INVALID_ARGUMENT,
 * reported for the first such name in sorted order, as git reports it.
 */
export function objectsOfPacks(handle: StoreHandle, included: readonly string[], excluded: readonly string[], options: PackListOptions = {}): Buffer[] {
  const packs = new Map(handle.packs().map((p) => [basename(p.packPath), p]));
  for (const name of [...included, ...excluded].sort()) {
    if (!packs.has(name)) throw new PackwrightError('INVALID_ARGUMENT', `could not find pack '${name}'`);
  }
  const H = handle.hashLength;
  const skip = new ObjectTable(H, 1024);
  for (const name of excluded) {
    const index = packs.get(name)?.index;
    if (index === undefined) continue;
    for (let i = 0; i < index.count; i++) skip.intern(index.id(i));
  }
  const seen = new ObjectTable(H, 1024);
  const ids: Buffer[] = [];
  const add = (id: Uint8Array): void => {
    if (skip.find(id) >= 0) return;
    seen.intern(id);
    if (seen.added) ids.push(Buffer.from(id));
  };
  for (const name of included) {
    const pack = packs.get(name);
    if (pack === undefined) continue;
    const index = pack.index;
    // Pack order: the offsets sorted, through the index positions.
    const { positions } = index.packOrder();
    for (const position of positions) add(index.id(position));
  }
  if (options.unpacked) for (const dir of handle.looseDirs().slice(0, 1)) for (const id of handle.looseIds(dir)) add(id);
  return ids;
}
