import type { PackSlots } from './pack-slots.js';
import { isPackwrightError, PackwrightError } from '../errors/packwright-error.js';
import { tryFromHex, toHex } from '../hash/hex.js';
import { OBJ_COMMIT } from '../objects/object-type.js';
import type { Repository } from '../repo/repository.js';
import { createPack } from '../create/create-pack.js';
import { packSettings } from '../create/pack-settings.js';
import { PackProgress } from '../create/pack-progress.js';
import { normalizeFilterSpec, parseObjectFilter, type ObjectFilter } from '../walk/object-filter.js';
import { CommitDag } from '../walk/commit-dag.js';
import { walkCommits } from '../walk/walk-objects.js';
import type { RevTip } from '../walk/rev-args.js';
import { DWIM_RULES } from '../refs/resolve-revision.js';
import { advertisedAgent } from '../protocol/capabilities.js';
import { PacketReader, PacketWriter, LARGE_PACKET_MAX, type ByteSink, type Packet } from '../protocol/pkt-line.js';
import { BAND_DATA, BAND_ERROR, BAND_PROGRESS, framedLength, sidebandFrames, sidebandFramesInto } from '../protocol/sideband.js';
import { advertisedRefs, HIDDEN_REF, namespacePrefix, OUR_REF } from './advertised-refs.js';
import { shallowCommitsAtDepth, shallowCommitsByHistory, NOT_SHALLOW } from './shallow-boundary.js';
import { ALLOW_ANY_SHA1, ALLOW_REACHABLE_SHA1, ALLOW_TIP_SHA1, uploadPackConfig, type UploadPackConfig } from './upload-pack-config.js';

/** Marks of upload-pack.c on the objects of a conversation (OUR_REF, HIDDEN_REF: advertised-refs.ts; SHALLOW, NOT_SHALLOW: shallow-boundary.ts). */
export const THEY_HAVE = 1 << 0;
export const WANTED = 1 << 2;
export const COMMON_KNOWN = 1 << 3;
export const CLIENT_SHALLOW = 1 << 6;
const RESULT = 1 << 8;

/** git's INFINITE_DEPTH: what `--unshallow` asks for. */
export const INFINITE_DEPTH = 0x7fffffff;

/** The options every upload-pack conversation shares (see uploadPack). */
export interface UploadSessionOptions {
  input: AsyncIterable<Uint8Array>;
  output: ByteSink;
  /**
   * The output is done with each chunk once it returns, or once the promise it returns settles (it
   * wrote or copied the bytes): the pack is then framed into buffers used again. A stream's
   * write keeps what it is given, so leave this unset for one.
   */
  reusableOutput?: boolean | undefined;
  /** Where errors are written for the operator (git's upload-pack writes them to its stderr). */
  stderr?: ((text: string) => void) | undefined;
  statelessRpc?: boolean | undefined;
  /**
   * git's --timeout: seconds a client may leave the conversation idle (no request arriving, no
   * answer taken) before it fails with CONNECTION_CLOSED ("timed out"); a client gets no progress
   * without a side band then (git's daemon mode).
   */
  timeout?: number | undefined;
  threads?: number | undefined;
  /** Shared by the requests of one server: the pack waits for a slot (see PackSlots). */
  packSlots?: PackSlots | undefined;
  signal?: AbortSignal | undefined;
  agent?: string | undefined;
}

/**
 * One upload-pack conversation's state (git's struct upload_pack_data): what the client wants and
 * has, its shallow boundary and capabilities, the marks on objects; and the steps both protocol
 * versions share: reading requests, the shallow lists, the common-commit check, the pack.
 */
