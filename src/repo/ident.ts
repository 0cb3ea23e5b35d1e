import { hostname, userInfo } from 'node:os';
import type { GitConfig } from '../config/git-config.js';
import { approxidate } from '../refs/approxidate.js';

/**
 * The committer identity git writes in reflog lines and commits: `Name <email> <seconds> <+hhmm>`
 * (git's git_committer_info). The name from GIT_COMMITTER_NAME, else user.name, else the login;
 * the email from GIT_COMMITTER_EMAIL, else user.email, else EMAIL, else login@host; the time from
 * GIT_COMMITTER_DATE (`<seconds> <+hhmm>`, `@<seconds> <+hhmm>`, or a date git's approxidate
 * reads), else now in the local zone.
 */
export function committerIdent(env: Readonly<Record<string, string | undefined>>, config: GitConfig, now = Date.now()): string {
  const login = safeLogin();
  const name = env['GIT_COMMITTER_NAME'] ?? stringOf(config.get('user.name')) ?? login;
  const email = env['GIT_COMMITTER_EMAIL'] ?? stringOf(config.get('user.email')) ?? env['EMAIL'] ?? `${login}@${hostname()}`;
  return `${clean(name)} <${clean(email)}> ${identDate(env['GIT_COMMITTER_DATE'], now)}`;
}

function stringOf(value: string | null | undefined): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

function safeLogin(): string {
  try {
    return userInfo().username;
  } catch {
    return 'unknown';
  }
}

/** git strips `<`, `>` and newlines from names and emails, and white space at either end. */
function clean(text: string): string {
  return text.replace(/[<>\n]/g, '').trim();
}

function identDate(given: string | undefined, now: number): string {
  if (given !== undefined && given !== '') {
    const m = /^@?(\d+) ([+-]\d{4})$/.exec(given.trim());
    if (m !== null) return `${m[1] as string} ${m[2] as string}`;
    const t = approxidate(given);
    if (t !== undefined) return `${t} +0000`;
  }
  const offset = -new Date(now).getTimezoneOffset();
  const sign = offset < 0 ? '-' : '+';
  const abs = Math.abs(offset);
  return `${Math.floor(now / 1000)} ${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}${String(abs % 60).padStart(2, '0')}`;
}
