import { readSync } from 'node:fs';
import { abortedError } from '../errors/packwright-error.js';
import { Readable } from 'node:stream';
import { PACK_HEADER_LENGTH, parsePackHeader } from '../pack/pack-header.js';

/**
 * Where pass 1 reads a pack from, front to back. `read` fills `buf[offset..offset+length)` as far
 * as it can and returns how many bytes came (0 at the end of input); it may return a promise
 * (streams), which the scanner awaits only when its window runs dry.
 */
export interface PackSource {
  /** `position`, when given (files only), reads from that pack offset instead of the next one. */
  read(buf: Uint8Array, offset: number, length: number, position?: number): number | Promise<number>;
}

/** A file, read sequentially from `position`. */
export function fileSource(fd: number, position = 0): PackSource {
  let at = position;
  return {
    read(buf, offset, length, position) {
      const n = readSync(fd, buf, offset, length, position ?? at);
      at = (position ?? at) + n;
      return n;
    },
  };
}

/** Bytes already in memory. */
export function bufferSource(data: Uint8Array): PackSource {
  let at = 0;
  return {
    read(buf, offset, length) {
      const n = Math.min(length, data.length - at);
      buf.set(data.subarray(at, at + n), offset);
      at += n;
      return n;
    },
  };
}

/**
 * A readable stream (stdin, a socket): chunks are copied out as the scanner asks for bytes. A
 * `signal` ends a wait for input at once with ABORTED (a sender that stalls must not hold an
 * aborted index-pack).
 */
export function streamSource(stream: Readable | AsyncIterable<Uint8Array>, signal?: AbortSignal): PackSource {
  const it = (stream as AsyncIterable<Uint8Array>)[Symbol.asyncIterator]();
  let chunk: Uint8Array | undefined;
  let used = 0;
  let done = false;
  return {
    async read(buf, offset, length) {
      while (!done && (chunk === undefined || used >= chunk.length)) {
        const next = await (signal === undefined ? it.next() : abortable(it.next(), signal));
        if (next.done) done = true;
        else {
          chunk = next.value;
          used = 0;
        }
      }
      if (done || chunk === undefined) return 0;
      const n = Math.min(length, chunk.length - used);
      buf.set(chunk.subarray(used, used + n), offset);
      used += n;
      return n;
    },
  };
}

/** `promise`, or ABORTED as soon as `signal` fires. */
function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(abortedError(signal, 'reading the pack'));
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(abortedError(signal, 'reading the pack'));
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (v) => { signal.removeEventListener('abort', onAbort); resolve(v); },
      (e: unknown) => { signal.removeEventListener('abort', onAbort); reject(e); },
    );
  });
}

/** A pack header the caller already read from the input (git's `--pack_header=<version>,<count>`). */
export interface ConsumedPackHeader {
  version: number;
  count: number;
}

/**
 * `input` with the 12 bytes of a pack header put back in front: git's fetch-pack reads the header
 * itself (to choose between index-pack and unpack-objects) and passes what it said on the command
 * line. The pack is then received, hashed and written as if the header had come with it.
 */
export function withPackHeader(input: Readable | Uint8Array, header: ConsumedPackHeader): Readable | Uint8Array {
  const bytes = Buffer.alloc(PACK_HEADER_LENGTH);
  bytes.write('PACK', 0, 'latin1');
  bytes.writeUInt32BE(header.version, 4);
  bytes.writeUInt32BE(header.count, 8);
  if (input instanceof Uint8Array) return Buffer.concat([bytes, input]);
  return Readable.from((async function* () {
    yield bytes;
    for await (const chunk of input) yield chunk as Buffer;
  })());
}

/**
 * The object count the pack header at the front of `input` declares, and the input again, whole:
 * for a stream whose header nobody has read (`index-pack --stdin` without `--pack_header`), so
 * that the count can plan the run as a file's size does (a few objects: one thread, without
 * waiting for a worker to start). undefined when the input does not start with a pack header:
 * pass 1 then reads it and says what is wrong in its own words.
 */
export async function peekPackHeader(input: Readable, signal?: AbortSignal): Promise<{ count: number | undefined; input: Readable }> {
  const chunks = input[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  const head: Buffer[] = [];
  let have = 0;
  while (have < PACK_HEADER_LENGTH) {
    const r = await (signal === undefined ? chunks.next() : abortable(chunks.next(), signal));
    if (r.done === true) break;
    head.push(Buffer.from(r.value));
    have += r.value.length;
  }
  const first = Buffer.concat(head);
  let count: number | undefined;
  try {
    count = parsePackHeader(first).objectCount;
  } catch {
    // Not a pack header, or too short for one: pass 1 reports it.
    count = undefined;
  }
  // An iterator that has ended answers done again: the loop below then ends at once.
  const whole = Readable.from((async function* () {
    if (first.length > 0) yield first;
    for (let r = await chunks.next(); r.done !== true; r = await chunks.next()) yield r.value;
  })());
  return { count, input: whole };
}
