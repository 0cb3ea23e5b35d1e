/** A command line that cannot be run as given; the CLI prints it and exits 129 like git. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}
