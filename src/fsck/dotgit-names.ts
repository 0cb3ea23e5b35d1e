/**
 * Names that a case-insensitive or normalising file system would take for `.git`, `.gitmodules`
 * and the like (git's is_hfs_dot* in utf8.c and is_ntfs_dot* in path.c). fsck flags tree entries
 * so named on every platform, since a repository may be checked out on any of them. Names are
 * bytes (latin1 strings: one char a byte).
 */

/** Code points HFS+ ignores when it compares names (git's next_hfs_char). */
const HFS_IGNORED = new Set([0x200c, 0x200d, 0x200e, 0x200f, 0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x206a, 0x206b, 0x206c, 0x206d, 0x206e, 0x206f, 0xfeff]);

/** The next code point of UTF-8 `name` from `at` that HFS+ does not ignore: [code point, next position], 0 at the end, -1 if malformed. */
function nextHfsChar(name: string, at: number): [number, number] {
  for (;;) {
    if (at >= name.length) return [0, at];
    const b0 = name.charCodeAt(at);
    let cp: number;
    let len: number;
    if (b0 < 0x80) { cp = b0; len = 1; }
    else if ((b0 & 0xe0) === 0xc0) { cp = b0 & 0x1f; len = 2; }
    else if ((b0 & 0xf0) === 0xe0) { cp = b0 & 0x0f; len = 3; }
    else if ((b0 & 0xf8) === 0xf0) { cp = b0 & 0x07; len = 4; }
    else return [-1, at];
    if (at + len > name.length) return [-1, at];
    for (let i = 1; i < len; i++) {
      const b = name.charCodeAt(at + i);
      if ((b & 0xc0) !== 0x80) return [-1, at];
      cp = (cp << 6) | (b & 0x3f);
    }
    at += len;
    if (!HFS_IGNORED.has(cp)) return [cp, at];
  }
}

function isHfsDot(name: string, needle: string): boolean {
  let [c, at] = nextHfsChar(name, 0);
  if (c !== 0x2e) return false;
  for (let i = 0; i < needle.length; i++) {
    [c, at] = nextHfsChar(name, at);
    if (c < 0 || c > 127 || String.fromCharCode(c).toLowerCase() !== needle[i]) return false;
  }
  [c] = nextHfsChar(name, at);
  return c === 0 || c === 0x2f;
}

/** True from `at` on only spaces and periods, up to the end or a `:` (an NTFS stream name). */
function onlySpacesAndPeriods(name: string, at: number): boolean {
  for (; at < name.length; at++) {
    const c = name[at];
    if (c === ':') return true;
    if (c !== ' ' && c !== '.') return false;
  }
  return true;
}

function isNtfsDot(name: string, needle: string, shortPrefix: string): boolean {
  if (name[0] === '.' && name.slice(1, 1 + needle.length).toLowerCase() === needle) return onlySpacesAndPeriods(name, needle.length + 1);
  // A regular 8.3 short name: the first six characters, then ~1 to ~4.
  if (name.slice(0, 6).toLowerCase() === needle.slice(0, 6) && name[6] === '~' && name[7] !== undefined && name[7] >= '1' && name[7] <= '4') return onlySpacesAndPeriods(name, 8);
  // The fall-back short name NTFS makes from a hash: shortPrefix, up to 6 characters, ~ and digits.
  let sawTilde = false;
  for (let i = 0; i < 8; i++) {
    const ch = name[i];
    if (ch === undefined) return false;
    if (sawTilde) {
      if (ch < '0' || ch > '9') return false;
    } else if (ch === '~') {
      const d = name[++i];
      if (d === undefined || d < '1' || d > '9') return false;
      sawTilde = true;
    } else if (i >= 6 || ch.charCodeAt(0) & 0x80 || ch.toLowerCase() !== shortPrefix[i]) {
      return false;
    }
  }
  return onlySpacesAndPeriods(name, 8);
}

/** `.git` under NTFS rules: `.git` or `git~1`, then only spaces and periods, up to the end, a separator or `:`. */
export function isNtfsDotGit(name: string): boolean {
  let rest: string;
  if (name[0] === '.' && name.slice(1, 4).toLowerCase() === 'git') rest = name.slice(4);
  else if (name.slice(0, 3).toLowerCase() === 'git' && name.slice(3, 5) === '~1') rest = name.slice(5);
  else return false;
  for (const c of rest) {
    if (c === '/' || c === '\\' || c === ':') return true;
    if (c !== '.' && c !== ' ') return false;
  }
  return true;
}

export const isDotGit = (name: string): boolean => isHfsDot(name, 'git') || isNtfsDotGit(name);
export const isDotGitmodules = (name: string): boolean => isHfsDot(name, 'gitmodules') || isNtfsDot(name, 'gitmodules', 'gi7eba');
export const isDotGitattributes = (name: string): boolean => isHfsDot(name, 'gitattributes') || isNtfsDot(name, 'gitattributes', 'gi7d29');
export const isDotGitignore = (name: string): boolean => isHfsDot(name, 'gitignore') || isNtfsDot(name, 'gitignore', 'gi250a');
export const isDotMailmap = (name: string): boolean => isHfsDot(name, 'mailmap') || isNtfsDot(name, 'mailmap', 'maba30');
/** `.gitmodules` under NTFS rules alone (for the parts after a backslash). */
export const isNtfsDotGitmodules = (name: string): boolean => isNtfsDot(name, 'gitmodules', 'gi7eba');
