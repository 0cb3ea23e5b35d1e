// How the HTTP client authenticates to a proxy, as git asks curl to (http.proxyAuthMethod):
// Basic, or Digest (RFC 7616: MD5, SHA-256 and their -sess forms, qop "auth" or none), chosen
// from the proxy's 407 challenges under "anyauth", git's default.
import { createHash, randomBytes } from 'node:crypto';
import { PackwrightError } from '../errors/packwright-error.js';

/**
 * git's http.proxyAuthMethod values: anyauth takes what the proxy offers. packwright speaks basic
 * and digest; a request through a proxy with negotiate or ntlm is refused (checkProxyAuthMethod).
 */
export type ProxyAuthMethod = 'anyauth' | 'basic' | 'digest' | 'negotiate' | 'ntlm';

/** A proxy's Digest challenge, and how many requests have answered its nonce. */
export interface DigestChallenge {
  realm: string;
  nonce: string;
  opaque: string | undefined;
  algorithm: 'MD5' | 'MD5-sess' | 'SHA-256' | 'SHA-256-sess';
  /** Whether the proxy offered qop "auth" (the response then counts requests and has a cnonce). */
  qopAuth: boolean;
  nc: number;
}

/** What a client knows of how to answer one proxy: its credentials and the scheme it asked for. */
export interface ProxyCredentials {
  username: string;
  password: string;
  /** The scheme learned from the proxy's 407 (or forced by the method); undefined until one arrives under anyauth. */
  scheme: 'basic' | 'digest' | undefined;
  digest: DigestChallenge | undefined;
}

/** git's http.proxyAuthMethod (or GIT_HTTP_PROXY_AUTHMETHOD) as a method: a name git does not know is anyauth, as git falls back to it. */
export function parseProxyAuthMethod(text: string | undefined): ProxyAuthMethod {
  const name = (text ?? 'anyauth').toLowerCase();
  return name === 'basic' || name === 'digest' || name === 'negotiate' || name === 'ntlm' ? name : 'anyauth';
}

/** Refuses, before anything is sent to the proxy, the methods curl has and packwright does not. */
export function checkProxyAuthMethod(method: ProxyAuthMethod): void {
  if (method === 'negotiate' || method === 'ntlm') {
    throw new PackwrightError('INVALID_ARGUMENT', `http.proxyAuthMethod ${method}: packwright authenticates to proxies with basic and digest (or anyauth, which answers either)`);
  }
}

/**
 * The Proxy-Authorization for a request (`method`, and `uri` as curl puts it in a digest: the
 * path and query, also for a request sent in absolute form, and host:port for CONNECT) with these
 * credentials: Basic when the method is basic or the proxy asked for it, a
 * Digest response once the proxy has sent its challenge; none under anyauth before the proxy
 * has said which it takes (curl's CURLAUTH_ANY: the password is not sent in the clear to a proxy
 * that would take a digest).
 */
export function proxyAuthorizationFor(auth: ProxyCredentials, method: ProxyAuthMethod, requestMethod: string, uri: string): Record<string, string> {
  if (auth.username === '') return {};
  if (auth.digest !== undefined && method !== 'basic') return { 'Proxy-Authorization': digestResponse(auth, auth.digest, requestMethod, uri) };
  if (method === 'basic' || auth.scheme === 'basic') return { 'Proxy-Authorization': `Basic ${Buffer.from(`${auth.username}:${auth.password}`).toString('base64')}` };
  return {};
}

/**
 * Takes what a 407 offered (its Proxy-Authenticate values): the scheme to answer with under
 * `method`, a Digest challenge kept with a fresh count. Returns whether the next attempt may
 * succeed with the same credentials: a scheme newly learned, or a digest whose nonce had gone
 * stale; false when the proxy refused what was sent (new credentials are needed) or offered
 * nothing packwright speaks.
 */
