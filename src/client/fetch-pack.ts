// A protocol v2 fetch from the client's side (fetch-pack.c, do_fetch_pack_v2): the wants, rounds
// of haves until the server is ready or nothing is left to offer, then the pack, streamed straight
// into index-pack (or unpack-objects below the unpack limit) as it arrives.
import { hostname } from 'node:os';
import { PackwrightError } from '../errors/packwright-error.js';
import type { PacketReader } from '../protocol/pkt-line.js';
import { BAND_DATA, BAND_ERROR, BAND_PROGRESS } from '../protocol/sideband.js';
import type { Repository } from '../repo/repository.js';
import { readPackHeader, receiveObjects, type ReceivedObjects } from '../transfer/receive-objects.js';
import { takeHaves, type Negotiator } from './negotiator.js';
import { commandRequest, nextPacket } from './protocol-v2.js';
import { trace2Data } from '../trace2/trace2.js';
import type { Connection } from './transport.js';

/** git's negotiation limits: the first round's haves, and how many unacknowledged haves after an ACK end it (MAX_IN_VAIN). */
export const INITIAL_FLUSH = 16;
const LARGE_FLUSH = 16384;
export const MAX_IN_VAIN = 256;

export interface FetchPackOptions {
  /** Ids to ask for (hex). */
  wants: readonly string[];
  /** What to offer as haves (none: a clone). */
  negotiator?: Negotiator | undefined;
  /** Ask for annotated tags of what is sent (include-tag). */
  includeTag?: boolean | undefined;
  /** This repository's shallow boundary, told to the server (`shallow <id>`) so it sends nothing that needs what is cut off. */
  shallow?: readonly Uint8Array[] | undefined;
  /**
   * A shallow fetch (git's --depth, --deepen, --shallow-since, --shallow-exclude, --unshallow):
   * the history to take, counted from the wants (`depth`; with `relative`, from the present
   * boundary), back to a date (seconds since the epoch), or short of what some refs reach.
   */
  deepen?: Deepen | undefined;
  /** A partial fetch: the object filter (`blob:none`, `blob:limit=<n>`, `tree:<depth>`), sent when the server allows filters. */
  filter?: string | undefined;
  /** From a promisor remote: the `.promisor` text of the pack kept (see ReceiveObjectsOptions.promisor). */
  promisor?: string | undefined;
  /** Objects below this count are written loose (fetch.unpackLimit; default 100). */
  unpackLimit?: number | undefined;
  /**
   * Find out whether the pack names only objects it holds (git's
   * --check-self-contained-and-connected, which clone asks for): `ReceivedObjects.selfContained`.
   */
  checkSelfContained?: boolean | undefined;
  /** The server's progress lines (band 2), as they come. */
  onProgress?: ((text: string) => void) | undefined;
  /** This side's warnings (git's `warning: …`, without that prefix). */
  onWarning?: ((message: string) => void) | undefined;
  agent: string;
  signal?: AbortSignal | undefined;
}

/** What a shallow fetch asks for (see FetchPackOptions.deepen). */
export interface Deepen {
  depth?: number | undefined;
  relative?: boolean | undefined;
  since?: number | undefined;
  not?: readonly string[] | undefined;
}

/** The boundary changes a v2 fetch response's `shallow-info` section announces (hex ids). */
export interface ShallowInfo {
  shallow: string[];
  unshallow: string[];
}

/**
 * The pack of a v2 fetch response: the sections before `packfile` read (`shallow-info` into
 * `shallowInfo`, the others skipped), then side band 1, with 2 to `progress` and 3 an error.
 */
async function* packfileSection(reader: PacketReader, progress: ((text: string) => void) | undefined, shallowInfo: ShallowInfo): AsyncGenerator<Buffer> {
  let section = '';
  for (;;) {
    const p = await nextPacket(reader);
    if (p.kind === 'flush') throw new PackwrightError('PROTOCOL_ERROR', 'the fetch response ended without a packfile');
    if (p.kind === 'delim') {
      section = '';
      continue;
    }
    if (p.kind !== 'data') continue;
    if (section === '') {
      section = p.line;
      if (section === 'packfile') break;
      continue;
    }
    if (section !== 'shallow-info') continue;
    const [what, id] = p.line.split(' ');
    if (what === 'shallow' && id !== undefined) shallowInfo.shallow.push(id);
    else if (what === 'unshallow' && id !== undefined) shallowInfo.unshallow.push(id);
    else throw new PackwrightError('PROTOCOL_ERROR', `error processing shallow info: ${p.line}`);
  }
  yield* sidebandData(reader, progress);
}

