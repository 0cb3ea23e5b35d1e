import { existsSync, readFileSync } from 'node:fs';
import { realpathForgiving } from '../io/realpath-forgiving.js';
import { readFileIfPresent } from '../io/read-file-if-present.js';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { PackwrightError } from '../errors/packwright-error.js';
import { wildmatch } from './wildmatch.js';

/**
 * git's configuration files (git-config(1), "CONFIGURATION FILE"), read as git 2.39's config.c
 * reads them: `[section]`, `[section "subsection"]` (subsection case kept, `\"` and `\\` escaped)
 * and the old `[section.subsection]` (all lowercased); keys of letters, digits and `-` (case-
 * insensitive); values with `"` quoting, the escapes `\\ \" \n \t \b`, `\` before a newline to
 * continue the line, `#` and `;` comments outside quotes, and whitespace trimmed at both ends (a
 * run of it inside counts one space per character, as in git). A key with no `=` is a boolean
 * true (its value is `null`). `include.path` and `includeIf.<condition>.path` pull in other files
 * where they appear, with the conditions `gitdir:`, `gitdir/i:` and `onbranch:`.
 */

/** One `key = value` line: `key` is `section.key` or `section.subsection.key`, normalised. */
export interface ConfigEntry {
  key: string;
  /** null for a key written without `=` (a boolean true). */
  value: string | null;
  /** The file it came from. */
  file: string;
  /** The line of the file the key is on (absent for the command line and the environment). */
  line?: number | undefined;
}

/**
 * Where configuration is read from besides git's environment: the git directory (its `config`, and
 * `includeIf` conditions) and the home directory.
 */
export interface ConfigReadOptions {
  /** The repository's git directory, for `includeIf "gitdir:…"` and `"onbranch:…"`. */
  gitDir?: string | undefined;
  /** Home directory for `~/` in include paths (default: HOME, as git uses it). */
  home?: string | undefined;
}

/** git's MAX_INCLUDE_DEPTH. */
const MAX_INCLUDE_DEPTH = 10;

