// A protocol v0/v1 fetch from the client's side (fetch-pack.c, find_common and get_pack), for
// servers that do not speak v2: the wants with the capabilities both sides have, the shallow
// boundary and any deepening, rounds of haves answered with multi_ack_detailed's ACKs until the
// server is ready or nothing is left to offer, `done`, then the pack on side band 1. Over a
// stream (ssh, git://, a local upload-pack) the conversation keeps its state; over HTTP (stateless
// RPC) each round is a request of its own that says again the wants and what is known common.
import { PackwrightError } from '../errors/packwright-error.js';
import { encodePacket, FLUSH_PACKET, type PacketReader } from '../protocol/pkt-line.js';
import type { Repository } from '../repo/repository.js';
import { INITIAL_FLUSH, MAX_IN_VAIN, nextFlush, receiveFetchedPack, sidebandData, type FetchedPack, type FetchPackOptions, type ShallowInfo } from './fetch-pack.js';
// nextPacket turns the server's ERR lines into its error (REQUEST_REFUSED, "remote error: …").
import { nextPacket } from './protocol-v2.js';
import type { Connection } from './transport.js';

/**
 * Fetches `wants` over a v0/v1 connection whose advertisement was read (`caps`, its
 * capabilities) into `repo`, as `fetchPack` does over v2: the objects received and what the
 * server said of the shallow boundary. `stateless`: each round is a request of its own (HTTP).
 */
