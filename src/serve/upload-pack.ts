// git's upload-pack (upload-pack.c, serve.c, ls-refs.c, protocol-caps.c): what a server runs for
// a clone or a fetch. Protocol v0/v1: the ref advertisement, the wants, the have/ACK negotiation,
// the pack. Protocol v2: a capability advertisement, then commands (ls-refs, fetch,
// object-info), each request answered whole, which is what a stateless transport (HTTP) needs.
import { PackwrightError } from '../errors/packwright-error.js';
import { toHex } from '../hash/hex.js';
import { parseCapabilities } from '../protocol/capabilities.js';
import type { Repository } from '../repo/repository.js';
import { advertisedRefs } from './advertised-refs.js';
import { UploadSession, WANTED, type UploadSessionOptions } from './upload-session.js';

/**
 * Options of `uploadPack`: the protocol version, stateless RPC (HTTP), the configuration, hidden refs, and
 * where errors go.
 */
export interface UploadPackOptions extends UploadSessionOptions {
  /** The protocol the client asked for (GIT_PROTOCOL's `version=`; see requestedProtocolVersion). */
  protocol?: 0 | 1 | 2 | undefined;
  /** Only advertise (git's --advertise-refs / --http-backend-info-refs: HTTP's info/refs). */
  advertiseRefs?: boolean | undefined;
}

/** v0's capabilities, in git 2.39's words and order. */
const V0_CAPABILITIES = 'multi_ack thin-pack side-band side-band-64k ofs-delta shallow deepen-since deepen-not deepen-relative no-progress include-tag multi_ack_detailed';

/**
 * Serves one upload-pack conversation for `repo`: requests come from `input`, answers go to
 * `output` (git's stdout), and what git writes to its stderr to `stderr`. Resolves when the
 * conversation is over; a request git refuses fails with its words (REQUEST_REFUSED,
 * PROTOCOL_ERROR, CONNECTION_CLOSED) after the client was told where git tells it.
 */
export async function uploadPack(repo: Repository, options: UploadPackOptions): Promise<void> {
  // The input is the caller's: what the conversation leaves unread stays there (an HTTP request's
  // body is its server's to finish; destroying it would cut the answer short).
  const session = new UploadSession(repo, options);
  try {
    const version = options.protocol ?? 0;
    if (version === 2) {
      if (options.advertiseRefs === true) advertiseV2(session);
      else await serveV2(session);
    } else {
      if (version === 1 && (options.advertiseRefs === true || options.statelessRpc !== true)) session.writer.line('version 1');
      await uploadPackV0(session, options.advertiseRefs === true);
    }
    await session.drain();
  } finally {
    session.stopTimeout();
  }
}

