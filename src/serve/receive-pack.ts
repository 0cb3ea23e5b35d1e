// git's receive-pack (builtin/receive-pack.c): what a server runs for a push. The ref
// advertisement, the commands (`<old> <new> <ref>`), push options, the pack, then the checks and
// the ref updates, and the report. Protocol v2 has no push: a v2 request is answered in v0, as
// git does.
import { rmSync } from 'node:fs';
import { hostname } from 'node:os';
import { PackwrightError, isPackwrightError } from '../errors/packwright-error.js';
import { tryFromHex, toHex } from '../hash/hex.js';
import { advertisedAgent, parseCapabilities } from '../protocol/capabilities.js';
import { encodePacket, FLUSH_PACKET, LARGE_PACKET_MAX, PacketReader, PacketWriter, type ByteSink, type Packet } from '../protocol/pkt-line.js';
import { BAND_DATA, BAND_PROGRESS, sidebandFrames } from '../protocol/sideband.js';
import { Progress } from '../progress/progress.js';
import type { Repository } from '../repo/repository.js';
import { readPackHeader, receiveObjects } from '../transfer/receive-objects.js';
import { Quarantine } from '../transfer/quarantine.js';
import { namespacePrefix } from './advertised-refs.js';
import { receivePackConfig, type ReceivePackConfig } from './receive-pack-config.js';
import { executeCommands, knownTips, runAfterUpdate, type Command } from './receive-commands.js';
import { PackIndex } from '../idx/pack-index.js';
import { alternateRefIds } from '../repo/alternate-refs.js';
import type { Pusher } from './smart-http.js';

/** A ref change a push asks for, ids in hex (the zero id: the ref is created, or deleted). */
export interface ReceiveCommand {
  ref: string;
  oldId: string;
  newId: string;
}

/** A command and how it ended: `error` is what the client is told (`ng <ref> <error>`), undefined when the ref was updated. */
export interface ReceiveCommandResult extends ReceiveCommand {
  error: string | undefined;
}

/** What a policy callback is shown before any ref changes. */
export interface PendingPush {
  /** The commands still standing (those the checks and hooks refused are left out). */
  commands: readonly ReceiveCommand[];
  pushOptions: readonly string[];
  /**
   * The repository with the pushed objects visible (its store reads the quarantine, then the
   * repository's own objects): read-only, valid until the callback's promise settles.
   */
  repository: Repository;
}

/**
 * Options of `receivePack`: stateless RPC, the pusher, hooks and the host's callbacks (beforeUpdate,
 * afterUpdate), progress and cancellation.
 */
export interface ReceivePackOptions {
  input: AsyncIterable<Uint8Array>;
  output: ByteSink;
  /** What git's receive-pack writes to its stderr (without a side band, the messages for the pusher too). */
  stderr?: ((text: string) => void) | undefined;
  /** The protocol the client asked for (GIT_PROTOCOL); 2 is answered in v0, as git does. */
  protocol?: 0 | 1 | 2 | undefined;
  statelessRpc?: boolean | undefined;
  /** Only advertise (git's --advertise-refs: HTTP's info/refs). */
  advertiseRefs?: boolean | undefined;
  /** git's --quiet: no progress. */
  quiet?: boolean | undefined;
  /** Run the repository's hook scripts (pre-receive, update, post-receive, post-update; default true). */
  hooks?: boolean | undefined;
  /**
   * After a push, run `git gc --auto --quiet` in the repository when receive.autogc says so
   * (default true), as git's receive-pack does, if a `git` is installed: packwright has no gc of
   * its own. False: never.
   */
  autoGc?: boolean | undefined;
  /** Refuse thin packs (git's --reject-thin-pack-for-testing). */
  rejectThin?: boolean | undefined;
  /**
   * The host's policy, after git's checks and the pre-receive hook: return the refs to refuse,
   * each with the reason the pusher is told (`ng <ref> <reason>`); throwing refuses the whole push
   * with the error's message.
   */
  beforeUpdate?: ((push: PendingPush) => Record<string, string> | void | Promise<Record<string, string> | void>) | undefined;
  /** Told what changed once the refs are updated and the pusher has its report (git's post-receive). */
  afterUpdate?: ((updated: readonly ReceiveCommand[], pushOptions: readonly string[]) => void | Promise<void>) | undefined;
  /** Who pushes: the name and email of the reflog lines (default: the committer git would take from the environment and configuration). */
  pusher?: Pusher | undefined;
  threads?: number | undefined;
  signal?: AbortSignal | undefined;
  agent?: string | undefined;
}

