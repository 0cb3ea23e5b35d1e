// git ls-remote's conversation (connect.c: get_remote_heads, get_remote_refs): the refs a
// server's upload-pack advertises, from protocol v0/v1's advertisement or v2's ls-refs.
import { openConnection, parseRemoteUrl } from './transport.js';
import { GitConfig } from '../config/git-config.js';
import { httpSettings } from './remote-call-config.js';
import { endWithoutFetch, readGreeting, serverRefs } from './upload-pack-conversation.js';
import { remoteCallOptions, type RemoteCallOptions } from './client-options.js';

/** A ref a server has, as isomorphic-git's listServerRefs gives it. */
export interface ServerRef {
  ref: string;
  oid: string;
  /** For a symbolic ref (HEAD): the ref it points to. */
  target?: string | undefined;
  /** For an annotated tag: the object it peels to. */
  peeled?: string | undefined;
}

/**
 * Options of `listServerRefs`: ref prefixes, peeling, symrefs, the protocol version, and what every remote
 * call takes.
 */
export interface ListServerRefsOptions extends RemoteCallOptions {
  /** The protocol to ask for (default 2; a server that does not speak it answers in v0). */
  protocol?: 0 | 1 | 2 | undefined;
  /** Only refs starting with one of these (v2's ref-prefix; filtered here for v0). */
  prefixes?: readonly string[] | undefined;
  /** Ask for symbolic refs' targets (v2; v0 servers tell HEAD's in their capabilities). */
  symrefs?: boolean | undefined;
  /** Ask for annotated tags' peeled values. */
  peelTags?: boolean | undefined;
  /** For a local repository: spawn this upload-pack command instead of serving it in this process. */
  uploadPack?: string | undefined;
  /** The environment GIT_SSH_COMMAND and GIT_SSH are read from (default: the process's). */
  env?: Readonly<Record<string, string | undefined>> | undefined;
}


/**
 * The refs the server at `url` advertises (git ls-remote), in its order: protocol v2's ls-refs
 * with `prefixes`, or the v0/v1 advertisement, HEAD's target from its capabilities.
 */
export async function listServerRefs(url: string, options: ListServerRefsOptions = {}): Promise<ServerRef[]> {
  const location = parseRemoteUrl(url, options.cwd);
  const conn = await openConnection(location, {
    ...remoteCallOptions(options), service: 'git-upload-pack', protocol: options.protocol ?? 2, command: options.uploadPack, env: options.env, traceIdentity: 'ls-remote',
    // The proxy and the rest from the environment, as git reads it (the CLI adds the configuration).
    http: { ...httpSettings(new GitConfig(), url, options.env ?? process.env), ...options.http },
  });
  try {
    const greeting = await readGreeting(conn);
    // v0/v1 sends every ref: those under the prefixes are kept, HEAD's target from the capabilities.
    const refs = await serverRefs(conn, greeting, options.agent ?? 'packwright', { prefixes: options.prefixes, peel: options.peelTags, symrefs: options.symrefs });
    await endWithoutFetch(conn, greeting);
    return refs;
  } finally {
    conn.close();
  }
}
