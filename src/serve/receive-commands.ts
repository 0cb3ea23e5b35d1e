// What receive-pack does with a push's commands once the pack is in (git's execute_commands and
// update): the connectivity check, hidden refs, the pre-receive hook and the host's policy, the
// objects moved out of the quarantine, then each ref checked (funny names, the checked-out branch,
// deletes, fast-forwards, the update hook) and changed in a ref transaction; after the report,
// the post-receive and post-update hooks.
import { runGit } from '../repo/run-git.js';
import { isPackwrightError } from '../errors/packwright-error.js';
import { toHex } from '../hash/hex.js';
import type { RefTransaction } from '../refs/ref-transaction.js';
import { isValidRefname } from '../refs/refname.js';
import type { Repository } from '../repo/repository.js';
import { shallowFilePath, writeShallowFile } from '../repo/shallow-file.js';
import { updateServerInfo } from '../repo/server-info.js';
import { isConnected } from '../transfer/connectivity.js';
import { isAncestor } from '../walk/is-ancestor.js';
import { walkCommits } from '../walk/walk-objects.js';
import type { RevTip } from '../walk/rev-args.js';
import { alternateRefIds } from '../repo/alternate-refs.js';
import type { ReceiveSession } from './receive-pack.js';
import { runHook, type ReceiveHookName } from './receive-hooks.js';
import { checkedOutIn } from '../repo/checked-out-branch.js';
import { updateWorktree } from './update-worktree.js';

/** One command of a push and what became of it (git's struct command). */
export interface Command {
  ref: string;
  oldId: string;
  newId: string;
  /** What the client is told when the command failed (`ng <ref> <error>`). */
  error: string | undefined;
  /** Not to be carried out, though not failed either (an alias of another command's ref). */
  skipUpdate: boolean;
  /** A delete of a ref that was not there (left out of post-receive). */
  didNotExist: boolean;
  /** Its new history reaches the client's shallow boundary. */
  shallowRef: boolean;
}

/** Sets `error` on every command that has none. */
function failRemaining(commands: readonly Command[], error: string): void {
  for (const c of commands) if (c.error === undefined) c.error = error;
}

function hookLines(commands: readonly Command[]): string {
  return commands.map((c) => `${c.oldId} ${c.newId} ${c.ref}\n`).join('');
}

/** The push options as git hands them to hooks: GIT_PUSH_OPTION_<i> and their count (unset when none were negotiated). */
function pushOptionEnv(s: ReceiveSession): Record<string, string | undefined> {
  if (!s.usePushOptions) return { GIT_PUSH_OPTION_COUNT: undefined };
  const env: Record<string, string | undefined> = { GIT_PUSH_OPTION_COUNT: String(s.pushOptions.length) };
  s.pushOptions.forEach((o, i) => (env[`GIT_PUSH_OPTION_${i}`] = o));
  return env;
}

function hook(s: ReceiveSession, name: ReceiveHookName, args: string[], stdin: string | undefined, env: Record<string, string | undefined> = {}): Promise<number | undefined> {
  if (s.options.hooks === false) return Promise.resolve(undefined);
  return runHook(s.repo, name, {
    args,
    ...(stdin !== undefined ? { stdin } : {}),
    // Only the hooks fed the commands on stdin see the push options (git's run_receive_hook).
    env: { ...(name === 'pre-receive' || name === 'post-receive' ? pushOptionEnv(s) : {}), ...env },
    output: (text) => s.tellAsync(text),
    signal: s.options.signal,
  });
}

/**
 * Carries out the commands (git's execute_commands), setting each one's `error` when it fails.
 * `unpackStatus`: the pack failed to unpack, and every command fails with "unpacker error".
 */
