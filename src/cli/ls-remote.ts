import { configuredProtocol, defaultRemoteName, extraHeaders, httpSettings, listServerRefs, readRemoteConfig, transportPolicy } from '../client/index.js';
import { PackwrightError } from '../errors/index.js';
import { wildmatch } from '../config/index.js';
import type { CommandIO } from './command-io.js';
import { configOutsideRepository, tryOpenRepository, type GlobalOptions } from './global-options.js';
import { Output } from './output.js';
import { helpRequested, UsageError } from './usage-error.js';
import { cliAuth } from './credentials.js';

const USAGE = `usage: packwright ls-remote [--heads] [--tags] [--refs] [--upload-pack=<exec>]
                            [-q | --quiet] [--exit-code] [--get-url] [--symref]
                            [--sort=<key>] [<repository> [<patterns>...]]`;

/**
 * `git ls-remote`: the refs the repository at a URL (http(s)://, git://, file://, a path) has, in
 * its order, `<id>\\t<ref>` with peeled tags as `<ref>^{}`; `--heads`, `--tags`, `--refs`,
 * `--symref`, `--exit-code` (2 when nothing matches), patterns matching the end of a ref's name.
 * Protocol v2 unless `-c protocol.version=0` (or 1).
 */
export async function lsRemoteCommand(io: CommandIO, global: GlobalOptions, agent: string, args: string[]): Promise<number> {
  const help = helpRequested(args, USAGE, io.stdout);
  if (help !== undefined) return help;
  let heads = false, tags = false, refsOnly = false, symref = false, exitCode = false;
  let uploadPack: string | undefined;
  let quiet = false;
  let getUrl = false;
  const sortKeys: string[] = [];
  const positional: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    if (a === '--heads') heads = true;
    else if (a === '-t' || a === '--tags') tags = true;
    else if (a === '--refs') refsOnly = true;
    else if (a === '--symref') symref = true;
    else if (a === '--exit-code') exitCode = true;
    else if (a === '--get-url') getUrl = true;
    else if (a === '-q' || a === '--quiet') quiet = true;
    else if (a.startsWith('--sort=')) sortKeys.push(a.slice(7));
    else if (a === '--sort' && i + 1 < args.length) sortKeys.push(args[++i] as string);
    else if (a === '--no-sort') sortKeys.length = 0;
    else if (a.startsWith('--upload-pack=')) uploadPack = a.slice(14);
    else if (a === '--upload-pack' && i + 1 < args.length) uploadPack = args[++i];
    else if (a === '--') positional.push(...args.slice(i + 1)), (i = args.length);
    else if (a.startsWith('-')) throw new UsageError(`error: unknown option \`${a.replace(/^-+/, '')}'\n${USAGE}`);
    else positional.push(a);
  }
  // Inside a repository, a remote's name stands for its URL, and none given is the remote git's
  // remote_get(NULL) chooses (branch.<name>.remote, the only remote, else origin), if configured.
  const repo = tryOpenRepository(global);
  const sort = refSort(sortKeys, repo !== undefined);
  let named = positional[0];
  if (named === undefined && repo !== undefined) {
    const branch = repo.refs.symbolicEnd('HEAD');
    const candidate = defaultRemoteName(repo.config, branch?.startsWith('refs/heads/') === true ? branch.slice(11) : undefined);
    if (readRemoteConfig(repo.config, candidate, repo).name !== undefined) named = candidate;
  }
  if (named === undefined) throw new PackwrightError('INVALID_ARGUMENT', 'No remote configured to list refs from.');
  const remote = repo !== undefined ? readRemoteConfig(repo.config, named, repo) : undefined;
  const url = remote?.url ?? named;
  // git's --get-url: the URL, insteadOf applied, and nothing asked of the server.
  if (getUrl) {
    io.stdout.write(`${url}\n`);
    return 0;
  }
  uploadPack ??= remote?.uploadPack;
  const patterns = positional.slice(1).map((p) => `*/${p}`);
  const config = repo?.config ?? configOutsideRepository(global);
  const version = configuredProtocol(config, global.env);
  const prefixes = [...(heads ? ['refs/heads/'] : []), ...(tags ? ['refs/tags/'] : [])];
  const refs = await io.interruptible((signal) => listServerRefs(url, {
    protocol: version === 0 || version === 1 ? version : 2,
    prefixes, symrefs: true, peelTags: true, uploadPack, agent, signal, cwd: global.cwd, headers: extraHeaders(config, url), http: httpSettings(config, url, global.env, remote !== undefined ? named : undefined), ...cliAuth(config, global.env), env: global.env, allowTransport: transportPolicy(config, global.env),
    ...(quiet ? {} : { onWarning: (message: string) => void io.stderr.write(`warning: ${message}\n`) }),
    onStderr: (text: string) => void io.stderr.write(text),
  }));
  // git names the URL when it chose the remote itself, once the refs came.
  if (positional[0] === undefined && !quiet) io.stderr.write(`From ${url}\n`);
  // The lines git prints, each a ref of the transport's list: a peeled tag is one of its own
  // (`refs/tags/v1^{}`), which a pattern `v1` does not match (git's tail_match) and --sort
  // places by that name.
  const matches = (name: string): boolean => patterns.length === 0 || patterns.some((p) => wildmatch(p, `/${name}`));
  const lines: { ref: string; oid: string; target?: string | undefined }[] = [];
  for (const r of refs) {
    if (prefixes.length > 0 && !prefixes.some((p) => r.ref.startsWith(p))) continue;
    if (refsOnly && !r.ref.startsWith('refs/')) continue;
    if (matches(r.ref)) lines.push({ ref: r.ref, oid: r.oid, target: r.target });
    if (!refsOnly && r.peeled !== undefined && matches(`${r.ref}^{}`)) lines.push({ ref: `${r.ref}^{}`, oid: r.peeled });
  }
  if (sort !== undefined) lines.sort(sort);
  const out = new Output(io.stdout);
  for (const line of lines) {
    if (symref && line.target !== undefined) out.string(`ref: ${line.target}\t${line.ref}\n`);
    out.string(`${line.oid}\t${line.ref}\n`);
  }
  const shown = lines.length;
  out.flush();
  return exitCode && shown === 0 ? 2 : 0;
}

