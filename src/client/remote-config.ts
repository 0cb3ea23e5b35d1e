// A remote as git's remote.c reads it from the configuration: `remote.<name>.url`, its fetch and
// push refspecs, tagOpt, prune, mirror, and the commands to run for a local one. A name that
// is no configured remote is taken as a URL (an anonymous remote, with no refspecs), unless one of
// git's older remotes files ($GIT_DIR/remotes/, $GIT_DIR/branches/) has it.
import { join } from 'node:path';
import type { GitConfig } from '../config/git-config.js';
import { PackwrightError } from '../errors/packwright-error.js';
import { readFileIfPresent } from '../io/read-file-if-present.js';
import { parseRefspec, type Refspec } from '../refs/refspec.js';

/**
 * A remote as the configuration says it: URLs (fetch and push, rewritten by insteadOf), refspecs, tags and
 * prune settings.
 */
export interface RemoteConfig {
  /** The remote's name; undefined for a URL given directly. */
  name: string | undefined;
  /** Where fetches go (url.<base>.insteadOf applied). */
  url: string;
  /** Where pushes go: remote.<name>.pushurl, else the URL with url.<base>.pushInsteadOf (or insteadOf) applied. */
  pushUrl: string;
  fetch: Refspec[];
  push: Refspec[];
  /** remote.<name>.tagOpt: `--tags` (all tags) or `--no-tags`; undefined: tags follow what is fetched. */
  tags: 'all' | 'none' | undefined;
  /** remote.<name>.prune, else fetch.prune. */
  prune: boolean | undefined;
  /** remote.<name>.pruneTags, else fetch.pruneTags. */
  pruneTags: boolean | undefined;
  /** remote.<name>.mirror. */
  mirror: boolean;
  uploadPack: string | undefined;
  receivePack: string | undefined;
}

/** Where a repository's own remotes files are (`$GIT_DIR/remotes/`, `$GIT_DIR/branches/`), and its environment. */
export interface LegacyRemotesPlace {
  gitDir: string;
  env: Readonly<Record<string, string | undefined>>;
}

/**
 * The remote `nameOrUrl` names in `config` (git's remote_get); with `repo`, a name the
 * configuration gives no URL is looked up in git's older remotes files, as git does.
 */
export function readRemoteConfig(config: GitConfig, nameOrUrl: string, repo?: LegacyRemotesPlace): RemoteConfig {
  // git reads every remote and branch section when it reads one, and refuses a branch section of
  // an empty name (`[branch ""]`): its branch config would name no branch (remote.c).
  const unnamed = config.entries.find((e) => e.key.startsWith('branch..'));
  if (unnamed !== undefined) {
    throw new PackwrightError('CONFIG_INVALID', `bad config variable '${unnamed.key}' in file '${unnamed.file}'${unnamed.line !== undefined ? ` at line ${unnamed.line}` : ''}`, { file: unnamed.file });
  }
  const key = (k: string): string => `remote.${nameOrUrl}.${k}`;
  const urls = config.getAll(key('url')).filter((u): u is string => typeof u === 'string');
  const str = (k: string): string | undefined => {
    const v = config.get(key(k));
    return typeof v === 'string' ? v : undefined;
  };
  const extra = { fetch: [] as string[], push: [] as string[] };
  if (urls.length === 0 && repo !== undefined) {
    const legacy = readLegacyRemote(repo, nameOrUrl, config);
    if (legacy !== undefined) {
      urls.push(...legacy.urls);
      extra.fetch = legacy.fetch;
      extra.push = legacy.push;
    }
  }
  if (urls.length === 0) {
    // Not a configured remote: a URL or a path, as git takes it.
    if (/^[A-Za-z0-9._-]+$/.test(nameOrUrl) && config.getAll(key('fetch')).length > 0) {
      throw new PackwrightError('INVALID_ARGUMENT', `remote '${nameOrUrl}' has no url configured`);
    }
    return { name: undefined, url: rewriteUrl(config, nameOrUrl, 'insteadof'), pushUrl: pushUrlOf(config, nameOrUrl), fetch: [], push: [], tags: undefined, prune: config.getBool('fetch.prune'), pruneTags: config.getBool('fetch.prunetags'), mirror: false, uploadPack: undefined, receivePack: undefined };
  }
  const specs = (k: 'fetch' | 'push', kind: 'fetch' | 'push'): Refspec[] => [...config.getAll(key(k)).filter((v): v is string => typeof v === 'string'), ...extra[k]].map((v) => parseRefspec(v, kind));
  const tagOpt = str('tagopt');
  return {
    name: nameOrUrl,
    url: rewriteUrl(config, urls[0] as string, 'insteadof'),
    pushUrl: str('pushurl') !== undefined ? rewriteUrl(config, str('pushurl') as string, 'insteadof') : pushUrlOf(config, urls[0] as string),
    fetch: specs('fetch', 'fetch'),
    push: specs('push', 'push'),
    tags: tagOpt === '--tags' ? 'all' : tagOpt === '--no-tags' ? 'none' : undefined,
    prune: config.getBool(key('prune')) ?? config.getBool('fetch.prune'),
    pruneTags: config.getBool(key('prunetags')) ?? config.getBool('fetch.prunetags'),
    mirror: config.getBool(key('mirror')) ?? false,
    uploadPack: str('uploadpack'),
    receivePack: str('receivepack'),
  };
}

