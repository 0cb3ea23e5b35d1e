// git's trace2 (GIT_TRACE2_EVENT, GIT_TRACE2_PERF) for a process that runs packwright's work: a
// session started from the environment, and the data and regions the code reports into it.
export { startTrace2, trace2Data, trace2Region } from './trace2.js';
