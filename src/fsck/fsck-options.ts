/** Bits of the exit status, as git's fsck sets them. */
export const FSCK_ERROR_OBJECT = 0o1;
/** fsck status bit: a reachable object is missing or broken (git's ERROR_REACHABLE). */
export const FSCK_ERROR_REACHABLE = 0o2;
/** fsck status bit: a pack or its index is corrupt (git's ERROR_PACK). */
export const FSCK_ERROR_PACK = 0o4;
/** fsck status bit: a ref is broken (git's ERROR_REFS). */
export const FSCK_ERROR_REFS = 0o10;
/** fsck status bit: the commit-graph failed verification (git's ERROR_COMMIT_GRAPH). */
export const FSCK_ERROR_COMMIT_GRAPH = 0o20;
/** fsck status bit: the multi-pack-index failed verification (git's ERROR_MULTI_PACK_INDEX). */
export const FSCK_ERROR_MULTI_PACK_INDEX = 0o40;

/** Options of `fsck`: what to check and report, as `git fsck` takes them. */
export interface FsckOptions {
  /** Check packed objects too (default true; git's --full). */
  full?: boolean | undefined;
  /** Only check that everything reachable is there (reads reachable trees and commits, checks nothing else). */
  connectivityOnly?: boolean | undefined;
  /** Warnings count as errors, and 100664 is a bad file mode (git's --strict). */
  strict?: boolean | undefined;
  /** Report unreachable objects nothing points to (default true). */
  dangling?: boolean | undefined;
  /** Report every unreachable object. */
  unreachable?: boolean | undefined;
  /** Report root commits. */
  root?: boolean | undefined;
  /** Report tags and what they point at. */
  tags?: boolean | undefined;
  /** Name objects by how they are reached (`refs/heads/main~2:src/`) in reports. */
  nameObjects?: boolean | undefined;
  /** Write dangling objects to `.git/lost-found/` (implies `full`, no reflogs). */
  lostFound?: boolean | undefined;
  /** Reflog entries are heads too (default true). */
  reflogs?: boolean | undefined;
  /** The index's objects are heads too (always when no `objects` are given). */
  cache?: boolean | undefined;
  /** Heads to check from instead of the refs (git's `<object>...`). */
  objects?: readonly string[] | undefined;
  /** Threads for the pack checks, this one included (default: git's index-pack rule). */
  threads?: number | undefined;
  /** The directory file paths in messages are shown relative to, as git shows them (default: the process's). */
  cwd?: string | undefined;
  signal?: AbortSignal | undefined;
  /** Progress of each phase (`checking objects`, `checking connectivity`, …): done of total. */
  onProgress?: ((phase: 'checking objects' | 'checking connectivity', done: number, total: number) => void) | undefined;
  /** Each message as it is found (also collected in the result). */
  onMessage?: ((message: FsckMessage) => void) | undefined;
}

/**
 * The kinds of line `git fsck` prints: problems in objects, broken links, missing, dangling and unreachable
 * objects, roots and tags.
 */
export type FsckMessageKind = 'error' | 'warning' | 'notice' | 'broken-link' | 'missing' | 'dangling' | 'unreachable' | 'root' | 'tagged';

/** One line of fsck's report, as git prints it, with what it is about. */
export interface FsckMessage {
  kind: FsckMessageKind;
  /** git prints connectivity findings on stdout and errors, warnings and notices on stderr. */
  stream: 'stdout' | 'stderr';
  /** The text without its newline (a broken link takes two lines, joined by `\n`). */
  text: string;
  /** The object it is about (hex), when one. */
  id?: string;
  /** For object checks: git's message id (`badTimezone`). */
  msgId?: string;
}

/** What `fsck` found: git's exit status, its messages, and counts. */
export interface FsckResult {
  /** git's exit status: FSCK_ERROR_* bits, 0 when all is well. */
  status: number;
  messages: FsckMessage[];
  /** Objects the store lists (loose and packed, with alternates). */
  objects: number;
  /** Objects whose contents were checked. */
  checked: number;
  /** Objects reached from the heads. */
  reachable: number;
  ms: Record<string, number>;
}
