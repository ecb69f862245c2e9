// The CLI's own failure: one the operator can act on, which main.ts prints in one line, without a stack.

/**
 * A failure the operator can act on, said in one line; exits 1, or with `signal` dies of that signal once it is
 * said (an import interrupted by SIGINT or SIGTERM).
 */
export class CliError extends Error {
  readonly signal: NodeJS.Signals | undefined;

  constructor(message: string, options: ErrorOptions & { signal?: NodeJS.Signals } = {}) {
    super(message, options);
    this.signal = options.signal;
  }
}
