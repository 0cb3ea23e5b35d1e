// A protocol v0/v1 fetch from the client's side (fetch-pack.c, find_common and get_pack), for
// servers that do not speak v2: the wants with the capabilities both sides have, the shallow
// boundary and any deepening, rounds of haves answered with multi_ack_detailed's ACKs until the
// server is ready or nothing is left to offer, `done`, then the pack on side band 1. Over a
// stream (ssh, git://, a local upload-pack) the conversation keeps its state; over HTTP (stateless
// RPC) each round is a request of its own that says again the wants and what is known common.
import { PackwrightError } from '../errors/packwright-error.js';
import { encodePacket, FLUSH_PACKET, type PacketReader } from '../protocol/pkt-line.js';
import type { Repository } from '../repo/repository.js';
import { INITIAL_FLUSH, MAX_IN_VAIN, receiveFetchedPack, sidebandData, type FetchedPack, type FetchPackOptions, type ShallowInfo } from './fetch-pack.js';
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
  // Stateless, a server that says "ready" may send the pack at once, without waiting for `done`.
  const noDone = stateless && has('multi_ack_detailed') && has('no-done');
  offer('no-done', noDone);
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
  /** An ACK line's id and kind (`''` for a final ACK), or undefined for NAK (git's get_ack). */
  const readAck = async (reader: PacketReader): Promise<{ hex: string; kind: string } | undefined> => {
    const p = await nextPacket(reader);
    if (p.kind !== 'data') throw new PackwrightError('PROTOCOL_ERROR', `git fetch-pack: expected ACK/NAK, got a ${p.kind} packet`);
    if (p.line === 'NAK') return undefined;
    const m = /^ACK ([0-9a-f]+)(?: (common|ready|continue))?$/.exec(p.line);
    if (m === null) throw new PackwrightError('PROTOCOL_ERROR', `git fetch-pack: expected ACK/NAK, got '${p.line}'`);
    return { hex: m[1] as string, kind: m[2] ?? '' };
  };

  // git's find_common. Haves go out in rounds that end at 16, 32, 64, 96… haves in all (a stream)
  // or 16, 32, 64, 128… (stateless: each round a request that repeats the wants and what is
  // known common). Over a stream the client keeps one round ahead: the answer to a round is read
  // after the next is sent, so the server is never waiting; what is left at the end goes with
  // `done`, and the answers still owed are read after it.
  let reader: PacketReader;
  /** What a stateless request repeats: the wants, and the haves the server acknowledged. */
  const state: Buffer[] = [...head];
  if (!stateless) {
    reader = await conn.request(Buffer.concat(head));
    if (shallowAnswered) await readShallowInfo(reader);
  } else {
    reader = conn.reader;
  }
  const negotiator = detailed ? options.negotiator : undefined;
  let pending: Buffer[] = [];
  let count = 0;
  let flushAt = INITIAL_FLUSH;
  let flushes = 0;
  let inVain = 0;
  let gotContinue = false;
  let gotReady = false;
  let multiAck = detailed;
  let common = false;
  const send = async (tail: Buffer): Promise<void> => {
    const body = Buffer.concat([...(stateless ? state : []), ...pending, tail]);
    pending = [];
    reader = await conn.request(body);
    if (stateless && shallowAnswered) await readShallowInfo(reader);
  };
  negotiation: for (let hex = negotiator?.next(); hex !== undefined; hex = negotiator?.next()) {
    pending.push(encodePacket(`have ${hex}\n`));
    inVain++;
    if (flushAt > ++count) continue;
    await send(FLUSH_PACKET);
    flushes++;
    flushAt = nextFlushV0(stateless, count);
    if (!stateless && count === INITIAL_FLUSH) continue;
    for (let ack = await readAck(reader); ack !== undefined; ack = await readAck(reader)) {
      if (ack.kind === '') {
        // A final ACK: the server (without multi_ack) is done negotiating.
        flushes = 0;
        multiAck = false;
        common = true;
        break negotiation;
      }
      const news = negotiator?.ack(ack.hex) === true;
      if (stateless && ack.kind === 'common' && news) {
        // The next request must say it again, for a server that remembers nothing.
        state.push(encodePacket(`have ${ack.hex}\n`));
        inVain = 0;
      } else if (!stateless || ack.kind !== 'common') {
        inVain = 0;
      }
      common = true;
      gotContinue = true;
      if (ack.kind === 'ready') gotReady = true;
    }
    flushes--;
    if ((gotContinue && inVain > MAX_IN_VAIN) || gotReady) break;
  }
  if (!gotReady || !noDone) await send(encodePacket('done\n'));
  if (!common) {
    multiAck = false;
    flushes++;
  }
  // The answers still owed: a NAK for each round not read yet, then (when something was common)
  // the ACKs the server repeats and its final `ACK <id>`.
  while (flushes > 0 || multiAck) {
    const ack = await readAck(reader);
    if (ack === undefined) {
      flushes--;
      continue;
    }
    if (ack.kind === '') break;
    multiAck = true;
  }
  const received = await receiveFetchedPack(repo, sidebandData(reader, options.onProgress), options);
  return { received, shallowInfo, filtered };
}

/**
 * Where a v0/v1 round ends, in haves sent in all (git's next_flush): doubling, then over a stream
 * 32 more each time (a pipe's worth the server can take while the client waits), and stateless a
 * tenth more past 16384.
 */
function nextFlushV0(stateless: boolean, count: number): number {
  if (stateless) return count < 16384 ? count * 2 : Math.floor((count * 11) / 10);
  return count < 32 ? count * 2 : count + 32;
}
