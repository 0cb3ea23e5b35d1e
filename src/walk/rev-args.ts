import { PackwrightError } from '../errors/packwright-error.js';
import { wildmatch } from '../config/wildmatch.js';
import { allReflogs, readReflogFile } from '../refs/reflog.js';
import { mergeBases } from './merge-bases.js';
import { resolveRevision, type RevisionContext } from '../refs/resolve-revision.js';

/** A starting point of a history walk: an object to include, or one whose history to leave out. */
export interface RevTip {
  id: Buffer;
  uninteresting: boolean;
  /** What the user called it. */
  name: string;
  /** The path a tree or blob tip is listed under: `<rev>:<path>` gives one, anything else ''. */
  path?: string;
  /** Known to be a blob (an index entry): the walk takes it as one without reading it, as git does. */
  blob?: boolean;
}

/**
 * Reads `git rev-list`-style arguments into tips: revisions (`A`, `^B`, `A..B`, `A..`, `..B`), and
 * `A...B`, `--all`, `--branches[=<glob>]`, `--tags[=<glob>]`, `--remotes[=<glob>]`, `--reflog`, `--indexed-objects`, `--not` (which flips
 * exclusion for what follows, as in git). Options it does not know are INVALID_ARGUMENT, a name
 * that resolves to nothing REF_NOT_FOUND.
 */
export class RevArgs {
  readonly tips: RevTip[] = [];
  private negated = false;

  constructor(private readonly ctx: RevisionContext) {}

  /**
   * Takes one argument (a command-line word, or a line of `--stdin`). With `literal` (after git's
   * `--end-of-options`) it is a revision even if it starts with a dash.
   */
  add(arg: string, literal = false): void {
    if (literal) {
      this.tips.push({ id: this.resolve(arg), uninteresting: this.negated, name: arg, path: '' });
      return;
    }
    if (arg === '--not') {
      this.negated = !this.negated;
      return;
    }
    if (arg === '--all') {
      this.addRefs('refs/', undefined);
      const head = this.ctx.refs.resolve('HEAD');
      if (head !== undefined) this.tips.push({ id: head, uninteresting: this.negated, name: 'HEAD' });
      return;
    }
    if (arg === '--reflog') {
      this.addReflogs();
      return;
    }
    if (arg === '--indexed-objects') {
      const objects = this.ctx.indexedObjects?.();
      if (objects === undefined) throw new PackwrightError('INVALID_ARGUMENT', '--indexed-objects needs a repository');
      for (const o of objects) this.tips.push({ id: o.id, uninteresting: this.negated, name: o.path, path: o.path, ...(o.tree ? {} : { blob: true }) });
      return;
    }
    const kinds: Record<string, string> = { '--branches': 'refs/heads/', '--tags': 'refs/tags/', '--remotes': 'refs/remotes/' };
    const eq = arg.indexOf('=');
    const kind = kinds[eq < 0 ? arg : arg.slice(0, eq)];
    if (kind !== undefined) {
      this.addRefs(kind, eq < 0 ? undefined : arg.slice(eq + 1));
      return;
    }
    if (arg.startsWith('-')) throw new PackwrightError('INVALID_ARGUMENT', `unknown revision option '${arg}'`);
    const three = arg.indexOf('...');
    if (three >= 0) {
      // git's A...B: both sides, less what their merge bases reach (those first, as git adds them).
      const left = arg.slice(0, three) || 'HEAD';
      const right = arg.slice(three + 3) || 'HEAD';
      const a = this.resolve(left);
      const b = this.resolve(right);
      for (const base of mergeBases(this.ctx.objects, this.resolve(`${left}^{commit}`), this.resolve(`${right}^{commit}`))) {
        this.tips.push({ id: base, uninteresting: !this.negated, name: base.toString('hex') });
      }
      this.tips.push({ id: a, uninteresting: this.negated, name: left });
      this.tips.push({ id: b, uninteresting: this.negated, name: right });
      return;
    }
    const dots = arg.indexOf('..');
    if (dots >= 0) {
      const from = arg.slice(0, dots) || 'HEAD';
      const to = arg.slice(dots + 2) || 'HEAD';
      this.tips.push({ id: this.resolve(from), uninteresting: !this.negated, name: from });
      this.tips.push({ id: this.resolve(to), uninteresting: this.negated, name: to });
      return;
    }
    // git's <rev>^@ (its parents), <rev>^! (it, its parents excluded) and <rev>^-<n> (it, its n-th
    // parent excluded; the first by default): add_parents_only.
    const parentsMark = /^(.+)\^(@|!|-(\d*))$/.exec(arg);
    if (parentsMark !== null) {
      const rev = parentsMark[1] as string;
      const kind = parentsMark[2] as string;
      this.resolve(`${rev}^{commit}`);
      const parents: Buffer[] = [];
      if (kind.startsWith('-')) {
        const n = kind.length > 1 ? Number(kind.slice(1)) : 1;
        if (!(n >= 1)) throw new PackwrightError('INVALID_ARGUMENT', `bad revision '${arg}'`);
        parents.push(this.resolve(`${rev}^${n}`));
      } else {
        for (let i = 1; ; i++) {
          try {
            parents.push(this.resolve(`${rev}^${i}`));
          } catch {
            break;
          }
        }
      }
      for (const p of parents) this.tips.push({ id: p, uninteresting: (kind !== '@') !== this.negated, name: `${rev}^` });
      if (kind !== '@') this.tips.push({ id: this.resolve(rev), uninteresting: this.negated, name: rev });
      return;
    }
    const excluded = arg.startsWith('^');
    const name = excluded ? arg.slice(1) : arg;
    const colon = name.indexOf(':');
    this.tips.push({ id: this.resolve(name), uninteresting: excluded !== this.negated, name, path: colon > 0 ? name.slice(colon + 1) : '' });
  }

  /**
   * `--reflog`: both sides of every reflog entry (git's add_reflogs_to_pending), the null id left
   * out; an object no longer there is skipped with git's warning, once a reflog.
   */
  private addReflogs(): void {
    const refs = this.ctx.refs;
    const H = this.ctx.objects.hashLength;
    for (const log of allReflogs(refs.gitDir, refs.commonDir)) {
      let warned = false;
      for (const e of readReflogFile(log.path, H)) {
        for (const id of [e.old, e.new]) {
          if (id.every((b) => b === 0)) continue;
          if (this.ctx.objects.has(id)) this.tips.push({ id, uninteresting: this.negated, name: '' });
          else if (!warned) {
            warned = true;
            this.ctx.onWarning?.(`reflog of '${log.name}' references pruned commits`);
          }
        }
      }
    }
  }

  private resolve(rev: string): Buffer {
    try {
      return resolveRevision(this.ctx, rev);
    } catch (e) {
      if (e instanceof PackwrightError && e.code === 'REF_NOT_FOUND') {
        throw new PackwrightError('REF_NOT_FOUND', `bad revision '${rev}'`, { cause: e });
      }
      throw e;
    }
  }

  /** Refs under `prefix`, all or those matching `glob` (git adds `/*` to a glob without wildcards). */
  private addRefs(prefix: string, glob: string | undefined): void {
    let pattern: string | undefined;
    if (glob !== undefined) {
      pattern = prefix + glob;
      if (!/[*?[]/.test(glob)) pattern += pattern.endsWith('/') ? '*' : '/*';
    }
    for (const ref of this.ctx.refs.list(prefix)) {
      if (pattern !== undefined && !wildmatch(pattern, ref.name)) continue;
      this.tips.push({ id: ref.id, uninteresting: this.negated, name: ref.name });
    }
  }
}