export async function executeCommands(s: ReceiveSession, commands: Command[], unpackStatus: string | undefined): Promise<void> {
  if (unpackStatus !== undefined) {
    failRemaining(commands, 'unpacker error');
    return;
  }
  const repo = s.repo;
  const zero = s.zeroId;
  const quarantine = s.quarantine;
  const view = quarantine?.repository ?? repo;
  const known = knownTips(s);
  const shallow = await shallowInfo(s, view, commands, known);
  const connectedOptions = { shallow: shallow.boundary, signal: s.options.signal };
  // Tips in a self-contained pack need no walk (as git's clone trusts such a pack).
  const walked = (c: Command): boolean => c.newId !== zero && !c.shallowRef && !s.inSelfContainedPack.has(c.newId);
  const checked = commands.filter((c) => walked(c) && !c.skipUpdate);
  if (checked.length > 0 && !(await isConnected(view.objects, checked.map((c) => s.id(c.newId)), known, connectedOptions))) {
    for (const c of commands) {
      if (!walked(c)) continue;
      if (!(await isConnected(view.objects, [s.id(c.newId)], known, connectedOptions))) c.error = 'missing necessary objects';
    }
  }
  for (const c of commands) {
    if (c.error === undefined && s.config.hidden.isHidden(c.ref, s.namespace + c.ref)) c.error = c.newId === zero ? 'deny deleting a hidden ref' : 'deny updating a hidden ref';
  }
  const pre = await hook(s, 'pre-receive', [], hookLines(commands), quarantine?.env);
  if (pre !== undefined && pre !== 0) {
    failRemaining(commands, 'pre-receive hook declined');
    return;
  }
  if (s.options.beforeUpdate !== undefined) await askPolicy(s, view, commands);
  if (commands.every((c) => c.error !== undefined)) return;

  // The refs are about to name the objects: others must see them first.
  if (quarantine !== undefined) {
    try {
      quarantine.migrate();
    } catch (e) {
      s.error(`${(e as Error).message}`);
      failRemaining(commands, 'unable to migrate objects to permanent storage');
      return;
    }
    s.quarantine = undefined;
    repo.store.refresh();
  }
  checkAliasedUpdates(s, commands);
  const headName = repo.refs.symbolicEnd('HEAD');
  if (s.config.procReceiveRefs.length > 0) {
    for (const c of commands) {
      if (c.error !== undefined || c.skipUpdate || !matchesProcReceive(s, c)) continue;
      s.error(`receive.procReceiveRefs names ${c.ref}: packwright does not run a proc-receive hook`);
      c.error = 'fail to run proc-receive hook';
    }
  }
  const todo = commands.filter((c) => c.error === undefined && !c.skipUpdate);
  if (s.atomic) {
    const tx = repo.refTransaction(s.options.pusher !== undefined ? { committer: s.options.pusher } : {});
    for (const c of todo) {
      c.error = await update(s, c, tx, headName, shallow.added);
      if (c.error !== undefined) {
        tx.abort();
        failRemaining(commands, 'atomic push failure');
        return;
      }
    }
    try {
      tx.commit();
      writeShallow(s, shallow.added, todo);
    } catch (e) {
      s.error(refErrorText(e));
      failRemaining(commands, 'atomic transaction failed');
    }
    return;
  }
  for (const c of todo) {
    const tx = repo.refTransaction(s.options.pusher !== undefined ? { committer: s.options.pusher } : {});
    c.error = await update(s, c, tx, headName, shallow.added);
    if (c.error !== undefined) {
      tx.abort();
      continue;
    }
    try {
      tx.commit();
      writeShallow(s, shallow.added, [c]);
    } catch (e) {
      s.error(refErrorText(e));
      c.error = c.newId === zero ? 'failed to delete' : 'failed to update ref';
    }
  }
}

/** After the report (git's post-receive and post-update hooks, then the host's callback), for the commands that went through. */
export async function runAfterUpdate(s: ReceiveSession, commands: readonly Command[]): Promise<void> {
  const done = commands.filter((c) => c.error === undefined && !c.didNotExist);
  if (done.length === 0) return;
  await hook(s, 'post-receive', [], hookLines(done));
  await hook(s, 'post-update', done.map((c) => c.ref), undefined);
  await s.options.afterUpdate?.(done.map((c) => ({ ref: c.ref, oldId: c.oldId, newId: c.newId })), s.pushOptions);
  if (s.config.autoGc && s.options.autoGc !== false) await autoGc(s);
  // receive.updateServerInfo: the files dumb HTTP clients read, as git's receive-pack keeps them.
  if (s.config.updateServerInfo) updateServerInfo(s.repo);
}

