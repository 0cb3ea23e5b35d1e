import { PackwrightError } from '../errors/packwright-error.js';

/** How a finding counts (git's enum fsck_msg_type; `fatal` cannot be demoted, `info` shows as a warning). */
export type FsckSeverity = 'ignore' | 'info' | 'fatal' | 'error' | 'warn';

/**
 * git 2.39's fsck message ids (fsck.h, FOREACH_FSCK_MSG_ID) with their default severity, in
 * git's order. The id a user writes (`fsck.<id>`, `--strict` output) is the camel-cased name.
 */
const MESSAGES = [
  ['NUL_IN_HEADER', 'fatal'], ['UNTERMINATED_HEADER', 'fatal'],
  ['BAD_DATE', 'error'], ['BAD_DATE_OVERFLOW', 'error'], ['BAD_EMAIL', 'error'], ['BAD_NAME', 'error'],
  ['BAD_OBJECT_SHA1', 'error'], ['BAD_PARENT_SHA1', 'error'], ['BAD_TIMEZONE', 'error'], ['BAD_TREE', 'error'],
  ['BAD_TREE_SHA1', 'error'], ['BAD_TYPE', 'error'], ['DUPLICATE_ENTRIES', 'error'], ['MISSING_AUTHOR', 'error'],
  ['MISSING_COMMITTER', 'error'], ['MISSING_EMAIL', 'error'], ['MISSING_NAME_BEFORE_EMAIL', 'error'],
  ['MISSING_OBJECT', 'error'], ['MISSING_SPACE_BEFORE_DATE', 'error'], ['MISSING_SPACE_BEFORE_EMAIL', 'error'],
  ['MISSING_TAG', 'error'], ['MISSING_TAG_ENTRY', 'error'], ['MISSING_TREE', 'error'], ['MISSING_TYPE', 'error'],
  ['MISSING_TYPE_ENTRY', 'error'], ['MULTIPLE_AUTHORS', 'error'], ['TREE_NOT_SORTED', 'error'], ['UNKNOWN_TYPE', 'error'],
  ['ZERO_PADDED_DATE', 'error'], ['GITMODULES_MISSING', 'error'], ['GITMODULES_BLOB', 'error'], ['GITMODULES_LARGE', 'error'],
  ['GITMODULES_NAME', 'error'], ['GITMODULES_SYMLINK', 'error'], ['GITMODULES_URL', 'error'], ['GITMODULES_PATH', 'error'],
  ['GITMODULES_UPDATE', 'error'], ['GITATTRIBUTES_MISSING', 'error'], ['GITATTRIBUTES_LARGE', 'error'],
  ['GITATTRIBUTES_LINE_LENGTH', 'error'], ['GITATTRIBUTES_BLOB', 'error'],
  ['EMPTY_NAME', 'warn'], ['FULL_PATHNAME', 'warn'], ['HAS_DOT', 'warn'], ['HAS_DOTDOT', 'warn'], ['HAS_DOTGIT', 'warn'],
  ['NULL_SHA1', 'warn'], ['ZERO_PADDED_FILEMODE', 'warn'], ['NUL_IN_COMMIT', 'warn'],
  ['BAD_FILEMODE', 'info'], ['GITMODULES_PARSE', 'info'], ['GITIGNORE_SYMLINK', 'info'], ['GITATTRIBUTES_SYMLINK', 'info'],
  ['MAILMAP_SYMLINK', 'info'], ['BAD_TAG_NAME', 'info'], ['MISSING_TAGGER_ENTRY', 'info'],
  ['EXTRA_HEADER_ENTRY', 'ignore'],
] as const satisfies readonly (readonly [string, FsckSeverity])[];

/** The ids of git's fsck messages (`missingEmail`, `badTree`, …). */
export type FsckMessageKey = (typeof MESSAGES)[number][0];

const SEVERITIES: readonly FsckSeverity[] = ['ignore', 'info', 'fatal', 'error', 'warn'];

/** `BAD_DATE_OVERFLOW` -> `badDateOverflow`, as git prints and configures it. */
function camel(key: string): string {
  return key.toLowerCase().replace(/_(.)/g, (_, c: string) => c.toUpperCase());
}

const INDEX = new Map<string, number>(MESSAGES.map(([key], i) => [key, i]));
/** Lower-cased camel ids (git's parse_msg_id compares the downcased, underscore-free form). */
const BY_LOWER = new Map<string, number>(MESSAGES.map(([key], i) => [key.replace(/_/g, '').toLowerCase(), i]));

