import type { RefStore } from '../refs/ref-store.js';
import type { HiddenRefs } from '../refs/hidden-refs.js';
import type { CommitDag } from '../walk/commit-dag.js';

/** One ref as a server shows it: its id, what a tag peels to, where a symbolic ref points in the end. */
export interface AdvertisedRef {
  name: string;
  id: Buffer;
  /** The object an annotated tag finally names (undefined for anything else). */
  peeled: Buffer | undefined;
  /** For a symbolic ref: the ref it resolves to through every level (git's resolve_ref_unsafe). */
  symref: string | undefined;
}

/** Marks upload-pack puts on the objects refs name. */
export const OUR_REF = 1 << 1;
export const HIDDEN_REF = 1 << 7;

/**
 * The ref prefix of GIT_NAMESPACE (gitnamespaces(7)): `a/b` is `refs/namespaces/a/refs/namespaces/b/`;
 * '' without one. A server shows only the refs under it, without it.
 */
export function namespacePrefix(namespace: string | undefined): string {
  if (namespace === undefined || namespace === '') return '';
  return namespace.split('/').filter((part) => part !== '').map((part) => `refs/namespaces/${part}/`).join('');
}

/** Where `name` ends up through symbolic refs, when that ref exists. */
export function finalTarget(refs: RefStore, name: string): string | undefined {
  const end = refs.symbolicEnd(name);
  return end !== undefined && refs.read(end) !== undefined ? end : undefined;
}

/**
 * The refs a server shows, in git's order: HEAD first when it resolves, then every ref under
 * refs/ sorted by name; hidden refs are left out, and their objects marked HIDDEN_REF in `dag`,
 * the others' OUR_REF (what a client may want without further checks). With `peel`, tags get
 * what they peel to (from packed-refs when it says, else by reading the tag).
 */
export function advertisedRefs(refs: RefStore, hidden: HiddenRefs, dag: CommitDag, options: { peel: boolean; namespace?: string }): AdvertisedRef[] {
  const out: AdvertisedRef[] = [];
  const ns = options.namespace ?? '';
  const strip = (full: string | undefined): string | undefined => (full !== undefined && full.startsWith(ns) ? full.slice(ns.length) : full);
  const add = (full: string, id: Buffer, packedPeeled: Buffer | undefined, symbolic: boolean): void => {
    const name = full.slice(ns.length);
    const n = dag.intern(id);
    if (hidden.isHidden(name, full)) {
      dag.mark(n, HIDDEN_REF);
      return;
    }
    dag.mark(n, OUR_REF);
    let peeled = packedPeeled;
    if (peeled === undefined && options.peel) {
      const p = dag.peel(n);
      if (p >= 0 && p !== n) peeled = dag.id(p);
    }
    out.push({ name, id, peeled, symref: symbolic ? strip(finalTarget(refs, full)) : undefined });
  };
  const head = refs.read(`${ns}HEAD`);
  const headId = refs.resolve(`${ns}HEAD`);
  if (head !== undefined && headId !== undefined) add(`${ns}HEAD`, headId, head.kind === 'id' ? head.peeled : undefined, head.kind === 'symbolic');
  for (const ref of refs.list(`${ns}refs/`)) add(ref.name, ref.id, ref.peeled, ref.symbolicTarget !== undefined);
  return out;
}
