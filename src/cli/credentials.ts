import type { Credentials, RemoteCallOptions } from '../client/index.js';
import { parseBool, urlMatchedValues, type GitConfig } from '../config/index.js';

/**
 * Where the CLI finds credentials for an HTTP server that asks, as git looks (credential.c):
 * each `credential.helper` in turn (`!<shell command>`, an absolute path, or the name of a
 * `git-credential-<name>` program), then an askpass program (GIT_ASKPASS, core.askPass,
 * SSH_ASKPASS) asked for the user name and password. Nothing there: undefined, and the call fails
 * with git's "Authentication failed". A helper's credentials that the server refuses are not
 * asked for again from it. As git does, credentials the server took are given to every helper to
 * `store`, and ones it refused to every helper to `erase`.
 */
export function cliAuth(config: GitConfig, env: Readonly<Record<string, string | undefined>>): Pick<RemoteCallOptions, 'onAuth' | 'onAuthSuccess' | 'onAuthFailure'> {
  // credential.helper and credential.<url>.helper, each that covers the URL, in order (git's
  // credential_apply_config takes them all); an empty value resets the list before it.
  const settings = (url: string, key: string): (string | null)[] => urlMatchedValues(config, 'credential', key, url, { all: true, partial: (scope) => coversPartially(scope, url) });
  const helpersFor = (url: string): string[] => {
    const all = settings(url, 'helper').filter((h): h is string => typeof h === 'string');
    return all.slice(all.lastIndexOf('') + 1);
  };
  const childEnv: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined) childEnv[k] = v;
  const tried = new Set<string>();
  const commandOf = (helper: string): string => (helper.startsWith('!') ? helper.slice(1) : helper.startsWith('/') ? helper : `git-credential-${helper}`);
  const describe = (url: string, credentials?: Credentials): string => {
    const u = new URL(url);
    // A client certificate's passphrase (git's cert_auth): the certificate's path, no host, no user name.
    if (u.protocol === 'cert:') return `protocol=cert\nhost=\npath=${decodeURIComponent(u.pathname)}\nusername=\n${credentials !== undefined ? `password=${credentials.password}\n` : ''}`;
    const path = decodeURIComponent(u.pathname.replace(/^\//, ''));
    const lines = [`protocol=${u.protocol.replace(/:$/, '')}`, `host=${u.host}`];
    // git sends the path only with credential.useHttpPath.
    const useHttpPath = settings(url, 'useHttpPath').pop();
    if (useHttpPath !== undefined && parseBool(useHttpPath, 'credential.usehttppath') && path !== '') lines.push(`path=${path}`);
    if (credentials !== undefined) lines.push(`username=${credentials.username}`, `password=${credentials.password}`);
    // git ends the description by closing the helper's input, not with a blank line.
    return `${lines.join('\n')}\n`;
  };
  /** Each helper is told (store, erase); what they answer is not read, and a failing one does not stop the call, as in git. */
  const tell = async (action: 'store' | 'erase', url: string, credentials: Credentials): Promise<void> => {
    const helpers = helpersFor(url);
    if (helpers.length === 0) return;
    // Loaded here: child_process pulls in net and streams, which no command should pay for at start.
    const { spawnSync } = await import('node:child_process');
    for (const helper of helpers) spawnSync('/bin/sh', ['-c', `${commandOf(helper)} ${action}`], { input: describe(url, credentials), env: childEnv, stdio: ['pipe', 'ignore', 'inherit'] });
  };
  return {
    onAuth: async (url, failed) => {
      const { spawnSync } = await import('node:child_process');
      const u = new URL(url);
      const request = failed !== undefined ? `${describe(url)}username=${failed.username}\n` : describe(url);
      for (const helper of helpersFor(url)) {
        if (tried.has(helper)) continue;
        tried.add(helper);
        const run = spawnSync('/bin/sh', ['-c', `${commandOf(helper)} get`], { input: request, env: childEnv, stdio: ['pipe', 'pipe', 'inherit'] });
        const got = parseCredentials(run.stdout?.toString('utf8') ?? '', u.protocol === 'cert:');
        if (run.status === 0 && got !== undefined) return got;
      }
      const askpass = env['GIT_ASKPASS'] ?? config.get('core.askpass') ?? env['SSH_ASKPASS'];
      if (typeof askpass !== 'string' || askpass === '' || (failed !== undefined && tried.has('askpass'))) return undefined;
      tried.add('askpass');
      const ask = (prompt: string): string | undefined => {
        const run = spawnSync(askpass, [prompt], { env: childEnv, stdio: ['ignore', 'pipe', 'inherit'] });
        return run.status === 0 ? run.stdout.toString('utf8').replace(/\r?\n$/, '') : undefined;
      };
      if (u.protocol === 'cert:') {
        const password = ask(`Password for 'cert://${decodeURIComponent(u.pathname)}': `);
        return password !== undefined ? { username: '', password } : undefined;
      }
      const where = `${u.protocol}//${u.host}`;
      const username = ask(`Username for '${where}': `);
      const password = username === undefined ? undefined : ask(`Password for '${u.protocol}//${username}@${u.host}': `);
      return username !== undefined && password !== undefined ? { username, password } : undefined;
    },
    onAuthSuccess: (url, credentials) => tell('store', url, credentials),
    onAuthFailure: (url, credentials) => tell('erase', url, credentials),
  };
}

/** A credential helper's answer (`username=…`, `password=…` lines), or undefined when it gave none (`passwordOnly`: a certificate's passphrase, no user name). */
function parseCredentials(text: string, passwordOnly = false): Credentials | undefined {
  let username: string | undefined;
  let password: string | undefined;
  for (const line of text.split('\n')) {
    const eq = line.indexOf('=');
    if (eq < 0) continue;
    const key = line.slice(0, eq);
    if (key === 'username') username = line.slice(eq + 1);
    else if (key === 'password') password = line.slice(eq + 1);
  }
  if (passwordOnly && password !== undefined) return { username: '', password };
  return username !== undefined && password !== undefined ? { username, password } : undefined;
}

/**
 * Whether a credential subsection without a scheme (`example.com`, `example.com/org/repo.git`)
 * covers `url`, as git's credential_from_potentially_partial_url and credential_match take it:
 * the host alike, and the path too when it gives one.
 */
function coversPartially(scope: string, url: string): boolean {
  const slash = scope.indexOf('/');
  const host = slash < 0 ? scope : scope.slice(0, slash);
  const u = new URL(url);
  if (host !== '' && host.toLowerCase() !== u.host.toLowerCase()) return false;
  return slash < 0 || scope.slice(slash + 1) === decodeURIComponent(u.pathname.replace(/^\//, ''));
}
