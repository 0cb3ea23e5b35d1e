import { childProcess } from './lazy-child-process.js';

/**
 * Runs `git <args>` (git's own program, for the few jobs packwright leaves to it: work-tree
 * updates, gc and maintenance), its stdout to `output` and its stderr to `errors` (default: to
 * `output` too) as they come. Resolves to its exit status: 127 when no git can be run, as a shell
 * says it.
 */
export function runGit(args: readonly string[], cwd: string, env: Readonly<Record<string, string | undefined>>, output: (chunk: Buffer) => void, errors = output): Promise<number> {
  const defined: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined) defined[k] = v;
  return new Promise((done) => {
    const child = childProcess().spawn('git', args, { cwd, env: defined, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.on('data', output);
    child.stderr.on('data', errors);
    child.on('error', () => done(127));
    child.on('close', (code) => done(code ?? 128));
  });
}
