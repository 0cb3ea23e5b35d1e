import { PackwrightError } from '../errors/packwright-error.js';
import { tryFromHex, isHex } from '../hash/hex.js';
import { peelObject } from '../odb/peel-object.js';
import type { StoreHandle } from '../odb/store-handle.js';
import type { RefStore } from './ref-store.js';
import { parseCommit } from '../objects/commit.js';
import { findTreeEntry } from '../objects/tree.js';
import { approxidate } from './approxidate.js';
import { readReflog, reflogExists, type ReflogEntry } from './reflog.js';
import type { ObjectType } from '../objects/object-type.js';
import { typeNumber } from '../objects/object-type.js';

/** The refs git tries for a short name, in order (refs.c, ref_rev_parse_rules). */
export const DWIM_RULES: readonly string[] = ['%s', 'refs/%s', 'refs/tags/%s', 'refs/heads/%s', 'refs/remotes/%s', 'refs/remotes/%s/HEAD'];

/** What revision syntax needs: the refs, and the objects to peel and walk (and config, for `@{upstream}`). */
export interface RevisionContext {
  readonly refs: RefStore;
  readonly objects: StoreHandle;
  readonly config?: {
    /** The value of a configuration key (`core.warnAmbiguousRefs`, …); null or undefined when unset. */
    get(key: string): string | null | undefined;
  };
  /** Where git's warnings go (a reflog that does not go back far enough); none: dropped. */
  readonly onWarning?: ((message: string) => void) | undefined;
  /**
   * The objects the index holds, for `--indexed-objects` (a repository provides it): its blobs with
   * their paths (not submodule commits), then the cache tree's valid trees, then resolve-undo's blobs.
   */
  indexedObjects?(): IndexedObject[];
}

/** An object of the index (RevisionContext.indexedObjects): a blob or a tree, and its path. */
export interface IndexedObject {
  id: Buffer;
  path: string;
  tree: boolean;
}

/** git's RFC 2822 date (show_date with DATE_RFC2822) of a timestamp in its own zone (`+hhmm`). */
function rfc2822(seconds: number, tz: string): string {
  const sign = tz.startsWith('-') ? -1 : 1;
  const offset = sign * (Number(tz.slice(1, 3)) * 60 + Number(tz.slice(3, 5)));
  const d = new Date((seconds + offset * 60) * 1000);
  const days = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
  const months = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
  const two = (n: number): string => String(n).padStart(2, '0');
  return `${days[d.getUTCDay()]}, ${d.getUTCDate()} ${months[d.getUTCMonth()]} ${d.getUTCFullYear()} ${two(d.getUTCHours())}:${two(d.getUTCMinutes())}:${two(d.getUTCSeconds())} ${tz}`;
}

/** The full name a short one stands for (git's dwim_ref), for reflog lookups. */
function dwimRefName(refs: RefStore, name: string): string | undefined {
  for (const rule of DWIM_RULES) {
    const full = rule.replace('%s', name);
    if (rule === '%s' && !full.startsWith('refs/') && !/^[A-Z_]+$/.test(full)) continue;
    const v = refs.read(full);
    if (v === undefined) continue;
    return full;
  }
  return undefined;
}

/** The branch HEAD names (`refs/heads/<b>`), or undefined when detached. */
function currentBranch(refs: RefStore): string | undefined {
  const head = refs.read('HEAD');
  return head?.kind === 'symbolic' ? head.target : undefined;
}

/**
 * git's read_ref_at over a reflog, newest first: the value `nth` changes ago, or at `atTime`
 * (seconds), with git's warnings for a gap in the log and a log that ends before the ref's value;
 * `current` is the ref's value (what a log that ended too soon leaves). Returns whether the log ran
 * out first (then the oldest value).
 */