/**
 * Ref names compared as git's versioncmp (glibc's strverscmp) without versionsort.suffix: runs of
 * digits by value, except a run with a leading zero, which is a fraction (1.02 < 1.1 < 1.10):
 * compared digit by digit, and where one ends first, shorter is smaller unless all it shares with
 * the other are zeros (000 < 00 < 01 < 010 < 09 < 0 < 1).
 */
function versionCompare(a: string, b: string): number {
  const parts = (s: string): string[] => s.match(/\d+|\D+/g) ?? [];
  const [x, y] = [parts(a), parts(b)];
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const [p, q] = [x[i] as string, y[i] as string];
    if (p === q) continue;
    if (!/^\d/.test(p) || !/^\d/.test(q)) return p < q ? -1 : 1;
    if (p[0] === '0' || q[0] === '0') {
      const n = Math.min(p.length, q.length);
      for (let k = 0; k < n; k++) if (p[k] !== q[k]) return (p[k] as string) < (q[k] as string) ? -1 : 1;
      const zeros = /^0*$/.test(p.slice(0, n));
      return (p.length < q.length) === zeros ? 1 : -1;
    }
    if (p.length !== q.length) return p.length - q.length;
    return p < q ? -1 : 1;
  }
  return x.length - y.length;
}

/**
 * git's --sort for ls-remote (ref-filter's sorting): `refname`, `version:refname` (`v:refname`)
 * and `objectname`, `-` first for the reverse; several keys, the last one first. The other keys
 * need the objects: outside a repository git refuses them in these words, and packwright
 * anywhere, as it does not read the objects a listing names.
 */
function refSort(keys: readonly string[], inRepository: boolean): ((a: { ref: string; oid: string }, b: { ref: string; oid: string }) => number) | undefined {
  if (keys.length === 0) return undefined;
  const compare = keys.map((spec) => {
    const reverse = spec.startsWith('-');
    const key = reverse ? spec.slice(1) : spec;
    let by: (a: { ref: string; oid: string }, b: { ref: string; oid: string }) => number;
    if (key === 'refname') by = (a, b) => (a.ref < b.ref ? -1 : a.ref > b.ref ? 1 : 0);
    else if (key === 'version:refname' || key === 'v:refname') by = (a, b) => versionCompare(a.ref, b.ref);
    else if (key === 'objectname') by = (a, b) => (a.oid < b.oid ? -1 : a.oid > b.oid ? 1 : 0);
    else if (!inRepository) throw new PackwrightError('INVALID_ARGUMENT', `not a git repository, but the field '${key.replace(/:.*/, '')}' requires access to object data`);
    else throw new PackwrightError('INVALID_ARGUMENT', `ls-remote --sort=${key}: packwright sorts by refname, version:refname and objectname only`);
    return reverse ? (a: { ref: string; oid: string }, b: { ref: string; oid: string }) => by(b, a) : by;
  }).reverse();
  return (a, b) => {
    for (const c of compare) {
      const r = c(a, b);
      if (r !== 0) return r;
    }
    // git's ref-filter breaks ties by refname.
    return a.ref < b.ref ? -1 : a.ref > b.ref ? 1 : 0;
  };
}
