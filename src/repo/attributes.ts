import { isNotFound } from '../io/read-dir-if-present.js';
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { GitConfig } from '../config/git-config.js';
import { wildmatch } from '../config/wildmatch.js';

/** An attribute's state for a path: set, unset (`-name`), a value (`name=value`), or unspecified. */
export type AttributeValue = true | false | string | undefined;

interface Rule {
  /** The directory of the file it came from, relative to the work tree ('' or ending in `/`). */
  base: string;
  pattern: string;
  /** No `/` in the pattern: it matches the basename at any depth. */
  basenameOnly: boolean;
  mustBeDir: boolean;
  states: [string, AttributeValue][];
}

/** git's built-in macro. */
const BUILTIN_MACROS: Record<string, [string, AttributeValue][]> = { binary: [['diff', false], ['merge', false], ['text', false]] };

/**
 * A work tree's gitattributes (gitattributes(5)): the global file (core.attributesFile, else
 * `$XDG_CONFIG_HOME/git/attributes`), `.gitattributes` in each directory from the top down to the
 * path's, then `$GIT_DIR/info/attributes`; later and deeper lines win, `[attr]` macros (and the
 * built-in `binary`) expand. Files are read on first use.
 */
export class Attributes {
  private readonly files = new Map<string, Rule[]>();
  private readonly macros = new Map<string, [string, AttributeValue][]>(Object.entries(BUILTIN_MACROS));
  private globalRules: Rule[] | undefined;

  constructor(private readonly workTree: string | undefined, private readonly gitDir: string, private readonly config: GitConfig, private readonly env: Record<string, string | undefined> = process.env) {}

  /** The states of `names` for the file at `path` (relative to the work tree, `/`-separated). */
  get(path: string, names: readonly string[]): Map<string, AttributeValue> {
    const stack: Rule[] = [...this.global()];
    if (this.workTree !== undefined) {
      const dirs = path.split('/').slice(0, -1);
      let base = '';
      stack.push(...this.read(join(this.workTree, '.gitattributes'), '', true));
      for (const d of dirs) {
        base += `${d}/`;
        stack.push(...this.read(join(this.workTree, base, '.gitattributes'), base, false));
      }
    }
    stack.push(...this.read(join(this.gitDir, 'info', 'attributes'), '', true));
    const wanted = new Set(names);
    const result = new Map<string, AttributeValue>();
    const slash = path.lastIndexOf('/');
    const basename = path.slice(slash + 1);
    for (const rule of stack) {
      if (rule.mustBeDir) continue;
      let matches: boolean;
      if (rule.basenameOnly) {
        if (!path.startsWith(rule.base)) continue;
        matches = wildmatch(rule.pattern, basename);
      } else {
        if (!path.startsWith(rule.base)) continue;
        matches = wildmatch(rule.pattern, path.slice(rule.base.length), { pathname: true });
      }
      if (!matches) continue;
      for (const [name, value] of this.expand(rule.states)) if (wanted.has(name)) result.set(name, value);
    }
    return result;
  }

  private expand(states: [string, AttributeValue][]): [string, AttributeValue][] {
    const out: [string, AttributeValue][] = [];
    for (const [name, value] of states) {
      const macro = this.macros.get(name);
      // A set macro sets what it stands for (and itself); unsetting a macro only unsets it.
      if (macro !== undefined && value === true) out.push(...macro);
      out.push([name, value]);
    }
    return out;
  }

  private global(): Rule[] {
    if (this.globalRules === undefined) {
      const configured = this.config.get('core.attributesFile');
      const home = this.env['HOME'] ?? homedir();
      const file = typeof configured === 'string'
        ? configured.replace(/^~\//, `${home}/`)
        : join(this.env['XDG_CONFIG_HOME'] ?? join(home, '.config'), 'git', 'attributes');
      this.globalRules = this.read(file, '', true);
    }
    return this.globalRules;
  }

  /** The rules of one attributes file (none if it is missing); `macros`: `[attr]` lines count here. */
  private read(file: string, base: string, macros: boolean): Rule[] {
    const cached = this.files.get(file);
    if (cached !== undefined) return cached;
    let text: string;
    try {
      text = readFileSync(file, 'latin1');
    } catch (e) {
      // git reads an attributes file that is not there as empty (and one that is a directory too).
      if (!isNotFound(e) && (e as NodeJS.ErrnoException).code !== 'EISDIR') throw e;
      this.files.set(file, []);
      return [];
    }
    const rules: Rule[] = [];
    for (const raw of text.split('\n')) {
      const line = raw.replace(/\r$/, '').trim();
      if (line === '' || line.startsWith('#')) continue;
      const [first, ...rest] = line.split(/[ \t]+/);
      if (first === undefined) continue;
      const states: [string, AttributeValue][] = rest.map((s) => {
        if (s.startsWith('-')) return [s.slice(1), false];
        if (s.startsWith('!')) return [s.slice(1), undefined];
        const eq = s.indexOf('=');
        return eq < 0 ? [s, true] : [s.slice(0, eq), s.slice(eq + 1)];
      });
      if (first.startsWith('[attr]')) {
        if (macros) this.macros.set(first.slice(6), states);
        continue;
      }
      let pattern = first;
      const mustBeDir = pattern.endsWith('/');
      if (mustBeDir) pattern = pattern.slice(0, -1);
      const basenameOnly = !pattern.includes('/');
      if (pattern.startsWith('/')) pattern = pattern.slice(1);
      rules.push({ base, pattern, basenameOnly, mustBeDir, states });
    }
    this.files.set(file, rules);
    return rules;
  }
}
