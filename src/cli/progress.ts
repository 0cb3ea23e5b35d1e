/**
 * git-style progress on stderr ("Indexing objects:  42% (95/226), done."): only when stderr is a
 * TTY or `--progress` was given, and at most a few updates a second.
 */
export class Progress {
  private last = 0;
  private title = '';
  private total = 0;
  private done = 0;

  constructor(private readonly enabled: boolean) {}

  update(title: string, done: number, total: number): void {
    if (!this.enabled) return;
    if (title !== this.title) {
      this.finish();
      this.title = title;
    }
    this.total = total;
    this.done = done;
    const now = Date.now();
    if (now - this.last < 200 && done !== total) return;
    this.last = now;
    process.stderr.write(`\r${this.line()}`);
  }

  private line(): string {
    if (this.total <= 0) return `${this.title}: ${this.done}`;
    return `${this.title}: ${String(Math.floor((this.done * 100) / this.total)).padStart(3)}% (${this.done}/${this.total})`;
  }

  finish(): void {
    if (!this.enabled || this.title === '') return;
    process.stderr.write(`\r${this.line()}, done.\n`);
    this.title = '';
  }
}
