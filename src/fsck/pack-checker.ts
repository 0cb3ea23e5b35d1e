import { ObjectTable, type SharedTableParts } from '../walk/object-table.js';
import { hashLength } from '../hash/object-format.js';
import { checkObject, commitOrTagParseError, objectLinks, verifyHeaders, type SpecialBlobs, type TreeLinks } from './check-object.js';
import { FsckRules, fsckMessageId, type FsckMessageKey } from './fsck-messages.js';
import { OBJ_COMMIT, OBJ_TAG, OBJ_TREE } from '../objects/object-type.js';
import { IncrementalTreeLinks } from './incremental-tree-links.js';
import { registerPackVisitor, type PackVisitor } from '../resolve/pack-visitor.js';
import type { PackView } from '../resolve/pack-visitor.js';
import { forEachRecord, LinkRecorder, type LinkRecords } from './link-records.js';

/** One finding of the object checks, for the object at `k` in the pack (or in a list of loose ones). */
export interface ObjectFinding {
  k: number;
  type: number;
  severity: 'error' | 'warn';
  /** git's message id, camel-cased (`badTimezone`). */
  msgId: string;
  /** The message as git prints it after the id (`invalid author/committer line - bad time zone`). */
  message: string;
}

/**
 * What checking a set of objects found: problems by object, and the links and `.gitmodules` blobs still to
 * check.
 */
export interface CheckFindings {
  links: LinkRecords;
  findings: ObjectFinding[];
  /** Trees whose entries do not decode: their index and git's words (the walk prints them). */
  treeErrors: [number, string][];
  /**
   * Commits and tags read for their links only whose pointer line does not parse: their index
   * and git's words before the id (parse_commit_buffer's error; a tag's has none, ''). git's
   * index-pack dies of them ("invalid commit"). The id is the caller's to add: it may not be
   * known yet when the object is read.
   */
  parseErrors: [number, string][];
  /** Hex ids of blobs trees name `.gitmodules` / `.gitattributes`. */
  gitmodules: string[];
  gitattributes: string[];
  /** For `--tags`: each tag's index and its `tag` line. */
  tagNames: [number, string][];
}

export interface PackCheckOptions {
  rules: ReturnType<FsckRules['toJSON']>;
  /** The objects links are numbered by; without it, every link is an id of `LinkRecords.unknown`. */
  table?: SharedTableParts | undefined;
  /** Keep tag names (`--tags`). */
  tagNames: boolean;
  /**
   * The objects are walked for their links only (git's index-pack --strict without fsck_object:
   * --check-self-contained-and-connected, receive-pack's look at a pushed pack): a tree is decoded
   * for its entries, not checked (its checks are all ignored then, and were most of the time), and
   * a commit or tag has only its header checked. The rules are then parse-only
   * (`FsckRules.parseOnly`), whose only fatal messages are the header's.
   */
  linksOnly?: boolean | undefined;
}

/** Checks objects and records their links: one per thread, fed by the resolver or the loose-object pass. */
export class ObjectChecker {
  private readonly rules: FsckRules;
  private readonly links: LinkRecorder;
  private readonly findings: ObjectFinding[] = [];
  private readonly treeErrors: [number, string][] = [];
  private readonly parseErrors: [number, string][] = [];
  private readonly special: SpecialBlobs = { gitmodules: [], gitattributes: [] };
  private readonly tagNames: [number, string][] = [];
  private current = 0;
  private currentType = 0;
  private currentId: () => string = () => '';
  private readonly report = (key: FsckMessageKey, message: string): boolean => {
    const severity = this.rules.severity(key);
    if (severity === 'ignore') return false;
    if (this.rules.skip.size > 0 && this.rules.skip.has(this.currentId())) return false;
    const s = severity === 'fatal' || severity === 'error' ? 'error' : 'warn';
    this.findings.push({ k: this.current, type: this.currentType, severity: s, msgId: fsckMessageId(key), message });
    return s === 'error';
  };

  constructor(private readonly H: number, options: PackCheckOptions) {
    this.rules = FsckRules.from(options.rules);
    // Without a table (index-pack's checks of a new pack), each id's link types are recorded once.
    this.links = options.table !== undefined ? new LinkRecorder(ObjectTable.fromShared(options.table)) : new LinkRecorder(new ObjectTable(H, 1), true);
    this.keepTagNames = options.tagNames;
    // Only the set of links counts then, not which tree has them: a tree's entries the one before had are passed over.
    this.treeWalker = options.linksOnly === true ? new IncrementalTreeLinks(H) : undefined;
    this.treeLinks = { sink: this.links.sink };
  }

  private readonly keepTagNames: boolean;
  private readonly treeWalker: IncrementalTreeLinks | undefined;
  private readonly treeLinks: TreeLinks;

