import { closeSync, fsyncSync, futimesSync, linkSync, mkdirSync, openSync, renameSync, rmSync } from 'node:fs';
import { writeFully } from '../io/write-fully.js';
import { join } from 'node:path';
import { PackwrightError } from '../errors/packwright-error.js';
import { nodeCrypto } from '../hash/node-crypto.js';
import { objectHeader } from '../hash/hash-object.js';
import { deflate } from '../zlib/deflate.js';
import { Deflater } from '../zlib/deflater.js';
import { Z_BEST_SPEED } from '../zlib/node-zlib.js';

/** How a loose object is written: zlib level, fsync, modification time. */
export interface WriteLooseOptions {
  /** zlib level (git's core.looseCompression; default 1, Z_BEST_SPEED, as git). */
  compression?: number | undefined;
  /** fsync the file before it is linked into place (git's core.fsync with loose-object). */
  fsync?: boolean | undefined;
  /**
   * Access and modification time (seconds since the epoch) the new file gets: pack-objects
   * --unpack-unreachable gives an object loosened from a pack the pack's time, as git does, so
   * that `git prune --expire` sees it as old as the pack it came from.
   */
  mtime?: number | undefined;
}

/**
 * Writes one loose object whose id the caller computed: `"<type> <size>\0" + data`, deflated, to a
 * temporary file in the object's directory, then linked to its name, as git does (object-file.c):
 * a link never replaces an existing file, so an object already there is left as it is, and readers
 * see either no file or the whole one. Returns false when the object was already there.
 */
/** Fan-out directories this process made or found: one mkdir each, not one per object (10k objects: 85 ms of mkdir calls). */
const knownDirs = new Set<string>();
/**
 * Temporary names: a random part drawn once, at the first write (so that loading this module
 * does not load node:crypto, ~6.5 ms of every command's start), then a counter (no random bytes
 * per object).
 */
let tmpPrefix: string | undefined;
let tmpCounter = 0;

/**
 * Objects up to this size are deflated by one native zlib handle a level, kept for the next
 * (deflateSync makes and closes one per call, ~0.2 ms each here: 8 ms of a fetch writing 41
 * objects); a larger one by deflateSync, so the kept output buffer stays small.
 */
const KEPT_DEFLATER_MAX = 1 << 20;
const deflaters = new Map<number, Deflater>();

/** The zlib stream of `body` at `level`: a view of a kept buffer, valid until the next call, for what is small. */
function deflateLoose(body: Uint8Array, level: number): Uint8Array {
  if (body.length > KEPT_DEFLATER_MAX) return deflate(body, level);
  let deflater = deflaters.get(level);
  if (deflater === undefined) deflaters.set(level, (deflater = new Deflater(level)));
  return deflater.deflate(body);
}

/**
 * Writes a loose object as git does (a temporary file, then a link or rename; never over an existing one);
 * returns whether it wrote one.
 */
export function writeLoose(objectsDir: string, hex: string, type: number | string, data: Uint8Array, options: WriteLooseOptions = {}): boolean {
  const dir = join(objectsDir, hex.slice(0, 2));
  const path = join(dir, hex.slice(2));
  // A type name is written as given (git's hash-object --literally makes objects of any type).
  const header = typeof type === 'number' ? objectHeader(type, data.length) : Buffer.from(`${type} ${data.length}\0`, 'latin1');
  const body = deflateLoose(Buffer.concat([header, data]), options.compression ?? Z_BEST_SPEED);
  if (!knownDirs.has(dir)) {
    mkdirSync(dir, { recursive: true });
    knownDirs.add(dir);
  }
  tmpPrefix ??= `tmp_obj_${process.pid}_${nodeCrypto().randomBytes(4).toString('hex')}_`;
  const tmp = join(dir, `${tmpPrefix}${tmpCounter++}`);
  try {
    let fd: number;
    try {
      fd = openSync(tmp, 'wx', 0o444);
    } catch (e) {
      // The directory went away since it was known (git prune removes empty ones): make it again.
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
      mkdirSync(dir, { recursive: true });
      fd = openSync(tmp, 'wx', 0o444);
    }
    try {
      writeFully(fd, body, tmp);
      if (options.mtime !== undefined) futimesSync(fd, options.mtime, options.mtime);
      if (options.fsync) fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    try {
      linkSync(tmp, path);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'EEXIST') return false;
      // Filesystems without hard links (git: "core.createObject=rename"): a rename, which may
      // replace a file with the same content, never with other bytes (the name is their hash).
      if (code === 'EPERM' || code === 'ENOTSUP' || code === 'EXDEV' || code === 'EMLINK') {
        renameSync(tmp, path);
        return true;
      }
      throw e;
    }
    return true;
  } catch (e) {
    if (e instanceof PackwrightError) throw e;
    throw new PackwrightError('IO_ERROR', `unable to write loose object ${path}: ${(e as Error).message}`, { file: path, cause: e });
  } finally {
    rmSync(tmp, { force: true });
  }
}