function readRefAt(entries: ReflogEntry[], atTime: number, nth: number, current: Buffer | undefined, refname: string, warn: ((m: string) => void) | undefined): { id: Buffer; ranOut: boolean } | undefined {
  if (entries.length === 0) return undefined;
  const isNull = (id: Buffer): boolean => id.every((b) => b === 0);
  if (nth === 0) return { id: (entries[entries.length - 1] as ReflogEntry).new, ranOut: false };
  let cnt = nth;
  // The newer record's old value (null before the first), as git's cb->ooid.
  let prevOld: Buffer | undefined;
  for (let i = entries.length - 1; i >= 0; i--) {
    const e = entries[i] as ReflogEntry;
    if (cnt > 0) cnt--;
    const reached = cnt === 0 && !isNull(e.old);
    if (e.timestamp <= atTime || reached) {
      if (prevOld !== undefined && !isNull(prevOld) && !prevOld.equals(e.new)) warn?.(`log for ref ${refname} has gap after ${rfc2822(e.timestamp, e.tz)}`);
      if (reached) return { id: e.old, ranOut: false };
      if ((prevOld !== undefined && !isNull(prevOld)) || e.timestamp === atTime) return { id: e.new, ranOut: false };
      const id = current ?? e.new;
      if (!e.new.equals(id)) warn?.(`log for ref ${refname} unexpectedly ended on ${rfc2822(e.timestamp, e.tz)}`);
      return { id, ranOut: false };
    }
    prevOld = e.old;
  }
  const oldest = entries[0] as ReflogEntry;
  return { id: isNull(oldest.old) ? oldest.new : oldest.old, ranOut: true };
}

/** `@{-N}`: the branch checked out N switches ago, from HEAD's reflog ("checkout: moving from A to B"). */
function priorCheckout(refs: RefStore, n: number): string | undefined {
  const entries = readReflog(refs.gitDir, refs.commonDir, 'HEAD', refs.hashLength);
  let seen = 0;
  for (let i = entries.length - 1; i >= 0; i--) {
    const m = /^checkout: moving from (\S+) to \S+$/.exec((entries[i] as ReflogEntry).message);
    if (m !== null && ++seen === n) return m[1];
  }
  return undefined;
}

/**
 * The `@{...}` forms git reads before the rest of a name: `<ref>@{<n>}` and `<ref>@{<date>}` (the
 * reflog; `@{...}` alone is the current branch's), `@{-<n>}` (a prior checkout), `<branch>@{upstream}`
 * (`@{u}`), and `@` for HEAD. Undefined when `name` has none of them.
 */
function resolveAt(ctx: RevisionContext, name: string): Buffer | undefined {
  const refs = ctx.refs;
  if (name === '@') return refs.resolve('HEAD') ?? notFound(name);
  const m = /^(.*?)@\{([^}]*)\}$/.exec(name);
  if (m === null) return undefined;
  let base = m[1] as string;
  const mark = m[2] as string;
  if (base === '@') base = 'HEAD';
  // @{-<n>} only stands at the start of a name.
  if (base !== '' && mark.startsWith('-')) return notFound(name);
  if (base === '' && /^-\d+$/.test(mark)) {
    const branch = priorCheckout(refs, Number(mark.slice(1)));
    if (branch === undefined) throw new PackwrightError('REF_NOT_FOUND', `${name}: no such prior checkout`);
    const id = tryFromHex(branch, refs.hashLength) ?? dwimRef(refs, branch);
    return id ?? notFound(name);
  }
  if (base.startsWith('@{-')) {
    const inner = /^@\{-(\d+)\}$/.exec(base);
    const branch = inner === null ? undefined : priorCheckout(refs, Number(inner[1]));
    if (branch === undefined) throw new PackwrightError('REF_NOT_FOUND', `${name}: no such prior checkout`);
    base = branch;
  }
  const lower = mark.toLowerCase();
  if (lower === 'u' || lower === 'upstream') {
    const upstream = upstreamOf(ctx, base);
    return refs.resolve(upstream.ref) ?? fatal(`upstream branch '${upstream.merge}' not stored as a remote-tracking branch`);
  }
  // The reflog: of the named ref, or of the branch HEAD points to.
  const full = base === '' ? (currentBranch(refs) ?? 'HEAD') : dwimRefName(refs, base);
  if (full === undefined) return notFound(name);
  let nth = /^\d+$/.test(mark) ? Number(mark) : -1;
  let atTime = 0;
  if (nth >= 100000000) {
    atTime = nth;
    nth = -1;
  } else if (nth < 0) {
    const t = approxidate(mark);
    if (t === undefined) return notFound(name);
    atTime = t;
  }
  // git's dwim_log: a ref without a reflog file has no @{...}.
  if (!reflogExists(refs.gitDir, refs.commonDir, full)) return notFound(name);
  const entries = readReflog(refs.gitDir, refs.commonDir, full, refs.hashLength);
  // @{0} of an empty log is the ref itself (git reads no entry and keeps the ref's value).
  if (entries.length === 0 && nth === 0) return refs.resolve(full) ?? notFound(name);
  if (entries.length === 0) throw new PackwrightError('REFLOG_SHORT', `log for ${full} is empty`);
  const r = readRefAt(entries, atTime, nth, refs.resolve(full), full, ctx.onWarning);
  if (r === undefined) return notFound(name);
  if (r.ranOut && nth < 0) {
    const oldest = entries[0] as ReflogEntry;
    ctx.onWarning?.(`log for '${base === '' ? full.replace(/^refs\/heads\//, '') : base}' only goes back to ${rfc2822(oldest.timestamp, oldest.tz)}`);
  }
  if (r.ranOut && nth >= 0) throw new PackwrightError('REFLOG_SHORT', `log for '${base === '' ? full.replace(/^refs\/heads\//, '') : base}' only has ${entries.length} entries`);
  return r.id;
}