/** git's isspace (sane_ctype): space, tab, newline, carriage return. */
function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
}
function isAlpha(c: number): boolean {
  return (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
}
function isKeyChar(c: number): boolean {
  return isAlpha(c) || (c >= 0x30 && c <= 0x39) || c === 0x2d;
}
function lower(c: number): number {
  return c >= 0x41 && c <= 0x5a ? c + 32 : c;
}

/** Splits `section.subsection.key` into its parts and normalises the case git ignores. */
export function normalizeKey(key: string): string {
  const first = key.indexOf('.');
  const last = key.lastIndexOf('.');
  if (first <= 0 || last === key.length - 1) throw new PackwrightError('INVALID_ARGUMENT', `key does not contain a section: ${key}`);
  if (first === last) return key.toLowerCase();
  return `${key.slice(0, first).toLowerCase()}${key.slice(first, last)}.${key.slice(last + 1).toLowerCase()}`;
}

/**
 * Parses config text (a file's bytes, or a blob's, like `.gitmodules`) and calls `onEntry` with each
 * key (section and name lower-cased, subsection as written) and value (null for a bare key).
 * Throws CONFIG_INVALID naming `origin` and the line for text git would reject.
 */
export function parseConfigText(text: Buffer, origin: string, onEntry: (key: string, value: string | null, line: number) => void): void {
  new Parser(text, origin, onEntry).parse();
}

class Parser {
  private pos = 0;
  private line = 1;
  private section = '';

  constructor(private readonly text: Buffer, private readonly file: string, private readonly onEntry: (key: string, value: string | null, line: number) => void) {
    // A UTF-8 byte order mark is skipped, as git does.
    if (text[0] === 0xef && text[1] === 0xbb && text[2] === 0xbf) this.pos = 3;
  }

  /** The next byte with `\r\n` as `\n`, or -1 at the end (git returns a newline there once). */
  private next(): number {
    if (this.pos >= this.text.length) {
      this.pos++;
      return this.pos === this.text.length + 1 ? 0x0a : -1;
    }
    let c = this.text[this.pos++] as number;
    if (c === 0x0d && this.text[this.pos] === 0x0a) c = this.text[this.pos++] as number;
    if (c === 0x0a) this.line++;
    return c;
  }

  /** An error at a newline belongs to the line the newline ends (git's error_incomplete_line). */
  private failAt(c: number): never {
    if (c === 0x0a) this.line--;
    this.fail();
  }

  private fail(): never {
    throw new PackwrightError('CONFIG_INVALID', `bad config line ${this.line} in file ${this.file}`, { file: this.file });
  }

  parse(): void {
    let comment = false;
    for (;;) {
      const c = this.next();
      if (c === -1) return;
      if (c === 0x0a) {
        if (this.pos > this.text.length) return;
        comment = false;
        continue;
      }
      if (comment || isSpace(c)) continue;
      if (c === 0x23 || c === 0x3b) {
        comment = true;
        continue;
      }
      if (c === 0x5b) {
        this.section = this.sectionHeader();
        continue;
      }
      if (!isAlpha(c)) this.fail();
      this.keyValue(c);
    }
  }

  /** After `[`: `name]`, `name "subsection"]` or the old `name.subsection]`. */
  private sectionHeader(): string {
    let name = '';
    for (;;) {
      const c = this.next();
      if (c === -1 || c === 0x0a) this.failAt(c);
      if (c === 0x5d) return name;
      if (isSpace(c)) return this.extendedHeader(name);
      if (!isKeyChar(c) && c !== 0x2e) this.fail();
      name += String.fromCharCode(lower(c));
    }
  }

  private extendedHeader(name: string): string {
    let c: number;
    do c = this.next(); while (c === 0x20 || c === 0x09);
    if (c !== 0x22) this.failAt(c);
    const bytes: number[] = [];
    for (;;) {
      c = this.next();
      if (c === -1 || c === 0x0a) this.failAt(c);
      if (c === 0x22) break;
      if (c === 0x5c) {
        c = this.next();
        if (c === -1 || c === 0x0a) this.failAt(c);
      }
      bytes.push(c);
    }
    if (this.next() !== 0x5d) this.fail();
    return `${name}.${Buffer.from(bytes).toString('utf8')}`;
  }

  private keyValue(first: number): void {
    const line = this.line;
    let key = String.fromCharCode(lower(first));
    let c: number;
    for (;;) {
      c = this.next();
      if (!isKeyChar(c)) break;
      key += String.fromCharCode(lower(c));
    }
    while (c === 0x20 || c === 0x09) c = this.next();
    // A key before any section is read as git reads it: a name without a dot.
    const full = this.section === '' ? key : `${this.section}.${key}`;
    if (c === 0x0a || c === -1) {
      this.onEntry(full, null, line);
      return;
    }
    if (c !== 0x3d) this.fail();
    this.onEntry(full, this.value(), line);
  }

  /** git's parse_value. */
  private value(): string {
    const out: number[] = [];
    let quote = false;
    let comment = false;
    let space = 0;
    for (;;) {
      let c = this.next();
      if (c === 0x0a || c === -1) {
        // git reports an unterminated quote on the line it started on.
        if (quote) this.failAt(c);
        return Buffer.from(out).toString('utf8');
      }
      if (comment) continue;
      if (isSpace(c) && !quote) {
        if (out.length > 0) space++;
        continue;
      }
      if (!quote && (c === 0x3b || c === 0x23)) {
        comment = true;
        continue;
      }
      for (; space > 0; space--) out.push(0x20);
      if (c === 0x5c) {
        c = this.next();
        if (c === 0x0a) continue;
        if (c === 0x74) c = 0x09;
        else if (c === 0x62) c = 0x08;
        else if (c === 0x6e) c = 0x0a;
        else if (c !== 0x5c && c !== 0x22) this.fail();
        out.push(c);
        continue;
      }
      if (c === 0x22) {
        quote = !quote;
        continue;
      }
      out.push(c);
    }
  }
}

/**
 * The values of one or more configuration files, in the order git reads them (later wins for a
 * single value; `getAll` lists them all).
 */
export class GitConfig {
  private readonly list: ConfigEntry[] = [];

  /** Reads `file` (and what it includes); a missing file reads as empty. */
  static read(file: string, options: ConfigReadOptions = {}): GitConfig {
    const config = new GitConfig();
    config.add(file, options);
    return config;
  }

  /** Appends the entries of `file` (and its includes) after those already read. */
  add(file: string, options: ConfigReadOptions = {}): this {
    this.readFile(file, options, 0);
    return this;
  }

  /**
   * Appends one `-c name=value` of git's command line (`name` alone is a boolean true, `name=` an
   * empty string); it wins over every file, as in git.
   */
  addParameter(spec: string): this {
    const eq = spec.indexOf('=');
    const key = eq < 0 ? spec : spec.slice(0, eq);
    return this.addPair(key, eq < 0 ? null : spec.slice(eq + 1));
  }

  /** A key and value from the command line or the environment (null: a bare boolean). */
  addPair(key: string, value: string | null): this {
    this.list.push({ key: normalizeKey(key), value, file: 'command line' });
    return this;
  }

  get entries(): readonly ConfigEntry[] {
    return this.list;
  }

  /** The last value of `key` (`git config --get`), null for a bare boolean, undefined when unset. */
  get(key: string): string | null | undefined {
    const k = normalizeKey(key);
    for (let i = this.list.length - 1; i >= 0; i--) if ((this.list[i] as ConfigEntry).key === k) return (this.list[i] as ConfigEntry).value;
    return undefined;
  }

  /** Every value of `key`, in order (`git config --get-all`). */
  getAll(key: string): (string | null)[] {
    const k = normalizeKey(key);
    return this.list.filter((e) => e.key === k).map((e) => e.value);
  }

  /** `git config --bool`: undefined when unset; CONFIG_INVALID for a value that is no boolean. */
  getBool(key: string): boolean | undefined {
    const v = this.get(key);
    return v === undefined ? undefined : parseBool(v, key);
  }

  /** `git config --int`: with the suffixes k, m and g (powers of 1024), as git's git_parse_signed. */
  getInt(key: string): number | undefined {
    const v = this.get(key);
    if (v === undefined) return undefined;
    const n = v === null ? undefined : parseConfigInt(v);
    if (n === undefined) throw new PackwrightError('CONFIG_INVALID', `bad numeric config value '${v ?? ''}' for '${key}'`);
    return n;
  }

  private readFile(file: string, options: ConfigReadOptions, depth: number): void {
    if (depth > MAX_INCLUDE_DEPTH) {
      throw new PackwrightError('CONFIG_INVALID', `exceeded maximum include depth (${MAX_INCLUDE_DEPTH}) while including ${file}`, { file });
    }
    // git skips a file it cannot read as one: missing, or a directory (`path =` names the
    // including file's own directory).
    const text = readFileIfPresent(file, 'config file');
    if (text === undefined) return;
    new Parser(text, file, (key, value, line) => {
      this.list.push({ key, value, file, line });
      if (value === null || !key.endsWith('.path')) return;
      if (key === 'include.path' || (key.startsWith('includeif.') && this.conditionHolds(key.slice(10, -5), file, options))) {
        this.readFile(includePath(value, file, options), options, depth + 1);
      }
    }).parse();
  }

  /** Whether an `[includeIf "<condition>"]` section applies (git's include_condition_is_true). */
  private conditionHolds(condition: string, file: string, options: ConfigReadOptions): boolean {
    const colon = condition.indexOf(':');
    if (colon < 0) return false;
    const kind = condition.slice(0, colon);
    const pattern = condition.slice(colon + 1);
    if (kind === 'gitdir' || kind === 'gitdir/i') return options.gitDir !== undefined && gitDirMatches(pattern, file, options, kind === 'gitdir/i');
    if (kind === 'onbranch') {
      const branch = options.gitDir === undefined ? undefined : currentBranch(options.gitDir);
      if (branch === undefined) return false;
      return wildmatch(pattern.endsWith('/') ? `${pattern}**` : pattern, branch, { pathname: true });
    }
    // hasconfig:remote.*.url (git 2.36) is not evaluated: such includes are skipped.
    return false;
  }
}

/** git_config_bool. */
export function parseBool(value: string | null, key = ''): boolean {
  if (value === null) return true;
  const v = value.toLowerCase();
  if (v === '' || v === 'false' || v === 'no' || v === 'off') return false;
  if (v === 'true' || v === 'yes' || v === 'on') return true;
  const n = parseConfigInt(value);
  if (n === undefined) throw new PackwrightError('CONFIG_INVALID', `bad boolean config value '${value}' for '${key}'`);
  return n !== 0;
}

/** git_parse_signed: a decimal (or 0x hex, 0 octal, as strtoimax reads it) with an optional k, m or g. */
export function parseConfigInt(value: string): number | undefined {
  const m = /^\s*([-+]?)(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)([kKmMgG]?)$/.exec(value);
  if (m === null) return undefined;
  const [, sign, digits, unit] = m as unknown as [string, string, string, string];
  let n = digits.startsWith('0x') || digits.startsWith('0X') ? parseInt(digits.slice(2), 16) : digits.length > 1 && digits.startsWith('0') ? parseInt(digits, 8) : Number(digits);
  n *= { '': 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 }[unit.toLowerCase()] as number;
  return sign === '-' ? -n : n;
}

function expandHome(path: string, options: ConfigReadOptions): string {
  if (path === '~' || path.startsWith('~/')) return join(options.home ?? process.env['HOME'] ?? homedir(), path.slice(1));
  return path;
}

/** An include path: `~/` expanded, relative ones from the including file's directory. */
function includePath(value: string, from: string, options: ConfigReadOptions): string {
  const p = expandHome(value, options);
  return isAbsolute(p) ? p : resolve(dirname(from), p);
}

/** git's include_by_gitdir, with its pattern rules (prepare_include_condition_pattern). */
function gitDirMatches(raw: string, file: string, options: ConfigReadOptions, icase: boolean): boolean {
  let pattern = expandHome(raw, options);
  let prefix = 0;
  if (pattern.startsWith('./')) {
    // Relative to the directory of the file that has the condition (its real path).
    const dir = dirname(realpathForgiving(file));
    pattern = `${dir}/${pattern.slice(2)}`;
    prefix = dir.length + 1;
  } else if (!isAbsolute(pattern)) {
    pattern = `**/${pattern}`;
  }
  if (pattern.endsWith('/')) pattern += '**';
  const gitDir = options.gitDir as string;
  // The real path first, then the absolute one (a symlinked ~/work still matches gitdir:~/work/).
  for (const text of [realpathForgiving(gitDir), resolve(gitDir)]) {
    const literal = pattern.slice(0, prefix);
    const head = text.slice(0, prefix);
    if (text.length < prefix || (icase ? literal.toLowerCase() !== head.toLowerCase() : literal !== head)) continue;
    if (wildmatch(pattern.slice(prefix), text.slice(prefix), { pathname: true, caseFold: icase })) return true;
  }
  return false;
}


/** The branch HEAD names (`main` for `ref: refs/heads/main`), or undefined when detached. */
function currentBranch(gitDir: string): string | undefined {
  const head = join(gitDir, 'HEAD');
  if (!existsSync(head)) return undefined;
  const m = /^ref: refs\/heads\/(.+?)\s*$/.exec(readFileSync(head, 'utf8'));
  return m?.[1];
}

/**
 * The configuration git passes to the commands it runs (git_config_from_parameters): the
 * GIT_CONFIG_COUNT pairs (GIT_CONFIG_KEY_<n>, GIT_CONFIG_VALUE_<n>), then GIT_CONFIG_PARAMETERS,
 * where `git -c` puts its settings for children: shell-quoted `'key=value'` (or `'key'='value'`,
 * for keys that hold '='), space-separated. What does not parse is CONFIG_INVALID in git's words
 * ("bogus format in GIT_CONFIG_PARAMETERS"), as git refuses it.
 */
export function configFromEnvironment(env: Readonly<Record<string, string | undefined>>): { key: string; value: string | null }[] {
  const out: { key: string; value: string | null }[] = [];
  const bad = (message: string): never => {
    throw new PackwrightError('CONFIG_INVALID', message);
  };
  const countText = env['GIT_CONFIG_COUNT'];
  if (countText !== undefined) {
    if (!/^\d*$/.test(countText)) bad('bogus count in GIT_CONFIG_COUNT');
    const count = Number(countText || '0');
    for (let i = 0; i < count; i++) {
      const key = env[`GIT_CONFIG_KEY_${i}`];
      const value = env[`GIT_CONFIG_VALUE_${i}`];
      if (key === undefined) bad(`missing config key GIT_CONFIG_KEY_${i}`);
      if (value === undefined) bad(`missing config value GIT_CONFIG_VALUE_${i}`);
      out.push({ key: key as string, value: value as string });
    }
  }
  const text = env['GIT_CONFIG_PARAMETERS'];
  if (text === undefined) return out;
  let p = 0;
  // One single-quoted word (git's sq_dequote_step: '\'' and '\!' stand for ' and !).
  const quoted = (): string | undefined => {
    if (text[p] !== "'") return undefined;
    p++;
    let word = '';
    for (;;) {
      const q = text.indexOf("'", p);
      if (q < 0) return undefined;
      word += text.slice(p, q);
      p = q + 1;
      if (text[p] === '\\' && (text[p + 1] === "'" || text[p + 1] === '!') && text[p + 2] === "'") {
        word += text[p + 1];
        p += 3;
        continue;
      }
      return word;
    }
  };
  while (p < text.length) {
    while (p < text.length && /\s/.test(text[p] as string)) p++;
    if (p >= text.length) break;
    const first = quoted();
    if (first === undefined) bad('bogus format in GIT_CONFIG_PARAMETERS');
    const key = first as string;
    if (text[p] === '=') {
      p++;
      if (text[p] === "'") {
        const value = quoted();
        if (value === undefined || (p < text.length && !/\s/.test(text[p] as string))) bad('bogus format in GIT_CONFIG_PARAMETERS');
        out.push({ key, value: value as string });
      } else if (p >= text.length || /\s/.test(text[p] as string)) {
        // 'key'= : a bare boolean.
        out.push({ key, value: null });
      } else {
        bad('bogus format in GIT_CONFIG_PARAMETERS');
      }
    } else if (p < text.length && !/\s/.test(text[p] as string)) {
      bad('bogus format in GIT_CONFIG_PARAMETERS');
    } else {
      // Old style, 'key=value' in one word.
      const eq = key.indexOf('=');
      out.push(eq < 0 ? { key, value: null } : { key: key.slice(0, eq), value: key.slice(eq + 1) });
    }
  }
  return out;
}