/**
 * git's read_remotes_file and read_branches_file: `$GIT_DIR/remotes/<name>` (`URL:`, `Pull:` and
 * `Push:` lines), else `$GIT_DIR/branches/<name>` (a URL, `#<branch>` after it: that branch, the
 * default branch without, is fetched to refs/heads/<name> and HEAD pushed to it). Only for a name
 * that could be a file's (not empty, `.` or `..`, no slash).
 */
function readLegacyRemote(repo: LegacyRemotesPlace, name: string, config: GitConfig): { urls: string[]; fetch: string[]; push: string[] } | undefined {
  if (name === '' || name === '.' || name === '..' || name.includes('/')) return undefined;
  const remotes = readFileIfPresent(join(repo.gitDir, 'remotes', name), 'remotes file');
  if (remotes !== undefined) {
    const out = { urls: [] as string[], fetch: [] as string[], push: [] as string[] };
    for (const raw of remotes.toString('utf8').split('\n')) {
      const line = raw.trimEnd();
      const field = /^(URL|Pull|Push):\s*(.*)$/.exec(line);
      if (field === null) continue;
      const [, what, value] = field as unknown as [string, string, string];
      if (what === 'URL') out.urls.push(value);
      else (what === 'Pull' ? out.fetch : out.push).push(value);
    }
    // A remotes file with no URL leaves the name as git leaves it: looked up in branches/ next.
    if (out.urls.length > 0) return out;
  }
  const branches = readFileIfPresent(join(repo.gitDir, 'branches', name), 'branches file');
  if (branches === undefined) return undefined;
  const line = branches.toString('utf8').split('\n')[0]?.trim() ?? '';
  if (line === '') return undefined;
  const hash = line.indexOf('#');
  const url = hash < 0 ? line : line.slice(0, hash);
  const branch = hash < 0 ? defaultBranchName(config, repo.env) : line.slice(hash + 1);
  return { urls: [url], fetch: [`refs/heads/${branch}:refs/heads/${name}`], push: [`HEAD:refs/heads/${branch}`] };
}

/**
 * The remote a fetch, ls-remote or push without one talks to, as git's remote_get(NULL) and
 * pushremote_get(NULL) choose it: for a push `branch.<name>.pushRemote`, then `remote.pushDefault`;
 * then `branch.<name>.remote` of the branch checked out (`branch`, a name under refs/heads/), else
 * the one remote the configuration has, if it has exactly one, else `origin`.
 */
