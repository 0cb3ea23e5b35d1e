import type { GitConfig } from '../config/git-config.js';
import { PackwrightError } from '../errors/packwright-error.js';

/**
 * The refs a server keeps from its clients (git's transfer.hideRefs, and uploadpack.hideRefs or
 * receive.hideRefs): patterns read in configuration order, the last that matches deciding; `!`
 * un-hides, `^` matches the full name (with the namespace) instead of the stripped one; a pattern
 * matches the ref it names and everything under it (refs.c, ref_is_hidden).
 */
export class HiddenRefs {
  private constructor(private readonly patterns: readonly string[]) {}

  /** The patterns of `transfer.hideRefs` and `<section>.hideRefs` ('uploadpack' or 'receive'), in the order git reads them. */
  static fromConfig(config: GitConfig, section: 'uploadpack' | 'receive'): HiddenRefs {
    const own = `${section}.hiderefs`;
    const patterns: string[] = [];
    for (const { key, value } of config.entries) {
      if (key !== 'transfer.hiderefs' && key !== own) continue;
      if (value === null) throw new PackwrightError('CONFIG_INVALID', `missing value for '${key}'`);
      patterns.push(value.replace(/\/+$/, ''));
    }
    return new HiddenRefs(patterns);
  }

  /** Hides nothing. */
  static none(): HiddenRefs {
    return new HiddenRefs([]);
  }

  get empty(): boolean {
    return this.patterns.length === 0;
  }

  /** Whether `name` (`full`: with the namespace) is hidden. */
  isHidden(name: string, full = name): boolean {
    for (let i = this.patterns.length - 1; i >= 0; i--) {
      let match = this.patterns[i] as string;
      const negated = match.startsWith('!');
      if (negated) match = match.slice(1);
      const subject = match.startsWith('^') ? full : name;
      if (match.startsWith('^')) match = match.slice(1);
      if (subject.startsWith(match) && (subject.length === match.length || subject[match.length] === '/')) return !negated;
    }
    return false;
  }
}
