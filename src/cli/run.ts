import { startTrace2 } from '../trace2/index.js';
import { existsSync, readFileSync } from 'node:fs';
import { isPackwrightError } from '../errors/index.js';
import { UsageError } from './usage-error.js';
import { openRepository, parseGlobalOptions } from './global-options.js';
import { withIO, type CommandIO } from './command-io.js';

const USAGE = `usage: packwright [--version] [-C <path>] [--git-dir=<path>] <command> [<args>]

commands:
  cat-file       print objects, their types and sizes (git cat-file)
  verify-pack    rebuild a pack's index and compare it with the one on disk (git verify-pack)
  index-pack     build the .idx (and .rev) of a pack, byte-identical to git index-pack
  count-objects  count loose objects, and with -v packs, garbage and alternates (git count-objects)
  odb stats      count every object by type, storage and delta chain length
  multi-pack-index  write, verify or expire the multi-pack-index (git multi-pack-index)
  commit-graph   write or verify the commit-graph (git commit-graph)
  pack-objects   make a pack of objects from stdin (ids, or revisions with --revs), as git pack-objects
  fsck           verify the object database: packs, objects by git's fsck rules, connectivity (git fsck)
  hash-object    compute object ids, and with -w write loose objects (git hash-object)
  unpack-objects write the objects of a pack read on stdin as loose objects (git unpack-objects)
  ls-tree        list the entries of a tree (git ls-tree)
  rev-parse      revisions to ids, and where the repository is (git rev-parse)
  show-index     list the entries of a pack index read on stdin (git show-index)
  show-ref       list refs and their ids (git show-ref)
  update-ref     set, create, delete or check refs, many at once with --stdin (git update-ref)
  symbolic-ref   read, set or delete a symbolic ref (git symbolic-ref)
  diff-tree      what changed between two trees, or in a commit (git diff-tree)
  rev-list       list commits, and with --objects every object, reachable from revisions (git rev-list)
  upload-pack    serve a clone or fetch over stdin/stdout, protocol v0, v1 or v2 (git upload-pack)
  receive-pack   accept a push over stdin/stdout: quarantine, hooks, ref transactions (git receive-pack)
  clone          copy a repository at a URL or path: --bare, --mirror, --no-checkout (git clone)
  ls-remote      the refs a repository at a URL or path has (git ls-remote)
  fetch          update refs from a remote: refspecs, tags, --prune, FETCH_HEAD (git fetch)
  push           update a remote's refs and send what they need: --force, --force-with-lease, --atomic (git push)
  update-server-info  info/refs and objects/info/packs for dumb HTTP clients (git update-server-info)
  http-backend   answer a smart HTTP request as a CGI program (git http-backend)
  serve          serve clones, fetches (and with --enable=receive-pack pushes) over HTTP, printing the URL
  demo           count, verify and read every object of the repository here, with timings`;

/** The version in package.json: two levels up from the bundle's dist/bin/, three from the tests' dist-test/src/cli/. */
function packageVersion(): string {
  const near = new URL('../../package.json', import.meta.url);
  const path = existsSync(near) ? near : new URL('../../../package.json', import.meta.url);
  const pkg = JSON.parse(readFileSync(path, 'utf8')) as { version: string };
  return pkg.version;
}


/**
 * Runs one packwright command with `io` as its standard streams, environment and directory;
 * resolves to the exit code (128 for errors, 129 for usage, like git). Throws only for a bug.
 */
export async function run(argv: string[], callerIO: CommandIO): Promise<number> {
  // git's trace2, when GIT_TRACE2_EVENT or GIT_TRACE2_PERF asks for it: the command's start and
  // exit around what the code reports on the way.
  const traced = startTrace2(callerIO.env, argv, () => parseGlobalOptions(argv, callerIO).rest[0], packageVersion);
  let code = 134;
  try {
    code = await runCommand(argv, callerIO);
    return code;
  } finally {
    traced?.(code);
  }
}

/**
 * Each command's module is imported when the command runs, not at start: in the bundle a static
 * import runs the module's setup (and that of everything it imports) for every command, and a
 * one-shot `cat-file -t` or `show-ref` then paid for the client, the servers and the pack writer
 * (3-10 ms of a ~155 ms start against `node -e 0`'s ~110, issue 42's start-up line).
 */