/**
 * The upstream of a branch (git's branch_get and branch_get_upstream): `branch.<name>.remote` and
 * `.merge`, as a remote-tracking ref (or the merge ref itself for remote `.`). `branch` is a short
 * name ('' or HEAD: the current branch). Its errors are git's fatal ones.
 */
function upstreamOf(ctx: RevisionContext, branch: string): { ref: string; merge: string } {
  const refs = ctx.refs;
  let short: string;
  if (branch === '' || branch === 'HEAD') {
    const current = currentBranch(refs);
    if (current === undefined || !current.startsWith('refs/heads/')) fatal('HEAD does not point to a branch');
    short = current.slice(11);
  } else {
    if (refs.read(`refs/heads/${branch}`) === undefined) fatal(`no such branch: '${branch}'`);
    short = branch;
  }
  const remote = ctx.config?.get(`branch.${short}.remote`);
  const merge = ctx.config?.get(`branch.${short}.merge`);
  if (typeof remote !== 'string' || typeof merge !== 'string') fatal(`no upstream configured for branch '${short}'`);
  return { ref: remote === '.' ? merge : `refs/remotes/${remote}/${merge.replace(/^refs\/heads\//, '')}`, merge };
}

/**
 * git's get_oid_oneline: walking from `tips` youngest commit first (by committer date), the first
 * whose message (what follows the header) matches `pattern`, a regular expression; `!-<re>`
 * wants one that does not match, `!!` stands for a literal `!`. An empty pattern matches any.
 */
function searchMessage(ctx: RevisionContext, tips: Buffer[], pattern: string): Buffer | undefined {
  const store = ctx.objects;
  let negative = false;
  let text = pattern;
  if (text.startsWith('!')) {
    if (text.startsWith('!-')) {
      negative = true;
      text = text.slice(2);
    } else if (text.startsWith('!!')) {
      text = text.slice(1);
    } else {
      return undefined;
    }
  }
  let re: RegExp;
  try {
    re = new RegExp(text, 'm');
  } catch (e) {
    throw new PackwrightError('INVALID_ARGUMENT', `invalid regular expression: ${text}`, { cause: e });
  }
  const seen = new Set<string>();
  const queue: { id: Buffer; time: number; data: Buffer }[] = [];
  const add = (id: Buffer): void => {
    const hex = id.toString('hex');
    if (seen.has(hex)) return;
    seen.add(hex);
    let obj;
    try {
      obj = store.read(id);
    } catch (e) {
      if (e instanceof PackwrightError) return;
      throw e;
    }
    if (obj.type !== 'commit') return;
    queue.push({ id, time: parseCommit(obj.data, store.hashLength).time, data: obj.data });
  };
  for (const t of tips) add(t);
  while (queue.length > 0) {
    let best = 0;
    for (let i = 1; i < queue.length; i++) if ((queue[i] as { time: number }).time > (queue[best] as { time: number }).time) best = i;
    const c = queue.splice(best, 1)[0] as { id: Buffer; time: number; data: Buffer };
    const body = c.data.toString('utf8');
    const at = body.indexOf('\n\n');
    const message = at < 0 ? '' : body.slice(at + 2);
    if (negative !== (at >= 0 && re.test(message))) return c.id;
    for (const p of parseCommit(c.data, store.hashLength).parents) add(p);
  }
  return undefined;
}