async function uploadPackV0(s: UploadSession, advertiseRefs: boolean): Promise<void> {
  const stateless = s.options.statelessRpc === true;
  // git's no_done is offered only to an HTTP client (the advertisement of info/refs).
  let noDone = advertiseRefs;
  if (advertiseRefs || !stateless) {
    const refs = advertisedRefs(s.repo.refs, s.config.hidden, s.dag, { peel: true, namespace: s.namespace });
    const head = refs.find((r) => r.name === 'HEAD');
    let caps = V0_CAPABILITIES;
    if ((s.config.allowUnadvertised & 1) !== 0) caps += ' allow-tip-sha1-in-want';
    if ((s.config.allowUnadvertised & 2) !== 0) caps += ' allow-reachable-sha1-in-want';
    if (noDone) caps += ' no-done';
    if (head?.symref !== undefined) caps += ` symref=HEAD:${head.symref}`;
    if (s.config.allowFilter) caps += ' filter';
    caps += ` object-format=${s.repo.format} agent=${s.agent}`;
    let first = true;
    for (const ref of refs) {
      s.writer.line(first ? `${toHex(ref.id)} ${ref.name}\0${caps}` : `${toHex(ref.id)} ${ref.name}`);
      first = false;
      if (ref.peeled !== undefined) s.writer.line(`${toHex(ref.peeled)} ${ref.name}^{}`);
    }
    for (const id of s.serverShallow) s.writer.line(`shallow ${toHex(id)}`);
    s.writer.flush();
  } else {
    s.markRefs();
  }
  if (advertiseRefs) return;

  // The wants (git's receive_needs), with the capabilities the client chose on them.
  let multiAck = 0;
  let hasNonTip = false;
  let filterRequested = false;
  for (;;) {
    const p = await s.read();
    if (p.kind !== 'data') break;
    const line = p.line;
    if (s.processShallow(line) || s.processDeepen(line)) continue;
    if (line.startsWith('filter ')) {
      if (!filterRequested) throw new PackwrightError('PROTOCOL_ERROR', 'git upload-pack: filtering capability not negotiated');
      await s.processFilter(line.slice(7));
      continue;
    }
    const hex = line.startsWith('want ') ? line.slice(5, 5 + 2 * s.hashLength) : '';
    const id = s.parseId(hex);
    const rest = line.slice(5 + hex.length);
    if (id === undefined || (rest !== '' && !rest.startsWith(' '))) {
      throw new PackwrightError('PROTOCOL_ERROR', `git upload-pack: protocol error, expected to get object ID, not '${line}'`);
    }
    const features = parseCapabilities(rest);
    if (features.has('deepen-relative')) s.deepenRelative = true;
    if (features.has('multi_ack_detailed')) multiAck = 2;
    else if (features.has('multi_ack')) multiAck = 1;
    if (features.has('no-done')) noDone = true;
    if (features.has('thin-pack')) s.thinPack = true;
    if (features.has('ofs-delta')) s.ofsDelta = true;
    const band = UploadSession.sidebandSize(features);
    if (band !== 0) s.sideband = band;
    if (features.has('no-progress')) s.noProgress = true;
    if (features.has('include-tag')) s.includeTag = true;
    if (s.config.allowFilter && features.has('filter')) filterRequested = true;
    const n = s.dag.intern(id);
    if (s.dag.type(n) === 0) await s.refuse(`upload-pack: not our ref ${toHex(id)}`, `git upload-pack: not our ref ${toHex(id)}`);
    if (!s.dag.is(n, WANTED)) {
      if (!(s.allowsAny() || s.isOurRef(n))) hasNonTip = true;
      s.want(n);
    }
  }
  // The refs were advertised, and the client chose among them; over a stateless connection its
  // choice may come from an older advertisement by another process.
  if (hasNonTip) await s.checkNonTip();
  if (s.sideband === 0 && s.options.timeout !== undefined && s.options.timeout > 0) s.noProgress = true;
  if (s.depth !== 0 || s.deepenRevList || s.clientShallows.length > 0) {
    if (s.sendShallowList()) s.writer.flush();
  }
  // A stateless client may end here (it reads the shallow list before sending haves).
  if (s.wants.length === 0) return;
  if ((await s.peek()).kind === 'eof' && stateless) return;
  if (!(await negotiateV0(s, multiAck, noDone))) return;
  await s.sendPack();
}

/**
 * The have/ACK rounds of v0 (git's get_common_commits): true when the pack is to follow, false
 * when a stateless request ends with its acknowledgments.
 */
async function negotiateV0(s: UploadSession, multiAck: number, noDone: boolean): Promise<boolean> {
  let lastHex = '';
  let gotCommon = false;
  let gotOther = false;
  let sentReady = false;
  for (;;) {
    const p = await s.read();
    if (p.kind !== 'data') {
      if (multiAck === 2 && gotCommon && !gotOther && s.okToGiveUp()) {
        sentReady = true;
        s.writer.line(`ACK ${lastHex} ready`);
      }
      if (s.haves.length === 0 || multiAck !== 0) s.writer.line('NAK');
      if (noDone && sentReady) {
        s.writer.line(`ACK ${lastHex}`);
        return true;
      }
      if (s.options.statelessRpc === true) return false;
      gotCommon = false;
      gotOther = false;
      continue;
    }
    const line = p.line;
    if (line.startsWith('have ')) {
      const id = s.parseId(line.slice(5));
      if (id === undefined) throw new PackwrightError('PROTOCOL_ERROR', `git upload-pack: expected SHA1 object, got '${line.slice(5)}'`);
      const hex = toHex(id);
      if (!s.gotHave(id)) {
        gotOther = true;
        if (multiAck !== 0 && s.okToGiveUp()) {
          if (multiAck === 2) {
            sentReady = true;
            s.writer.line(`ACK ${hex} ready`);
          } else s.writer.line(`ACK ${hex} continue`);
        }
      } else {
        gotCommon = true;
        lastHex = hex;
        if (multiAck === 2) s.writer.line(`ACK ${hex} common`);
        else if (multiAck === 1) s.writer.line(`ACK ${hex} continue`);
        else if (s.haves.length === 1) s.writer.line(`ACK ${hex}`);
      }
      continue;
    }
    if (line === 'done') {
      if (s.haves.length > 0) {
        if (multiAck !== 0) s.writer.line(`ACK ${lastHex}`);
      } else s.writer.line('NAK');
      return true;
    }
    throw new PackwrightError('PROTOCOL_ERROR', `git upload-pack: expected SHA1 list, got '${line}'`);
  }
}