/**
 * Serves one receive-pack conversation for `repo`: requests from `input`, answers to `output`.
 * The pushed objects land in a quarantine (see Quarantine) and move into the repository only when
 * some ref update is accepted; refs change through ref transactions (one for all with `atomic`).
 * Resolves with each command's outcome (empty when only advertising, or when the client sent no
 * command); a broken conversation fails with PROTOCOL_ERROR or CONNECTION_CLOSED.
 */
export async function receivePack(repo: Repository, options: ReceivePackOptions): Promise<ReceiveCommandResult[]> {
  const session = new ReceiveSession(repo, options);
  try {
    return await session.run();
  } finally {
    session.stopKeepAlive();
  }
}

/** One receive-pack conversation's state (git's globals of receive-pack.c). */
export class ReceiveSession {
  readonly config: ReceivePackConfig;
  readonly reader: PacketReader;
  readonly writer: PacketWriter;
  readonly namespace: string;
  readonly hashLength: number;
  /** 0 without a side band, else the packet size. */
  sideband = 0;
  reportStatus = false;
  reportStatusV2 = false;
  quiet: boolean;
  atomic = false;
  usePushOptions = false;
  readonly pushOptions: string[] = [];
  /** The client's shallow commits (`shallow` lines before the commands). */
  readonly clientShallow: Buffer[] = [];
  quarantine: Quarantine | undefined;
  /** The `.keep` of the pack received, removed once the refs name its objects. */
  keepPath: string | undefined;
  /**
   * New ids (hex) the commands name that are in the pack received, when that pack was
   * self-contained: everything they reach came with it, so the connectivity walk skips them.
   */
  readonly inSelfContainedPack = new Set<string>();
  private tail: Promise<void> = Promise.resolve();
  private lastOutput = Date.now();
  private keepAliveTimer: NodeJS.Timeout | undefined;

  constructor(readonly repo: Repository, readonly options: ReceivePackOptions) {
    this.config = receivePackConfig(repo.config);
    for (const w of this.config.warnings) options.stderr?.(`warning: ${w}\n`);
    this.reader = new PacketReader(options.input);
    this.writer = new PacketWriter((chunk) => this.emit(chunk));
    this.namespace = namespacePrefix(repo.env['GIT_NAMESPACE']);
    this.hashLength = repo.objects.hashLength;
    this.quiet = options.quiet === true;
  }

  get agent(): string {
    return advertisedAgent(this.repo.env, this.options.agent);
  }

  /** The id a command's hex names (checked when the command was read). */
  id(hex: string): Buffer {
    return tryFromHex(hex, this.hashLength) as Buffer;
  }

  get zeroId(): string {
    return '0'.repeat(2 * this.hashLength);
  }

  /** Hands `chunk` to the output after everything before it. */
  emit(chunk: Buffer): Promise<void> {
    this.lastOutput = Date.now();
    const next = this.tail.then(() => this.options.output(chunk));
    this.tail = next;
    return next;
  }

  async drain(): Promise<void> {
    await this.writer.send();
    await this.tail;
  }

  /**
   * Text for the pusher (git's rp_error/rp_warning, hook output, progress): on band 2 with a side
   * band, else on receive-pack's stderr (which a local or ssh pusher sees).
   */
  tell(text: string | Buffer): void {
    if (this.sideband !== 0) {
      void this.writer.send();
      this.emit(sidebandFrames(BAND_PROGRESS, typeof text === 'string' ? Buffer.from(text) : text, this.sideband)).catch(() => undefined);
    } else {
      this.options.stderr?.(typeof text === 'string' ? text : text.toString('utf8'));
    }
  }

