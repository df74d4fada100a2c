/**
 * How a command fails: one clear line on stderr and an exit code — 1 for a failed operation (the
 * server refused it, or could not be reached), 2 for a usage error (bad flags, a bad file, no
 * configuration).
 */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: 1 | 2 = 1,
  ) {
    super(message);
    this.name = 'CliError';
  }
}