/** The v2 capability advertisement (git's protocol_v2_advertise_capabilities). */
function advertiseV2(s: UploadSession): void {
  const w = s.writer;
  w.line('version 2');
  w.line(`agent=${s.agent}`);
  w.line(s.config.unborn === 'advertise' ? 'ls-refs=unborn' : 'ls-refs');
  w.line(`fetch=${fetchFeatures(s)}`);
  w.line('server-option');
  w.line(`object-format=${s.repo.format}`);
  w.line('object-info');
  w.flush();
}

function fetchFeatures(s: UploadSession): string {
  let value = 'shallow wait-for-done';
  if (s.config.allowFilter) value += ' filter';
  if (s.config.allowRefInWant) value += ' ref-in-want';
  if (s.config.allowSidebandAll) value += ' sideband-all';
  return value;
}

const COMMANDS = new Set(['ls-refs', 'fetch', 'object-info']);

/** v2: the advertisement unless stateless, then requests until the client ends (git's protocol_v2_serve_loop). */
async function serveV2(s: UploadSession): Promise<void> {
  const stateless = s.options.statelessRpc === true;
  if (!stateless) advertiseV2(s);
  do {
    if (await processRequestV2(s)) return;
  } while (!stateless);
}

/** One v2 request: capabilities and `command=`, then the command's arguments (git's process_request); true at the end of the conversation. */
async function processRequestV2(s: UploadSession): Promise<boolean> {
  if ((await s.peek()).kind === 'eof') return true;
  let command: string | undefined;
  let seen = false;
  let clientFormat = 'sha1';
  for (;;) {
    const p = await s.reader.peek();
    if (p.kind === 'eof') throw new PackwrightError('CONNECTION_CLOSED', 'the remote end hung up unexpectedly');
    if (p.kind === 'flush') {
      if (!seen) {
        await s.reader.read();
        return true;
      }
      break;
    }
    if (p.kind === 'delim') {
      await s.reader.read();
      break;
    }
    if (p.kind !== 'data') throw new PackwrightError('PROTOCOL_ERROR', 'unexpected response end packet');
    const line = p.line;
    if (line.startsWith('command=')) {
      const name = line.slice(8);
      if (command !== undefined) throw new PackwrightError('PROTOCOL_ERROR', `command '${name}' requested after already requesting command '${command}'`);
      if (!COMMANDS.has(name)) throw new PackwrightError('PROTOCOL_ERROR', `invalid command '${name}'`);
      command = name;
    } else if (line.startsWith('object-format=') || line === 'object-format') {
      if (line === 'object-format') throw new PackwrightError('PROTOCOL_ERROR', 'object-format capability requires an argument');
      clientFormat = line.slice(14);
      if (clientFormat !== 'sha1' && clientFormat !== 'sha256') throw new PackwrightError('PROTOCOL_ERROR', `unknown object format '${clientFormat}'`);
    } else if (!(line === 'agent' || line.startsWith('agent=') || line === 'server-option' || line.startsWith('server-option='))) {
      throw new PackwrightError('PROTOCOL_ERROR', `unknown capability '${line}'`);
    }
    seen = true;
    await s.reader.read();
  }
  if (command === undefined) throw new PackwrightError('PROTOCOL_ERROR', 'no command requested');
  if (clientFormat !== s.repo.format) throw new PackwrightError('PROTOCOL_ERROR', `mismatched object format: server ${s.repo.format}; client ${clientFormat}`);
  s.reset();
  if (command === 'ls-refs') await lsRefs(s);
  else if (command === 'fetch') await fetchV2(s);
  else await objectInfo(s);
  await s.drain();
  return false;
}

