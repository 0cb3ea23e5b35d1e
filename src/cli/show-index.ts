import { readAll } from './read-lines.js';
import { PackwrightError } from '../errors/index.js';
import { hashLength, type ObjectFormat } from '../hash/index.js';
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
  const input = readAll(io.stdin);
  let pos = 0;
  const take = (n: number, what: string): Buffer => {
    if (pos + n > input.length) throw new PackwrightError('IDX_CORRUPT', what);
    const b = input.subarray(pos, pos + n);
    pos += n;
    return b;
  };
  const out: string[] = [];
  const flush = (): void => { io.stdout.write(out.join('')); out.length = 0; };
  try {
    const head = take(8, 'unable to read header');
    let fanout: Buffer;
    let version = 1;
    if (head.readUInt32BE(0) === 0xff744f63) {
      version = head.readUInt32BE(4);
      if (version !== 2) throw new PackwrightError('IDX_CORRUPT', 'unknown index version');
      fanout = take(1024, 'unable to read index');
    } else {
      fanout = Buffer.concat([head, take(254 * 4, 'unable to read index')]);
    }
    let count = 0;
    for (let i = 0; i < 256; i++) {
      const n = fanout.readUInt32BE(4 * i);
      if (n < count) throw new PackwrightError('IDX_CORRUPT', 'corrupt index file');
      count = n;
    }
    if (version === 1) {
      for (let i = 0; i < count; i++) {
        const e = take(4 + H, `unable to read entry ${i}/${count}`);
        out.push(`${e.readUInt32BE(0)} ${e.toString('hex', 4)}\n`);
        if (out.length >= 4096) flush();
      }
    } else {
      const ids = take(count * H, `unable to read sha1 ${Math.floor((input.length - pos) / H)}/${count}`);
      const crcs = take(count * 4, `unable to read crc ${Math.floor((input.length - pos) / 4)}/${count}`);
      const offsets = take(count * 4, `unable to read 32b offset ${Math.floor((input.length - pos) / 4)}/${count}`);
      let large = 0;
      for (let i = 0; i < count; i++) {
        const word = offsets.readUInt32BE(4 * i);
        let offset = word;
        if (word & 0x80000000) {
          if ((word & 0x7fffffff) !== large) throw new PackwrightError('IDX_CORRUPT', 'inconsistent 64b offset index');
          const o = take(8, `unable to read 64b offset ${large}`);
          offset = o.readUInt32BE(0) * 2 ** 32 + o.readUInt32BE(4);
          large++;
        }
        out.push(`${offset} ${ids.toString('hex', i * H, i * H + H)} (${crcs.toString('hex', 4 * i, 4 * i + 4)})\n`);
        if (out.length >= 4096) flush();
      }
    }
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
