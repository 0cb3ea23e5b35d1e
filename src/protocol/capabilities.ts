// Capability lists (gitprotocol-capabilities): v0/v1 send them after a NUL on the first ref line
// and the client names its choice after its first want; each is a word, or `name=value`.

/** The capabilities in a space-separated list, each name to its value ('' for a bare word). */
export function parseCapabilities(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const word of text.split(' ')) {
    if (word === '') continue;
    const eq = word.indexOf('=');
    if (eq < 0) out.set(word, '');
    else out.set(word.slice(0, eq), word.slice(eq + 1));
  }
  return out;
}

/** A protocol version asked for in GIT_PROTOCOL or a Git-Protocol header (`version=2:...`): the highest known one asked, else 0. */
export function requestedProtocolVersion(gitProtocol: string | undefined): 0 | 1 | 2 {
  let version: 0 | 1 | 2 = 0;
  for (const item of (gitProtocol ?? '').split(':')) {
    if (!item.startsWith('version=')) continue;
    const v = item.slice('version='.length);
    // git takes the greatest version it knows of those listed (determine_protocol_version_server).
    if (v === '2') version = 2;
    else if (v === '1' && version < 1) version = 1;
  }
  return version;
}

/**
 * The `agent=` a server advertises (git's git_user_agent_sanitized): GIT_USER_AGENT when set,
 * else `fallback`, trimmed, with spaces, controls and non-ASCII as dots.
 */
export function advertisedAgent(env: Readonly<Record<string, string | undefined>>, fallback: string | undefined): string {
  const agent = (env['GIT_USER_AGENT'] ?? fallback ?? 'packwright').trim();
  return agent.replace(/[\x00-\x20\x7f-\uffff]/g, '.');
}
