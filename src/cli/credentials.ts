import type { AuthCallback, Credentials } from '../client/index.js';
import type { GitConfig } from '../config/index.js';

/**
 * Where the CLI finds credentials for an HTTP server that asks, as git looks (credential.c):
 * each `credential.helper` in turn (`!<shell command>`, an absolute path, or the name of a
 * `git-credential-<name>` program), then an askpass program (GIT_ASKPASS, core.askPass,
 * SSH_ASKPASS) asked for the user name and password. Nothing there: undefined, and the call fails
 * with git's "Authentication failed". A helper's credentials that the server refuses are not
 * asked for again from it.
 */
export function cliAuth(config: GitConfig, env: Readonly<Record<string, string | undefined>>): AuthCallback {
  const helpers = config.getAll('credential.helper').filter((h): h is string => typeof h === 'string');
  const childEnv: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined) childEnv[k] = v;
  const tried = new Set<string>();
  return async (url, failed) => {
    // Loaded here: child_process pulls in net and streams, which no command should pay for at start.
    const { spawnSync } = await import('node:child_process');
    const u = new URL(url);
    const request = `protocol=${u.protocol.replace(/:$/, '')}\nhost=${u.host}\n${failed !== undefined ? `username=${failed.username}\n` : ''}\n`;
    for (const helper of helpers) {
      // An empty value resets the list before it (git), so only the ones after the last count.
      if (helper === '' || tried.has(helper)) continue;
      tried.add(helper);
      const command = helper.startsWith('!') ? helper.slice(1) : helper.startsWith('/') ? helper : `git-credential-${helper}`;
      const run = spawnSync('/bin/sh', ['-c', `${command} get`], { input: request, env: childEnv, stdio: ['pipe', 'pipe', 'inherit'] });
      const got = parseCredentials(run.stdout?.toString('utf8') ?? '');
      if (run.status === 0 && got !== undefined) return got;
    }
    const askpass = env['GIT_ASKPASS'] ?? config.get('core.askpass') ?? env['SSH_ASKPASS'];
    if (typeof askpass !== 'string' || askpass === '' || (failed !== undefined && tried.has('askpass'))) return undefined;
    tried.add('askpass');
    const ask = (prompt: string): string | undefined => {
      const run = spawnSync(askpass, [prompt], { env: childEnv, stdio: ['ignore', 'pipe', 'inherit'] });
      return run.status === 0 ? run.stdout.toString('utf8').replace(/\r?\n$/, '') : undefined;
    };
    const where = `${u.protocol}//${u.host}`;
    const username = ask(`Username for '${where}': `);
    const password = username === undefined ? undefined : ask(`Password for '${u.protocol}//${username}@${u.host}': `);
    return username !== undefined && password !== undefined ? { username, password } : undefined;
  };
}

/** A credential helper's answer (`username=…`, `password=…` lines), or undefined when it gave none. */
function parseCredentials(text: string): Credentials | undefined {
  let username: string | undefined;
  let password: string | undefined;
  for (const line of text.split('\n')) {
    const eq = line.indexOf('=');
    if (eq < 0) continue;
    const key = line.slice(0, eq);
    if (key === 'username') username = line.slice(eq + 1);
    else if (key === 'password') password = line.slice(eq + 1);
  }
  return username !== undefined && password !== undefined ? { username, password } : undefined;
}
