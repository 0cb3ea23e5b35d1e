#!/usr/bin/env node
// The `packwright` executable (dist/bin/packwright.cjs; dist/bin/packwright.js is the same as an
// ES module, for scripts that name it): loads the commands (main.ts, bundled as commands.cjs
// beside it) through V8's code cache, then runs them. It is a CommonJS script itself: started as
// an ES module, Node first sets up its module loader, 6 ms of a 90 ms `cat-file -t HEAD`
// (medians of 30, alternating; `node -e 0` took 63).
//
// Why: a one-shot command spent most of its own time compiling. Node compiles an ES module's
// whole text before running it (18 ms of `cat-file -t HEAD`'s 45 beyond `node -e 0`), then
// each function at its first call; Node 20 keeps no cache of either for modules (module.
// enableCompileCache came in 22.1). A classic script compiled through `vm.Script` can be given
// the bytecode V8 made last time (`cachedData`): `cat-file -t HEAD` 108 -> 89 ms against
// `node -e 0`'s 61. The cache (commands.cjs.cache) is written by the build after training runs
// of the common commands, each run adding the functions it compiled to those it loaded
// (PACKWRIGHT_CODE_CACHE=write); a cache this Node rejects (another version) is written again
// after the run, where the directory allows.
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import vm from 'node:vm';

const bundle = join(__dirname, 'commands.cjs');
const cacheFile = `${bundle}.cache`;
let cachedData: Buffer | undefined;
try {
  cachedData = readFileSync(cacheFile);
} catch {
  // No cache yet (or unreadable): compiled from the text, and the cache written after the run.
}
// The wrapper Node gives a CommonJS module, so the bundle runs as one.
const script = new vm.Script(`(function (exports, require, module, __filename, __dirname) {${readFileSync(bundle, 'utf8')}\n})`, {
  filename: bundle,
  ...(cachedData !== undefined ? { cachedData } : {}),
});
// Written again only by a process started without V8 flags: a cache records the flags it was made
// under, and the huge-pages relaunch (huge-pages.ts) runs with its own; each would reject the
// other's and rewrite it at every run.
const plain = process.execArgv.length === 0;
if ((plain && (cachedData === undefined || script.cachedDataRejected === true)) || process.env['PACKWRIGHT_CODE_CACHE'] === 'write') {
  // At exit, with what this run compiled: a command may end the process itself.
  process.once('exit', () => {
    try {
      const temporary = `${cacheFile}.${process.pid}.tmp`;
      writeFileSync(temporary, script.createCachedData());
      renameSync(temporary, cacheFile);
    } catch {
      // A read-only installation: the commands still run, compiled each time.
    }
  });
}
const commands = { exports: {} as { main(): Promise<void> } };
(script.runInThisContext() as (...args: unknown[]) => void)(commands.exports, createRequire(bundle), commands, bundle, __dirname);
// main() settles every error itself (the exit status is set there).
void commands.exports.main();
