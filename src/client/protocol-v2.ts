// Protocol v2's framing on the client side (gitprotocol-v2): the capability advertisement, and a
// command request (`command=<name>`, capabilities, a delimiter, arguments, a flush).
import { PackwrightError } from '../errors/packwright-error.js';
import { DELIM_PACKET, encodePacket, FLUSH_PACKET, type Packet, type PacketReader } from '../protocol/pkt-line.js';

/** The next packet; the input's end is git's "the remote end hung up unexpectedly", an ERR line the server's error. */
export async function nextPacket(reader: PacketReader): Promise<Packet> {
  return answered(await reader.read());
}

function answered(p: Packet): Packet {
  if (p.kind === 'eof') throw new PackwrightError('CONNECTION_CLOSED', 'the remote end hung up unexpectedly');
  // The first bytes only: a pack's packets are never decoded as text.
  if (p.kind === 'data' && p.data.length >= 4 && p.data.toString('latin1', 0, 4) === 'ERR ') throw new PackwrightError('REQUEST_REFUSED', `remote error: ${p.line.slice(4)}`);
  return p;
}

/**
 * The server's first packet. An end before it is git's die_initial_contact: the server said
 * nothing at all (a spawned one that refused the repository has said why on stderr).
 */
export async function initialPacket(reader: PacketReader): Promise<Packet> {
  const p = await reader.read();
  if (p.kind === 'eof') throw new PackwrightError('CONNECTION_CLOSED', NO_INITIAL_CONTACT);
  return answered(p);
}

/** git's die_initial_contact for a server that said nothing. */
export const NO_INITIAL_CONTACT = 'Could not read from remote repository.\n\nPlease make sure you have the correct access rights\nand the repository exists.';

/** After a `version 2` line: the capabilities up to the flush (`name` or `name=value`). */
export async function readCapabilities(reader: PacketReader): Promise<Map<string, string>> {
  const caps = new Map<string, string>();
  for (let p = await nextPacket(reader); p.kind === 'data'; p = await nextPacket(reader)) {
    const eq = p.line.indexOf('=');
    caps.set(eq < 0 ? p.line : p.line.slice(0, eq), eq < 0 ? '' : p.line.slice(eq + 1));
  }
  return caps;
}

/** A command request: the server's object format named when it is not SHA-1, as git's client does. */
export function commandRequest(command: string, caps: ReadonlyMap<string, string>, agent: string, args: readonly string[]): Buffer {
  const parts = [encodePacket(`command=${command}\n`), encodePacket(`agent=${agent}\n`)];
  const format = caps.get('object-format');
  if (format !== undefined) parts.push(encodePacket(`object-format=${format}\n`));
  parts.push(DELIM_PACKET);
  for (const a of args) parts.push(encodePacket(`${a}\n`));
  parts.push(FLUSH_PACKET);
  return Buffer.concat(parts);
}
