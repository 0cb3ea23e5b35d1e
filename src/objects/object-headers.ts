// The text of a commit or tag: header lines (`<name> <value>`, a value continued on lines that
// start with a space), a blank line, the message (gitformat-commit, gitformat-tag).

/** A header line as `name` and `value`, continuation lines joined with "\n" (a signature, a mergetag). */
export interface HeaderLine {
  name: string;
  value: string;
}

/**
 * Decodes an object's bytes as text: UTF-8 unless an `encoding` header names another encoding
 * that TextDecoder knows (git re-encodes such commits for display from the same header).
 */
export function decodeObjectText(data: Uint8Array): { text: string; encoding: string | undefined } {
  // The headers are ASCII in practice: find the encoding header before decoding everything.
  const head = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  const end = head.indexOf('\n\n');
  const headers = head.toString('latin1', 0, end < 0 ? head.length : end);
  const m = /(?:^|\n)encoding ([^\n]*)/.exec(headers);
  const encoding = m?.[1];
  let decoder: InstanceType<typeof TextDecoder> | undefined;
  if (encoding !== undefined) {
    try {
      decoder = new TextDecoder(encoding);
    } catch {
      // An encoding TextDecoder does not know: shown as UTF-8, as git shows what iconv cannot convert.
    }
  }
  return { text: (decoder ?? new TextDecoder()).decode(data), encoding };
}

/** Splits an object's text into its headers, in order, and the message after the blank line ('' when there is none). */
export function splitObjectHeaders(text: string): { headers: HeaderLine[]; message: string } {
  const headers: HeaderLine[] = [];
  let p = 0;
  while (p < text.length && text[p] !== '\n') {
    let end = text.indexOf('\n', p);
    if (end < 0) end = text.length;
    const line = text.slice(p, end);
    const last = headers[headers.length - 1];
    if (line.startsWith(' ') && last !== undefined) last.value += `\n${line.slice(1)}`;
    else {
      const space = line.indexOf(' ');
      headers.push(space < 0 ? { name: line, value: '' } : { name: line.slice(0, space), value: line.slice(space + 1) });
    }
    p = end + 1;
  }
  return { headers, message: p < text.length ? text.slice(p + 1) : '' };
}

/**
 * Where a signature starts in a tag's message (git's parse_signed_buffer): the last line that
 * opens an OpenPGP, X.509 or SSH signature; -1 when there is none.
 */
export function signatureStart(message: string): number {
  let found = -1;
  let p = 0;
  while (p < message.length) {
    if (message.startsWith('-----BEGIN PGP SIGNATURE-----', p) || message.startsWith('-----BEGIN PGP MESSAGE-----', p)
      || message.startsWith('-----BEGIN SIGNED MESSAGE-----', p) || message.startsWith('-----BEGIN SSH SIGNATURE-----', p)) found = p;
    const eol = message.indexOf('\n', p);
    if (eol < 0) break;
    p = eol + 1;
  }
  return found;
}
