/** Object ids are bytes everywhere inside packwright; hex exists only at the edges. */
export function toHex(id: Uint8Array): string {
  return Buffer.from(id.buffer, id.byteOffset, id.byteLength).toString('hex');
}

const HEX = /^[0-9a-f]*$/;

export function isHex(s: string): boolean {
  return HEX.test(s);
}

/**
 * Parses a full-length hex id (either case, as git accepts); returns undefined for anything else.
 * Node's hex decoder stops at the first non-hex pair, so a short result means a bad character.
 */
export function fromHex(hex: string, length: number): Buffer | undefined {
  if (hex.length !== length * 2) return undefined;
  const id = Buffer.from(hex, 'hex');
  return id.length === length ? id : undefined;
}

/** Compares `a[aOff..aOff+len]` with `b[bOff..bOff+len]` bytewise: <0, 0, >0. */
export function compareBytes(a: Uint8Array, aOff: number, b: Uint8Array, bOff: number, len: number): number {
  for (let i = 0; i < len; i++) {
    const d = (a[aOff + i] as number) - (b[bOff + i] as number);
    if (d !== 0) return d;
  }
  return 0;
}
