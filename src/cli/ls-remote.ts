import { extraHeaders, httpSettings, listServerRefs, readRemoteConfig } from '../client/index.js';
import { wildmatch } from '../config/index.js';
import type { CommandIO } from './command-io.js';
import { configOutsideRepository, tryOpenRepository, type GlobalOptions } from './global-options.js';
import { Output } from './output.js';
import { helpRequested, UsageError } from './usage-error.js';
import { cliAuth } from './credentials.js';

const USAGE = `usage: packwright ls-remote [--heads] [--tags] [--refs] [--upload-pack=<exec>]
                            [-q | --quiet] [--exit-code] [--symref]
                            [<repository> [<patterns>...]]`;

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
  const positional: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    if (a === '--heads') heads = true;
    else if (a === '-t' || a === '--tags') tags = true;
    else if (a === '--refs') refsOnly = true;
    else if (a === '--symref') symref = true;
    else if (a === '--exit-code') exitCode = true;
    else if (a === '-q' || a === '--quiet') quiet = true;
    else if (a.startsWith('--upload-pack=')) uploadPack = a.slice(14);
    else if (a === '--upload-pack' && i + 1 < args.length) uploadPack = args[++i];
    else if (a === '--') positional.push(...args.slice(i + 1)), (i = args.length);
    else if (a.startsWith('-')) throw new UsageError(`error: unknown option \`${a.replace(/^-+/, '')}'\n${USAGE}`);
    else positional.push(a);
  }
  // Inside a repository, a remote's name stands for its URL (and `origin` for none given), as in git.
  const repo = tryOpenRepository(global);
  const named = positional[0] ?? (repo?.config.get('remote.origin.url') !== undefined ? 'origin' : undefined);
  if (named === undefined) throw new UsageError(`fatal: No remote configured to list refs from.\n${USAGE}`);
  const remote = repo !== undefined ? readRemoteConfig(repo.config, named, repo) : undefined;
  const url = remote?.url ?? named;
  uploadPack ??= remote?.uploadPack;
  const patterns = positional.slice(1).map((p) => `*/${p}`);
  const config = repo?.config ?? configOutsideRepository(global);
  const version = config.getInt('protocol.version') ?? 2;
  const prefixes = [...(heads ? ['refs/heads/'] : []), ...(tags ? ['refs/tags/'] : [])];
  const refs = await io.interruptible((signal) => listServerRefs(url, {
    protocol: version === 0 || version === 1 ? version : 2,
    prefixes, symrefs: true, peelTags: true, uploadPack, agent, signal, cwd: global.cwd, headers: extraHeaders(config, url), http: httpSettings(config, url, global.env, remote !== undefined ? named : undefined), ...cliAuth(config, global.env), env: global.env,
    ...(quiet ? {} : { onWarning: (message: string) => void io.stderr.write(`warning: ${message}\n`) }),
  }));
  const out = new Output(io.stdout);
  let shown = 0;
  for (const r of refs) {
    if (prefixes.length > 0 && !prefixes.some((p) => r.ref.startsWith(p))) continue;
    if (refsOnly && !r.ref.startsWith('refs/')) continue;
    // git's tail_match: a pattern matches the end of the name, at a '/' (or the whole name); a
    // peeled tag is a name of its own there (`refs/tags/v1^{}`), which `v1` does not match.
    const matches = (name: string): boolean => patterns.length === 0 || patterns.some((p) => wildmatch(p, `/${name}`));
    if (matches(r.ref)) {
      if (symref && r.target !== undefined) out.string(`ref: ${r.target}\t${r.ref}\n`);
      out.string(`${r.oid}\t${r.ref}\n`);
      shown++;
    }
    if (!refsOnly && r.peeled !== undefined && matches(`${r.ref}^{}`)) {
      out.string(`${r.peeled}\t${r.ref}^{}\n`);
      shown++;
    }
  }
  out.flush();
  return exitCode && shown === 0 ? 2 : 0;
}
