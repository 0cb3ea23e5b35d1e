/** Signals that end a command early; each aborts the work instead of killing the process at once. */
const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/**
 * The bin's `CommandIO.interruptible`: runs `work` so that ^C, SIGTERM and SIGHUP abort it through
 * its AbortSignal: index-pack and verify-pack then stop within a slice and remove their temporary
 * files, and the process dies of the same signal afterwards, as git does (it removes its
 * tempfiles, then re-raises). When the CLI was relaunched by a parent (huge-pages.ts, which
 * passes its pid) and that parent dies, the work is aborted too, so no orphan keeps writing into a
 * repository.
 *
 * Only for work that looks at its signal between slices: a handler runs when the event loop
 * turns, and a long synchronous loop would otherwise make ^C wait for its end.
 */
export function processInterruptible(parentPid: number | undefined): <T>(work: (signal: AbortSignal) => Promise<T>) => Promise<T> {
  return async (work) => {
    const controller = new AbortController();
    let received: NodeJS.Signals | undefined;
    const onSignal = (signal: NodeJS.Signals): void => {
      received ??= signal;
      controller.abort(new Error(`interrupted by ${signal}`));
    };
    for (const s of SIGNALS) process.on(s, onSignal);
    const watchdog = parentPid !== undefined
      ? setInterval(() => {
        if (process.ppid !== parentPid) onSignal('SIGTERM');
      }, 250)
      : undefined;
    watchdog?.unref();
    try {
      return await work(controller.signal);
    } finally {
      if (watchdog !== undefined) clearInterval(watchdog);
      for (const s of SIGNALS) process.off(s, onSignal);
      // The work has cleaned up (its finally blocks ran): now die of the signal, as asked.
      if (received !== undefined) process.kill(process.pid, received);
    }
  };
}
