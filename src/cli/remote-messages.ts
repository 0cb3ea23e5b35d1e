import type { CommandIO } from './command-io.js';

/**
 * What a server says on band 2 (its progress, its hooks' output), shown as git shows it
 * (sideband.c demultiplex_sideband): `remote: ` at the start of each line, not of each packet, so
 * a progress line that arrives in two packets stays one line; each nonempty line ended by a
 * suffix that clears what a longer earlier line left on the screen (ANSI clear-to-end-of-line on
 * a terminal, eight spaces elsewhere); each line written whole, so another process's writes to
 * the same stderr do not land inside it.
 */
export class RemoteMessages {
  /** The line begun but not ended, prefix included ('' between lines). */
  private pending = '';
  private readonly suffix: string;

  /**
   * @param write Where the lines go (the command's stderr).
   * @param terminal Whether that is a terminal that understands ANSI (git: isatty(2) and TERM not dumb).
   */
  constructor(private readonly write: (text: string) => void, terminal: boolean) {
    this.suffix = terminal ? '\x1b[K' : '        ';
  }

  /** Takes one packet's text as it came. */
  text(text: string): void {
    let from = 0;
    for (;;) {
      const cr = text.indexOf('\r', from);
      const lf = text.indexOf('\n', from);
      const brk = cr < 0 ? lf : lf < 0 ? cr : Math.min(cr, lf);
      if (brk < 0) break;
      const line = text.slice(from, brk);
      // A line break that ends a line begun in an earlier packet clears what was there after it.
      if (this.pending !== '' && line === '') this.pending += this.suffix;
      if (this.pending === '') this.pending = 'remote: ';
      // An empty line gets no suffix: a progress meter's final '\n' after its '\r' updates keeps it.
      if (line !== '') this.pending += line + this.suffix;
      this.write(this.pending + (text[brk] as string));
      this.pending = '';
      from = brk + 1;
    }
    if (from < text.length) this.pending = (this.pending === '' ? 'remote: ' : this.pending) + text.slice(from);
  }

  /** Ends a line left open when the server stopped talking (git ends it with a newline). */
  end(): void {
    if (this.pending !== '') this.write(`${this.pending}\n`);
    this.pending = '';
  }
}

/** Whether stderr gets git's ANSI suffix: a terminal, and TERM not `dumb` (git's is_terminal_dumb). */
export function ansiTerminal(isTTY: boolean, env: Readonly<Record<string, string | undefined>>): boolean {
  const term = env['TERM'];
  return isTTY && term !== undefined && term !== 'dumb';
}

/** The server's messages shown on a command's stderr, suffixed as that stderr calls for. */
export function remoteMessagesOn(io: CommandIO): RemoteMessages {
  return new RemoteMessages((text) => io.stderr.write(text), ansiTerminal(io.stderr.isTTY, io.env));
}
