#!/usr/bin/env node
// The `packwright` executable. Kept small: the decision to relaunch with huge pages
// (huge-pages.ts) is made before the commands are loaded, so a relaunching parent stays cheap.
import { parseGlobalOptions } from './global-options.js';
import { relaunchWithHugePages } from './huge-pages.js';

const argv = process.argv.slice(2);
try {
  const { global, rest } = parseGlobalOptions(argv);
  let code = await relaunchWithHugePages(global, rest);
  if (code === undefined) {
    const { run } = await import('./run.js');
    code = await run(argv);
  }
  process.exitCode = code;
} catch (e) {
  process.stderr.write(`fatal: internal error: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exitCode = 134;
}