/** git's `gc --auto --quiet` after a push, its output relayed to the pusher; nothing when no git is installed. */
async function autoGc(s: ReceiveSession): Promise<void> {
  await runGit(['gc', '--auto', '--quiet'], s.repo.gitDir, { ...s.repo.env, GIT_DIR: '.' }, (chunk) => s.tell(chunk));
  // What gc packed or pruned: the store lists its packs again.
  s.repo.store.refresh();
}

/** The host's policy (ReceivePackOptions.beforeUpdate) over the commands still standing. */
async function askPolicy(s: ReceiveSession, view: Repository, commands: Command[]): Promise<void> {
  const standing = commands.filter((c) => c.error === undefined);
  if (standing.length === 0) return;
  try {
    const refused = await s.options.beforeUpdate?.({
      commands: standing.map((c) => ({ ref: c.ref, oldId: c.oldId, newId: c.newId })),
      pushOptions: [...s.pushOptions],
      repository: view,
    });
    for (const c of standing) {
      const why = refused?.[c.ref];
      if (why !== undefined) c.error = why === '' ? 'refused' : why.replace(/\n/g, ' ');
    }
  } catch (e) {
    const why = e instanceof Error ? e.message : String(e);
    s.error(why);
    failRemaining(commands, why.split('\n')[0] || 'refused');
  }
}

/** What a failed ref change says, in git's words where the error has them. */
function refErrorText(e: unknown): string {
  if (isPackwrightError(e) || e instanceof Error) return e.message;
  throw e;
}

/**
 * The ids the connectivity check may stop at: every ref receive.hideRefs does not hide, HEAD,
 * and the alternates' refs (git's `--not --exclude-hidden=receive --all --alternate-refs`).
 */
export function knownTips(s: ReceiveSession): Buffer[] {
  const out: Buffer[] = [];
  const refs = s.repo.refs;
  const head = refs.resolve('HEAD');
  if (head !== undefined) out.push(head);
  for (const ref of refs.list('refs/')) {
    const name = ref.name.startsWith(s.namespace) ? ref.name.slice(s.namespace.length) : ref.name;
    if (!s.config.hidden.isHidden(name, ref.name)) out.push(ref.id);
  }
  out.push(...alternateRefIds(s.repo));
  return out;
}

/**
 * The client's shallow commits this push brings in (git's prepare_shallow_info and
 * update_shallow_info): those not in our shallow file whose commits arrived. A command whose new
 * history reaches one is a shallow update, refused unless receive.shallowUpdate.
 */
async function shallowInfo(s: ReceiveSession, view: Repository, commands: Command[], knownIds: readonly Buffer[]): Promise<{ boundary: Buffer[]; added: Map<string, Buffer[]> }> {
  const ours = s.repo.shallowCommits();
  const oursHex = new Set(ours.map((id) => toHex(id)));
  const theirs = s.clientShallow.filter((id) => !oursHex.has(toHex(id)) && view.objects.has(id));
  const added = new Map<string, Buffer[]>();
  if (theirs.length === 0) return { boundary: ours, added };
  const boundary = [...ours, ...theirs];
  const theirsHex = new Set(theirs.map((id) => toHex(id)));
  const known: RevTip[] = knownIds.filter((id) => view.objects.has(id)).map((id) => ({ id, uninteresting: true, name: '' }));
  for (const c of commands) {
    if (c.newId === s.zeroId || c.error !== undefined) continue;
    const walk = walkCommits(view.objects, [{ id: s.id(c.newId), uninteresting: false, name: c.ref }, ...known], { shallow: boundary, missing: 'allow-any' });
    const reached = walk.commits.map((n) => Buffer.from(walk.table.id(n))).filter((id) => theirsHex.has(toHex(id)));
    if (reached.length === 0) continue;
    c.shallowRef = true;
    if (!s.config.shallowUpdate) {
      c.error = 'shallow update not allowed';
      c.skipUpdate = true;
    } else {
      added.set(c.ref, reached);
    }
  }
  return { boundary, added };
}

