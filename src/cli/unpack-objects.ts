import { FsckRules, setFsckMessageTypes } from '../fsck/index.js';
import type { Repository } from '../repo/index.js';
import { unpackObjects, type UnpackObjectsOptions } from '../unpack/index.js';
import { Progress } from '../progress/index.js';
import { integerOption, packHeaderOption, UsageError } from './usage-error.js';
import type { CommandIO } from './command-io.js';

const USAGE = 'usage: packwright unpack-objects [-n] [-q] [-r] [--strict] [--no-collision-detection]';

/**
 * `git unpack-objects`: a pack on stdin becomes loose objects (`-n`: checked, not written; `-q`:
 * no progress; `-r`: write what can be read of a damaged pack; `--strict[=<msg-types>]`: git's
 * fsck rules, and every link present, before commits, trees and tags are written). Bytes after
 * the pack go to stdout, as git does.
 */
export async function unpackObjectsCommand(io: CommandIO, open: () => Repository, args: string[]): Promise<number> {
  // What unpack-objects reads comes from outside (a fetch, a push): ids by sha1dc, as git computes them.
  const options: UnpackObjectsOptions = { detectCollisions: true };
  let quiet = !io.stderr.isTTY;
  let strict: string | undefined;
  for (const a of args) {
    if (a === '-n') options.dryRun = true;
    else if (a === '-q') quiet = true;
    else if (a === '-r') options.recover = true;
    else if (a === '--no-collision-detection') options.detectCollisions = false;
    else if (a === '--collision-detection') options.detectCollisions = true;
    else if (a === '--strict') strict = '';
    else if (a.startsWith('--strict=')) strict = a.slice(9);
    else if (a.startsWith('--max-input-size=')) options.maxInputSize = integerOption('--max-input-size', a.slice(17));
    else if (a.startsWith('--pack_header=')) options.packHeader = packHeaderOption(a);
    else throw new UsageError(USAGE);
  }
  const repo = open();
  try {
    if (strict !== undefined) {
      // git's unpack-objects checks with FSCK_OPTIONS_STRICT (warnings are errors) and reads no
      // fsck.* configuration: receive-pack and fetch-pack pass their own settings as --strict=.
      const rules = FsckRules.defaults(true);
      setFsckMessageTypes(rules, strict, repo.store.hashLength * 2);
      options.strict = rules;
    }
    const progress = new Progress(!quiet, io.stderr);
    options.onProgress = (done, total) => progress.update('Unpacking objects', done, total);
    options.onError = (message) => io.stderr.write(`${message}\n`);
    // The pack ends at its trailer: what the sender leaves open on stdin after it is not waited for.
    const input = io.stdin.stream();
    const result = await io.interruptible((signal) => unpackObjects(repo.store, input, { ...options, signal })).finally(() => input.destroy());
    progress.finish();
    if (result.trailing.length > 0) io.stdout.write(result.trailing);
    return result.hadErrors ? 1 : 0;
  } finally {
    repo.close();
  }
}
