// A protocol v0/v1 ref advertisement from the client's side (connect.c, get_remote_heads): an
// optional `version 1`, then `<id> <ref>` lines, the first carrying the capabilities after a NUL
// (`capabilities^{}` for a repository without refs), peeled tags as `<ref>^{}`, `shallow` lines, a
// flush. upload-pack's and receive-pack's alike.
import { PackwrightError } from '../errors/packwright-error.js';
import { parseCapabilities } from '../protocol/capabilities.js';
import type { Packet, PacketReader } from '../protocol/pkt-line.js';
import { initialPacket, nextPacket } from './protocol-v2.js';

/** One advertised ref: its name, id, and the peeled id of an annotated tag. */
export interface AdvertisedRef {
  ref: string;
  oid: string;
  /** For an annotated tag: what it peels to (its `^{}` line). */
  peeled?: string | undefined;
}

/** A server's protocol v0/v1 advertisement: refs, capabilities, the symrefs and the shallow boundary. */
export interface Advertisement {
  refs: AdvertisedRef[];
  capabilities: Map<string, string>;
  /** The symbolic refs named in the capabilities (`symref=HEAD:refs/heads/main`; there may be several). */
  symrefs: Map<string, string>;
  /** The server's shallow boundary. */
  shallow: string[];
}

/** Reads an advertisement; `first` is its first packet when the caller has read it already. */
export async function readAdvertisement(reader: PacketReader, first?: Packet): Promise<Advertisement> {
  let p = first ?? (await initialPacket(reader));
  if (p.kind === 'data' && p.line === 'version 1') p = await nextPacket(reader);
  const out: Advertisement = { refs: [], capabilities: new Map(), symrefs: new Map(), shallow: [] };
  for (let firstLine = true; p.kind === 'data'; p = await nextPacket(reader), firstLine = false) {
    const nul = p.data.indexOf(0);
    const line = nul >= 0 ? p.data.toString('utf8', 0, nul) : p.line;
    if (firstLine && nul >= 0) {
      const text = p.data.toString('utf8', nul + 1).replace(/\n$/, '');
      out.capabilities = parseCapabilities(text);
      for (const word of text.split(' ')) {
        if (!word.startsWith('symref=')) continue;
        const colon = word.indexOf(':');
        if (colon > 7) out.symrefs.set(word.slice(7, colon), word.slice(colon + 1));
      }
    }
    if (line.startsWith('shallow ')) {
      out.shallow.push(line.slice(8));
      continue;
    }
    const space = line.indexOf(' ');
    if (space < 0) throw new PackwrightError('PROTOCOL_ERROR', `protocol error: unexpected '${line}'`);
    const oid = line.slice(0, space);
    const ref = line.slice(space + 1);
    if (ref === 'capabilities^{}') continue;
    if (ref.endsWith('^{}')) {
      const tag = out.refs[out.refs.length - 1];
      if (tag !== undefined && tag.ref === ref.slice(0, -3)) tag.peeled = oid;
      continue;
    }
    out.refs.push({ ref, oid });
  }
  if (p.kind !== 'flush') throw new PackwrightError('PROTOCOL_ERROR', 'protocol error: the advertisement did not end with a flush');
  return out;
}

