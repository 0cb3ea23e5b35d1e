import { readAll } from './read-lines.js';
import { PackwrightError } from '../errors/index.js';
import { hashLength, type ObjectFormat } from '../hash/index.js';
import { forEachIndexEntry } from '../idx/index.js';
import { objectFormatOption, tryOpenRepository, type GlobalOptions } from './global-options.js';
import { UsageError } from './usage-error.js';
import type { CommandIO } from './command-io.js';

const USAGE = 'usage: packwright show-index [--object-format=<hash-algorithm>]';

/**
 * `git show-index`: reads a pack index (v1 or v2) on stdin and prints each entry in index order,
 * `<offset> <id>` (v1) or `<offset> <id> (<crc32>)` (v2), reading it front to back as git does,
 * with git's words for a short or inconsistent file. The object format is the repository's, or
 * `--object-format`, or SHA-1.
 */
export function showIndexCommand(io: CommandIO, global: GlobalOptions, args: string[]): number {
  let format: ObjectFormat | undefined;
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    if (a === '-h' || a === '--help') { io.stdout.write(`${USAGE}\n`); return a === '-h' ? 129 : 0; }
    if (a === '--object-format') format = formatOption(args[++i] ?? '');
    else if (a.startsWith('--object-format=')) format = formatOption(a.slice(16));
    else throw new UsageError(`error: unknown option \`${a.replace(/^--?/, '')}'\n${USAGE}`);
  }
  if (format === undefined) {
    const repo = tryOpenRepository(global);
    format = repo?.format ?? 'sha1';
    repo?.close();
  }
  const H = hashLength(format);
  const out: string[] = [];
  const flush = (): void => { io.stdout.write(out.join('')); out.length = 0; };
  try {
    forEachIndexEntry(readAll(io.stdin), H, (e) => {
      const id = Buffer.from(e.id.buffer, e.id.byteOffset, e.id.byteLength).toString('hex');
      out.push(e.crc32 === undefined ? `${e.offset} ${id}\n` : `${e.offset} ${id} (${e.crc32.toString(16).padStart(8, '0')})\n`);
      if (out.length >= 4096) flush();
    });
  } finally {
    flush();
  }
  return 0;
}

function formatOption(value: string): ObjectFormat {
  try {
    return objectFormatOption(value);
  } catch (e) {
    throw new PackwrightError('INVALID_ARGUMENT', 'Unknown hash algorithm', { cause: e });
  }
}
