import type { GitConfig } from './git-config.js';

/** A URL as git's urlmatch compares it (url_normalize): scheme and host in lower case, no default port, a normalized path. */
interface UrlParts {
  scheme: string;
  user: string | undefined;
  host: string;
  port: string;
  path: string;
}

/** How well a configuration URL matched (git's struct urlmatch_item): compared host length first, then path, then a user name. */
interface UrlMatch {
  host: number;
  path: number;
  user: boolean;
}

/** Percent-escapes as git normalizes them: unreserved characters decoded, the rest with upper-case hex digits. */
function normalizeEscapes(text: string): string {
  return text.replace(/%([0-9a-fA-F]{2})/g, (_, hex: string) => {
    const c = String.fromCharCode(parseInt(hex, 16));
    return /[A-Za-z0-9\-._~]/.test(c) ? c : `%${hex.toUpperCase()}`;
  });
}

/** `text` taken apart as git's url_normalize does, or undefined when it is no `<scheme>://` URL. */
function urlParts(text: string): UrlParts | undefined {
  if (!/^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(text)) return undefined;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    // Not a URL by the WHATWG rules either: git's url_normalize fails on it, and it matches nothing.
    return undefined;
  }
  const scheme = url.protocol.slice(0, -1).toLowerCase();
  // The WHATWG parser drops default ports of http(s) only; git drops them for its own schemes.
  const defaults: Record<string, string> = { http: '80', https: '443', ftp: '21', ftps: '990', git: '9418', ssh: '22' };
  const port = url.port === defaults[scheme] ? '' : url.port;
  const hasUser = /^[^/]*\/\/[^/@]*@/.test(text);
  return { scheme, user: hasUser ? normalizeEscapes(url.username) : undefined, host: url.hostname.toLowerCase(), port, path: normalizeEscapes(url.pathname === '' ? '/' : url.pathname) };
}

/** git's match_host: label by label, a `*` label matching any one label. */
function matchHost(host: string, pattern: string): boolean {
  const labels = host.split('.');
  const patterns = pattern.split('.');
  return labels.length === patterns.length && patterns.every((p, i) => p === '*' || p === labels[i]);
}

/** git's url_match_prefix: the length of the path match (with an implied final '/'), 0 for none. */
function pathMatch(path: string, prefix: string): number {
  if (prefix === '' || prefix === '/') return path === '' || path.startsWith('/') ? 1 : 0;
  const p = prefix.endsWith('/') ? prefix.slice(0, -1) : prefix;
  if (!path.startsWith(p)) return 0;
  return path.length === p.length || path[p.length] === '/' ? p.length + 1 : 0;
}

/** git's match_urls: how `pattern` (a configuration URL) covers `url`, undefined when it does not. */
function matchUrl(url: UrlParts, pattern: UrlParts): UrlMatch | undefined {
  if (url.scheme !== pattern.scheme) return undefined;
  if (pattern.user !== undefined && url.user !== pattern.user) return undefined;
  if (!matchHost(url.host, pattern.host) || url.port !== pattern.port) return undefined;
  const path = pathMatch(url.path, pattern.path);
  if (path === 0) return undefined;
  return { host: pattern.host.length, path, user: pattern.user !== undefined };
}

function compareMatches(a: UrlMatch, b: UrlMatch): number {
  if (a.host !== b.host) return a.host < b.host ? -1 : 1;
  if (a.path !== b.path) return a.path < b.path ? -1 : 1;
  if (a.user !== b.user) return b.user ? -1 : 1;
  return 0;
}

/** How urlMatchedValues picks, for the sections that do not take git's default (credential.*). */
export interface UrlMatchOptions {
  /** Every matching entry, however closely (git's select_all: credential.<url>.helper adds helpers). */
  all?: boolean | undefined;
  /** Whether a subsection that is no `<scheme>://` URL (`example.com`) covers the URL (git's fallback_match_fn). */
  partial?: ((scope: string) => boolean) | undefined;
}

/**
 * The values of `<section>.<key>` and `<section>.<url>.<key>` that git applies for `url`, in the
 * order it applies them (urlmatch_config_entry): in configuration order, each entry whose URL
 * covers `url` (same scheme, host with `*` labels as wildcards, port, a leading part of the path,
 * the user name if it gives one), unless an entry applied before matched more closely (a longer
 * host, then a longer path, then a user name). The last value is the setting of a single-valued
 * key; a list (http.extraHeader) is built from them all in turn.
 */
export function urlMatchedValues(config: GitConfig, section: string, key: string, url: string, options: UrlMatchOptions = {}): (string | null)[] {
  const target = urlParts(url);
  const prefix = `${section}.`;
  const suffix = `.${key.toLowerCase()}`;
  const values: (string | null)[] = [];
  let best: UrlMatch | undefined;
  for (const e of config.entries) {
    let match: UrlMatch = { host: 0, path: 0, user: false };
    if (e.key !== `${prefix}${key.toLowerCase()}`) {
      if (!e.key.startsWith(prefix) || !e.key.endsWith(suffix) || e.key.length <= prefix.length + suffix.length) continue;
      const scope = e.key.slice(prefix.length, e.key.length - suffix.length);
      const pattern = urlParts(scope);
      if (pattern === undefined) {
        if (options.partial?.(scope) !== true) continue;
      } else {
        const m = target !== undefined ? matchUrl(target, pattern) : undefined;
        if (m === undefined) continue;
        match = m;
      }
    }
    if (options.all !== true && best !== undefined && compareMatches(match, best) < 0) continue;
    best = match;
    values.push(e.value);
  }
  return values;
}

/** The single value git takes for `<section>[.<url>].<key>` (see urlMatchedValues); undefined when none is set. */
export function urlMatchedValue(config: GitConfig, section: string, key: string, url: string): string | null | undefined {
  const values = urlMatchedValues(config, section, key, url);
  return values.length === 0 ? undefined : values[values.length - 1];
}
