/**
 * git's quote_c_style for a path's bytes: returned as they are unless a byte needs quoting, else in
 * double quotes with C escapes (`\t`, `\n`, `\"`, `\\`, octal for other control bytes and, unless
 * `core.quotePath` is false, for bytes from 0x80 up). Output is latin1 (one char a byte).
 */
export function quoteCStyle(bytes: Uint8Array, quoteHighBytes = true): string {
  let needs = false;
  for (const b of bytes) {
    if (b < 0x20 || b === 0x22 || b === 0x5c || b === 0x7f || (quoteHighBytes && b >= 0x80)) {
      needs = true;
      break;
    }
  }
  const raw = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
  if (!needs) return raw;
  const esc: Record<number, string> = { 0x22: '\\"', 0x5c: '\\\\', 7: '\\a', 8: '\\b', 9: '\\t', 10: '\\n', 11: '\\v', 12: '\\f', 13: '\\r' };
  let out = '"';
  for (const b of bytes) {
    if (esc[b] !== undefined) out += esc[b];
    else if (b < 0x20 || b === 0x7f || (quoteHighBytes && b >= 0x80)) out += `\\${b.toString(8).padStart(3, '0')}`;
    else out += String.fromCharCode(b);
  }
  return `${out}"`;
}

/** `quoteCStyle` of a path given as a (UTF-8) string, as a string. */
export function quotePath(path: string): string {
  return Buffer.from(quoteCStyle(Buffer.from(path, 'utf8')), 'latin1').toString('utf8');
}
