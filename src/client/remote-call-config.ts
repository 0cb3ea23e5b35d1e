// What a client call takes from the repository's configuration: git's http.* settings (http.c,
// urlmatch.c) and how it reaches ssh (connect.c).
import type { GitConfig } from '../config/git-config.js';
import type { Repository } from '../repo/repository.js';

/**
 * The headers git's `http.extraHeader` adds to every request to `url`: from `http.extraHeader` and
 * from `http.<url>.extraHeader` whose URL `url` starts with (scheme, host and a leading part of
 * the path; git's urlmatch also weighs user names and the longest match, which this does not), in
 * the order the configuration lists them; an empty value clears the ones before it, as in git.
 */
export function extraHeaders(config: GitConfig, url: string): Record<string, string> {
  let lines: string[] = [];
  for (const e of config.entries) {
    if (!e.key.startsWith('http.') || !e.key.endsWith('.extraheader')) continue;
    const scope = e.key.slice(5, -12);
    if (scope !== '' && !matchesUrl(scope, url)) continue;
    if (e.value === null || e.value === '') lines = [];
    else lines.push(e.value);
  }
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim()] = line.slice(colon + 1).trim();
  }
  return headers;
}

/** Whether a configuration URL (`https://example.com/org`) covers `url`, on a path-segment boundary. */
function matchesUrl(pattern: string, url: string): boolean {
  const p = pattern.replace(/\/+$/, '');
  return url === p || url.startsWith(`${p}/`);
}

/** The protocol git's protocol.version asks a server for: 0 or 1 as set, else 2 (git's default since 2.26). */
export function configuredProtocol(config: GitConfig): 0 | 1 | 2 {
  const version = config.getInt('protocol.version');
  return version === 0 || version === 1 ? version : 2;
}

/** core.sshCommand, ssh.variant and the repository's environment, for a connection over ssh. */
export function sshSettings(repo: Repository): { sshCommand: string | undefined; sshVariant: string | undefined; env: Readonly<Record<string, string | undefined>> } {
  const command = repo.config.get('core.sshcommand');
  const variant = repo.config.get('ssh.variant');
  return { sshCommand: typeof command === 'string' ? command : undefined, sshVariant: typeof variant === 'string' ? variant : undefined, env: repo.env };
}