  /** Output of a hook: waits for the pusher to take it (backpressure on a chatty hook). */
  async tellAsync(text: Buffer): Promise<void> {
    this.tell(text);
    await this.tail;
  }

  error(message: string): void {
    this.tell(`error: ${message}\n`);
  }

  warning(message: string): void {
    this.tell(`warning: ${message}\n`);
  }

  /**
   * Empty band-1 packets while the push is checked and applied, so a client or proxy that waits
   * for the report does not give up (git's receive.keepAlive, side band only).
   */
  startKeepAlive(): void {
    const seconds = this.config.keepAlive;
    if (this.sideband === 0 || seconds <= 0 || this.keepAliveTimer !== undefined) return;
    const ms = seconds * 1000;
    this.keepAliveTimer = setInterval(() => {
      if (Date.now() - this.lastOutput >= ms) this.emit(Buffer.from('0005\u0001')).catch(() => undefined);
    }, Math.min(ms, 1000));
    this.keepAliveTimer.unref();
  }

  stopKeepAlive(): void {
    if (this.keepAliveTimer !== undefined) clearInterval(this.keepAliveTimer);
    this.keepAliveTimer = undefined;
  }

  async run(): Promise<ReceiveCommandResult[]> {
    const stateless = this.options.statelessRpc === true;
    const advertiseRefs = this.options.advertiseRefs === true;
    // git 2.39 has no push in protocol v2: a v2 request gets v0.
    if (this.options.protocol === 1 && (advertiseRefs || !stateless)) this.writer.line('version 1');
    if (advertiseRefs || !stateless) this.advertise();
    if (advertiseRefs) {
      await this.drain();
      return [];
    }
    const commands = await this.readCommands();
    if (commands.length === 0) {
      await this.drain();
      return [];
    }
    if (this.usePushOptions) await this.readPushOptions();
    let unpackStatus: string | undefined;
    try {
      if (commands.some((c) => c.newId !== this.zeroId)) unpackStatus = await this.unpack(commands);
      this.startKeepAlive();
      await executeCommands(this, commands, unpackStatus);
    } finally {
      this.quarantine?.destroy();
      this.quarantine = undefined;
      if (this.keepPath !== undefined) {
        // git's unlink_or_warn(pack_lockfile): the refs now name the objects, or the push failed.
        // A keep file left behind would only keep gc from repacking that pack.
        rmSync(this.keepPath, { force: true });
      }
    }
    this.stopKeepAlive();
    this.report(commands, unpackStatus);
    await this.drain();
    const results = commands.map((c) => ({ ref: c.ref, oldId: c.oldId, newId: c.newId, error: c.error }));
    await runAfterUpdate(this, commands);
    if (this.sideband !== 0) this.writer.flush();
    await this.drain();
    return results;
  }

  /** git's write_head_info: every ref (outside the namespace, as `.have`), alternates' refs as `.have`, shallow commits. */
  private advertise(): void {
    let caps = 'report-status report-status-v2 delete-refs side-band-64k quiet';
    if (this.config.advertiseAtomic) caps += ' atomic';
    if (this.config.ofsDelta) caps += ' ofs-delta';
    if (this.config.advertisePushOptions) caps += ' push-options';
    caps += ` object-format=${this.repo.format} agent=${this.agent}`;
    let sent = false;
    const show = (id: Buffer, name: string): void => {
      this.writer.line(sent ? `${toHex(id)} ${name}` : `${toHex(id)} ${name}\0${caps}`);
      sent = true;
    };
    const seen = new Set<string>();
    for (const ref of this.repo.refs.list('refs/')) {
      const inside = ref.name.startsWith(this.namespace);
      const name = inside ? ref.name.slice(this.namespace.length) : undefined;
      if (this.config.hidden.isHidden(name ?? ref.name, ref.name)) continue;
      const hex = toHex(ref.id);
      if (name === undefined) {
        if (seen.has(hex)) continue;
        seen.add(hex);
        show(ref.id, '.have');
      } else {
        seen.add(hex);
        show(ref.id, name);
      }
    }
    for (const id of alternateRefIds(this.repo)) {
      const hex = toHex(id);
      if (seen.has(hex)) continue;
      seen.add(hex);
      show(id, '.have');
    }
    if (!sent) show(Buffer.alloc(this.hashLength), 'capabilities^{}');
    for (const id of this.repo.shallowCommits()) this.writer.line(`shallow ${toHex(id)}`);
    this.writer.flush();
  }