export class UploadSession {
  readonly dag: CommitDag;
  readonly config: UploadPackConfig;
  readonly reader: PacketReader;
  readonly writer: PacketWriter;
  readonly serverShallow: Buffer[];
  private readonly serverGrafts = new Set<number>();
  /** Wanted objects (git's want_obj), haves known here (have_obj), extra uninteresting tips for unshallowed commits. */
  readonly wants: number[] = [];
  readonly haves: number[] = [];
  readonly extraEdges: number[] = [];
  /** The client's shallow commits (git's shallows) and every commit registered shallow for the pack. */
  readonly clientShallows: number[] = [];
  private readonly registeredShallow = new Set<number>();
  depth = 0;
  deepenSince: number | undefined;
  readonly deepenNot: string[] = [];
  deepenRevList = false;
  deepenRelative = false;
  filter: ObjectFilter | undefined;
  /** The filter as the client spelled it (what a pack-objects hook is given). */
  filterSpec: string | undefined;
  thinPack = false;
  ofsDelta = false;
  noProgress = false;
  includeTag = false;
  /** 0 without a side band, else the packet size (1000 or 65520). */
  sideband = 0;
  oldestHave = 0;
  shallowCount = 0;
  private tail: Promise<void> = Promise.resolve();
  private lastOutput = Date.now();
  /** Aborts the pack when the client is idle past `timeout` (git's alarm()), or the caller's signal does. */
  private readonly idle = new AbortController();
  readonly signal: AbortSignal;
  private idleTimer: NodeJS.Timeout | undefined;

  constructor(readonly repo: Repository, readonly options: UploadSessionOptions) {
    this.config = uploadPackConfig(repo.config, repo.env);
    this.serverShallow = repo.shallowCommits();
    this.dag = new CommitDag(repo.objects, { grafts: this.serverShallow });
    for (const id of this.serverShallow) this.serverGrafts.add(this.dag.intern(id));
    this.reader = new PacketReader(options.input);
    // Every write goes through one chain: progress written between pack chunks stays in order,
    // and a slow client holds the pack back (backpressure).
    this.writer = new PacketWriter((chunk) => this.emit(chunk));
    this.signal = options.signal !== undefined ? AbortSignal.any([options.signal, this.idle.signal]) : this.idle.signal;
  }

