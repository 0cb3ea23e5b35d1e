import { PackwrightError } from '../errors/packwright-error.js';
import { fromHex, isHex, toHex } from '../hash/hex.js';
import { OBJ_COMMIT, OBJ_TAG, OBJ_TREE, typeName } from '../objects/object-type.js';
import type { StoreHandle } from '../odb/store-handle.js';
import type { RefStore } from './ref-store.js';
import { parseCommit, parseTag } from '../objects/commit.js';
import { parseTree } from '../objects/tree.js';

/** The refs git tries for a short name, in order (refs.c, ref_rev_parse_rules). */
const DWIM_RULES = ['%s', 'refs/%s', 'refs/tags/%s', 'refs/heads/%s', 'refs/remotes/%s', 'refs/remotes/%s/HEAD'];

/** What revision syntax needs: the refs, and the objects to peel and walk. */
export interface RevisionContext {
  readonly refs: RefStore;
  readonly objects: StoreHandle;
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
  const store = ctx.objects;
  const H = store.hashLength;
  const full = fromHex(name.toLowerCase(), H);
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
  for (let i = 0; i < 64; i++) {
    const obj = store.read(id);
    const type = typeName(obj.type);
    if (wanted === type || (wanted === '' && obj.type !== OBJ_TAG) || wanted === 'object') return id;
    if (obj.type === OBJ_TAG) {
      id = parseTag(obj.data, store.hashLength, toHex(id)).object;
    } else if (obj.type === OBJ_COMMIT && wanted === 'tree') {
      id = parseCommit(obj.data, store.hashLength, toHex(id)).tree;
    } else {
      break;
    }
  }
  throw new PackwrightError('REF_NOT_FOUND', `${rev}: expected ${wanted || 'a non-tag object'}`);
}

function lookupPath(store: StoreHandle, treeish: Buffer, path: string, rev: string): Buffer {
  let id = peel(store, treeish, 'tree', rev);
  const parts = path.split('/').filter((p) => p !== '');
  for (const part of parts) {
    const obj = store.read(id);
    if (obj.type !== OBJ_TREE) throw new PackwrightError('REF_NOT_FOUND', `path '${path}' does not exist in '${rev}'`);
    const entry = parseTree(obj.data, store.hashLength, toHex(id)).find((e) => e.name.toString('utf8') === part);
    if (entry === undefined) throw new PackwrightError('REF_NOT_FOUND', `path '${path}' does not exist in '${rev}'`);
    id = Buffer.from(entry.id);
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
  const colon = rev.indexOf(':');
  if (colon > 0) {
    const treeish = resolveRevision(ctx, rev.slice(0, colon));
    return lookupPath(store, treeish, rev.slice(colon + 1), rev);
  }
  const m = /^(.*?)((?:\^\{[a-z]*\}|\^[0-9]*|~[0-9]*)*)$/.exec(rev);
  const baseName = m?.[1] ?? rev;
  let id = resolveBase(ctx, baseName);
  const suffixes = m?.[2] ?? '';
  const ops = suffixes.match(/\^\{[a-z]*\}|\^[0-9]*|~[0-9]*/g) ?? [];
  for (const op of ops) {
    if (op.startsWith('^{')) {
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
