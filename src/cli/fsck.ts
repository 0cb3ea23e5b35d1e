import { fsck, type FsckOptions } from '../fsck/index.js';
import type { Repository } from '../repo/index.js';
import { Progress } from '../progress/index.js';
import { helpRequested, UsageError } from './usage-error.js';
import type { CommandIO } from './command-io.js';

const USAGE = `usage: packwright fsck [--tags] [--root] [--unreachable] [--cache] [--no-reflogs]
                       [--[no-]full] [--strict] [--verbose] [--lost-found]
                       [--[no-]dangling] [--[no-]progress] [--connectivity-only]
                       [--[no-]name-objects] [--threads=<n>] [--json] [<object>...]`;

/** Boolean options as git's parse-options takes them (`--x`, `--no-x`). */
const FLAGS: Record<string, keyof FsckOptions | 'progress' | 'json' | 'verbose'> = {
  unreachable: 'unreachable', dangling: 'dangling', tags: 'tags', root: 'root', cache: 'cache', reflogs: 'reflogs',
  full: 'full', 'connectivity-only': 'connectivityOnly', strict: 'strict', 'lost-found': 'lostFound',
  progress: 'progress', 'name-objects': 'nameObjects', json: 'json', verbose: 'verbose',
};

/**
 * `git fsck`: loose objects, every pack (verified and its objects checked on all threads), then
 * connectivity from refs, HEADs, reflogs and the index, with git's messages on git's streams and
 * git's exit status. `--json` prints the findings as one JSON document on stdout instead.
 */
export async function fsckCommand(io: CommandIO, open: () => Repository, args: string[]): Promise<number> {
  const help = helpRequested(args, USAGE, io.stdout);
  if (help !== undefined) return help;
  const options: FsckOptions = {};
  const flags: Record<string, boolean> = {};
  const objects: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    if (a === '-v') { flags['verbose'] = true; continue; }
    if (a.startsWith('--threads=') || a === '--threads') {
      const value = a === '--threads' ? args[++i] : a.slice(10);
      const n = Number(value);
      if (!Number.isInteger(n) || n < 0) throw new UsageError(`error: option \`threads' expects a numerical value\n${USAGE}`);
      if (n > 0) options.threads = n;
      continue;
    }
    const m = /^--(no-)?(.+)$/.exec(a);
    if (m !== null) {
      const key = FLAGS[m[2] as string];
      if (key === undefined) throw new UsageError(`error: unknown option \`${a.slice(2)}'\n${USAGE}`);
      flags[key] = m[1] === undefined;
      continue;
    }
    if (a === '--') continue;
    objects.push(a);
  }
  for (const [key, value] of Object.entries(flags)) {
    if (key !== 'progress' && key !== 'json' && key !== 'verbose') (options as Record<string, unknown>)[key] = value;
  }
  if (objects.length > 0) options.objects = objects;
  const json = flags['json'] === true;
  // git: progress when stderr is a terminal, unless --no-progress (or --verbose) says otherwise.
  const progress = new Progress(!json && flags['verbose'] !== true && (flags['progress'] ?? io.stderr.isTTY), io.stderr);
  if (!json) {
    options.onMessage = (m) => {
      const stream = m.stream === 'stdout' ? io.stdout : io.stderr;
      stream.write(`${m.text}\n`);
    };
  }
  options.onProgress = (phase, done, total) => progress.update(phase === 'checking objects' ? 'Checking objects' : 'Checking connectivity', done, total);
  const repo = open();
  try {
    const result = await io.interruptible((signal) => fsck(repo, { ...options, cwd: io.cwd, signal }));
    progress.finish();
    if (json) {
      io.stdout.write(`${JSON.stringify({
        status: result.status, objects: result.objects, checked: result.checked, reachable: result.reachable,
        messages: result.messages, ms: result.ms,
      }, null, 2)}\n`);
    }
    return result.status;
  } finally {
    repo.close();
  }
}
