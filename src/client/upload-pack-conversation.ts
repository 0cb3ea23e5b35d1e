// What a fetch or clone says to a server's upload-pack, whichever protocol the server answered
// in: v2 (ls-refs, then fetch) or v0/v1 (the refs from its advertisement, then fetch-pack's
// want/have conversation), so that clone, fetch and fetchMissing are written once.
import { PackwrightError } from '../errors/packwright-error.js';
import { FLUSH_PACKET } from '../protocol/pkt-line.js';
import type { Repository } from '../repo/repository.js';
import { readAdvertisement, type Advertisement } from './advertisement.js';
import { fetchPack, type FetchedPack, type FetchPackOptions } from './fetch-pack.js';
import { fetchPackV0 } from './fetch-pack-v0.js';
import type { ServerRef } from './list-server-refs.js';
import { commandRequest, initialPacket, nextPacket, readCapabilities } from './protocol-v2.js';
import type { Connection } from './transport.js';

/** A server's upload-pack as it answered the connection: v2 and its capabilities, or a v0/v1 advertisement. */
export type UploadPackGreeting =
  | { version: 2; caps: Map<string, string> }
  | { version: 0; caps: Map<string, string>; advertisement: Advertisement };

/** Reads the server's first message: v2's capabilities, or the v0/v1 ref advertisement (a server older than v2, or told to stay at v0). */
export async function readGreeting(conn: Connection): Promise<UploadPackGreeting> {
  const first = await initialPacket(conn.reader);
  if (first.kind === 'data' && first.line === 'version 2') return { version: 2, caps: await readCapabilities(conn.reader) };
  const advertisement = await readAdvertisement(conn.reader, first);
  // Over HTTP, git holds a v0/v1 conversation in its fetch-pack child, whose packets it traces as such.
  if (conn.stateless) conn.traceAs?.('fetch-pack');
  return { version: 0, caps: advertisement.capabilities, advertisement };
}

/** The hash the server's repository uses (its object-format capability; SHA-1 when it names none). */
export function serverObjectFormat(greeting: UploadPackGreeting): string {
  return greeting.caps.get('object-format') ?? 'sha1';
}

/**
 * The server's refs under `prefixes` (all without): v2's ls-refs, or the advertisement's refs
 * with HEAD's target from its `symref` capability and tags' peeled ids (v0 sends them all).
 */
export async function serverRefs(conn: Connection, greeting: UploadPackGreeting, agent: string, options: { prefixes?: readonly string[] | undefined; peel?: boolean | undefined; symrefs?: boolean | undefined; unborn?: boolean | undefined }): Promise<ServerRef[]> {
  if (greeting.version === 2) {
    if (!greeting.caps.has('ls-refs')) throw new PackwrightError('PROTOCOL_ERROR', 'the server speaks protocol v2 without ls-refs');
    return lsRefs(conn, greeting.caps, agent, options);
  }
  const prefixes = options.prefixes ?? [];
  const out: ServerRef[] = [];
  for (const r of greeting.advertisement.refs) {
    if (prefixes.length > 0 && !prefixes.some((p) => r.ref.startsWith(p))) continue;
    const target = options.symrefs === true ? greeting.advertisement.symrefs.get(r.ref) : undefined;
    const peeled = options.peel === true ? r.peeled : undefined;
    out.push({ ref: r.ref, oid: r.oid, ...(target !== undefined ? { target } : {}), ...(peeled !== undefined ? { peeled } : {}) });
  }
  return out;
}

/** Fetches `options.wants` in the protocol the server answered in (see fetchPack and fetchPackV0). */
export async function fetchFromServer(conn: Connection, greeting: UploadPackGreeting, repo: Repository, options: FetchPackOptions): Promise<FetchedPack> {
  if (greeting.version === 2) return fetchPack(conn, greeting.caps, repo, options);
  return fetchPackV0(conn, greeting.caps, conn.stateless, repo, options);
}

/**
 * Ends a conversation that asked for nothing: a v0 server over a stream waits for the client's
 * flush (its "no wants"); v2 and HTTP need nothing.
 */
export async function endWithoutFetch(conn: Connection, greeting: UploadPackGreeting): Promise<void> {
  if (greeting.version === 0 && !conn.stateless) await conn.request(FLUSH_PACKET).catch(() => undefined);
}

/**
 * A v2 `ls-refs` on a connection whose capabilities were read: the refs in the server's order,
 * `unborn` HEAD (with `unborn`) as `{ ref: 'HEAD', oid: 'unborn', target }`.
 */
export async function lsRefs(
  conn: Connection,
  caps: ReadonlyMap<string, string>,
  agent: string,
  options: { prefixes?: readonly string[] | undefined; peel?: boolean | undefined; symrefs?: boolean | undefined; unborn?: boolean | undefined },
): Promise<ServerRef[]> {
  const args = [
    ...(options.peel === true ? ['peel'] : []),
    ...(options.symrefs === true ? ['symrefs'] : []),
    ...(options.unborn === true ? ['unborn'] : []),
    ...(options.prefixes ?? []).map((p) => `ref-prefix ${p}`),
  ];
  const reader = await conn.request(commandRequest('ls-refs', caps, agent, args));
  const out: ServerRef[] = [];
  for (let p = await nextPacket(reader); p.kind === 'data'; p = await nextPacket(reader)) {
    const [oid, ref, ...attrs] = p.line.split(' ');
    if (oid === undefined || ref === undefined) throw new PackwrightError('PROTOCOL_ERROR', `invalid ls-refs response: ${p.line}`);
    const r: ServerRef = { ref, oid };
    for (const a of attrs) {
      if (a.startsWith('symref-target:')) r.target = a.slice(14);
      else if (a.startsWith('peeled:')) r.peeled = a.slice(7);
    }
    out.push(r);
  }
  return out;
}
