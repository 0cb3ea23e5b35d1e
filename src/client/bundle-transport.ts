// A bundle file (git bundle create) as the server of a fetch, clone or ls-remote, as git's bundle
// transport makes it one: its header's refs are the advertisement, and whatever is asked, the
// answer is its whole pack (thin: its prerequisites are the receiver's). It speaks protocol v0
// with a side band in this process, so the client's own conversation reads it.
import { closeSync, openSync, readSync } from 'node:fs';
import { PassThrough } from 'node:stream';
import { PackwrightError } from '../errors/packwright-error.js';
import { encodePacket, FLUSH_PACKET, LARGE_PACKET_MAX, PacketReader } from '../protocol/pkt-line.js';
import { sidebandFrames } from '../protocol/sideband.js';

/** What a bundle's header says (git's bundle.c read_bundle_header). */
export interface BundleHeader {
  version: 2 | 3;
  /** The object format (v3's `@object-format=`; v2 bundles are SHA-1). */
  format: 'sha1' | 'sha256';
  /** Commits the receiver must have: their ids and the comments after them. */
  prerequisites: { id: string; comment: string }[];
  refs: { id: string; name: string }[];
  /** Where the pack starts in the file. */
  packOffset: number;
}

const SIGNATURES: Record<string, 2 | 3> = { '# v2 git bundle\n': 2, '# v3 git bundle\n': 3 };
/** A header longer than this is no bundle's (git reads it a line at a time; this bounds what a bad file makes us read). */
const MAX_HEADER = 64 << 20;

/**
 * The header of the bundle at `path`, or undefined when the file does not start as a bundle does.
 * A bundle whose header is malformed fails with git's words.
 */
export function readBundleHeader(path: string): BundleHeader | undefined {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return undefined;
  }
  try {
    const chunk = Buffer.alloc(64 << 10);
    let text = Buffer.alloc(0);
    let at = 0;
    let end = -1;
    while (end < 0) {
      const n = readSync(fd, chunk, 0, chunk.length, at);
      if (n === 0) break;
      text = Buffer.concat([text, chunk.subarray(0, n)]);
      at += n;
      if (text.length >= 16 && SIGNATURES[text.toString('latin1', 0, 16)] === undefined) return undefined;
      end = text.indexOf('\n\n');
      if (text.length > MAX_HEADER) break;
    }
    const version = SIGNATURES[text.toString('latin1', 0, 16)];
    if (version === undefined) return undefined;
    if (end < 0) throw new PackwrightError('PROTOCOL_ERROR', `'${path}' does not look like a v2 or v3 bundle file`, { file: path });
    const header: BundleHeader = { version, format: 'sha1', prerequisites: [], refs: [], packOffset: end + 2 };
    for (const line of text.toString('utf8', 16, end + 1).split('\n').slice(0, -1)) {
      if (line.startsWith('@')) {
        // v3's capabilities: the object format; anything else is a capability git would refuse too.
        const [key, value] = line.slice(1).split('=', 2);
        if (version === 3 && key === 'object-format' && (value === 'sha1' || value === 'sha256')) header.format = value;
        else throw new PackwrightError('PROTOCOL_ERROR', `unknown capability '${line.slice(1)}'`, { file: path });
        continue;
      }
      const prerequisite = line.startsWith('-');
      const body = prerequisite ? line.slice(1) : line;
      const space = body.indexOf(' ');
      const id = space < 0 ? body : body.slice(0, space);
      if (!/^[0-9a-f]+$/.test(id) || id.length !== (header.format === 'sha1' ? 40 : 64)) {
        throw new PackwrightError('PROTOCOL_ERROR', `unrecognized header: ${line}`, { file: path });
      }
      if (prerequisite) header.prerequisites.push({ id, comment: space < 0 ? '' : body.slice(space + 1) });
      else {
        if (space < 0) throw new PackwrightError('PROTOCOL_ERROR', `unrecognized header: ${line}`, { file: path });
        header.refs.push({ id, name: body.slice(space + 1) });
      }
    }
    return header;
  } finally {
    closeSync(fd);
  }
}

/**
 * The bundle at `path` served as a v0 upload-pack on a pair of streams: its refs advertised with
 * a side band and the object format, then, once the client has said `done`, `NAK` and the pack on
 * band 1. `has` tells whether the receiver has an object: a bundle whose prerequisites it lacks is
 * refused before anything is read, in git's words.
 */
export function serveBundle(path: string, header: BundleHeader, has: ((id: Buffer) => boolean) | undefined): { toServer: PassThrough; toClient: PassThrough } {
  if (has !== undefined) {
    const lacking = header.prerequisites.filter((p) => !has(Buffer.from(p.id, 'hex')));
    if (lacking.length > 0) {
      throw new PackwrightError('REQUEST_REFUSED', `Repository lacks these prerequisite commits:\n${lacking.map((p) => p.id).join('\n')}`, { file: path });
    }
  }
  const toServer = new PassThrough();
  const toClient = new PassThrough();
  const caps = `side-band-64k ofs-delta object-format=${header.format} agent=packwright-bundle`;
  const zero = '0'.repeat(header.format === 'sha1' ? 40 : 64);
  // git's bundle transport lists the refs last first (it prepends each to its list).
  const refs = header.refs.length > 0 ? [...header.refs].reverse() : [{ id: zero, name: 'capabilities^{}' }];
  refs.forEach((r, i) => toClient.write(encodePacket(`${r.id} ${r.name}${i === 0 ? `\0${caps}` : ''}\n`)));
  toClient.write(FLUSH_PACKET);
  const requests = new PacketReader(toServer);
  void (async () => {
    // The client's request: its wants up to a flush, then `done`; a flush alone asks for nothing.
    let wanted = false;
    for (;;) {
      const p = await requests.read();
      if (p.kind === 'eof') return;
      if (p.kind === 'flush' && !wanted) return;
      if (p.kind !== 'data') continue;
      const line = p.data.toString('latin1').trimEnd();
      if (line.startsWith('want ')) wanted = true;
      if (line === 'done') break;
    }
    toClient.write(encodePacket('NAK\n'));
    const fd = openSync(path, 'r');
    try {
      // A packet's worth of pack at a time: its length, the band byte and 65515 bytes.
      const buf = Buffer.alloc(LARGE_PACKET_MAX - 5);
      for (let at = header.packOffset; ;) {
        const n = readSync(fd, buf, 0, buf.length, at);
        if (n === 0) break;
        at += n;
        if (!toClient.write(sidebandFrames(1, buf.subarray(0, n), LARGE_PACKET_MAX))) await new Promise((ok) => toClient.once('drain', ok));
      }
    } finally {
      closeSync(fd);
    }
    toClient.write(FLUSH_PACKET);
  })()
    .catch((e: unknown) => toClient.destroy(e instanceof Error ? e : new Error(String(e))))
    .finally(() => toClient.end());
  return { toServer, toClient };
}
