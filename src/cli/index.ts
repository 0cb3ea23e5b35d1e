// packwright's commands as functions: `run(argv, io)` runs one as the `packwright` executable
// would (git's plumbing names, flags, output and exit statuses), reading and writing only through
// `io`. `memoryIO` gives input as bytes and keeps the output, for running commands in-process.
export { run } from './run.js';
export { memoryIO, memoryOutput, bufferInput, fdInput, fdOutput, withIO } from './command-io.js';
export type { CommandIO, CommandInput, CommandOutput, MemoryIO, MemoryOutput } from './command-io.js';
