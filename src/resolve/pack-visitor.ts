import type { ObjectFormat } from '../hash/object-format.js';
import type { EntryOffsets } from './pack-scan.js';

/**
 * Something that sees every object of a pack with its contents as index-pack resolves it, in
 * whichever thread has the object in hand: fsck checks objects this way without inflating the pack
 * a second time. Contents are valid only during the call.
 */
export interface PackVisitor {
  /** Entry `k` (pack order) is an object of `type` (1-4) with these contents. */
  visit(k: number, type: number, data: Uint8Array): void;
  /** What this thread found, handed back to the caller once the pack is done. */
  finish(): unknown;
  /** Lets go of what the visitor holds (files, a store): called last, whether the pack was done or failed. */
  close?(): void;
}

/**
 * A visitor by name, so worker threads can make their own: the worker script imports the module
 * that registers it (fsck's worker does), and `options` must be plain data (or shared memory).
 */
export interface PackVisitorSpec {
  name: string;
  /** Entry types it wants to see: bit `1 << type` (ALL_VISITED_TYPES for all four). */
  types: number;
  options: unknown;
  /**
   * The visitor reads an object's id (`PackView.ids`) only after the pack is resolved, not while
   * it is shown the object: the resolver may then hash ids four at a time (Sha1dcLanes), which
   * writes each id some objects later. Default false.
   */
  idsAfterVisit?: boolean | undefined;
}

/**
 * What a visitor may know of the pack being resolved: its name and object format, every entry's
 * offset, and the ids (by entry, `hashLength` bytes each) as they are resolved. The resolver's
 * state is a superset; visitors see no more than this.
 */
export interface PackView {
  readonly format: ObjectFormat;
  readonly name: string;
  readonly offsets: EntryOffsets;
  readonly ids: Uint8Array;
}

/** `PackVisitorSpec.types` for every object: bits 1 to 4 (commit, tree, blob, tag). */
export const ALL_VISITED_TYPES = 0b11110;

type Factory = (options: unknown, pack: PackView) => PackVisitor;
const factories = new Map<string, Factory>();

/**
 * Registers a visitor factory under a name, so that worker threads (which load this module too) can make
 * the same visitor for pass 2.
 */
export function registerPackVisitor(name: string, factory: Factory): void {
  factories.set(name, factory);
}

export function createPackVisitor(spec: PackVisitorSpec, pack: PackView): PackVisitor {
  const factory = factories.get(spec.name);
  if (factory === undefined) throw new Error(`no pack visitor '${spec.name}' is registered in this thread (import its module in the worker script)`);
  return factory(spec.options, pack);
}