  /** Starts (again) the wait for the client to do something (git's reset_timeout). */
  private resetTimeout(): void {
    const seconds = this.options.timeout ?? 0;
    if (seconds <= 0) return;
    if (this.idleTimer !== undefined) clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => this.idle.abort(new PackwrightError('CONNECTION_CLOSED', `the client was idle for ${seconds} seconds: timed out`)), seconds * 1000);
  }

  /** Ends the wait for an idle client (the conversation is over). */
  stopTimeout(): void {
    if (this.idleTimer !== undefined) clearTimeout(this.idleTimer);
  }

  get hashLength(): number {
    return this.repo.objects.hashLength;
  }

  get agent(): string {
    return advertisedAgent(this.repo.env, this.options.agent);
  }

  get isServerShallow(): boolean {
    return this.serverShallow.length > 0;
  }

  /**
   * Forgets the last request (git's upload_pack_v2 starts each fetch with fresh data and cleared
   * object flags): a v2 connection may fetch again, for the tags that follow, say.
   */
  reset(): void {
    for (const list of [this.wants, this.haves, this.extraEdges, this.clientShallows, this.deepenNot]) list.length = 0;
    this.registeredShallow.clear();
    this.depth = 0;
    this.deepenSince = undefined;
    this.deepenRevList = false;
    this.deepenRelative = false;
    this.filter = undefined;
    this.filterSpec = undefined;
    this.thinPack = false;
    this.ofsDelta = false;
    this.noProgress = false;
    this.includeTag = false;
    this.sideband = 0;
    this.oldestHave = 0;
    this.shallowCount = 0;
    this.writer.sideband = false;
    this.dag.clear(0xffffffff);
  }

  /** Hands `chunk` to the output after everything before it. */
  emit(chunk: Buffer): Promise<void> {
    this.lastOutput = Date.now();
    const next = this.tail.then(async () => {
      await this.options.output(chunk);
      this.resetTimeout();
    });
    this.tail = next;
    return next;
  }

  /** Framing buffers the output is done with (with `reusableOutput`). */
  private readonly spareFrames: Buffer[] = [];

  /**
   * Sends pack data on band 1 (or bare, without a side band). An output that is done with each
   * chunk as it settles (`reusableOutput`: a descriptor written at once) gets it framed in a
   * buffer used again for a later chunk; a stream may keep what it is given, so it gets fresh ones.
   */
  private emitPackData(chunk: Buffer, sideband: number): Promise<void> {
    if (sideband === 0 || this.options.reusableOutput !== true) return this.emit(sidebandFrames(BAND_DATA, chunk, sideband));
    const need = framedLength(chunk.length, sideband);
    let frame = this.spareFrames.pop();
    if (frame === undefined || frame.length < need) frame = Buffer.allocUnsafeSlow(Math.max(need, frame?.length ?? 0));
    const reused = frame;
    const sent = this.emit(sidebandFramesInto(reused, BAND_DATA, chunk, sideband));
    sent.then(() => this.spareFrames.push(reused), () => {});
    return sent;
  }

  /** Waits until everything written has been taken by the output. */
  async drain(): Promise<void> {
    await this.writer.send();
    await this.tail;
  }

  /**
   * The next packet, after sending what is written (the client waits for it). `gentle`: the end
   * of input is an answer; otherwise it is git's "the remote end hung up unexpectedly". A line
   * "ERR <text>" from the client is its error (git's PACKET_READ_DIE_ON_ERR_PACKET).
   */
  async read(gentle = false): Promise<Packet> {
    await this.writer.send();
    this.resetTimeout();
    const p = await this.untilIdle(this.reader.read());
    if (p.kind === 'eof' && !gentle) throw new PackwrightError('CONNECTION_CLOSED', 'the remote end hung up unexpectedly');
    if (p.kind === 'data' && p.line.startsWith('ERR ')) throw new PackwrightError('PROTOCOL_ERROR', `remote error: ${p.line.slice(4)}`);
    return p;
  }

  /** The next packet, left to be read (after sending what is written). */
  async peek(): Promise<Packet> {
    await this.writer.send();
    this.resetTimeout();
    return this.untilIdle(this.reader.peek());
  }

  /** `work`, or the timeout's error if the client stays idle (or the caller aborts) first. */
  private untilIdle<T>(work: Promise<T>): Promise<T> {
    const signal = this.signal;
    if (signal.aborted) return Promise.reject(signal.reason as Error);
    return new Promise<T>((resolve, reject) => {
      const stop = (): void => reject(signal.reason as Error);
      signal.addEventListener('abort', stop, { once: true });
      work.then(resolve, reject).finally(() => signal.removeEventListener('abort', stop));
    });
  }

  /** Tells the client (an ERR line, or band 3) and fails with git's words (send_err_and_die). */
  async refuse(message: string, fatal = message): Promise<never> {
    this.writer.error(message);
    await this.drain().catch(() => {});
    throw new PackwrightError('REQUEST_REFUSED', fatal);
  }

  /** An id in hex, or undefined. */
  parseId(hex: string): Buffer | undefined {
    return hex.length === 2 * this.hashLength ? tryFromHex(hex, this.hashLength) : undefined;
  }

  /** Marks the objects of every ref OUR_REF or HIDDEN_REF (git's check_ref over HEAD and refs/). */
  markRefs(): void {
    advertisedRefs(this.repo.refs, this.config.hidden, this.dag, { peel: false, namespace: this.namespace });
  }

  /** The refs of GIT_NAMESPACE are all the client sees (see namespacePrefix). */
  get namespace(): string {
    return namespacePrefix(this.repo.env['GIT_NAMESPACE']);
  }

  /** Whether a client may want `n` without further checks (git's is_our_ref). */
  isOurRef(n: number): boolean {
    const hiddenToo = (this.config.allowUnadvertised & (ALLOW_TIP_SHA1 | ALLOW_REACHABLE_SHA1)) !== 0;
    return this.dag.is(n, OUR_REF | (hiddenToo ? HIDDEN_REF : 0));
  }

  allowsAny(): boolean {
    return (this.config.allowUnadvertised & ALLOW_ANY_SHA1) === ALLOW_ANY_SHA1;
  }

  /** Adds a want once (git's WANTED mark). */
  want(n: number): void {
    if (this.dag.is(n, WANTED)) return;
    this.dag.mark(n, WANTED);
    this.wants.push(n);
  }

  /** `shallow <id>` (git's process_shallow): a client's shallow commit; unknown ones are passed over. */
  processShallow(line: string): boolean {
    if (!line.startsWith('shallow ')) return false;
    const id = this.parseId(line.slice(8));
    if (id === undefined) throw new PackwrightError('PROTOCOL_ERROR', `invalid shallow line: ${line}`);
    const n = this.dag.intern(id);
    const type = this.dag.type(n);
    if (type === 0) return true;
    if (type !== OBJ_COMMIT) throw new PackwrightError('PROTOCOL_ERROR', `invalid shallow object ${toHex(id)}`);
    if (!this.dag.is(n, CLIENT_SHALLOW)) {
      this.dag.mark(n, CLIENT_SHALLOW);
      this.clientShallows.push(n);
    }
    return true;
  }

  /** `deepen <n>`, `deepen-since <time>`, `deepen-not <ref>` (git's process_deepen*). */
  processDeepen(line: string): boolean {
    if (line.startsWith('deepen ')) {
      const depth = parseCNumber(line.slice(7));
      if (depth === undefined || depth <= 0 || depth > 0x7fffffff) throw new PackwrightError('PROTOCOL_ERROR', `Invalid deepen: ${line}`);
      this.depth = depth;
      return true;
    }
    if (line.startsWith('deepen-since ')) {
      const since = parseCNumber(line.slice(13));
      if (since === undefined || since === -1) throw new PackwrightError('PROTOCOL_ERROR', `Invalid deepen-since: ${line}`);
      this.deepenSince = since;
      this.deepenRevList = true;
      return true;
    }
    if (line.startsWith('deepen-not ')) {
      const name = line.slice(11);
      // git's expand_ref: exactly one ref by the revision rules (refs/heads/<name>, refs/tags/<name>, ...).
      const matches = DWIM_RULES.map((rule) => rule.replace('%s', name)).filter((full) => this.repo.refs.resolve(full) !== undefined);
      if (matches.length !== 1) throw new PackwrightError('REQUEST_REFUSED', `git upload-pack: ambiguous deepen-not: ${line}`);
      this.deepenNot.push(matches[0] as string);
      this.deepenRevList = true;
      return true;
    }
    return false;
  }

  /** `filter <spec>`: parsed, then checked against uploadpackfilter.* (git's die_if_using_banned_filter). */
  async processFilter(spec: string): Promise<void> {
    if (this.filter !== undefined) throw new PackwrightError('PROTOCOL_ERROR', 'multiple filter-specs cannot be combined');
    const filter = parseObjectFilter(spec);
    const check = async (f: ObjectFilter): Promise<void> => {
      const name = f.kind;
      const allowed = this.config.allowedFilters.get(name) ?? this.config.filterFallback;
      if (!allowed) await this.refuse(`filter '${name}' not supported`);
      if (f.kind === 'tree' && f.depth > this.config.treeFilterMaxDepth) {
        await this.refuse(`tree filter allows max depth ${this.config.treeFilterMaxDepth}, but got ${f.depth}`);
      }
      if (f.kind === 'combine') for (const sub of f.filters) await check(sub);
    };
    await check(filter);
    this.filter = filter;
    this.filterSpec = normalizeFilterSpec(spec);
  }

  /** A `have` the client sent: noted if we have it (git's got_oid/do_got_oid); false when we do not. */
  gotHave(id: Buffer): boolean {
    const n = this.dag.intern(id);
    if (!this.dag.has(n)) return false;
    let knew = false;
    if (this.dag.type(n) === OBJ_COMMIT) {
      if (this.dag.is(n, THEY_HAVE)) knew = true;
      else this.dag.mark(n, THEY_HAVE);
      const date = this.dag.date(n);
      if (this.oldestHave === 0 || date < this.oldestHave) this.oldestHave = date;
      for (const p of this.dag.parents(n)) this.dag.mark(p, THEY_HAVE);
    }
    if (!knew) this.haves.push(n);
    return true;
  }

  /**
   * Whether every want reaches something the client has (git's ok_to_give_up, through
   * can_all_from_reach_with_flag): then a pack can be made without more haves. Commits older
   * than the oldest have end a search.
   */
  okToGiveUp(): boolean {
    if (this.haves.length === 0) return false;
    const dag = this.dag;
    const starts: number[] = [];
    const touched: number[] = [];
    let result = true;
    for (const w of this.wants) {
      if (dag.is(w, COMMON_KNOWN)) continue;
      const c = dag.peel(w);
      if (c < 0 || dag.type(c) !== OBJ_COMMIT) {
        dag.mark(w, COMMON_KNOWN);
        touched.push(w);
        continue;
      }
      starts.push(c);
    }
    for (const start of starts) {
      dag.mark(start, COMMON_KNOWN);
      touched.push(start);
      const stack = [start];
      while (stack.length > 0) {
        const top = stack[stack.length - 1] as number;
        if (dag.is(top, THEY_HAVE | RESULT)) {
          stack.pop();
          if (stack.length > 0) dag.mark(stack[stack.length - 1] as number, RESULT);
          continue;
        }
        let pushed = false;
        for (const p of dag.parents(top)) {
          if (dag.is(p, THEY_HAVE | RESULT)) dag.mark(top, RESULT);
          if (dag.is(p, COMMON_KNOWN)) continue;
          dag.mark(p, COMMON_KNOWN);
          touched.push(p);
          if (dag.date(p) < this.oldestHave) continue;
          stack.push(p);
          pushed = true;
          break;
        }
        if (!pushed) stack.pop();
      }
      if (!dag.is(start, THEY_HAVE | RESULT)) {
        result = false;
        break;
      }
    }
    for (const n of touched) dag.unmark(n, COMMON_KNOWN | RESULT);
    for (const w of this.wants) dag.unmark(w, COMMON_KNOWN);
    return result;
  }

  /**
   * Wants of ids no advertised ref names (git's check_non_tip): allowed over a stateless
   * connection or with uploadpack.allowReachableSHA1InWant when our refs reach them all; else
   * the first such want is refused: "upload-pack: not our ref <id>".
   */
  async checkNonTip(): Promise<void> {
    const reachableAllowed = this.options.statelessRpc === true || (this.config.allowUnadvertised & ALLOW_REACHABLE_SHA1) !== 0;
    if (reachableAllowed && !this.hasUnreachable(this.wants)) return;
    for (const w of this.wants) {
      if (!this.isOurRef(w)) await this.refuse(`upload-pack: not our ref ${this.dag.hex(w)}`, `git upload-pack: not our ref ${this.dag.hex(w)}`);
    }
  }

  /** Whether some of `objects` that are not refs' own are commits our refs do not reach (git's has_unreachable). */
  private hasUnreachable(objects: readonly number[]): boolean {
    const tips: RevTip[] = [];
    for (let n = 0; n < this.dag.table.count; n++) if (this.isOurRef(n)) tips.push({ id: this.dag.id(n), uninteresting: true, name: '' });
    let any = false;
    for (const n of objects) {
      if (this.isOurRef(n)) continue;
      // A tree or blob: git's `rev-list` (without --objects) shows nothing for it either.
      if (this.dag.type(n) !== OBJ_COMMIT) continue;
      tips.push({ id: this.dag.id(n), uninteresting: false, name: '' });
      any = true;
    }
    if (!any) return false;
    try {
      return walkCommits(this.repo.objects, tips, {}).commits.length > 0;
    } catch {
      return true;
    }
  }

  /** The client's shallow commits that our refs reach (git's get_reachable_list), for deepen-relative. */
  private reachableShallows(): number[] {
    const reachable: number[] = [];
    const tips: RevTip[] = [];
    for (let n = 0; n < this.dag.table.count; n++) if (this.isOurRef(n)) tips.push({ id: this.dag.id(n), uninteresting: true, name: '' });
    const candidates: number[] = [];
    for (const s of this.clientShallows) {
      if (this.isOurRef(s)) reachable.push(s);
      else {
        candidates.push(s);
        tips.push({ id: this.dag.id(s), uninteresting: false, name: '' });
      }
    }
    if (candidates.length === 0) return reachable;
    const walk = walkCommits(this.repo.objects, tips, {});
    const unreached = new Set<string>(walk.commits.map((n) => toHex(walk.table.id(n))));
    for (const s of candidates) if (!unreached.has(this.dag.hex(s))) reachable.push(s);
    return reachable;
  }

  /** `shallow <id>` for each new boundary commit (git's send_shallow), registered for the pack. */
  private sendShallow(result: readonly number[]): void {
    for (const n of result) {
      if (this.dag.is(n, CLIENT_SHALLOW | NOT_SHALLOW)) continue;
      this.writer.line(`shallow ${this.dag.hex(n)}`);
      this.registeredShallow.add(n);
      this.shallowCount++;
    }
  }

  /**
   * `unshallow <id>` for each client shallow commit the new boundary is below (git's
   * send_unshallow): its parents become wants, it an uninteresting tip; every client shallow
   * commit is registered shallow, so the pack does not go below what the client has.
   */
  private sendUnshallow(): void {
    for (const n of this.clientShallows) {
      if (this.dag.is(n, NOT_SHALLOW)) {
        this.writer.line(`unshallow ${this.dag.hex(n)}`);
        this.dag.unmark(n, CLIENT_SHALLOW);
        for (const p of this.dag.parents(n)) this.wants.push(p);
        this.extraEdges.push(n);
      }
      this.registeredShallow.add(n);
    }
  }

  /** git's deepen(): the boundary `depth` commits down (from the wants, or from the client's boundary with deepen-relative). */
  deepen(depth: number): void {
    const isGraft = (n: number): boolean => this.serverGrafts.has(n);
    if (depth === INFINITE_DEPTH && !this.isServerShallow) {
      for (const n of this.clientShallows) this.dag.mark(n, NOT_SHALLOW);
    } else if (this.deepenRelative) {
      this.markRefs();
      this.sendShallow(shallowCommitsAtDepth(this.dag, this.reachableShallows(), depth + 1, isGraft));
    } else {
      this.sendShallow(shallowCommitsAtDepth(this.dag, this.wants, depth, isGraft));
    }
    this.sendUnshallow();
  }

  /** The shallow lines for the client, if it asked to deepen (git's send_shallow_list); true when any were due. */
  sendShallowList(): boolean {
    let sent = false;
    if (this.depth > 0 && this.deepenRevList) throw new PackwrightError('PROTOCOL_ERROR', 'git upload-pack: deepen and deepen-since (or deepen-not) cannot be used together');
    if (this.depth > 0) {
      this.deepen(this.depth);
      sent = true;
    } else if (this.deepenRevList) {
      const exclude = this.deepenNot.map((name) => this.dag.intern(this.repo.refs.resolve(name) as Buffer));
      this.sendShallow(shallowCommitsByHistory(this.dag, this.wants, this.deepenSince, exclude));
      this.sendUnshallow();
      sent = true;
    } else {
      for (const n of this.clientShallows) this.registeredShallow.add(n);
    }
    this.shallowCount += this.clientShallows.length;
    return sent;
  }

  /**
   * Makes the pack and sends it (git's create_pack_file): the wants, less what the haves and the
   * unshallowed commits reach, within the shallow boundary and the filter; data on band 1 and
   * progress on band 2 with a side band (then a flush), else the bytes as they are and progress
   * to stderr. A failure tells the client on band 3, as git's "aborting due to possible repository
   * corruption on the remote side.", and rethrows.
   */
  async sendPack(): Promise<void> {
    const sideband = this.sideband;
    const progressEnabled = !this.noProgress;
    const progressOut = {
      write: (text: string): void => {
        if (sideband !== 0) this.emit(sidebandFrames(BAND_PROGRESS, Buffer.from(text, 'utf8'), sideband)).catch(() => {});
        else this.options.stderr?.(text);
      },
    };
    const threads = this.options.threads;
    const settings = packSettings(this.repo.config, this.repo.env);
    // git's upload-pack runs pack-objects with --stdout --progress: no "Writing objects".
    const meter = new PackProgress(progressOut, progressEnabled, threads ?? settings.threads ?? 1, false);
    const tips: RevTip[] = [];
    for (const n of this.wants) tips.push({ id: this.dag.id(n), uninteresting: false, name: '' });
    for (const n of this.haves) tips.push({ id: this.dag.id(n), uninteresting: true, name: '' });
    for (const n of this.extraEdges) tips.push({ id: this.dag.id(n), uninteresting: true, name: '' });
    const shallow = [...this.serverShallow];
    for (const n of this.registeredShallow) shallow.push(this.dag.id(n));
    await this.writer.send();
    // uploadpack.packObjectsHook, from protected configuration only: a program that makes the pack instead.
    const hook = this.repo.protectedConfig.get('uploadpack.packobjectshook');
    if (typeof hook === 'string' && hook !== '') {
      await this.sendPackFromHook(hook, progressOut);
      return;
    }
    const keepAlive = this.config.keepAlive > 0 && sideband !== 0
      ? setInterval(() => {
        // Silence past uploadpack.keepAlive: an empty packet on band 1 tells the client we are still at it.
        if (Date.now() - this.lastOutput >= this.config.keepAlive * 1000) this.emit(Buffer.from('0005\u0001', 'latin1')).catch(() => {});
      }, 1000)
      : undefined;
    let release: (() => void) | undefined;
    try {
      release = await this.options.packSlots?.acquire(this.signal);
      const result = await createPack({
        ...settings,
        ...(threads !== undefined ? { threads } : {}),
        objects: this.repo.objects,
        refs: this.repo.refs,
        tips,
        thin: this.thinPack,
        deltaBaseOffset: this.ofsDelta,
        includeTag: this.includeTag,
        ...(this.filter !== undefined ? { filter: this.filter } : {}),
        shallow,
        // git passes --shallow to pack-objects when it registered a boundary for this client.
        shallowClient: this.shallowCount > 0,
        useBitmapIndex: this.repo.config.getBool('pack.useBitmaps') ?? true,
        sink: (chunk) => this.emitPackData(chunk, sideband),
        // Framing copies the pack's bytes, so its buffers can be reused; without a side band the chunk itself goes out.
        reuseChunks: sideband !== 0,
        signal: this.signal,
        onProgress: meter.onProgress,
      });
      release?.();
      meter.finish();
      meter.total(result.stats);
      if (sideband !== 0) this.writer.flush();
      await this.drain();
    } catch (e) {
      if (isPackwrightError(e, 'ABORTED')) throw e;
      // git's words: pack-objects' own error, then upload-pack's about it, and the client told on band 3.
      const message = 'aborting due to possible repository corruption on the remote side.';
      this.options.stderr?.(`fatal: ${e instanceof Error ? e.message : String(e)}\nerror: git upload-pack: git-pack-objects died with error.\n`);
      if (sideband !== 0) await this.emit(sidebandFrames(BAND_ERROR, Buffer.from(message), sideband)).catch(() => {});
      else this.options.stderr?.(`${message}\n`);
      throw new PackwrightError(isPackwrightError(e) ? e.code : 'WORKER_FAILED', `git upload-pack: ${message}`, { cause: e });
    } finally {
      release?.();
      if (keepAlive !== undefined) clearInterval(keepAlive);
    }
  }

  /**
   * The pack from uploadpack.packObjectsHook, run as git runs it: through the shell, with `git
   * pack-objects` and upload-pack's arguments after it, upload-pack's revision list on its stdin,
   * its stdout sent as the pack and its stderr as progress.
   */
  private async sendPackFromHook(hook: string, progress: { write(text: string): void }): Promise<void> {
    const args = this.shallowCount > 0 ? ['--shallow-file', ''] : [];
    args.push('pack-objects', '--revs');
    if (this.thinPack) args.push('--thin');
    args.push('--stdout');
    if (this.shallowCount > 0) args.push('--shallow');
    if (!this.noProgress) args.push('--progress');
    if (this.ofsDelta) args.push('--delta-base-offset');
    if (this.includeTag) args.push('--include-tag');
    if (this.filterSpec !== undefined) args.push(`--filter=${this.filterSpec}`);
    const lines: string[] = [];
    if (this.shallowCount > 0) {
      for (const id of this.serverShallow) lines.push(`--shallow ${toHex(id)}`);
      for (const n of this.registeredShallow) lines.push(`--shallow ${this.dag.hex(n)}`);
    }
    for (const n of this.wants) lines.push(this.dag.hex(n));
    lines.push('--not');
    for (const n of [...this.haves, ...this.extraEdges]) lines.push(this.dag.hex(n));
    const { spawn } = await import('node:child_process');
    const child = spawn('sh', ['-c', `${hook} "$@"`, hook, 'git', ...args], {
      cwd: this.repo.gitDir, env: { ...this.repo.env, GIT_DIR: '.' }, stdio: ['pipe', 'pipe', 'pipe'],
    });
    const abort = (): void => void child.kill();
    this.signal.addEventListener('abort', abort, { once: true });
    const exited = new Promise<number>((resolve) => child.once('close', (code) => resolve(code ?? 128)));
    child.stdin.on('error', () => {});
    child.stdin.end(`${lines.join('\n')}\n\n`);
    child.stderr.on('data', (chunk: Buffer) => progress.write(chunk.toString('utf8')));
    try {
      for await (const chunk of child.stdout) await this.emit(sidebandFrames(BAND_DATA, chunk as Buffer, this.sideband));
      if ((await exited) !== 0) throw new PackwrightError('WORKER_FAILED', 'git upload-pack: git-pack-objects died with error.');
      if (this.sideband !== 0) this.writer.flush();
      await this.drain();
    } finally {
      this.signal.removeEventListener('abort', abort);
    }
  }

  /** The side band a client asked for by capability. */
  static sidebandSize(features: ReadonlyMap<string, string>): number {
    if (features.has('side-band-64k')) return LARGE_PACKET_MAX;
    if (features.has('side-band')) return 1000;
    return 0;
  }
}

/** A number as C's strtol/strtoumax read it with base 0 (0x hex, 0 octal, else decimal), the whole text; undefined otherwise. */
function parseCNumber(text: string): number | undefined {
  const m = /^[ \t\n\v\f\r]*([+-]?)(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)$/.exec(text);
  if (m === null) return undefined;
  const digits = m[2] as string;
  const value = /^0[0-7]+$/.test(digits) ? parseInt(digits.slice(1), 8) : Number(digits);
  return m[1] === '-' ? -value : value;
}