/** Reads a command's arguments to the flush that ends them (git dies when it is not there: `what`). */
async function commandArguments(s: UploadSession, what: string, each: (line: string) => Promise<void> | void): Promise<void> {
  for (;;) {
    const p = await s.read();
    if (p.kind === 'data') {
      await each(p.line);
      continue;
    }
    if (p.kind !== 'flush') throw new PackwrightError('PROTOCOL_ERROR', what);
    return;
  }
}

/** v2 ls-refs (ls-refs.c): HEAD (unborn too when asked), then the refs under the prefixes asked for. */
async function lsRefs(s: UploadSession): Promise<void> {
  let peel = false;
  let symrefs = false;
  let unborn = false;
  let prefixes: string[] = [];
  await commandArguments(s, 'expected flush after ls-refs arguments', (line) => {
    if (line === 'peel') peel = true;
    else if (line === 'symrefs') symrefs = true;
    else if (line.startsWith('ref-prefix ')) {
      if (prefixes.length < 65536) prefixes.push(line.slice(11));
    } else if (line === 'unborn') unborn = s.config.unborn !== 'ignore';
    else throw new PackwrightError('PROTOCOL_ERROR', `unexpected line: '${line}'`);
  });
  // So many prefixes that git takes them as none (TOO_MANY_PREFIXES).
  if (prefixes.length >= 65536) prefixes = [];
  const matches = (name: string): boolean => prefixes.length === 0 || prefixes.some((p) => name.startsWith(p));
  const refs = advertisedRefs(s.repo.refs, s.config.hidden, s.dag, { peel, namespace: s.namespace });
  const line = (name: string, id: Buffer | undefined, symref: string | undefined, peeled: Buffer | undefined): void => {
    let text = id === undefined ? `unborn ${name}` : `${toHex(id)} ${name}`;
    if (symrefs && symref !== undefined) text += ` symref-target:${symref}`;
    if (peel && peeled !== undefined) text += ` peeled:${toHex(peeled)}`;
    s.writer.line(text);
  };
  const head = refs.find((r) => r.name === 'HEAD');
  if (head !== undefined) {
    if (matches('HEAD')) line('HEAD', head.id, head.symref, head.peeled);
  } else if (unborn && symrefs && !s.config.hidden.isHidden('HEAD') && matches('HEAD')) {
    // An unborn HEAD: a symbolic ref to a branch with no commit yet (a new repository).
    const v = s.repo.refs.read(`${s.namespace}HEAD`);
    if (v?.kind === 'symbolic') {
      const target = s.repo.refs.symbolicEnd(v.target) ?? v.target;
      line('HEAD', undefined, target.startsWith(s.namespace) ? target.slice(s.namespace.length) : target, undefined);
    }
  }
  for (const ref of refs) if (ref.name !== 'HEAD' && matches(ref.name)) line(ref.name, ref.id, ref.symref, ref.peeled);
  s.writer.flush();
}

