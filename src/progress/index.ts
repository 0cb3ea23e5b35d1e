// git-style progress lines, shared by the CLI (stderr) and the servers (side band 2).
export { Progress } from './progress.js';
export type { ProgressOutput } from './progress.js';
