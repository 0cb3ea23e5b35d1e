import { closeSync, readSync } from 'node:fs';
import { openForReading } from '../io/open-for-reading.js';
import type { Readable, TransformCallback } from 'node:stream';
import { nodeStream } from '../io/node-stream.js';
import { nodeZlib } from '../zlib/node-zlib.js';
import { PackwrightError } from '../errors/packwright-error.js';
import type { ObjectType } from '../objects/object-type.js';

/** A stored object's type and size, and its bytes as a stream. */
export interface ObjectStream {
  type: ObjectType;
  size: number;
  stream: Readable;
}

/** Bytes read from the file at a time: what the stream holds, with zlib's own window. */
const CHUNK = 64 * 1024;

/**
 * The bytes `[start, end)` of a file, read through a descriptor in chunks: the stream never holds
 * more than one chunk (plus what its consumer has not taken), whatever the range's length.
 */
function rangeStream(read: (buf: Buffer, position: number) => number, start: number, end: number, onEnd?: () => void): Readable {
  let position = start;
  return new (nodeStream().Readable)({
    highWaterMark: CHUNK,
    read(): void {
      try {
        if (position >= end) {
          this.push(null);
          return;
        }
        const buf = Buffer.allocUnsafe(Math.min(CHUNK, end - position));
        const n = read(buf, position);
        if (n <= 0) throw new PackwrightError('PACK_TRUNCATED', `early EOF at offset ${position}`, { offset: position });
        position += n;
        this.push(n === buf.length ? buf : buf.subarray(0, n));
      } catch (e) {
        this.destroy(e as Error);
      }
    },
    destroy(error, callback): void {
      onEnd?.();
      callback(error);
    },
  });
}

/**
 * Inflates a zlib stream and checks that it holds exactly `size` bytes after `skip` bytes of
 * header (a loose object's `"<type> <size>\0"`): git reports a stream that ends early or runs on
 * as corrupt, and so does this, at the end of the stream.
 */
function inflateExactly(source: Readable, skip: number, size: number, where: string): Readable {
  let skipped = 0;
  let seen = 0;
  const check = new (nodeStream().Transform)({
    transform(chunk: Buffer, _encoding, callback: TransformCallback): void {
      let c = chunk;
      if (skipped < skip) {
        const take = Math.min(skip - skipped, c.length);
        skipped += take;
        c = c.subarray(take);
      }
      seen += c.length;
      if (seen > size) {
        callback(new PackwrightError('OBJECT_CORRUPT', `${where}: the stream holds more than the ${size} bytes its header states`));
        return;
      }
      callback(null, c.length > 0 ? c : undefined);
    },
    flush(callback: TransformCallback): void {
      callback(seen === size ? null : new PackwrightError('OBJECT_CORRUPT', `${where}: the stream holds ${seen} bytes, its header states ${size}`));
    },
  });
  const inflate = nodeZlib().createInflate();
  source.on('error', (e) => check.destroy(e));
  inflate.on('error', (e) => check.destroy(new PackwrightError('OBJECT_CORRUPT', `${where}: corrupt zlib stream: ${e.message}`, { cause: e })));
  return source.pipe(inflate).pipe(check);
}

/** A loose object's bytes as a stream (its header already parsed: `headerLength` bytes skipped). */
export function looseStream(path: string, type: ObjectType, size: number, headerLength: number, fileSize: number): ObjectStream {
  const fd = openForReading(path, 'OBJECT_NOT_FOUND');
  let open = true;
  const close = (): void => {
    if (open) closeSync(fd);
    open = false;
  };
  const raw = rangeStream((buf, position) => readSync(fd, buf, 0, buf.length, position), 0, fileSize, close);
  raw.on('end', close);
  return { type, size, stream: inflateExactly(raw, headerLength, size, path) };
}

/** A whole (non-delta) pack entry's bytes as a stream: its zlib data read from `[dataStart, entryEnd)`. */
export function packEntryStream(read: (buf: Buffer, position: number) => number, where: string, type: ObjectType, size: number, dataStart: number, entryEnd: number): ObjectStream {
  return { type, size, stream: inflateExactly(rangeStream(read, dataStart, entryEnd), 0, size, where) };
}

/** An object already in memory, as a stream (a delta, which must be applied whole). */
export function bufferStream(type: ObjectType, data: Buffer): ObjectStream {
  return { type, size: data.length, stream: nodeStream().Readable.from([data], { objectMode: false }) };
}
