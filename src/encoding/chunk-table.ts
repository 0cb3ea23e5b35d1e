/** One chunk of a chunk-format file: where it starts, and its length in bytes. */
export interface Chunk {
  start: number;
  size: number;
}

/** A table of contents row: a 4-byte chunk id and an 8-byte offset. */
export const CHUNK_TABLE_ROW = 12;

/**
 * The table of contents of a file in git's chunk format (the multi-pack-index, the commit-graph):
 * `chunkCount` rows from `tableStart`, then a terminating row of id 0 whose offset ends the last
 * chunk. Checked in the order, and with the words, of git's chunk-format.c read_table_of_contents;
 * `fail` gets the message and the offset it is about. Chunks end by `dataEnd` (the trailer).
 */
export function readChunkTable(bytes: Uint8Array, tableStart: number, chunkCount: number, dataEnd: number, fail: (what: string, offset?: number) => never): Map<number, Chunk> {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const chunks = new Map<number, Chunk>();
  const tableEnd = tableStart + (chunkCount + 1) * CHUNK_TABLE_ROW;
  if (tableEnd > dataEnd) fail(`table of contents of ${chunkCount} chunks runs past the end of the file`, tableStart);
  const offsetAt = (row: number): number => {
    const at = tableStart + row * CHUNK_TABLE_ROW + 4;
    return view.getUint32(at) * 2 ** 32 + view.getUint32(at + 4);
  };
  for (let row = 0; row < chunkCount; row++) {
    const at = tableStart + row * CHUNK_TABLE_ROW;
    const id = view.getUint32(at);
    if (id === 0) fail('terminating chunk id appears earlier than expected', at);
    const start = offsetAt(row);
    const next = offsetAt(row + 1);
    if (next < start || next > dataEnd) fail(`improper chunk offset(s) ${start.toString(16)} and ${next.toString(16)}`, at);
    if (chunks.has(id)) fail(`duplicate chunk ID ${id.toString(16)} found`, at);
    chunks.set(id, { start, size: next - start });
  }
  const last = view.getUint32(tableStart + chunkCount * CHUNK_TABLE_ROW);
  if (last !== 0) fail(`final chunk has non-zero id ${last.toString(16)}`, tableStart + chunkCount * CHUNK_TABLE_ROW);
  // Checked after the rows, in git's order of complaints: a chunk may not overlap the table.
  for (const c of chunks.values()) if (c.start < tableEnd) fail(`improper chunk offset(s) ${c.start.toString(16)} and ${(c.start + c.size).toString(16)}`, tableStart);
  return chunks;
}

/**
 * Writes the table of contents of chunks laid out one after another right after it (rows from
 * `tableStart`, then the terminating row), as git's chunk-format.c write_chunkfile does; returns
 * where each chunk starts.
 */
export function writeChunkTable(out: Uint8Array, tableStart: number, chunks: readonly { id: number; size: number }[]): number[] {
  const view = new DataView(out.buffer, out.byteOffset, out.byteLength);
  let at = tableStart + (chunks.length + 1) * CHUNK_TABLE_ROW;
  const starts: number[] = [];
  const row = (i: number, id: number, offset: number): void => {
    view.setUint32(tableStart + i * CHUNK_TABLE_ROW, id);
    view.setBigUint64(tableStart + i * CHUNK_TABLE_ROW + 4, BigInt(offset));
  };
  chunks.forEach((c, i) => {
    row(i, c.id, at);
    starts.push(at);
    at += c.size;
  });
  row(chunks.length, 0, at);
  return starts;
}
