// What a client call takes from the repository's configuration: git's http.* settings (http.c,
// urlmatch.c), the proxy from the environment, and how it reaches ssh (connect.c).
import { join } from 'node:path';
import { PackwrightError } from '../errors/packwright-error.js';
import { parseBool, parseConfigInt, type GitConfig } from '../config/git-config.js';
import { urlMatchedValue, urlMatchedValues } from '../config/url-match.js';
import { LARGE_PACKET_MAX, type HttpSettings } from './http-request.js';
import { parseProxyAuthMethod } from './proxy-auth.js';
import type { Repository } from '../repo/repository.js';

/**
 * The headers git's `http.extraHeader` adds to every request to `url`: the values of
 * `http.extraHeader` and `http.<url>.extraHeader` git applies for it (urlmatch: see
 * urlMatchedValues), in turn; an empty value clears the ones before it, as in git.
 */
export function extraHeaders(config: GitConfig, url: string): Record<string, string> {
  let lines: string[] = [];
  for (const value of urlMatchedValues(config, 'http', 'extraHeader', url)) {
    if (value === null || value === '') lines = [];
    else lines.push(value);
  }
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim()] = line.slice(colon + 1).trim();
  }
  return headers;
}

/**
 * What git's http.c takes from the configuration and the environment for a request to `url`
 * (each `http.<url>.<key>` as urlmatch picks it): the proxy (`remote.<name>.proxy`, then
 * `http.proxy`, then `https_proxy`/`HTTPS_PROXY` for https, `http_proxy` (lower case only) for
 * http, then `all_proxy`/`ALL_PROXY`; an empty one means none), `no_proxy`/`NO_PROXY`, whether to
 * check the server's certificate (`http.sslVerify`, `GIT_SSL_NO_VERIFY`), the certificates to trust
 * (`http.sslCAInfo`, `http.sslCAPath`), the client certificate (`http.sslCert`, `http.sslKey`,
 * `http.sslCertPasswordProtected`), an https proxy's (`http.proxySSLCAInfo`, `http.proxySSLCert`,
 * `http.proxySSLKey`, `http.proxySSLCertPasswordProtected`), each overridden by its `GIT_SSL_*` or
 * `GIT_PROXY_SSL_*` variable as in git, and which redirects to follow (`http.followRedirects`).
 */
export function httpSettings(config: GitConfig, url: string, env: Readonly<Record<string, string | undefined>> = process.env, remoteName?: string): HttpSettings {
  const get = (key: string): string | undefined => {
    const v = urlMatchedValue(config, 'http', key, url);
    return typeof v === 'string' ? v : v === null ? 'true' : undefined;
  };
  const nonEmpty = (...names: string[]): string | undefined => {
    for (const name of names) {
      const v = env[name];
      if (v !== undefined && v !== '') return v;
    }
    return undefined;
  };
  const remoteProxy = remoteName !== undefined ? config.get(`remote.${remoteName}.proxy`) : undefined;
  const remoteAuthMethod = remoteName !== undefined ? config.get(`remote.${remoteName}.proxyauthmethod`) : undefined;
  const https = url.toLowerCase().startsWith('https:');
  const proxy = (typeof remoteProxy === 'string' ? remoteProxy : undefined) ?? get('proxy')
    ?? (https ? nonEmpty('https_proxy', 'HTTPS_PROXY') : nonEmpty('http_proxy')) ?? nonEmpty('all_proxy', 'ALL_PROXY');
  const verifyText = get('sslVerify');
  const sslVerify = env.GIT_SSL_NO_VERIFY !== undefined ? false : verifyText === undefined ? true : parseBool(verifyText, 'http.sslverify');
  const follow = (get('followRedirects') ?? 'initial').toLowerCase();
  const followRedirects = follow === 'initial' ? 'initial' : parseBool(follow, 'http.followredirects') ? 'always' : 'never';
  // git's set_from_env: the environment wins over the configuration.
  const setting = (envName: string, key: string): string | undefined => env[envName] ?? get(key);
  const flag = (envName: string, key: string): boolean => env[envName] !== undefined || parseBool(get(key) ?? 'false', `http.${key.toLowerCase()}`);
  const paths = {
    caInfo: setting('GIT_SSL_CAINFO', 'sslCAInfo'),
    caPath: setting('GIT_SSL_CAPATH', 'sslCAPath'),
    sslCert: setting('GIT_SSL_CERT', 'sslCert'),
    sslKey: setting('GIT_SSL_KEY', 'sslKey'),
    proxyCaInfo: setting('GIT_PROXY_SSL_CAINFO', 'proxySSLCAInfo'),
    proxySslCert: setting('GIT_PROXY_SSL_CERT', 'proxySSLCert'),
    proxySslKey: setting('GIT_PROXY_SSL_KEY', 'proxySSLKey'),
  };
  const settings: HttpSettings = {
    ...(proxy !== undefined && proxy !== '' ? { proxy } : {}),
    ...(nonEmpty('no_proxy', 'NO_PROXY') !== undefined ? { noProxy: nonEmpty('no_proxy', 'NO_PROXY') } : {}),
    sslVerify,
    sslCertPasswordProtected: flag('GIT_SSL_CERT_PASSWORD_PROTECTED', 'sslCertPasswordProtected'),
    proxySslCertPasswordProtected: flag('GIT_PROXY_SSL_CERT_PASSWORD_PROTECTED', 'proxySSLCertPasswordProtected'),
    followRedirects,
    // git's precedence: the environment, then the remote's, then http.proxyAuthMethod.
    proxyAuthMethod: parseProxyAuthMethod(nonEmpty('GIT_HTTP_PROXY_AUTHMETHOD') ?? (typeof remoteAuthMethod === 'string' ? remoteAuthMethod : undefined) ?? get('proxyAuthMethod')),
  };
  const userAgent = env['GIT_HTTP_USER_AGENT'] ?? get('userAgent');
  if (userAgent !== undefined) settings.userAgent = userAgent;
  const intSetting = (envName: string | undefined, key: string): number | undefined => {
    const text = (envName !== undefined ? env[envName] : undefined) ?? get(key);
    if (text === undefined) return undefined;
    const n = parseConfigInt(text);
    if (n === undefined) throw new PackwrightError('CONFIG_INVALID', `bad numeric config value '${text}' for 'http.${key.toLowerCase()}': invalid unit`);
    return n;
  };
  const lowSpeedLimit = intSetting('GIT_HTTP_LOW_SPEED_LIMIT', 'lowSpeedLimit');
  const lowSpeedTime = intSetting('GIT_HTTP_LOW_SPEED_TIME', 'lowSpeedTime');
  // curl's check runs only with both (git sets them only so).
  if (lowSpeedLimit !== undefined && lowSpeedTime !== undefined && lowSpeedLimit > 0 && lowSpeedTime > 0) {
    settings.lowSpeedLimit = lowSpeedLimit;
    settings.lowSpeedTime = lowSpeedTime;
  }
  const postBuffer = intSetting(undefined, 'postBuffer');
  // git: a negative value is warned of; anything under LARGE_PACKET_MAX is taken as it.
  if (postBuffer !== undefined) settings.postBuffer = Math.max(postBuffer, LARGE_PACKET_MAX);
  // A path as git's git_config_pathname reads it: `~/` is the home directory.
  const cookieFile = get('cookieFile');
  if (cookieFile !== undefined && cookieFile !== '') {
    settings.cookieFile = cookieFile.startsWith('~/') && env.HOME !== undefined ? join(env.HOME, cookieFile.slice(2)) : cookieFile;
    settings.saveCookies = parseBool(get('saveCookies') ?? 'false', 'http.savecookies');
  }
  for (const [name, value] of Object.entries(paths)) if (value !== undefined) settings[name as keyof typeof paths] = value;
  return settings;
}

