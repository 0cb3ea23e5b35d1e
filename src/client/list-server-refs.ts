// git ls-remote's conversation (connect.c: get_remote_heads, get_remote_refs): the refs a
// server's upload-pack advertises, from protocol v0/v1's advertisement or v2's ls-refs.
import { PackwrightError } from '../errors/packwright-error.js';
import { FLUSH_PACKET } from '../protocol/pkt-line.js';
import { readAdvertisement } from './advertisement.js';
import { commandRequest, nextPacket, readCapabilities } from './protocol-v2.js';
import { openConnection, parseRemoteUrl, type Connection } from './transport.js';
import { remoteCallOptions, type RemoteCallOptions } from './client-options.js';

/** A ref a server has, as isomorphic-git's listServerRefs gives it. */
export interface ServerRef {
  ref: string;
  oid: string;
  /** For a symbolic ref (HEAD): the ref it points to. */
  target?: string | undefined;
  /** For an annotated tag: the object it peels to. */
  peeled?: string | undefined;
}

/**
 * Options of `listServerRefs`: ref prefixes, peeling, symrefs, the protocol version, and what every remote
 * call takes.
 */
export interface ListServerRefsOptions extends RemoteCallOptions {
  /** The protocol to ask for (default 2; a server that does not speak it answers in v0). */
  protocol?: 0 | 1 | 2 | undefined;
  /** Only refs starting with one of these (v2's ref-prefix; filtered here for v0). */
  prefixes?: readonly string[] | undefined;
  /** Ask for symbolic refs' targets (v2; v0 servers tell HEAD's in their capabilities). */
  symrefs?: boolean | undefined;
  /** Ask for annotated tags' peeled values. */
  peelTags?: boolean | undefined;
  /** For a local repository: spawn this upload-pack command instead of serving it in this process. */
  uploadPack?: string | undefined;
  /** The environment GIT_SSH_COMMAND and GIT_SSH are read from (default: the process's). */
  env?: Readonly<Record<string, string | undefined>> | undefined;
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

/**
 * The refs the server at `url` advertises (git ls-remote), in its order: protocol v2's ls-refs
 * with `prefixes`, or the v0/v1 advertisement, HEAD's target from its capabilities.
 */
export async function listServerRefs(url: string, options: ListServerRefsOptions = {}): Promise<ServerRef[]> {
  const location = parseRemoteUrl(url, options.cwd);
  const conn = await openConnection(location, { ...remoteCallOptions(options), service: 'git-upload-pack', protocol: options.protocol ?? 2, command: options.uploadPack, env: options.env });
  try {
    const first = await nextPacket(conn.reader);
    const wanted = (name: string): boolean => options.prefixes === undefined || options.prefixes.length === 0 || options.prefixes.some((p) => name.startsWith(p));
    if (first.kind === 'data' && first.line === 'version 2') {
      const caps = await readCapabilities(conn.reader);
      if (!caps.has('ls-refs')) throw new PackwrightError('PROTOCOL_ERROR', 'the server speaks protocol v2 without ls-refs');
      return await lsRefs(conn, caps, options.agent ?? 'packwright', { prefixes: options.prefixes, peel: options.peelTags, symrefs: options.symrefs });
    }
    // v0/v1: the advertisement; HEAD's target from the capabilities.
    const advertised = await readAdvertisement(conn.reader, first);
    const out: ServerRef[] = [];
    for (const r of advertised.refs) {
      if (!wanted(r.ref)) continue;
      const target = options.symrefs === true ? advertised.symrefs.get(r.ref) : undefined;
      const peeled = options.peelTags === true ? r.peeled : undefined;
      out.push({ ref: r.ref, oid: r.oid, ...(target !== undefined ? { target } : {}), ...(peeled !== undefined ? { peeled } : {}) });
    }
    // A v0 conversation is ended by the client: a flush (no wants).
    if (location.kind !== 'http') await conn.request(FLUSH_PACKET).catch(() => undefined);
    return out;
  } finally {
    conn.close();
  }
}