  /** The next packet; the input's end is git's "the remote end hung up unexpectedly" (its reader here is not gentle on EOF). */
  private async read(): Promise<Packet> {
    await this.writer.send();
    const p = await this.reader.read();
    if (p.kind === 'eof') throw new PackwrightError('CONNECTION_CLOSED', 'the remote end hung up unexpectedly');
    if (p.kind === 'data' && p.line.startsWith('ERR ')) throw new PackwrightError('PROTOCOL_ERROR', `remote error: ${p.line.slice(4)}`);
    return p;
  }

  /** git's read_head_info: `shallow` lines, then `<old> <new> <ref>` commands, the first with the client's capabilities. */
  private async readCommands(): Promise<Command[]> {
    const commands: Command[] = [];
    const H = 2 * this.hashLength;
    for (;;) {
      const p = await this.read();
      if (p.kind !== 'data') break;
      const nul = p.data.indexOf(0);
      const line = nul >= 0 ? p.data.toString('utf8', 0, nul) : p.line;
      if (p.data.length > 8 && line.startsWith('shallow ')) {
        const id = line.length === 8 + H ? tryFromHex(line.slice(8), this.hashLength) : undefined;
        if (id === undefined) throw new PackwrightError('PROTOCOL_ERROR', `protocol error: expected shallow sha, got '${line.slice(8)}'`);
        this.clientShallow.push(id);
        continue;
      }
      if (nul >= 0) this.takeCapabilities(p.data.toString('utf8', nul + 1).replace(/\n$/, ''));
      const m = line.length > 2 * H + 2 && line[H] === ' ' && line[2 * H + 1] === ' ' ? line : undefined;
      const oldId = m?.slice(0, H);
      const newId = m?.slice(H + 1, 2 * H + 1);
      if (m === undefined || oldId === undefined || newId === undefined || tryFromHex(oldId, this.hashLength) === undefined || tryFromHex(newId, this.hashLength) === undefined) {
        throw new PackwrightError('PROTOCOL_ERROR', `protocol error: expected old/new/ref, got '${line}'`);
      }
      commands.push({ ref: m.slice(2 * H + 2), oldId: oldId.toLowerCase(), newId: newId.toLowerCase(), error: undefined, skipUpdate: false, didNotExist: false, shallowRef: false });
    }
    return commands;
  }

  private takeCapabilities(text: string): void {
    const features = parseCapabilities(text);
    if (features.has('report-status')) this.reportStatus = true;
    if (features.has('report-status-v2')) this.reportStatusV2 = true;
    if (features.has('side-band-64k')) this.sideband = LARGE_PACKET_MAX;
    if (features.has('quiet')) this.quiet = true;
    if (this.config.advertiseAtomic && features.has('atomic')) this.atomic = true;
    if (this.config.advertisePushOptions && features.has('push-options')) this.usePushOptions = true;
    const format = features.get('object-format') ?? 'sha1';
    if (format !== this.repo.format) throw new PackwrightError('PROTOCOL_ERROR', `error: unsupported object format '${format}'`);
  }

  private async readPushOptions(): Promise<void> {
    for (;;) {
      const p = await this.read();
      if (p.kind !== 'data') break;
      this.pushOptions.push(p.line);
    }
  }