/** The pack on side band 1 until a flush (or the end), band 2 to `progress`, band 3 an error (v0's and v2's packfile alike). */
export async function* sidebandData(reader: PacketReader, progress: ((text: string) => void) | undefined): AsyncGenerator<Buffer> {
  // git demultiplexes on a thread of its own, whose packets its trace names `sideband`.
  reader.tracedAs = 'sideband';
  for (;;) {
    const p = await nextPacket(reader);
    if (p.kind !== 'data') return;
    const band = p.data[0];
    if (band === BAND_DATA) yield p.data.subarray(1);
    else if (band === BAND_PROGRESS) progress?.(p.data.toString('utf8', 1));
    else if (band === BAND_ERROR) throw new PackwrightError('REQUEST_REFUSED', `remote error: ${p.data.toString('utf8', 1).trimEnd()}`);
    else throw new PackwrightError('PROTOCOL_ERROR', `bad band #${band ?? -1}`);
  }
}

/**
 * Reads an `acknowledgments` section (git's process_acks): ACKs go to the negotiator; true when
 * the server said `ready` (the packfile follows in this response), false when it wants another round.
 */
async function readAcknowledgments(reader: PacketReader, negotiator: Negotiator | undefined, common: Set<string>): Promise<{ ready: boolean; acked: boolean }> {
  const first = await nextPacket(reader);
  if (first.kind !== 'data' || first.line !== 'acknowledgments') throw new PackwrightError('PROTOCOL_ERROR', `expected 'acknowledgments', received '${first.kind === 'data' ? first.line : first.kind}'`);
  let ready = false;
  let acked = false;
  for (;;) {
    const p = await nextPacket(reader);
    if (p.kind === 'flush') {
      if (ready) throw new PackwrightError('PROTOCOL_ERROR', "expected packfile to be sent after 'ready'");
      return { ready, acked };
    }
    if (p.kind === 'delim') {
      if (!ready) throw new PackwrightError('PROTOCOL_ERROR', "expected no other sections to be sent after no 'ready'");
      return { ready, acked };
    }
    if (p.kind !== 'data') throw new PackwrightError('PROTOCOL_ERROR', 'unexpected packet in the acknowledgments');
    if (p.line === 'NAK') continue;
    if (p.line === 'ready') {
      ready = true;
      continue;
    }
    if (p.line.startsWith('ACK ')) {
      const hex = p.line.slice(4);
      if (negotiator?.ack(hex) === true || !common.has(hex)) acked = true;
      common.add(hex);
      continue;
    }
    throw new PackwrightError('PROTOCOL_ERROR', `unexpected acknowledgment line: '${p.line}'`);
  }
}

/** What a fetch received: the objects (undefined when nothing was asked), and the boundary's changes. */
export interface FetchedPack {
  received: ReceivedObjects | undefined;
  shallowInfo: ShallowInfo;
  /** Whether the server took the filter asked for (a partial fetch). */
  filtered: boolean;
}

/**
 * Fetches `wants` over a v2 connection whose capabilities were read (`caps`) into `repo`; the
 * objects received (with a `.keep` the caller removes once refs name them), and what the server
 * said of the shallow boundary. Nothing wanted: nothing asked.
 */