/**
 * Where a `<tree-ish>:<path>` revision's colon is: the first outside `^{...}` and `@{...}` (a
 * message search or a reflog date may hold one), or -1.
 */
export function treeishColon(rev: string): number {
  for (let i = 0, depth = 0; i < rev.length; i++) {
    const c = rev[i];
    if (c === '{' && (rev[i - 1] === '^' || rev[i - 1] === '@')) depth++;
    else if (c === '}' && depth > 0) depth--;
    else if (c === ':' && depth === 0) return i;
  }
  return -1;
}

/** An error git dies of while reading a revision (not "no such revision"). */
function fatal(message: string): never {
  throw new PackwrightError('INVALID_ARGUMENT', message);
}

function notFound(name: string): never {
  throw new PackwrightError('REF_NOT_FOUND', `Not a valid object name ${name}`);
}

function dwimRef(refs: RefStore, name: string): Buffer | undefined {
  for (const rule of DWIM_RULES) {
    const full = rule.replace('%s', name);
    // Only HEAD-like names are looked up at the top of the git directory.
    if (rule === '%s' && !full.startsWith('refs/') && !/^[A-Z_]+$/.test(full)) continue;
    const id = refs.resolve(full);
    if (id !== undefined) return id;
  }
  return undefined;
}

function resolveBase(ctx: RevisionContext, name: string): Buffer {
  const at = resolveAt(ctx, name);
  if (at !== undefined) return at;
  const store = ctx.objects;
  const H = store.hashLength;
  const full = tryFromHex(name.toLowerCase(), H);
  if (full !== undefined) return full;
  const ref = name === '' ? undefined : dwimRef(ctx.refs, name);
  if (ref !== undefined) return ref;
  if (name.length >= 4 && isHex(name.toLowerCase())) {
    const matches = store.findByPrefix(name.toLowerCase(), 2);
    if (matches.length === 1) return matches[0] as Buffer;
    if (matches.length > 1) throw new PackwrightError('OBJECT_AMBIGUOUS', `short object ID ${name} is ambiguous`);
  }
  throw new PackwrightError('REF_NOT_FOUND', `Not a valid object name ${name}`);
}

/** Peels tags (and commits to their trees) until an object of `wanted` type, or any non-tag for ''. */
function peel(store: StoreHandle, id: Buffer, wanted: string, rev: string): Buffer {
  if (wanted === 'object') return id;
  const want = wanted === '' ? 'non-tag' : typeNumber(wanted) > 0 ? wanted as ObjectType : undefined;
  if (want !== undefined) {
    const end = peelObject(store, id, want);
    if (end.kind === 'found') return end.id;
    if (end.kind === 'missing') store.read(end.id); // OBJECT_NOT_FOUND, in the store's words
  }
  throw new PackwrightError('REF_NOT_FOUND', `${rev}: expected ${wanted || 'a non-tag object'}`);
}

/** `<treeish>:<path>`: the entry at `path` of the tree `treeish` names; PATH_NOT_FOUND in git's words (naming the tree-ish as given) when there is none. */
function lookupPath(store: StoreHandle, treeish: Buffer, path: string, treeishName: string): Buffer {
  let id = peel(store, treeish, 'tree', treeishName);
  const missing = (): PackwrightError => new PackwrightError('PATH_NOT_FOUND', `path '${path}' does not exist in '${treeishName}'`);
  const parts = path.split('/').filter((p) => p !== '');
  for (const part of parts) {
    const obj = store.read(id);
    if (obj.type !== 'tree') throw missing();
    const entry = findTreeEntry(obj.data, store.hashLength, Buffer.from(part, 'utf8'));
    if (entry === undefined) throw missing();
    id = entry.id;
  }
  return id;
}