/** v2 fetch (git's upload_pack_v2): arguments, acknowledgments or the pack with its sections. */
async function fetchV2(s: UploadSession): Promise<void> {
  const haves: Buffer[] = [];
  const wantedRefs: { name: string; id: Buffer }[] = [];
  let done = false;
  let waitForDone = false;
  s.sideband = 65520;
  await commandArguments(s, 'expected flush after fetch arguments', async (line) => {
    if (line.startsWith('want ')) {
      const id = s.parseId(line.slice(5));
      if (id === undefined) throw new PackwrightError('PROTOCOL_ERROR', `git upload-pack: protocol error, expected to get oid, not '${line}'`);
      const n = s.dag.intern(id);
      if (s.dag.type(n) === 0) await s.refuse(`upload-pack: not our ref ${toHex(id)}`, `git upload-pack: not our ref ${toHex(id)}`);
      s.want(n);
    } else if (s.config.allowRefInWant && line.startsWith('want-ref ')) {
      const name = line.slice(9);
      const id = s.config.hidden.isHidden(name, `${s.namespace}${name}`) ? undefined : s.repo.refs.resolve(`${s.namespace}${name}`);
      if (id === undefined) await s.refuse(`unknown ref ${name}`);
      const n = s.dag.intern(id as Buffer);
      if (s.dag.type(n) === 0) throw new PackwrightError('OBJECT_NOT_FOUND', `${name}: object ${toHex(id as Buffer)} not found`);
      wantedRefs.push({ name, id: id as Buffer });
      s.want(n);
    } else if (line.startsWith('have ')) {
      const id = s.parseId(line.slice(5));
      if (id === undefined) throw new PackwrightError('PROTOCOL_ERROR', `git upload-pack: expected SHA1 object, got '${line.slice(5)}'`);
      haves.push(id);
    } else if (line === 'thin-pack') s.thinPack = true;
    else if (line === 'ofs-delta') s.ofsDelta = true;
    else if (line === 'no-progress') s.noProgress = true;
    else if (line === 'include-tag') s.includeTag = true;
    else if (line === 'done') done = true;
    else if (line === 'wait-for-done') waitForDone = true;
    else if (s.processShallow(line) || s.processDeepen(line)) return;
    else if (line === 'deepen-relative') s.deepenRelative = true;
    else if (s.config.allowFilter && line.startsWith('filter ')) await s.processFilter(line.slice(7));
    else if (s.config.allowSidebandAll && line === 'sideband-all') s.writer.sideband = true;
    else if (line.startsWith('packfile-uris ')) {
      // Offered only with uploadpack.blobPackfileUri, which packwright does not serve: nothing to do.
    } else throw new PackwrightError('PROTOCOL_ERROR', `unexpected line: '${line}'`);
  });
  if (s.wants.length === 0 && !waitForDone) return;
  if (haves.length > 0) {
    const common: Buffer[] = [];
    for (const id of haves) if (s.gotHave(id)) common.push(id);
    if (!done) {
      s.writer.line('acknowledgments');
      if (common.length === 0) s.writer.line('NAK');
      for (const id of common) s.writer.line(`ACK ${toHex(id)}`);
      if (waitForDone || !s.okToGiveUp()) {
        s.writer.flush();
        return;
      }
      s.writer.line('ready');
      s.writer.delim();
    }
  }
  if (wantedRefs.length > 0) {
    s.writer.line('wanted-refs');
    for (const r of wantedRefs) s.writer.line(`${toHex(r.id)} ${r.name}`);
    s.writer.delim();
  }
  if (s.depth !== 0 || s.deepenRevList || s.clientShallows.length > 0 || s.isServerShallow) {
    s.writer.line('shallow-info');
    if (!s.sendShallowList() && s.isServerShallow) s.deepen(0x7fffffff);
    s.writer.delim();
  }
  s.writer.line('packfile');
  await s.sendPack();
}

/** v2 object-info (protocol-caps.c): the size of each object asked for. */
async function objectInfo(s: UploadSession): Promise<void> {
  let size = false;
  const ids: string[] = [];
  await commandArguments(s, 'object-info: expected flush after arguments', (line) => {
    if (line === 'size') size = true;
    else if (line.startsWith('oid ')) ids.push(line.slice(4));
    else s.writer.error(`object-info: unexpected line: '${line}'`);
  });
  if (ids.length === 0) {
    s.writer.flush();
    return;
  }
  // These lines have no newline in git's answer.
  if (size) s.writer.data(Buffer.from('size'));
  for (const hex of ids) {
    const id = s.parseId(hex);
    if (id === undefined) {
      s.writer.error(`object-info: protocol error, expected to get oid, not '${hex}'`);
      continue;
    }
    let text = hex;
    if (size) {
      const location = s.repo.objects.locate(id);
      text += location === undefined ? ' ' : ` ${s.repo.objects.infoAt(location).size}`;
    }
    s.writer.data(Buffer.from(text));
  }
  s.writer.flush();
}