export async function fetchPackV0(conn: Connection, caps: ReadonlyMap<string, string>, stateless: boolean, repo: Repository, options: FetchPackOptions): Promise<FetchedPack> {
  const shallowInfo: ShallowInfo = { shallow: [], unshallow: [] };
  if (options.wants.length === 0) return { received: undefined, shallowInfo, filtered: false };
  const has = (c: string): boolean => caps.has(c);
  const sideband = has('side-band-64k') ? 'side-band-64k' : has('side-band') ? 'side-band' : undefined;
  if (sideband === undefined) throw new PackwrightError('PROTOCOL_ERROR', 'the server offers no side band, which packwright\'s fetch needs');
  // Without multi_ack_detailed the server stops at its first common commit: offer no haves then.
  const detailed = has('multi_ack_detailed');
  const deepen = options.deepen;
  const shallow = options.shallow ?? [];
  if ((deepen !== undefined || shallow.length > 0) && !has('shallow')) throw new PackwrightError('REQUEST_REFUSED', 'Server does not support shallow clients');
  if (deepen?.since !== undefined && !has('deepen-since')) throw new PackwrightError('REQUEST_REFUSED', 'Server does not support --shallow-since');
  if (deepen?.not !== undefined && deepen.not.length > 0 && !has('deepen-not')) throw new PackwrightError('REQUEST_REFUSED', 'Server does not support --shallow-exclude');
  if (deepen?.relative === true && !has('deepen-relative')) throw new PackwrightError('REQUEST_REFUSED', 'Server does not support --deepen');
  let filtered = false;
  if (options.filter !== undefined) {
    if (has('filter')) filtered = true;
    else options.onWarning?.('filtering not recognized by server, ignoring');
  }
  // The capabilities asked for, each one the server offered (git's order).
  const wanted: string[] = [];
  const offer = (cap: string, when = true): void => {
    if (when && has(cap)) wanted.push(cap);
  };
  offer('multi_ack_detailed');
  wanted.push(sideband);
  offer('thin-pack');
  offer('no-progress', options.onProgress === undefined);
  offer('include-tag', options.includeTag === true);
  offer('ofs-delta');
  offer('shallow', deepen !== undefined || shallow.length > 0);
  offer('deepen-since', deepen?.since !== undefined);
  offer('deepen-not', deepen?.not !== undefined && deepen.not.length > 0);
  offer('deepen-relative', deepen?.relative === true);
  offer('filter', filtered);
  if (has('agent')) wanted.push(`agent=git/${options.agent}`);
  const format = caps.get('object-format');
  if (format !== undefined) wanted.push(`object-format=${format}`);

  const head: Buffer[] = options.wants.map((w, i) => encodePacket(i === 0 ? `want ${w} ${wanted.join(' ')}\n` : `want ${w}\n`));
  for (const id of shallow) head.push(encodePacket(`shallow ${Buffer.from(id).toString('hex')}\n`));
  if (deepen?.depth !== undefined) head.push(encodePacket(`deepen ${deepen.depth}\n`));
  if (deepen?.since !== undefined) head.push(encodePacket(`deepen-since ${deepen.since}\n`));
  for (const ref of deepen?.not ?? []) head.push(encodePacket(`deepen-not ${ref}\n`));
  if (filtered) head.push(encodePacket(`filter ${options.filter as string}\n`));
  head.push(FLUSH_PACKET);
  const shallowAnswered = deepen !== undefined || shallow.length > 0;

  /** The shallow boundary's changes (the server sends them once it has the wants, in every response when stateless). */
  const readShallowInfo = async (reader: PacketReader): Promise<void> => {
    shallowInfo.shallow.length = 0;
    shallowInfo.unshallow.length = 0;
    for (let p = await nextPacket(reader); p.kind === 'data'; p = await nextPacket(reader)) {
      const [what, id] = p.line.split(' ');
      if (what === 'shallow' && id !== undefined) shallowInfo.shallow.push(id);
      else if (what === 'unshallow' && id !== undefined) shallowInfo.unshallow.push(id);
      else throw new PackwrightError('PROTOCOL_ERROR', `expected shallow/unshallow, got ${p.line}`);
    }
  };
  /** A round's answer, to its NAK (multi_ack): what the server has in common, and whether it is ready. */
  const readAcks = async (reader: PacketReader): Promise<{ ready: boolean; acked: boolean }> => {
    let ready = false;
    let acked = false;
    for (;;) {
      const p = await nextPacket(reader);
      if (p.kind !== 'data') throw new PackwrightError('PROTOCOL_ERROR', `git fetch-pack: expected ACK/NAK, got a ${p.kind} packet`);
      if (p.line === 'NAK') return { ready, acked };
      const m = /^ACK ([0-9a-f]+)(?: (common|ready|continue))?$/.exec(p.line);
      if (m === null) throw new PackwrightError('PROTOCOL_ERROR', `git fetch-pack: expected ACK/NAK, got '${p.line}'`);
      const [, hex, kind] = m as unknown as [string, string, string | undefined];
      if (kind === undefined) throw new PackwrightError('PROTOCOL_ERROR', `git fetch-pack: unexpected final ACK in a round: '${p.line}'`);
      if (options.negotiator?.ack(hex) === true || !common.has(hex)) acked = true;
      common.add(hex);
      if (kind === 'ready') ready = true;
    }
  };

  const common = new Set<string>();
  let reader: PacketReader;
  if (!stateless) {
    reader = await conn.request(Buffer.concat(head));
    if (shallowAnswered) await readShallowInfo(reader);
  } else {
    reader = conn.reader;
  }
  let flushAt = INITIAL_FLUSH;
  let inVain = 0;
  let seenAck = false;
  for (;;) {
    const haves = detailed ? options.negotiator?.take(flushAt) ?? [] : [];
    if (haves.length === 0) break;
    inVain += haves.length;
    const round = haves.map((h) => encodePacket(`have ${h}\n`));
    if (stateless) {
      // What the server knows is only what this request says: the wants again, and what is common.
      reader = await conn.request(Buffer.concat([...head, ...[...common].map((c) => encodePacket(`have ${c}\n`)), ...round, FLUSH_PACKET]));
      if (shallowAnswered) await readShallowInfo(reader);
    } else {
      reader = await conn.request(Buffer.concat([...round, FLUSH_PACKET]));
    }
    const { ready, acked } = await readAcks(reader);
    if (acked) {
      seenAck = true;
      inVain = 0;
    }
    if (ready || (seenAck && inVain >= MAX_IN_VAIN)) break;
    flushAt = nextFlush(flushAt);
  }
  const done = encodePacket('done\n');
  if (stateless) {
    reader = await conn.request(Buffer.concat([...head, ...[...common].map((c) => encodePacket(`have ${c}\n`)), done]));
    if (shallowAnswered) await readShallowInfo(reader);
  } else {
    reader = await conn.request(done);
  }
  // The last answer: ACKs of what was said common again (stateless), then the final `ACK <id>` or `NAK`.
  for (;;) {
    const p = await nextPacket(reader);
    if (p.kind !== 'data') throw new PackwrightError('PROTOCOL_ERROR', `git fetch-pack: expected ACK/NAK, got a ${p.kind} packet`);
    if (p.line === 'NAK' || /^ACK [0-9a-f]+$/.test(p.line)) break;
    if (!/^ACK [0-9a-f]+ (common|ready|continue)$/.test(p.line)) throw new PackwrightError('PROTOCOL_ERROR', `git fetch-pack: expected ACK/NAK, got '${p.line}'`);
  }
  const received = await receiveFetchedPack(repo, sidebandData(reader, options.onProgress), options);
  return { received, shallowInfo, filtered };
}
