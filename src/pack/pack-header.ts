import { PackwrightError } from '../errors/packwright-error.js';

/** Bytes of a pack's header: `PACK`, version, object count. */
export const PACK_HEADER_LENGTH = 12;

/** A pack's header: version (2 or 3) and object count. */
export interface PackHeader {
  version: number;
  objectCount: number;
}

/** Parses `PACK`, version (2 or 3 are read), object count (gitformat-pack). */
export function parsePackHeader(buf: Uint8Array, file = '<pack>'): PackHeader {
  if (buf.length < PACK_HEADER_LENGTH) {
    throw new PackwrightError('PACK_TRUNCATED', `${file}: early EOF: ${buf.length} bytes is shorter than a pack header`, { file, offset: 0 });
  }
  if (buf[0] !== 0x50 || buf[1] !== 0x41 || buf[2] !== 0x43 || buf[3] !== 0x4b) {
    throw new PackwrightError('PACK_SIGNATURE', `${file}: pack signature mismatch at offset 0`, { file, offset: 0 });
  }
  const view = new DataView(buf.buffer, buf.byteOffset, PACK_HEADER_LENGTH);
  const version = view.getUint32(4);
  if (version !== 2 && version !== 3) {
    throw new PackwrightError('PACK_VERSION', `${file}: pack version ${version} unsupported`, { file, offset: 4 });
  }
  return { version, objectCount: view.getUint32(8) };
}
