/** Where progress lines go: a terminal, a file descriptor, or side band 2 of a git connection. */
export interface ProgressOutput {
  /** Writes a line (or a part of one, ending in `\r`). */
  write(text: string): void;
}

/**
 * git-style progress lines ("Indexing objects:  42% (95/226), done."): the CLI's on stderr (only
 * when it is a TTY or `--progress` was given), upload-pack's to the client on side band 2; at
 * most a few updates a second.
 */
export class Progress {
  private last = 0;
  private title = '';
  private total = 0;
  private done = 0;
  private bytes: number | undefined;
  private started = 0;

  constructor(private readonly enabled: boolean, private readonly stderr: ProgressOutput) {}

  /**
   * Shows progress of `title`: `done` of `total` (0: unknown), with `bytes` when given, as git's progress
   * lines.
   */
  update(title: string, done: number, total: number, bytes?: number): void {
    if (!this.enabled) return;
    if (title !== this.title) {
      this.finish();
      this.title = title;
      this.started = Date.now();
    }
    this.total = total;
    this.done = done;
    this.bytes = bytes;
    const now = Date.now();
    if (now - this.last < 200 && done !== total) return;
    this.last = now;
    // As git's display(): the line, then a carriage return for the next to write over it.
    this.stderr.write(`${this.line()}\r`);
  }

  private line(): string {
    let line = this.total <= 0
      ? `${this.title}: ${this.done}`
      : `${this.title}: ${String(Math.floor((this.done * 100) / this.total)).padStart(3)}% (${this.done}/${this.total})`;
    if (this.bytes !== undefined) {
      // git's throughput display: ", 10.53 MiB | 21.06 MiB/s"
      const seconds = Math.max(0.001, (Date.now() - this.started) / 1000);
      line += `, ${formatBytes(this.bytes)} | ${formatBytes(this.bytes / seconds)}/s`;
    }
    return line;
  }

  /** A whole progress line at once: `title`, `total` of `total`, done. */
  finishWith(title: string, total: number): void {
    this.update(title, total, total);
    this.finish();
  }

  /** Ends the line with `, <message>.` (git's stop_progress_msg; "done" unless told). */
  finish(message = 'done'): void {
    if (!this.enabled || this.title === '') return;
    this.stderr.write(`${this.line()}, ${message}.\n`);
    this.title = '';
  }
}

function formatBytes(n: number): string {
  if (n >= 1 << 30) return `${(n / 2 ** 30).toFixed(2)} GiB`;
  if (n >= 1 << 20) return `${(n / 2 ** 20).toFixed(2)} MiB`;
  if (n >= 1 << 10) return `${(n / 2 ** 10).toFixed(2)} KiB`;
  return `${Math.round(n)} bytes`;
}