async function runCommand(argv: string[], callerIO: CommandIO): Promise<number> {
  const { global, rest } = parseGlobalOptions(argv, callerIO);
  const io = withIO(callerIO, { env: global.env, cwd: global.cwd });
  const [command, ...args] = rest;
  try {
    switch (command) {
      case 'cat-file':
        return await (await import('./cat-file.js')).catFile(io, (options) => openRepository(global, options), args);
      case 'index-pack':
        return await (await import('./index-pack.js')).indexPackCommand(io, global, args);
      case 'verify-pack':
        return await (await import('./verify-pack.js')).verifyPackCommand(io, global, args);
      case 'count-objects':
        return (await import('./count-objects.js')).countObjectsCommand(io, () => openRepository(global), args);
      case 'commit-graph':
        return (await import('./commit-graph.js')).commitGraphCommand(io, global, () => openRepository(global), args);
      case 'multi-pack-index':
        return await (await import('./multi-pack-index.js')).multiPackIndexCommand(io, global, () => openRepository(global), args);
      case 'pack-objects':
        return await (await import('./pack-objects.js')).packObjectsCommand(io, global, () => openRepository(global), args);
      case 'fsck':
        return await (await import('./fsck.js')).fsckCommand(io, () => openRepository(global), args);
      case 'hash-object':
        return (await import('./hash-object.js')).hashObjectCommand(io, global, args);
      case 'unpack-objects':
        return await (await import('./unpack-objects.js')).unpackObjectsCommand(io, () => openRepository(global), args);
      case 'ls-tree':
        return await (await import('./ls-tree.js')).lsTreeCommand(io, global, () => openRepository(global), args);
      case 'rev-parse':
        return await (await import('./rev-parse.js')).revParseCommand(io, global, args);
      case 'show-index':
        return (await import('./show-index.js')).showIndexCommand(io, global, args);
      case 'show-ref':
        return (await import('./show-ref.js')).showRefCommand(io, () => openRepository(global), args);
      case 'diff-tree':
        return await (await import('./diff-tree.js')).diffTreeCommand(io, () => openRepository(global), args);
      case 'rev-list':
        return await (await import('./rev-list.js')).revListCommand(io, () => openRepository(global), args);
      case 'upload-pack':
        return await (await import('./upload-pack.js')).uploadPackCommand(io, global, `packwright/${packageVersion()}`, args);
      case 'receive-pack':
        return await (await import('./receive-pack.js')).receivePackCommand(io, global, `packwright/${packageVersion()}`, args);
      case 'clone':
        return await (await import('./clone.js')).cloneCommand(io, global, `packwright/${packageVersion()}`, args);
      case 'ls-remote':
        return await (await import('./ls-remote.js')).lsRemoteCommand(io, global, `packwright/${packageVersion()}`, args);
      case 'fetch':
        return await (await import('./fetch.js')).fetchCommand(io, global, `packwright/${packageVersion()}`, args);
      case 'push':
        return await (await import('./push.js')).pushCommand(io, global, `packwright/${packageVersion()}`, args);
      case 'update-server-info':
        return (await import('./update-server-info.js')).updateServerInfoCommand(io, () => openRepository(global), args);
      case 'http-backend':
        return await (await import('./http-backend.js')).httpBackendCommand(io, global, `packwright/${packageVersion()}`);
      case 'update-ref':
        return (await import('./update-ref.js')).updateRefCommand(io, () => openRepository(global), args);
      case 'symbolic-ref':
        return (await import('./symbolic-ref.js')).symbolicRefCommand(io, () => openRepository(global), args);
      case 'serve':
        return await (await import('./serve.js')).serveCommand(io, global, `packwright/${packageVersion()}`, args);
      case 'odb':
        return await (await import('./odb.js')).odbCommand(io, (options) => openRepository(global, options), args);
      case 'demo': {
        const { demo } = await import('./demo.js');
        return await demo(io, openRepository(global), args);
      }
      case '--version':
      case 'version':
        io.stdout.write(`packwright version ${packageVersion()}\n`);
        return 0;
      case undefined:
      case '-h':
      case '--help':
        io.stderr.write(USAGE + '\n');
        return command === undefined ? 129 : 0;
      default:
        // git: "git: 'foo' is not a git command. See 'git --help'." and exit status 1.
        io.stderr.write(`packwright: '${command}' is not a packwright command. See 'packwright --help'.\n`);
        return 1;
    }
  } catch (e) {
    if (e instanceof UsageError) {
      io.stderr.write(`${e.message}\n`);
      return 129;
    }
    if (isPackwrightError(e)) {
      io.stderr.write(`fatal: ${e.message}\n`);
      if (global.verbose && e.stack) io.stderr.write(e.stack + '\n');
      return 128;
    }
    const sys = e as NodeJS.ErrnoException;
    if (typeof sys.code === 'string' && typeof sys.syscall === 'string') {
      // A system call failed somewhere the library did not turn it into a typed error: still one
      // fatal line naming the file, and git's status for a fatal error.
      const what = sys.path !== undefined ? `'${sys.path}'` : sys.syscall;
      io.stderr.write(`fatal: cannot ${sys.syscall} ${what}: ${sys.message.replace(/^[A-Z]+: ([^,]*).*$/, '$1')}\n`);
      return 128;
    }
    throw e;
  } finally {
    for (const repo of global.opened) repo.close();
  }
}