/**
 * Whether `id` names an fsck message (git's is_valid_msg_type: an unknown one is skipped with a
 * warning); a type other than error, warn or ignore is CONFIG_INVALID, as git dies of it.
 */
export function isValidFsckMessageType(id: string, type: string): boolean {
  if (!BY_LOWER.has(id.toLowerCase())) return false;
  if (type !== 'error' && type !== 'warn' && type !== 'ignore') throw new PackwrightError('CONFIG_INVALID', `Unknown fsck message type: '${type}'`);
  return true;
}

/** The camel-cased id of a message (`badTimezone`). */
export function fsckMessageId(key: FsckMessageKey): string {
  return camel(key);
}

/**
 * The severity of every fsck message, as one repository's configuration and options set it:
 * defaults, `--strict` (warnings become errors), `fsck.<id>` / `receive.fsck.<id>`-style settings,
 * and a skip list of object ids that are never reported. Plain data (`toJSON`/`from`) so worker
 * threads check objects with the same rules.
 */
export class FsckRules {
  private constructor(
    private readonly levels: Uint8Array,
    /** Hex ids never reported (git's skiplist). */
    readonly skip: ReadonlySet<string>,
    /** `--strict`: also the checks only strict mode makes (a 100664 file mode is bad). */
    readonly strict: boolean,
  ) {}

  /**
   * git's default severity of every fsck message (`strict` turns the warnings that `--strict` makes errors
   * into errors).
   */
  static defaults(strict = false): FsckRules {
    const levels = new Uint8Array(MESSAGES.length);
    MESSAGES.forEach(([, s], i) => { levels[i] = SEVERITIES.indexOf(strict && s === 'warn' ? 'error' : s); });
    return new FsckRules(levels, new Set(), strict);
  }

  /**
   * Every message ignored but the fatal ones (an object that does not parse): how git's index-pack
   * looks at objects it only walks for their links (--check-self-contained-and-connected, without
   * --strict or --fsck-objects).
   */
  static parseOnly(): FsckRules {
    const levels = new Uint8Array(MESSAGES.length);
    MESSAGES.forEach(([, s], i) => { levels[i] = SEVERITIES.indexOf(s === 'fatal' ? 'fatal' : 'ignore'); });
    return new FsckRules(levels, new Set(), false);
  }

  /** Rules made from `from()`'s input in another thread. */
  static from(data: { levels: Uint8Array; skip: string[]; strict: boolean }): FsckRules {
    return new FsckRules(Uint8Array.from(data.levels), new Set(data.skip), data.strict);
  }

  /** The rules as plain data, to send to a worker thread. */
  toJSON(): { levels: Uint8Array; skip: string[]; strict: boolean } {
    return { levels: this.levels, skip: [...this.skip], strict: this.strict };
  }

  /** The severity (error, warning, ignore) of a message under these rules. */
  severity(key: FsckMessageKey): FsckSeverity {
    return SEVERITIES[this.levels[INDEX.get(key) as number] as number] as FsckSeverity;
  }

  /**
   * Sets one message's severity from its id as a user spells it (case-insensitive, git's
   * fsck_set_msg_type); throws CONFIG_INVALID for an unknown id or type, or for demoting a fatal one.
   */
  set(id: string, type: string): this {
    const i = BY_LOWER.get(id.toLowerCase());
    if (i === undefined) throw new PackwrightError('CONFIG_INVALID', `Unhandled message id: ${id}`);
    if (type !== 'error' && type !== 'warn' && type !== 'ignore') throw new PackwrightError('CONFIG_INVALID', `Unknown fsck message type: '${type}'`);
    if (type !== 'error' && MESSAGES[i]?.[1] === 'fatal') throw new PackwrightError('CONFIG_INVALID', `Cannot demote ${id} to ${type}`);
    this.levels[i] = SEVERITIES.indexOf(type);
    return this;
  }

  /** Adds object ids (hex, one per line; `#` comments and blank lines skipped) to the skip list (git's oidset_parse_file). */
  addSkipList(text: string, file: string, hexLength: number): this {
    const skip = this.skip as Set<string>;
    for (const raw of text.split('\n')) {
      const line = raw.replace(/#.*/, '').trim();
      if (line === '') continue;
      if (line.length !== hexLength || !/^[0-9a-fA-F]+$/.test(line)) throw new PackwrightError('CONFIG_INVALID', `invalid object name: ${line} in ${file}`, { file });
      skip.add(line.toLowerCase());
    }
    return this;
  }
}
