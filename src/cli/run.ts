import { readFileSync } from 'node:fs';
import { isPackwrightError } from '../errors/index.js';
import { catFile } from './cat-file.js';
import { indexPackCommand } from './index-pack.js';
import { verifyPackCommand } from './verify-pack.js';
import { countObjectsCommand } from './count-objects.js';
import { odbCommand } from './odb.js';
import { multiPackIndexCommand } from './multi-pack-index.js';
import { revListCommand } from './rev-list.js';
import { packObjectsCommand } from './pack-objects.js';
import { fsckCommand } from './fsck.js';
import { showRefCommand } from './show-ref.js';
import { hashObjectCommand } from './hash-object.js';
import { showIndexCommand } from './show-index.js';
import { unpackObjectsCommand } from './unpack-objects.js';
import { lsTreeCommand } from './ls-tree.js';
import { revParseCommand } from './rev-parse.js';
import { UsageError } from './usage-error.js';
import { openRepository, parseGlobalOptions } from './global-options.js';

const USAGE = `usage: packwright [--version] [-C <path>] [--git-dir=<path>] <command> [<args>]

commands:
  cat-file       print objects, their types and sizes (git cat-file)
  verify-pack    rebuild a pack's index and compare it with the one on disk (git verify-pack)
  index-pack     build the .idx (and .rev) of a pack, byte-identical to git index-pack
  count-objects  count loose objects, and with -v packs, garbage and alternates (git count-objects)
  odb stats      count every object by type, storage and delta chain length
  multi-pack-index  write, verify or expire the multi-pack-index (git multi-pack-index)
  pack-objects   make a pack of objects from stdin (ids, or revisions with --revs), as git pack-objects
  fsck           verify the object database: packs, objects by git's fsck rules, connectivity (git fsck)
  hash-object    compute object ids, and with -w write loose objects (git hash-object)
  unpack-objects write the objects of a pack read on stdin as loose objects (git unpack-objects)
  ls-tree        list the entries of a tree (git ls-tree)
  rev-parse      revisions to ids, and where the repository is (git rev-parse)
  show-index     list the entries of a pack index read on stdin (git show-index)
  show-ref       list refs and their ids (git show-ref)
  rev-list       list commits, and with --objects every object, reachable from revisions (git rev-list)
  demo           count, verify and read every object of the repository here, with timings`;

/** The version in package.json, two levels up from both dist/cli/ and the bundle's dist/bin/. */
function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}


/** Runs one packwright command; returns the exit code (128 for errors, 129 for usage, like git). */
export async function run(argv: string[]): Promise<number> {
  const { global, rest } = parseGlobalOptions(argv);
  const [command, ...args] = rest;
  // As git does, for this process and what it runs.
  if (global.noReplaceObjects === true) process.env['GIT_NO_REPLACE_OBJECTS'] = '1';
  try {
    switch (command) {
      case 'cat-file':
        return await catFile((options) => openRepository(global, options), args);
      case 'index-pack':
        return await indexPackCommand(global, args);
      case 'verify-pack':
        return await verifyPackCommand(global, args);
      case 'count-objects':
        return countObjectsCommand(() => openRepository(global), args);
      case 'multi-pack-index':
        return await multiPackIndexCommand(global, () => openRepository(global), args);
      case 'pack-objects':
        return await packObjectsCommand(global, () => openRepository(global), args);
      case 'fsck':
        return await fsckCommand(() => openRepository(global), args);
      case 'hash-object':
        return hashObjectCommand(global, args);
      case 'unpack-objects':
        return await unpackObjectsCommand(() => openRepository(global), args);
      case 'ls-tree':
        return lsTreeCommand(global, () => openRepository(global), args);
      case 'rev-parse':
        return revParseCommand(global, args);
      case 'show-index':
        return showIndexCommand(global, args);
      case 'show-ref':
        return showRefCommand(() => openRepository(global), args);
      case 'rev-list':
        return revListCommand(() => openRepository(global), args);
      case 'odb':
        return await odbCommand((options) => openRepository(global, options), args);
      case 'demo': {
        const { demo } = await import('./demo.js');
        return await demo(openRepository(global), args);
      }
      case '--version':
      case 'version':
        process.stdout.write(`packwright version ${packageVersion()}\n`);
        return 0;
      case undefined:
      case '-h':
      case '--help':
        process.stderr.write(USAGE + '\n');
        return command === undefined ? 129 : 0;
      default:
        // git: "git: 'foo' is not a git command. See 'git --help'." and exit status 1.
        process.stderr.write(`packwright: '${command}' is not a packwright command. See 'packwright --help'.\n`);
        return 1;
    }
  } catch (e) {
    if (e instanceof UsageError) {
      process.stderr.write(`${e.message}\n`);
      return 129;
    }
    if (isPackwrightError(e)) {
      process.stderr.write(`fatal: ${e.message}\n`);
      if (global.verbose && e.stack) process.stderr.write(e.stack + '\n');
      return 128;
    }
    throw e;
  }
}