/**
 * Resolves a revision as git's `get_oid` does, for the forms packwright supports: full and
 * abbreviated ids, `HEAD` and ref names (loose and packed, with git's search rules), the suffixes
 * `^{type}`, `^{}`, `^`, `^N`, `~N`, and `<rev>:<path>`.
 */
export function resolveRevision(ctx: RevisionContext, rev: string): Buffer {
  const store = ctx.objects;
  // `:/<text>`: the youngest commit reachable from any ref whose message matches.
  if (rev.startsWith(':/')) {
    const tips = ctx.refs.list('refs/').map((r) => r.id);
    const head = ctx.refs.resolve('HEAD');
    if (head !== undefined) tips.push(head);
    return searchMessage(ctx, tips, rev.slice(2)) ?? notFound(rev);
  }
  const colon = treeishColon(rev);
  if (colon > 0) {
    const treeish = resolveRevision(ctx, rev.slice(0, colon));
    return lookupPath(store, treeish, rev.slice(colon + 1), rev.slice(0, colon));
  }
  const m = /^(.*?)((?:\^\{[a-z]*\}|\^\{\/[^}]*\}|\^[0-9]*|~[0-9]*)*)$/s.exec(rev);
  const baseName = m?.[1] ?? rev;
  let id = resolveBase(ctx, baseName);
  const suffixes = m?.[2] ?? '';
  const ops = suffixes.match(/\^\{[a-z]*\}|\^\{\/[^}]*\}|\^[0-9]*|~[0-9]*/g) ?? [];
  for (const op of ops) {
    if (op.startsWith('^{/')) {
      // The youngest commit reachable from here whose message matches.
      id = searchMessage(ctx, [peel(store, id, 'commit', rev)], op.slice(3, -1)) ?? notFound(rev);
    } else if (op.startsWith('^{')) {
      id = peel(store, id, op.slice(2, -1), rev);
    } else {
      const n = op.length > 1 ? Number(op.slice(1)) : 1;
      if (op.startsWith('^')) {
        if (n === 0) {
          id = peel(store, id, 'commit', rev);
          continue;
        }
        const parents = parseCommit(store.read(peel(store, id, 'commit', rev)).data, store.hashLength).parents;
        const p = parents[n - 1];
        if (p === undefined) throw new PackwrightError('REF_NOT_FOUND', `${rev}: commit has no parent ${n}`);
        id = p;
      } else {
        for (let i = 0; i < n; i++) {
          const p = parseCommit(store.read(peel(store, id, 'commit', rev)).data, store.hashLength).parents[0];
          if (p === undefined) throw new PackwrightError('REF_NOT_FOUND', `${rev}: history ends before ~${n}`);
          id = p;
        }
      }
    }
  }
  return id;
}

/**
 * The full ref name a revision stands for, as `rev-parse --symbolic-full-name` prints it: a ref
 * name (`main` -> `refs/heads/main`, HEAD -> the branch it names), `@{-<n>}` (the branch checked
 * out then), `<branch>@{upstream}` (its upstream's ref). Undefined when it names no ref.
 */
export function symbolicFullName(ctx: RevisionContext, name: string): string | undefined {
  const refs = ctx.refs;
  const base = name.replace(/(\^\{\}|\^0)$/, '');
  const m = /^(.*?)@\{([^}]*)\}$/.exec(base);
  if (m !== null) {
    let branch = m[1] as string;
    const mark = (m[2] as string).toLowerCase();
    if (branch === '@') branch = 'HEAD';
    if (branch === '' && /^-\d+$/.test(mark)) {
      const prior = priorCheckout(refs, Number(mark.slice(1)));
      return prior === undefined ? undefined : (dwimRefName(refs, prior) ?? undefined);
    }
    const inner = /^@\{-(\d+)\}$/.exec(branch);
    if (inner !== null) branch = priorCheckout(refs, Number(inner[1])) ?? '';
    if (mark !== 'u' && mark !== 'upstream') return undefined;
    return upstreamOf(ctx, branch).ref;
  }
  const full = dwimRefName(refs, base === '@' ? 'HEAD' : base);
  if (full === undefined) return undefined;
  const v = refs.read(full);
  return v?.kind === 'symbolic' ? v.target : full;
}