export function defaultRemoteName(config: GitConfig, branch: string | undefined, push = false): string {
  const get = (key: string): string | undefined => {
    const v = config.get(key);
    return typeof v === 'string' ? v : undefined;
  };
  if (push) {
    const chosen = (branch !== undefined ? get(`branch.${branch}.pushremote`) : undefined) ?? get('remote.pushdefault');
    if (chosen !== undefined) return chosen;
  }
  const ofBranch = branch !== undefined ? get(`branch.${branch}.remote`) : undefined;
  if (ofBranch !== undefined) return ofBranch;
  // git makes a remote of every remote.<name>.<key> it reads.
  const names = new Set<string>();
  for (const e of config.entries) {
    const m = /^remote\.(.+)\.[^.]+$/.exec(e.key);
    if (m !== null) names.add(m[1] as string);
  }
  return names.size === 1 ? ([...names][0] as string) : 'origin';
}

/** git's default branch name: GIT_TEST_DEFAULT_INITIAL_BRANCH_NAME, init.defaultBranch, else master. */
export function defaultBranchName(config: GitConfig, env: Readonly<Record<string, string | undefined>>): string {
  const test = env['GIT_TEST_DEFAULT_INITIAL_BRANCH_NAME'];
  if (test !== undefined && test !== '') return test;
  const configured = config.get('init.defaultbranch');
  return typeof configured === 'string' && configured !== '' ? configured : 'master';
}

/** git's rewrite of a URL by the longest `url.<base>.insteadOf` (or pushInsteadOf) prefix it starts with. */
function rewriteUrl(config: GitConfig, url: string, kind: 'insteadof' | 'pushinsteadof'): string {
  let best: { prefix: string; base: string } | undefined;
  for (const e of config.entries) {
    if (typeof e.value !== 'string' || !e.key.startsWith('url.') || !e.key.endsWith(`.${kind}`)) continue;
    if (url.startsWith(e.value) && (best === undefined || e.value.length > best.prefix.length)) best = { prefix: e.value, base: e.key.slice(4, -(kind.length + 1)) };
  }
  return best === undefined ? url : best.base + url.slice(best.prefix.length);
}

/** A push goes where pushInsteadOf sends the URL, else where insteadOf does. */
function pushUrlOf(config: GitConfig, url: string): string {
  const pushed = rewriteUrl(config, url, 'pushinsteadof');
  return pushed !== url ? pushed : rewriteUrl(config, url, 'insteadof');
}

/** A URL as git shows it (transport_anonymize_url): without a user name or password. */
export function anonymizeUrl(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/@]*@/i, '$1');
}

/** A URL as git fetch shows it and writes it to FETCH_HEAD: trailing slashes and `.git` dropped. */
export function displayUrl(url: string): string {
  const trimmed = anonymizeUrl(url).replace(/\/+$/, '');
  return trimmed.length > 5 && trimmed.endsWith('.git') ? trimmed.slice(0, -4) : trimmed;
}

/**
 * git's validate_remote_url (transfer.credentialsInUrl): a remote URL with a password in it
 * (`https://user:pass@host/…`, an empty one too) is `allow`ed (the default), `warn`ed about, or
 * refused (`die`: INVALID_ARGUMENT), its password shown as `<redacted>`.
 */
export function checkCredentialsInUrl(config: GitConfig, url: string, onWarning?: (message: string) => void): void {
  const setting = config.get('transfer.credentialsinurl');
  if (typeof setting !== 'string' || setting === 'allow') return;
  if (setting !== 'warn' && setting !== 'die') throw new PackwrightError('CONFIG_INVALID', `unrecognized value transfer.credentialsInUrl: '${setting}'`);
  const m = /^([A-Za-z][A-Za-z0-9+.-]*:\/\/)([^@/?#]*)@(.*)$/.exec(url);
  if (m === null || !(m[2] as string).includes(':')) return;
  const message = `URL '${(m[1] as string).toLowerCase()}${(m[2] as string).slice(0, (m[2] as string).indexOf(':'))}:<redacted>@${m[3] as string}' uses plaintext credentials`;
  if (setting === 'die') throw new PackwrightError('INVALID_ARGUMENT', message);
  onWarning?.(message);
}
