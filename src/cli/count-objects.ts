import { countObjects, humaniseBytes } from '../odb/index.js';
import type { Repository } from '../repo/index.js';
import { helpRequested, UsageError } from './usage-error.js';
import { quotePath } from './quote-path.js';
import type { CommandIO } from './command-io.js';

const USAGE = 'usage: packwright count-objects [-v] [-H | --human-readable]';

/** `git count-objects [-v] [-H]`: loose objects, and with -v packs, garbage and alternates. */
export function countObjectsCommand(io: CommandIO, open: () => Repository, args: string[]): number {
  const help = helpRequested(args, USAGE, io.stdout);
  if (help !== undefined) return help;
  let verbose = false;
  let human = false;
  for (const a of args) {
    if (a === '-v' || a === '--verbose') verbose = true;
    else if (a === '-H' || a === '--human-readable') human = true;
    else if (/^-[vH]+$/.test(a)) {
      verbose ||= a.includes('v');
      human ||= a.includes('H');
    } else throw new UsageError(USAGE);
  }
  const repo = open();
  const c = countObjects(repo.objects);
  const size = (bytes: number): string => (human ? humaniseBytes(bytes) : String(Math.floor(bytes / 1024)));
  if (!verbose) {
    io.stdout.write(`${c.count} objects, ${human ? humaniseBytes(c.size) : `${Math.floor(c.size / 1024)} kilobytes`}\n`);
    return 0;
  }
  for (const g of c.garbage) io.stderr.write(`warning: ${g.reason}: ${g.path}\n`);
  io.stdout.write(
    `count: ${c.count}\nsize: ${size(c.size)}\nin-pack: ${c.inPack}\npacks: ${c.packs}\nsize-pack: ${size(c.sizePack)}\n` +
    `prune-packable: ${c.prunePackable}\ngarbage: ${c.garbage.length}\nsize-garbage: ${size(c.sizeGarbage)}\n` +
    c.alternates.map((a) => `alternate: ${quotePath(a)}\n`).join(''),
  );
  return 0;
}
