/**
 * What a store asks of an index over packed objects, answered by a pack's own `.idx`
 * (`PackIndex`) and, over several packs, by the multi-pack-index: for this id or prefix, which
 * sorted position; for a position, its id, which of the index's packs holds it and at what offset.
 */
export interface ObjectIndex {
  readonly hashLength: number;
  /** Objects indexed. */
  readonly count: number;
  /** Sorted position of the id at `id[idOffset]`, or -1. */
  find(id: Uint8Array, idOffset?: number): number;
  /** The first sorted position whose id starts with the hex `prefix`, and how many match (at most `limit`). */
  findPrefix(prefix: string, limit?: number): { first: number; count: number };
  /** The id at a sorted position. */
  id(position: number): Buffer;
  /** Which of the index's packs holds the object at `position` (0 for a pack's own index). */
  packOf(position: number): number;
  /** The object's offset in that pack. */
  offset(position: number): number;
  /** Lets go of the index's files. */
  close(): void;
}
