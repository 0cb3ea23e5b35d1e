/**
 * One error class for the whole library, with a stable `code` that callers (and the CLI's exit
 * statuses) can rely on. Messages say what failed and where: a file, an offset, an object id.
 */
export type ErrorCode =
  | 'INVALID_ARGUMENT'
  | 'REPO_NOT_FOUND'
  | 'OBJECT_NOT_FOUND'
  | 'OBJECT_AMBIGUOUS'
  | 'OBJECT_CORRUPT'
  | 'REF_NOT_FOUND'
  /** A path that a tree does not have (`readBlob({ commit, path })`). */
  | 'PATH_NOT_FOUND'
  | 'REF_CORRUPT'
  /** A ref (or packed-refs) is locked by another writer: its `.lock` file exists. */
  | 'REF_LOCKED'
  /** A ref is not what an update expected it to be (compare-and-swap failed). */
  | 'REF_MISMATCH'
  /** A ref name clashes with an existing ref as a file and a directory (refs/heads/a and refs/heads/a/b). */
  | 'REF_CONFLICT'
  | 'DELTA_CORRUPT'
  | 'PACK_SIGNATURE'
  | 'PACK_VERSION'
  | 'PACK_TRUNCATED'
  | 'PACK_CORRUPT'
  | 'PACK_CHECKSUM'
  | 'PACK_JUNK'
  | 'PACK_TOO_LARGE'
  | 'PACK_MISSING'
  | 'PACK_UNRESOLVED_DELTAS'
  | 'PACK_DUPLICATE_OBJECT'
  | 'IDX_VERSION'
  | 'IDX_CORRUPT'
  | 'IDX_CHECKSUM'
  | 'IDX_MISMATCH'
  | 'IDX_MISSING'
  | 'REV_CORRUPT'
  | 'MTIMES_CORRUPT'
  | 'MIDX_CORRUPT'
  | 'BITMAP_CORRUPT'
  | 'COMMIT_GRAPH_CORRUPT'
  | 'LOOSE_CORRUPT'
  | 'IO_ERROR'
  | 'CONFIG_INVALID'
  /** A config file's lock (`<file>.lock`) is held by another writer. */
  | 'CONFIG_LOCKED'
  | 'INDEX_CORRUPT'
  | 'REFLOG_SHORT'
  | 'COLLISION_ATTACK'
  | 'ABORTED'
  | 'WORKER_FAILED'
  /** A git protocol peer sent what the protocol does not allow (a bad pkt-line, an unexpected line). */
  | 'PROTOCOL_ERROR'
  /** A git protocol peer closed the connection in the middle of a message. */
  | 'CONNECTION_CLOSED'
  /** A server refused what a client asked for (a want it does not advertise, a filter it does not allow). */
  | 'REQUEST_REFUSED'
  /** A transport (file, git, ssh, http, https) that GIT_ALLOW_PROTOCOL or protocol.*.allow forbids. */
  | 'TRANSPORT_NOT_ALLOWED';

/** Where an error happened (file, offset, object id) and what caused it. */
export interface PackwrightErrorOptions {
  cause?: unknown | undefined;
  /** The file the error is about, when there is one. */
  file?: string | undefined;
  /** Byte offset inside `file` (or inside the pack stream). */
  offset?: number | undefined;
  /** The object the error is about, in hex (an object the store does not have, say). */
  id?: string | undefined;
}

/**
 * The one error type packwright throws: a stable `code` to branch on, a message in git's words where git
 * has one, and where (file, offset, id) when known.
 */
export class PackwrightError extends Error {
  override readonly name = 'PackwrightError';
  readonly code: ErrorCode;
  readonly file: string | undefined;
  readonly offset: number | undefined;
  /** The object the error is about, in hex, when there is one (OBJECT_NOT_FOUND from the store names it). */
  readonly id: string | undefined;

  constructor(code: ErrorCode, message: string, options: PackwrightErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.file = options.file;
    this.offset = options.offset;
    this.id = options.id;
  }

  /** A plain object that survives `postMessage` (structured clone drops class and `code`). */
  toJSON(): SerializedError {
    return { name: this.name, code: this.code, message: this.message, file: this.file, offset: this.offset, ...(this.id !== undefined ? { id: this.id } : {}) };
  }
}

/** A PackwrightError as plain data (see `serializeError`). */
export interface SerializedError {
  name: string;
  code: string;
  message: string;
  file: string | undefined;
  offset: number | undefined;
  /** The object the error is about, in hex. */
  id?: string | undefined;
  /** The thread's stack, for an error that was not a PackwrightError. */
  stack?: string | undefined;
}

/** Recognises packwright errors by shape, so it also works across realms and module copies. */
export function isPackwrightError(e: unknown, code?: ErrorCode): e is PackwrightError {
  if (typeof e !== 'object' || e === null) return false;
  const candidate = e as { name?: unknown; code?: unknown };
  if (candidate.name !== 'PackwrightError' || typeof candidate.code !== 'string') return false;
  return code === undefined || candidate.code === code;
}

/**
 * Rebuilds an error that crossed a thread boundary as `serializeError` output: always a
 * PackwrightError, so callers see a stable code (WORKER_FAILED for anything that was not one), and
 * the thread's stack survives as the stack of its `cause`.
 */
export function deserializeError(s: SerializedError): PackwrightError {
  const opts: PackwrightErrorOptions = {};
  if (s.file !== undefined) opts.file = s.file;
  if (s.offset !== undefined) opts.offset = s.offset;
  if (s.id !== undefined) opts.id = s.id;
  if (s.stack !== undefined) {
    const cause = new Error(s.message);
    cause.stack = s.stack;
    opts.cause = cause;
  }
  return new PackwrightError(s.name === 'PackwrightError' ? (s.code as ErrorCode) : 'WORKER_FAILED', s.message, opts);
}

/** An error as plain data (code, message, file, offset), to send to another thread or print as JSON. */
export function serializeError(e: unknown): SerializedError {
  if (isPackwrightError(e)) return e.toJSON();
  if (e instanceof Error) return { name: e.name, code: 'WORKER_FAILED', message: `${e.name}: ${e.message}`, file: undefined, offset: undefined, stack: e.stack };
  return { name: 'Error', code: 'WORKER_FAILED', message: String(e), file: undefined, offset: undefined };
}

/**
 * Throws if the signal fired: the library's one abort contract, from every entry point. The error
 * is a PackwrightError with code `ABORTED` ("<what> was aborted") whose `cause` is the signal's
 * reason, never the reason itself. Cheap enough to call once per batch of work.
 */
export function throwIfAborted(signal: AbortSignal | undefined, what = 'the operation'): void {
  if (signal?.aborted) throw abortedError(signal, what);
}

/** The error `throwIfAborted` throws, for callers that must reject rather than throw. */
export function abortedError(signal: AbortSignal, what = 'the operation'): PackwrightError {
  return new PackwrightError('ABORTED', `${what} was aborted`, { cause: signal.reason });
}
