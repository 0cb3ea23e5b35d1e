// git's colors (color.c): a color value as `git config --get-color` turns it into an ANSI escape,
// and whether a command's color.<slot> setting (else color.ui) wants color on a stream.
import { PackwrightError } from '../errors/packwright-error.js';
import { parseBool, type GitConfig } from './git-config.js';

/** git's GIT_COLOR_RESET. */
export const COLOR_RESET = '\x1b[m';

const NAMES = ['black', 'red', 'green', 'yellow', 'blue', 'magenta', 'cyan', 'white'];
/** Attribute words and their SGR codes; `no<word>` (or `no-<word>`) turns one off. */
const ATTRIBUTES: Record<string, number> = { bold: 1, dim: 2, italic: 3, ul: 4, blink: 5, reverse: 7, strike: 9 };
const NEGATED: Record<string, number> = { bold: 22, dim: 22, italic: 23, ul: 24, blink: 25, reverse: 27, strike: 29 };

/** One color word as git's parse_color reads it: undefined when it is none. */
type Color = { kind: 'normal' } | { kind: 'default' } | { kind: 'ansi'; n: number; bright: boolean } | { kind: '256'; n: number } | { kind: 'rgb'; r: number; g: number; b: number };

function parseColorWord(word: string): Color | undefined {
  const w = word.toLowerCase();
  if (w === 'normal') return { kind: 'normal' };
  if (w === 'default') return { kind: 'default' };
  if (/^#[0-9a-f]{6}$/.test(w)) return { kind: 'rgb', r: parseInt(w.slice(1, 3), 16), g: parseInt(w.slice(3, 5), 16), b: parseInt(w.slice(5, 7), 16) };
  const bright = w.startsWith('bright');
  const name = NAMES.indexOf(bright ? w.slice(6) : w);
  if (name >= 0) return { kind: 'ansi', n: name, bright };
  if (/^-?\d+$/.test(w)) {
    const n = Number(w);
    if (n === -1) return { kind: 'normal' };
    if (n >= 0 && n < 8) return { kind: 'ansi', n, bright: false };
    if (n >= 8 && n < 256) return { kind: '256', n };
  }
  return undefined;
}

function colorCode(c: Color, background: boolean): string {
  switch (c.kind) {
    case 'default': return background ? '49' : '39';
    case 'ansi': return `${c.bright ? (background ? '10' : '9') : background ? '4' : '3'}${c.n}`;
    case '256': return `${background ? 48 : 38};5;${c.n}`;
    case 'rgb': return `${background ? 48 : 38};2;${c.r};${c.g};${c.b}`;
    default: return '';
  }
}

/**
 * The escape a color value stands for (git's color_parse): up to two colors (foreground, then
 * background) and any attributes, `reset` alone, or nothing at all (""). A word it does not know
 * is CONFIG_INVALID with git's words.
 */
export function parseColor(value: string): string {
  const words = value.split(/\s+/).filter((w) => w !== '');
  if (words.length === 1 && words[0]?.toLowerCase() === 'reset') return COLOR_RESET;
  let fg: Color | undefined;
  let bg: Color | undefined;
  const attributes = new Set<number>();
  for (const word of words) {
    const color = parseColorWord(word);
    if (color !== undefined) {
      if (fg === undefined) fg = color;
      else if (bg === undefined) bg = color;
      else throw bad(value);
      continue;
    }
    // Color names are read in any case, attributes only in lower case (git's parse_attr).
    const w = word;
    const negated = /^no-?(.*)$/.exec(w)?.[1];
    if (ATTRIBUTES[w] !== undefined) attributes.add(ATTRIBUTES[w] as number);
    else if (negated !== undefined && NEGATED[negated] !== undefined) attributes.add(NEGATED[negated] as number);
    else throw bad(value);
  }
  const parts = [...attributes].sort((a, b) => a - b).map(String);
  if (fg !== undefined && fg.kind !== 'normal') parts.push(colorCode(fg, false));
  if (bg !== undefined && bg.kind !== 'normal') parts.push(colorCode(bg, true));
  return parts.length === 0 ? '' : `\x1b[${parts.join(';')}m`;
}

function bad(value: string): PackwrightError {
  return new PackwrightError('CONFIG_INVALID', `invalid color value: ${value}`);
}

/**
 * Whether `key` (color.push, color.transport, color.advice) wants color on a stream (git's
 * git_config_colorbool and want_color): never/false no, always yes, auto/true (and the default)
 * when the stream is a terminal whose TERM is not dumb. color.ui stands in for an unset `key` only
 * where the command reads it (`ui`): git's push, transport and advice colors do not.
 */
export function wantColor(config: GitConfig, key: string, isTTY: boolean, env: Readonly<Record<string, string | undefined>>, ui = true): boolean {
  const setting = (k: string): 'never' | 'always' | 'auto' | undefined => {
    const v = config.get(k);
    if (v === undefined) return undefined;
    const text = typeof v === 'string' ? v.toLowerCase() : undefined;
    if (text === 'never' || text === 'always' || text === 'auto') return text;
    return parseBool(v, k) ? 'auto' : 'never';
  };
  const chosen = setting(key) ?? (ui ? setting('color.ui') : undefined) ?? 'auto';
  if (chosen !== 'auto') return chosen === 'always';
  return isTTY && env['TERM'] !== 'dumb';
}

/** The escape of color.<slot> when set (git's color_parse of it), else `fallback`. */
export function slotColor(config: GitConfig, key: string, fallback: string): string {
  const v = config.get(key);
  return typeof v === 'string' ? parseColor(v) : fallback;
}