/** Adds the shallow commits `commands` brought in to the shallow file (git's update_shallow_ref), through `shallow.lock`. */
function writeShallow(s: ReceiveSession, added: ReadonlyMap<string, Buffer[]>, commands: readonly Command[]): void {
  const fresh = commands.flatMap((c) => added.get(c.ref) ?? []);
  if (fresh.length === 0) return;
  writeShallowFile(shallowFilePath(s.repo.commonDir, s.repo.env), [...s.repo.shallowCommits(), ...fresh]);
}

function matchesProcReceive(s: ReceiveSession, c: Command): boolean {
  return s.config.procReceiveRefs.some((raw) => {
    let prefix = raw;
    let modes = 'a';
    const colon = raw.indexOf(':');
    if (colon >= 0) {
      modes = raw.slice(0, colon);
      prefix = raw.slice(colon + 1);
    }
    const ref = prefix.startsWith('^') ? s.namespace + c.ref : c.ref;
    if (prefix.startsWith('^')) prefix = prefix.slice(1);
    const kind = c.oldId === s.zeroId ? 'c' : c.newId === s.zeroId ? 'd' : 'm';
    if (!modes.includes('a') && !modes.includes(kind)) return false;
    return ref === prefix || ref.startsWith(prefix.endsWith('/') ? prefix : `${prefix}/`);
  });
}

/**
 * A command naming a symbolic ref whose target another command also changes (git's
 * check_aliased_updates): the same change is done once, through the target; different changes
 * fail both. A symbolic ref that leads nowhere is a "broken symref".
 */
function checkAliasedUpdates(s: ReceiveSession, commands: Command[]): void {
  const byName = new Map(commands.map((c) => [c.ref, c]));
  for (const c of commands) {
    if (c.error !== undefined) continue;
    const full = s.namespace + c.ref;
    if (s.repo.refs.read(full)?.kind !== 'symbolic') continue;
    const end = s.repo.refs.symbolicEnd(full);
    if (end === undefined) {
      s.error(`refusing update to broken symref '${c.ref}'`);
      c.skipUpdate = true;
      c.error = 'broken symref';
      continue;
    }
    const target = byName.get(end.startsWith(s.namespace) ? end.slice(s.namespace.length) : end);
    if (target === undefined) continue;
    c.skipUpdate = true;
    if (c.oldId === target.oldId && c.newId === target.newId) continue;
    target.skipUpdate = true;
    const abbrev = (hex: string): string => s.repo.objects.abbreviate(s.id(hex));
    s.error(`refusing inconsistent update between symref '${c.ref}' (${abbrev(c.oldId)}..${abbrev(c.newId)}) and its target '${target.ref}' (${abbrev(target.oldId)}..${abbrev(target.newId)})`);
    c.error = target.error = 'inconsistent aliased update';
  }
}

const DENY_CURRENT_MESSAGE = `By default, updating the current branch in a non-bare repository
is denied, because it will make the index and work tree inconsistent
with what you pushed, and will require 'git reset --hard' to match
the work tree to HEAD.

You can set the 'receive.denyCurrentBranch' configuration variable
to 'ignore' or 'warn' in the remote repository to allow pushing into
its current branch; however, this is not recommended unless you
arranged to update its work tree to match what you pushed in some
other way.

To squelch this message and still keep the default behaviour, set
'receive.denyCurrentBranch' configuration variable to 'refuse'.`;

const DENY_DELETE_CURRENT_MESSAGE = `By default, deleting the current branch is denied, because the next
'git clone' won't result in any file checked out, causing confusion.

You can set 'receive.denyDeleteCurrent' configuration variable to
'warn' or 'ignore' in the remote repository to allow deleting the
current branch, with or without a warning message.

To squelch this message, you can set it to 'refuse'.`;