export function learnChallenge(auth: ProxyCredentials, method: ProxyAuthMethod, challenges: readonly string[]): boolean {
  const digest = method === 'basic' ? undefined : challenges.map(parseDigest).find((c) => c !== undefined);
  const basic = method !== 'digest' && challenges.some((c) => /^basic(\s|$)/i.test(c.trim()));
  const had = auth.scheme;
  if (digest !== undefined) {
    const stale = auth.digest !== undefined && digest.stale;
    auth.scheme = 'digest';
    auth.digest = digest.challenge;
    return had !== 'digest' || stale;
  }
  if (basic) {
    auth.scheme = 'basic';
    auth.digest = undefined;
    return had !== 'basic' && method !== 'basic';
  }
  return false;
}

/** A Digest challenge's parameters (`Digest realm="x", nonce="y", ...`), or undefined for another scheme or an algorithm not spoken. */
function parseDigest(text: string): { challenge: DigestChallenge; stale: boolean } | undefined {
  const m = /^\s*digest\s+/i.exec(text);
  if (m === null) return undefined;
  const params = new Map<string, string>();
  const re = /([A-Za-z0-9_-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]*))\s*(?:,|$)/g;
  re.lastIndex = m[0].length;
  for (let p = re.exec(text); p !== null; p = re.exec(text)) params.set((p[1] as string).toLowerCase(), p[2] !== undefined ? p[2].replace(/\\(.)/g, '$1') : (p[3] as string));
  const nonce = params.get('nonce');
  if (nonce === undefined) return undefined;
  const algorithm = (params.get('algorithm') ?? 'MD5').toUpperCase();
  const known = { 'MD5': 'MD5', 'MD5-SESS': 'MD5-sess', 'SHA-256': 'SHA-256', 'SHA-256-SESS': 'SHA-256-sess' } as const;
  if (!(algorithm in known)) return undefined;
  const qop = params.get('qop');
  const qopAuth = qop !== undefined && qop.split(',').some((q) => q.trim().toLowerCase() === 'auth');
  // A proxy that offers only auth-int (a digest of the body too) cannot be answered here.
  if (qop !== undefined && !qopAuth) return undefined;
  return {
    challenge: { realm: params.get('realm') ?? '', nonce, opaque: params.get('opaque'), algorithm: known[algorithm as keyof typeof known], qopAuth, nc: 0 },
    stale: (params.get('stale') ?? '').toLowerCase() === 'true',
  };
}

/** `Digest ...` answering `challenge` for one request (RFC 7616 section 3.4). */
function digestResponse(auth: ProxyCredentials, challenge: DigestChallenge, requestMethod: string, uri: string): string {
  const sha256 = challenge.algorithm.startsWith('SHA-256');
  const h = (text: string): string => createHash(sha256 ? 'sha256' : 'md5').update(text).digest('hex');
  const cnonce = randomBytes(12).toString('hex');
  let ha1 = h(`${auth.username}:${challenge.realm}:${auth.password}`);
  if (challenge.algorithm.endsWith('-sess')) ha1 = h(`${ha1}:${challenge.nonce}:${cnonce}`);
  const ha2 = h(`${requestMethod}:${uri}`);
  const nc = (++challenge.nc).toString(16).padStart(8, '0');
  const response = challenge.qopAuth ? h(`${ha1}:${challenge.nonce}:${nc}:${cnonce}:auth:${ha2}`) : h(`${ha1}:${challenge.nonce}:${ha2}`);
  const quoted = (s: string): string => `"${s.replace(/(["\\])/g, '\\$1')}"`;
  const parts = [
    `username=${quoted(auth.username)}`, `realm=${quoted(challenge.realm)}`, `nonce=${quoted(challenge.nonce)}`, `uri=${quoted(uri)}`,
    `algorithm=${challenge.algorithm}`, `response=${quoted(response)}`,
  ];
  if (challenge.qopAuth) parts.push('qop=auth', `nc=${nc}`, `cnonce=${quoted(cnonce)}`);
  if (challenge.opaque !== undefined) parts.push(`opaque=${quoted(challenge.opaque)}`);
  return `Digest ${parts.join(', ')}`;
}
