#!/usr/bin/env node
// npm run build [-- --tests]: compiles the library (tsc → dist/), bundles the executable and its
// workers (esbuild → dist/bin/), and with --tests also compiles the test suite (tsc → dist-test/),
// all at once, then trains the executable's code cache (trainCodeCache): on 2 cores the two type-checking compiles take ~8 s together instead of ~15 one
// after the other. Exits non-zero, with the compilers' output, if any of them fails.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const bin = (name) => join(root, 'node_modules', '.bin', name);
const esbuild = ['--bundle', '--external:pako', '--platform=node', '--target=node20', '--log-level=warning'];
const jobs = [
  [bin('tsc'), ['-p', 'tsconfig.json']],
  // The executable's loader, a CommonJS script (see src/cli/bin.ts).
  [bin('esbuild'), ['src/cli/bin.ts', ...esbuild, '--format=cjs', '--outfile=dist/bin/packwright.cjs']],
  // The worker scripts, as ES modules.
  [bin('esbuild'), [
    'resolve-worker=src/resolve/resolve-worker.ts', 'store-worker=src/odb/store-worker.ts',
    'create-worker=src/create/create-worker.ts', 'fsck-worker=src/fsck/fsck-worker.ts', 'unpack-worker=src/unpack/unpack-worker.ts',
    ...esbuild, '--format=esm', '--outdir=dist/bin',
  ]],
  // The commands, as one classic script the loader compiles with V8's code cache (see src/cli/bin.ts).
  // Without whitespace and comments: every start reads the whole text, and a comment with one
  // character beyond ASCII makes V8 keep all of it two bytes a character (1.3 MB -> 0.9 MB, and
  // cat-file -t HEAD 86 -> 81 ms, medians of 30). Names are kept, so an internal error's stack
  // still names its functions.
  [bin('esbuild'), [
    'src/cli/main.ts', ...esbuild, '--format=cjs', '--supported:dynamic-import=false', '--minify-whitespace', '--minify-syntax', '--outfile=dist/bin/commands.cjs',
    '--define:import.meta.url=__importMetaUrl', '--banner:js=const __importMetaUrl = require("node:url").pathToFileURL(__filename).href;',
  ]],
];
if (process.argv.includes('--tests')) jobs.push([bin('tsc'), ['-p', 'tsconfig.test.json']]);

const codes = await Promise.all(jobs.map(([cmd, args]) => new Promise((resolve) => {
  const child = spawn(cmd, args, { cwd: root, stdio: 'inherit' });
  child.on('error', (e) => { console.error(`${cmd}: ${e.message}`); resolve(1); });
  child.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
})));
process.exitCode = codes.some((c) => c !== 0) ? 1 : 0;
if (process.exitCode === 0) {
  // The executable under the name scripts and the git-suite give it, as an ES module that runs it.
  writeFileSync(join(root, 'dist', 'bin', 'packwright.js'), "#!/usr/bin/env node\n// The packwright executable as an ES module: it runs packwright.cjs, which starts faster when named itself.\nimport './packwright.cjs';\n", { mode: 0o755 });
  trainCodeCache();
}

/**
 * Writes the executable's code cache (src/cli/bin.ts): the one-shot commands run once each on a
 * small repository made here, each adding what it compiled. Only those: a bigger cache takes
 * longer to load for every command, and a long command's compiling is lost in its running. The
 * cache is an optimization, so a failure here only warns.
 */
function trainCodeCache() {
  const cache = join(root, 'dist', 'bin', 'commands.cjs.cache');
  rmSync(cache, { force: true });
  const dir = mkdtempSync(join(tmpdir(), 'packwright-code-cache-'));
  try {
    const sh = (args, cwd = dir) => execFileSync('git', args, { cwd, stdio: ['ignore', 'pipe', 'ignore'], env: { ...process.env, GIT_AUTHOR_DATE: '1700000000 +0000', GIT_COMMITTER_DATE: '1700000000 +0000', GIT_AUTHOR_NAME: 'a', GIT_AUTHOR_EMAIL: 'a@example.com', GIT_COMMITTER_NAME: 'a', GIT_COMMITTER_EMAIL: 'a@example.com' } });
    sh(['init', '-q', '-b', 'main', 'repo']);
    const repo = join(dir, 'repo');
    for (let i = 0; i < 3; i++) {
      writeFileSync(join(repo, `file-${i}.txt`), `revision ${i}\n`);
      sh(['add', '.'], repo);
      sh(['commit', '-q', '-m', `revision ${i}`], repo);
      if (i === 1) sh(['repack', '-adq'], repo);
    }
    sh(['tag', '-a', '-m', 'a tag', 'v1', 'HEAD~1'], repo);
    sh(['commit-graph', 'write', '--reachable'], repo);
    const commands = [
      ['cat-file', '-t', 'HEAD'], ['cat-file', '-p', 'HEAD'], ['cat-file', '-s', 'v1'], ['cat-file', '--batch-check', '--batch-all-objects'],
      ['rev-parse', 'HEAD'], ['rev-parse', '--verify', 'HEAD~1^{tree}'], ['show-ref'], ['show-ref', '--heads'],
      ['ls-tree', '-r', 'HEAD'], ['rev-list', '--all'], ['rev-list', '--count', 'HEAD'], ['rev-list', '--objects', '--all'],
    ];
    for (const args of commands) {
      execFileSync(process.execPath, [join(root, 'dist', 'bin', 'packwright.cjs'), ...args], { cwd: repo, stdio: 'ignore', env: { ...process.env, PACKWRIGHT_CODE_CACHE: 'write', PACKWRIGHT_HUGE_PAGES: '0' } });
    }
  } catch (e) {
    console.error(`warning: the executable's code cache was not trained: ${e.message}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