  /** Checks object `k` (of type 1-4; `id` gives its hex for the skip list) and records its links. */
  check(k: number, type: number, data: Uint8Array, id: () => string, blobKind?: 'gitmodules' | 'gitattributes'): void {
    this.current = k;
    this.currentType = type;
    this.currentId = id;
    const recorded = type === OBJ_COMMIT || type === OBJ_TREE || type === OBJ_TAG;
    if (recorded) this.links.begin(k, data.length);
    if (this.treeWalker !== undefined && type === OBJ_TREE) {
      const error = this.treeWalker.links(data, this.links.sink);
      if (error !== undefined) this.treeErrors.push([k, error]);
      this.links.end();
      return;
    }
    if (this.treeWalker !== undefined && recorded) {
      // Links only, under parse-only rules (index-pack-checks.ts): of a commit's or a tag's
      // checks only the header's (NUL_IN_HEADER, UNTERMINATED_HEADER) are fatal, and the rest
      // would be read and ignored (the idents' alone were ~40 % of a commit's time).
      verifyHeaders(data, this.report);
      const refused = commitOrTagParseError(type, data, this.H);
      if (refused !== undefined) this.parseErrors.push([k, refused]);
      else objectLinks(type, data, this.H, this.links.sink);
      if (type === OBJ_TAG && this.keepTagNames) this.tagNames.push([k, tagName(data)]);
      this.links.end();
      return;
    }
    // A tree's links come out of its check (one pass over its entries).
    const treeLinks = type === OBJ_TREE ? this.treeLinks : undefined;
    checkObject(type, data, this.H, this.report, { strict: this.rules.strict, special: this.special, ...(blobKind !== undefined ? { blobKind } : {}), ...(treeLinks !== undefined ? { links: treeLinks } : {}) });
    if (type === OBJ_TREE) {
      const error = this.treeLinks.decodeError;
      if (error !== undefined) this.treeErrors.push([k, error]);
    } else if (recorded) {
      objectLinks(type, data, this.H, this.links.sink);
      if (type === OBJ_TAG && this.keepTagNames) this.tagNames.push([k, tagName(data)]);
    }
    if (recorded) this.links.end();
  }

  /**
   * Ends checking and returns what was found: problems, and the links and special blobs to check against
   * other objects.
   */
  finish(): CheckFindings {
    const hex = (ids: Uint8Array[]): string[] => ids.map((id) => Buffer.from(id).toString('hex'));
    return {
      links: this.links.finish(), findings: this.findings, treeErrors: this.treeErrors, parseErrors: this.parseErrors,
      gitmodules: hex(this.special.gitmodules), gitattributes: hex(this.special.gitattributes), tagNames: this.tagNames,
    };
  }
}

/** The `tag` header line of a tag object ('' without one). */
function tagName(data: Uint8Array): string {
  const text = Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('latin1');
  const m = /\ntag ([^\n]*)\n/.exec(text.slice(0, text.indexOf('\n\n') >>> 0));
  return m === null ? '' : Buffer.from(m[1] as string, 'latin1').toString('utf8');
}

/**
 * Findings of all threads as one. Each thread numbered the ids it did not find from 0: a
 * thread's unknown ids are renumbered after those of the threads before it.
 */
export function mergeCheckFindings(visits: CheckFindings[], H: number): CheckFindings {
  if (visits.length === 1) return visits[0] as CheckFindings;
  let unknownBytes = 0;
  for (const v of visits) unknownBytes += v.links.unknown.length;
  const unknown = new Uint8Array(unknownBytes);
  let unknownAt = 0;
  for (const v of visits) {
    // The blocks are this caller's now: renumbered in place.
    const shift = unknownAt / H;
    if (shift > 0) {
      forEachRecord(v.links, (block, p) => {
        for (let i = p + 2, end = p + 2 + 2 * (block[p + 1] as number); i < end; i += 2) {
          const t = block[i] as number;
          if (t < 0) block[i] = t - shift;
        }
      });
    }
    unknown.set(v.links.unknown, unknownAt);
    unknownAt += v.links.unknown.length;
  }
  return {
    links: { records: visits.flatMap((v) => v.links.records), unknown },
    findings: visits.flatMap((v) => v.findings),
    treeErrors: visits.flatMap((v) => v.treeErrors),
    parseErrors: visits.flatMap((v) => v.parseErrors),
    gitmodules: visits.flatMap((v) => v.gitmodules),
    gitattributes: visits.flatMap((v) => v.gitattributes),
    tagNames: visits.flatMap((v) => v.tagNames),
  };
}

/** Bits of the types the pack checker is shown (blobs need no reading: their id was checked). */
export const CHECKED_TYPES = (1 << OBJ_COMMIT) | (1 << OBJ_TREE) | (1 << OBJ_TAG);

export const PACK_CHECKER = 'fsck';

/** The worker script that hosts index-pack's resolver with the pack checker registered. */
export const FSCK_WORKER = new URL('./fsck-worker.js', import.meta.url);

registerPackVisitor(PACK_CHECKER, (options: unknown, state: PackView): PackVisitor => {
  const H = hashLength(state.format);
  const checker = new ObjectChecker(H, options as PackCheckOptions);
  const ids = state.ids;
  return {
    visit(k, type, data) {
      checker.check(k, type, data, () => Buffer.from(ids.buffer, ids.byteOffset + k * H, H).toString('hex'));
    },
    finish: () => checker.finish(),
  };
});