  /**
   * Receives the pack into a quarantine (git's unpack): the header first, then unpack-objects
   * below the unpack limit, index-pack with a `.keep` otherwise. Returns git's unpack status
   * when it failed (the client reads `unpack <status>`), undefined when it went well.
   */
  private async unpack(commands: readonly Command[]): Promise<string | undefined> {
    let header;
    let rest;
    try {
      ({ header, rest } = await readPackHeader(this.reader.rest()));
    } catch (e) {
      if (isPackwrightError(e)) return e.message;
      throw e;
    }
    const quarantine = Quarantine.create(this.repo);
    this.quarantine = quarantine;
    const indexing = header.count >= this.config.unpackLimit;
    const progress = new Progress(this.sideband !== 0 && !this.quiet && indexing, { write: (text) => this.tell(text) });
    try {
      const received = await receiveObjects(quarantine.repository, header, rest, {
        unpackLimit: this.config.unpackLimit,
        ...(this.config.fsckObjects ? { strict: this.config.fsckMessageTypes, baseDir: this.repo.gitDir, shallow: this.clientShallow } : {}),
        ...(this.config.maxInputSize > 0 ? { maxInputSize: this.config.maxInputSize } : {}),
        keep: `receive-pack ${process.pid} on ${hostname()}`,
        // With no ref to stop at, the connectivity walk would read everything pushed (~1 s on
        // gitoxide's 130k objects): whether the pack links only to its own objects is found on
        // the resolving threads instead. A shallow push's pack names what it leaves out.
        observeSelfContained: this.clientShallow.length === 0 && knownTips(this).length === 0,
        fixThin: this.options.rejectThin !== true,
        threads: this.options.threads,
        signal: this.options.signal,
        onProgress: (phase, done, total) => {
          // git's index-pack here shows "Resolving deltas" only (--show-resolving-progress), and
          // the pack is all in once resolving starts: then the keepalives may begin.
          if (phase === 'resolving' || phase === 'writing') this.startKeepAlive();
          if (phase === 'resolving') progress.update('Resolving deltas', done, total);
        },
        onMessage: (line) => this.tell(`${line}\n`),
      });
      progress.finish();
      if (received.selfContained === true && received.packPath !== undefined) {
        const index = PackIndex.open(received.packPath.replace(/\.pack$/, '.idx'), this.hashLength);
        try {
          for (const c of commands) if (c.newId !== this.zeroId && index.find(this.id(c.newId)) >= 0) this.inSelfContainedPack.add(c.newId);
        } finally {
          index.close();
        }
      }
      if (received.keepPath !== undefined) {
        // It moves with the pack; the name it will have then is the one to remove.
        this.keepPath = received.keepPath.replace(quarantine.path, quarantine.objectsDir);
      }
      quarantine.repository.store.refresh();
      return undefined;
    } catch (e) {
      progress.finish('failed');
      // An abort is the caller's, a TypeError or ReferenceError a bug here: those go up. Anything
      // else (a bad pack, a full disk) failed the unpacking, which the pusher is told as git tells it.
      if (!(e instanceof Error) || isPackwrightError(e, 'ABORTED') || e instanceof TypeError || e instanceof ReferenceError) throw e;
      this.tell(`fatal: ${e.message}\n`);
      return indexing ? 'index-pack abnormal exit' : 'unpack-objects abnormal exit';
    }
  }

  /** git's report / report_v2: `unpack ok` (or the failure), then `ok <ref>` or `ng <ref> <why>` for each command. */
  private report(commands: readonly Command[], unpackStatus: string | undefined): void {
    if (!this.reportStatus && !this.reportStatusV2) return;
    const packets: Buffer[] = [];
    const add = (text: string): void => {
      packets.push(encodePacket(text));
    };
    add(`unpack ${unpackStatus ?? 'ok'}\n`);
    for (const c of commands) add(c.error === undefined ? `ok ${c.ref}\n` : `ng ${c.ref} ${c.error}\n`);
    packets.push(FLUSH_PACKET);
    const body = Buffer.concat(packets);
    if (this.sideband !== 0) this.writer.raw(sidebandFrames(BAND_DATA, body, this.sideband));
    else this.writer.raw(body);
  }
}