export async function fetchPack(conn: Connection, caps: ReadonlyMap<string, string>, repo: Repository, options: FetchPackOptions): Promise<FetchedPack> {
  const shallowInfo: ShallowInfo = { shallow: [], unshallow: [] };
  if (options.wants.length === 0) return { received: undefined, shallowInfo, filtered: false };
  const head = options.wants.map((w) => `want ${w}`);
  head.push('thin-pack', 'ofs-delta');
  if (options.onProgress === undefined) head.push('no-progress');
  if (options.includeTag === true) head.push('include-tag');
  for (const id of options.shallow ?? []) head.push(`shallow ${Buffer.from(id).toString('hex')}`);
  const deepen = options.deepen;
  if (deepen !== undefined) {
    // git's add_shallow_requests, after checking the server offers shallow fetches at all.
    if (!/(^| )shallow( |$)/.test(caps.get('fetch') ?? '')) throw new PackwrightError('REQUEST_REFUSED', 'Server does not support shallow requests');
    if (deepen.depth !== undefined) head.push(`deepen ${deepen.depth}`);
    if (deepen.relative === true) head.push('deepen-relative');
    if (deepen.since !== undefined) head.push(`deepen-since ${deepen.since}`);
    for (const ref of deepen.not ?? []) head.push(`deepen-not ${ref}`);
  }
  let filtered = false;
  if (options.filter !== undefined) {
    // git's words when the server does not take filters: the fetch goes on, whole.
    if (/(^| )filter( |$)/.test(caps.get('fetch') ?? '')) {
      head.push(`filter ${options.filter}`);
      filtered = true;
    } else {
      options.onWarning?.('filtering not recognized by server, ignoring');
    }
  }
  const common = new Set<string>();
  let reader: PacketReader | undefined;
  let flushAt = INITIAL_FLUSH;
  let inVain = 0;
  let seenAck = false;
  for (;;) {
    const haves = (options.negotiator !== undefined ? takeHaves(options.negotiator, flushAt) : []);
    inVain += haves.length;
    const done = haves.length === 0 || (seenAck && inVain >= MAX_IN_VAIN);
    const args = [...head, ...[...common].map((c) => `have ${c}`), ...haves.map((h) => `have ${h}`), ...(done ? ['done'] : [])];
    reader = await conn.request(commandRequest('fetch', caps, options.agent, args));
    if (done) break;
    const { ready, acked } = await readAcknowledgments(reader, options.negotiator, common);
    if (acked) {
      seenAck = true;
      inVain = 0;
    }
    if (ready) break;
    flushAt = nextFlush(flushAt);
  }
  const received = await receiveFetchedPack(repo, packfileSection(reader, options.onProgress, shallowInfo), options);
  return { received, shallowInfo, filtered };
}

/**
 * git's negotiate_using_fetch (`fetch --negotiate-only`, which push.negotiate runs): rounds of v2
 * `fetch` requests with `wait-for-done` and haves only, from `tips` down, until no have is left,
 * too many go unacknowledged after an ACK, or every tip reaches a commit the server acknowledged.
 * Returns the commits it acknowledged (their hex ids). The server must offer `wait-for-done`.
 */
export async function negotiateCommon(conn: Connection, caps: ReadonlyMap<string, string>, negotiator: Negotiator, reachesCommon: (common: ReadonlySet<string>) => boolean, agent: string): Promise<Set<string>> {
  if (!/(^| )wait-for-done( |$)/.test(caps.get('fetch') ?? '')) throw new PackwrightError('REQUEST_REFUSED', 'server does not support wait-for-done');
  const common = new Set<string>();
  let flushAt = INITIAL_FLUSH;
  let inVain = 0;
  let seenAck = false;
  let rounds = 0;
  for (let last = false; !last;) {
    rounds++;
    const haves = takeHaves(negotiator, flushAt);
    flushAt = nextFlush(flushAt);
    inVain += haves.length;
    if (haves.length === 0 || (seenAck && inVain >= MAX_IN_VAIN)) last = true;
    const reader = await conn.request(commandRequest('fetch', caps, agent, ['wait-for-done', ...haves.map((h) => `have ${h}`)]));
    const { ready, acked } = await readAcknowledgments(reader, negotiator, common);
    if (ready) throw new PackwrightError('PROTOCOL_ERROR', "unexpected 'ready' from remote");
    if (acked) {
      inVain = 0;
      seenAck = true;
    }
    if (reachesCommon(common)) last = true;
  }
  trace2Data('negotiate_using_fetch', 'total_rounds', rounds);
  return common;
}

/** How many haves the next round offers: git's next_flush (doubling, then a tenth more past LARGE_FLUSH). */
export function nextFlush(count: number): number {
  return count < LARGE_FLUSH ? count * 2 : Math.floor(count * 11 / 10);
}

/** The pack a fetch received, streamed into the repository (index-pack, or unpack-objects below the unpack limit), kept by a `.keep` the caller removes. */
export async function receiveFetchedPack(repo: Repository, pack: AsyncIterable<Buffer>, options: FetchPackOptions): Promise<ReceivedObjects> {
  const { header, rest } = await readPackHeader(pack);
  return receiveObjects(repo, header, rest, {
    unpackLimit: options.unpackLimit ?? 100,
    keep: `fetch-pack ${process.pid} on ${hostname()}`,
    signal: options.signal,
    promisor: options.promisor,
    checkSelfContained: options.checkSelfContained,
  });
}
