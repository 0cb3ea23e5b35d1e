/** Bits of the exit status, as git's fsck sets them. */
export const FSCK_ERROR_OBJECT = 0o1;
export const FSCK_ERROR_REACHABLE = 0o2;
export const FSCK_ERROR_PACK = 0o4;
export const FSCK_ERROR_REFS = 0o10;
export const FSCK_ERROR_COMMIT_GRAPH = 0o20;
export const FSCK_ERROR_MULTI_PACK_INDEX = 0o40;

export interface FsckOptions {
  /** Check packed objects too (default true; git's --full). */
  full?: boolean;
  /** Only check that everything reachable is there (reads reachable trees and commits, checks nothing else). */
  connectivityOnly?: boolean;
  /** Warnings count as errors, and 100664 is a bad file mode (git's --strict). */
  strict?: boolean;
  /** Report unreachable objects nothing points to (default true). */
  dangling?: boolean;
  /** Report every unreachable object. */
  unreachable?: boolean;
  /** Report root commits. */
  root?: boolean;
  /** Report tags and what they point at. */
  tags?: boolean;
  /** Name objects by how they are reached (`refs/heads/main~2:src/`) in reports. */
  nameObjects?: boolean;
  /** Write dangling objects to `.git/lost-found/` (implies `full`, no reflogs). */
  lostFound?: boolean;
  /** Reflog entries are heads too (default true). */
  reflogs?: boolean;
  /** The index's objects are heads too (always when no `objects` are given). */
  cache?: boolean;
  /** Heads to check from instead of the refs (git's `<object>...`). */
  objects?: readonly string[];
  /** Threads for the pack checks, this one included (default: git's index-pack rule). */
  threads?: number;
  /** The directory file paths in messages are shown relative to, as git shows them (default: the process's). */
  cwd?: string;
  signal?: AbortSignal;
  onProgress?: (phase: 'checking objects' | 'checking connectivity', done: number, total: number) => void;
  /** Each message as it is found (also collected in the result). */
  onMessage?: (message: FsckMessage) => void;
}

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