/** git's update(): the checks of one command, then its change queued in `tx`; the error the client is told, or undefined. */
async function update(s: ReceiveSession, c: Command, tx: RefTransaction, headName: string | undefined, shallowAdded: ReadonlyMap<string, Buffer[]>): Promise<string | undefined> {
  const repo = s.repo;
  const name = c.ref;
  const zero = s.zeroId;
  if (!name.startsWith('refs/') || !isValidRefname(name.slice(5))) {
    s.error(`refusing to create funny ref '${name}' remotely`);
    return 'funny refname';
  }
  const full = s.namespace + name;
  const worktree = checkedOutIn(repo, name);
  if (worktree !== undefined && !worktree.bare) {
    const deny = s.config.denyCurrentBranch;
    if (deny === 'warn') s.warning('updating the current branch');
    else if (deny === 'refuse' || deny === 'unconfigured') {
      s.error(`refusing to update checked out branch: ${name}`);
      if (deny === 'unconfigured') s.error(DENY_CURRENT_MESSAGE);
      return 'branch is currently checked out';
    }
  }
  const objects = repo.objects;
  if (c.newId !== zero && !objects.has(s.id(c.newId))) {
    s.options.stderr?.(`error: unpack should have generated ${c.newId}, but I can't find it!\n`);
    return 'bad pack';
  }
  if (c.oldId !== zero && c.newId === zero) {
    if (s.config.denyDeletes && name.startsWith('refs/heads/')) {
      s.error(`denying ref deletion for ${name}`);
      return 'deletion prohibited';
    }
    if (worktree !== undefined || headName === full) {
      const deny = s.config.denyDeleteCurrent;
      if (deny === 'warn') s.warning('deleting the current branch');
      else if (deny !== 'ignore') {
        if (deny === 'unconfigured') s.error(DENY_DELETE_CURRENT_MESSAGE);
        s.error(`refusing to delete the current branch: ${name}`);
        return 'deletion of the current branch prohibited';
      }
    }
  }
  if (s.config.denyNonFastForwards && c.newId !== zero && c.oldId !== zero && name.startsWith('refs/heads/')) {
    const oldId = s.id(c.oldId);
    const newId = s.id(c.newId);
    const isCommit = (id: Buffer): boolean => objects.has(id) && objects.header(id).type === 'commit';
    if (!isCommit(oldId) || !isCommit(newId)) {
      s.options.stderr?.(`error: bad sha1 objects for ${name}\n`);
      return 'bad ref';
    }
    if (!isAncestor(objects, oldId, newId)) {
      s.error(`denying non-fast-forward ${name} (you should pull first)`);
      return 'non-fast-forward';
    }
  }
  const status = await hook(s, 'update', [name, c.oldId, c.newId], undefined);
  if (status !== undefined && status !== 0) {
    s.error(`hook declined to update ${name}`);
    return 'hook declined';
  }
  if (worktree !== undefined && !worktree.bare && s.config.denyCurrentBranch === 'updateInstead') {
    const refused = await updateWorktree(repo, c.newId, worktree, (text) => s.tellAsync(text), s.options.hooks !== false);
    if (refused !== undefined) return refused;
  }
  try {
    if (c.newId === zero) {
      let expect: Buffer | undefined = s.id(c.oldId);
      if (!objects.has(expect)) {
        expect = undefined;
        if (repo.refs.read(full) !== undefined) s.warning('allowing deletion of corrupt ref');
        else {
          s.warning('deleting a non-existent ref');
          c.didNotExist = true;
        }
      }
      tx.delete(full, expect, { message: 'push' });
    } else {
      if (c.shallowRef && !shallowAdded.has(name)) return 'shallow error';
      tx.update(full, s.id(c.newId), c.oldId === zero ? 'absent' : s.id(c.oldId), { message: 'push' });
    }
  } catch (e) {
    s.error(refErrorText(e));
    return c.newId === zero ? 'failed to delete' : 'failed to update ref';
  }
  return undefined;
}
