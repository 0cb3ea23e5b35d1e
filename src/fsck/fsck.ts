import type { Repository } from '../repo/repository.js';
import type { FsckOptions, FsckResult } from './fsck-options.js';
import { FsckState, REACHABLE, LISTED, HAS_OBJ } from './fsck-state.js';
import { checkLoose, checkPacks, checkSpecialBlobs, list, resolveLinks } from './fsck-objects.js';
import { heads } from './fsck-heads.js';
import { markUnreachableReferents, traverse } from './fsck-connectivity.js';
import { report, verifyCommitGraphs, verifyMidx } from './fsck-report.js';

export * from './fsck-options.js';

/**
 * Checks a repository's object database as `git fsck` does: loose objects (hash, header, zlib
 * stream), then every pack verified and its objects checked in one pass on all threads (the pack
 * checker runs inside index-pack's resolver), then connectivity from the refs, HEADs, reflogs
 * and the index. Returns every finding as data, in git's words, with git's exit status.
 * @param repo The repository to check.
 * @returns git's exit status and every finding, as data.
 * @throws {PackwrightError} ABORTED; problems found in the repository are findings, not errors.
 * @example const { status, messages } = await fsck(repo, { full: true }); for (const m of messages) console.log(m.text);
 */
export async function fsck(repo: Repository, options: FsckOptions = {}): Promise<FsckResult> {
  const s = new FsckState(repo, options);
  try {
    return await run(s);
  } finally {
    s.close();
  }
}

/** The stages, in git's order: listing, loose objects, packs, links, heads, connectivity, the report. */
async function run(s: FsckState): Promise<FsckResult> {
  const o = s.o;
  const lostFound = o.lostFound === true;
  const full = o.full !== false || lostFound;
  const connectivityOnly = o.connectivityOnly === true;
  list(s);
  s.time('list');
  if (connectivityOnly) {
    for (let n = 0; n < s.table.count; n++) if (((s.flags[n] as number) & LISTED)) s.flags[n] = (s.flags[n] as number) | HAS_OBJ;
  } else {
    checkLoose(s);
    s.time('loose');
    if (full) await checkPacks(s);
    s.time('packs');
  }
  resolveLinks(s);
  if (!connectivityOnly) checkSpecialBlobs(s);
  s.time('links');
  heads(s, lostFound ? false : o.reflogs !== false);
  s.time('heads');
  // Objects not checked above are read to walk their links: all of them with --connectivity-only,
  // every tree and commit when names are wanted. That is most of each pack, so read it in big
  // windows (whole when it fits) from the start, not entry by entry first.
  if (connectivityOnly || o.nameObjects === true) s.handle.preferDenseReads();
  traverse(s);
  if (connectivityOnly && (o.dangling !== false || lostFound)) markUnreachableReferents(s);
  report(s, lostFound);
  verifyCommitGraphs(s);
  verifyMidx(s);
  s.time('connectivity');
  let reachable = 0;
  for (let n = 0; n < s.table.count; n++) if (((s.flags[n] as number) & REACHABLE)) reachable++;
  let objects = 0;
  for (let n = 0; n < s.table.count; n++) if (((s.flags[n] as number) & LISTED)) objects++;
  return { status: s.status, messages: s.messages, objects, checked: s.checked, reachable, ms: s.ms };
}
