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
  const sys = e as NodeJS.ErrnoException;
  if (typeof sys.code === 'string' && typeof sys.syscall === 'string') {
    // A system call failed somewhere the library did not turn it into a typed error: still one
    // fatal line naming the file, and git's status for a fatal error.
    const what = sys.path !== undefined ? `'${sys.path}'` : sys.syscall;
    process.stderr.write(`fatal: cannot ${sys.syscall} ${what}: ${sys.message.replace(/^[A-Z]+: ([^,]*).*$/, '$1')}\n`);
    process.exitCode = 128;
  } else {
    // A bug: git's BUG() also exits 134; the stack is what a report needs.
    process.stderr.write(`fatal: internal error: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exitCode = 134;
  }
}