/**
 * The protocol git's protocol.version asks a server for; when it is not set, git's test knob
 * GIT_TEST_PROTOCOL_VERSION in `env`; else 2 (git's default since 2.26). Another value fails, as
 * it does in git.
 */
export function configuredProtocol(config: GitConfig, env: Readonly<Record<string, string | undefined>> = {}): 0 | 1 | 2 {
  const parse = (v: string, where: string): 0 | 1 | 2 => {
    if (v === '0' || v === '1' || v === '2') return Number(v) as 0 | 1 | 2;
    throw new PackwrightError('CONFIG_INVALID', `unknown value for ${where}: ${v}`);
  };
  const configured = config.get('protocol.version');
  if (configured !== undefined) return parse(configured ?? '', "config 'protocol.version'");
  const test = env['GIT_TEST_PROTOCOL_VERSION'];
  return test !== undefined && test !== '' ? parse(test, 'GIT_TEST_PROTOCOL_VERSION') : 2;
}

/** core.sshCommand, ssh.variant and the repository's environment, for a connection over ssh. */
export function sshSettings(repo: Repository): { sshCommand: string | undefined; sshVariant: string | undefined; env: Readonly<Record<string, string | undefined>> } {
  const command = repo.config.get('core.sshcommand');
  const variant = repo.config.get('ssh.variant');
  return { sshCommand: typeof command === 'string' ? command : undefined, sshVariant: typeof variant === 'string' ? variant : undefined, env: repo.env };
}

/**
 * Whether a transport may be used (git's is_transport_allowed): `type` is `file`, `git`, `ssh`,
 * `http` or `https`; `fromUser` false for a URL no user gave directly (a redirect), undefined to
 * ask GIT_PROTOCOL_FROM_USER (default yes).
 */
export type TransportPolicy = (type: string, fromUser?: boolean) => boolean;

/**
 * git's transport policy: GIT_ALLOW_PROTOCOL's list (colon-separated) when set, else
 * protocol.<type>.allow, else protocol.allow, else git's defaults: http, https, git and ssh
 * always, ext never, anything else (file) only from the user. `always`, `never` and `user` are
 * the values; another is CONFIG_INVALID, as git's die.
 */
export function transportPolicy(config: GitConfig, env: Readonly<Record<string, string | undefined>> = process.env): TransportPolicy {
  const list = env['GIT_ALLOW_PROTOCOL'];
  if (list !== undefined) {
    const allowed = new Set(list.split(':'));
    return (type) => allowed.has(type);
  }
  const setting = (key: string): 'always' | 'never' | 'user' | undefined => {
    const v = config.get(key);
    if (v === undefined) return undefined;
    if (v === 'always' || v === 'never' || v === 'user') return v;
    throw new PackwrightError('CONFIG_INVALID', `unknown value for config '${key}': ${v ?? ''}`);
  };
  return (type, fromUser) => {
    const chosen = setting(`protocol.${type}.allow`) ?? setting('protocol.allow')
      ?? (['http', 'https', 'git', 'ssh'].includes(type) ? 'always' : type === 'ext' ? 'never' : 'user');
    if (chosen !== 'user') return chosen === 'always';
    if (fromUser !== undefined) return fromUser;
    const v = env['GIT_PROTOCOL_FROM_USER'];
    return v === undefined || parseBool(v, 'GIT_PROTOCOL_FROM_USER');
  };
}
